// The agent's graph as a conversation: which node the call is at, what the model is told there and which transitions
// it may take. The current node's prompt (after the globalNode's, rendered with the call's variables) is the system
// prompt; each outgoing edge is offered as a tool (named from its label, described by its condition) whose arguments
// are the variables the node declares for extraction; calling one moves the call to the edge's target. At an endCall
// node the model says goodbye and may name the call's disposition; once that reply is spoken the call ends.
// Pure: no I/O, so every path is unit-tested over scripted model turns.
import { renderTemplate } from "../workflows";
import type { ChatMessage, ChatRequest, ToolCall, ToolParameters, ToolSpec } from "./chat";

export type ExtractionVariable = { name: string; type: "string" | "number" | "boolean"; description: string };

type Node = { id: string; type: string; prompt: string; greeting: string | null; extract: ExtractionVariable[] };
type Edge = { id: string; source: string; target: string; label: string; condition: string };

/** What the model is always told: it is speaking on a phone call. */
export const CALL_INSTRUCTIONS =
  "You are speaking with someone on a phone call. Reply in short, natural spoken sentences, without lists, markdown or emoji. " +
  "When one of your tools matches what happened in the conversation, call it.";

export const END_CALL_TOOL = "end_call";
/** Transitions taken in one reply before the agent stops following them (a cycle of edges cannot loop forever). */
export const MAX_HOPS_PER_TURN = 4;

export type TakeResult =
  | { kind: "moved"; from: string; to: string; edge: string }
  | { kind: "ended"; disposition: string | null }
  | { kind: "refused"; reason: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === "string" ? v : "");

function extraction(data: Obj): ExtractionVariable[] {
  const list = Array.isArray(data.extraction_variables) ? data.extraction_variables : [];
  const out: ExtractionVariable[] = [];
  for (const v of list) {
    if (!isObj(v) || typeof v.name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(v.name)) continue;
    const type = v.type === "number" || v.type === "boolean" ? v.type : "string";
    out.push({ name: v.name, type, description: text(v.prompt) || text(v.description) });
  }
  return out;
}

/** Every variable the graph's nodes extract, once each, in node order: the columns of a campaign's results. */
export function extractedNames(definition: unknown): string[] {
  const nodes = isObj(definition) && Array.isArray(definition.nodes) ? definition.nodes : [];
  const names = new Set<string>();
  for (const n of nodes) if (isObj(n) && isObj(n.data)) for (const v of extraction(n.data)) names.add(v.name);
  return [...names];
}

/** A tool name the model APIs accept (letters, digits, `_` and `-`, at most 64), unique among a node's tools. */
function toolName(label: string, taken: Set<string>): string {
  const base =
    label
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 60) || "next";
  let name = base;
  for (let i = 2; taken.has(name) || name === END_CALL_TOOL; i++) name = `${base}_${i}`;
  taken.add(name);
  return name;
}

function coerce(v: unknown, type: ExtractionVariable["type"]): unknown {
  if (v === undefined || v === null || v === "") return undefined;
  if (type === "number") {
    const n = typeof v === "number" ? v : Number(String(v).replace(/[^0-9.+-]/g, ""));
    return Number.isFinite(n) ? n : undefined;
  }
  if (type === "boolean") {
    if (typeof v === "boolean") return v;
    const s = String(v).trim().toLowerCase();
    return ["true", "yes", "1"].includes(s) ? true : ["false", "no", "0"].includes(s) ? false : undefined;
  }
  return String(v);
}

export type ConversationState = { history: ChatMessage[]; gathered: Record<string, unknown>; disposition: string | null; path: string[] };

export class Conversation {
  readonly history: ChatMessage[] = [];
  /** Variables the model filled in, over the whole call (a later value replaces an earlier one). */
  readonly gathered: Record<string, unknown> = {};
  disposition: string | null = null;
  /** The nodes the call went through, in order. */
  readonly path: string[];
  private node: Node;
  private readonly nodes = new Map<string, Node>();
  private readonly edges: Edge[] = [];
  private readonly global: string;

  constructor(
    definition: unknown,
    private readonly variables: Record<string, unknown>,
    private readonly dispositionCodes: readonly string[] = [],
  ) {
    const def = isObj(definition) ? definition : {};
    let global = "";
    for (const n of Array.isArray(def.nodes) ? def.nodes : []) {
      if (!isObj(n) || typeof n.id !== "string" || typeof n.type !== "string") continue;
      const data = isObj(n.data) ? n.data : {};
      if (n.type === "globalNode") global = text(data.prompt);
      this.nodes.set(n.id, { id: n.id, type: n.type, prompt: text(data.prompt), greeting: text(data.greeting) || null, extract: extraction(data) });
    }
    for (const e of Array.isArray(def.edges) ? def.edges : []) {
      if (!isObj(e) || typeof e.source !== "string" || typeof e.target !== "string" || !this.nodes.has(e.target)) continue;
      const data = isObj(e.data) ? e.data : {};
      this.edges.push({ id: text(e.id), source: e.source, target: e.target, label: text(data.label), condition: text(data.condition) });
    }
    const start = [...this.nodes.values()].find((n) => n.type === "startCall");
    if (!start) throw new Error("The agent has no startCall node");
    this.node = start;
    this.path = [start.id];
    this.global = global;
  }

  /** What the conversation has become (for the call to go on from after a restart): plain JSON. */
  state(): ConversationState {
    return { history: [...this.history], gathered: { ...this.gathered }, disposition: this.disposition, path: [...this.path] };
  }

  /** Goes on from a saved state; false (and nothing changed) when it does not fit this graph. */
  restore(state: unknown): boolean {
    const s = state as Partial<ConversationState> | null;
    const at = Array.isArray(s?.path) ? this.nodes.get(String(s.path.at(-1))) : undefined;
    if (!s || !at || !Array.isArray(s.history)) return false;
    this.history.splice(0, this.history.length, ...(s.history as ChatMessage[]));
    Object.assign(this.gathered, isObj(s.gathered) ? s.gathered : {});
    this.disposition = typeof s.disposition === "string" ? s.disposition : null;
    this.path.splice(0, this.path.length, ...(s.path as string[]));
    this.node = at;
    return true;
  }

  private render(s: string): string {
    return renderTemplate(s, this.variables).text;
  }

  get nodeId(): string {
    return this.node.id;
  }

  /** The first words of the call: the startCall greeting, rendered (null: the model opens the call). */
  get greeting(): string | null {
    const start = [...this.nodes.values()].find((n) => n.type === "startCall");
    return start?.greeting ? this.render(start.greeting) : null;
  }

  /** At an endCall node: the next reply is the last, and the call ends once it has been heard. */
  get ending(): boolean {
    return this.node.type === "endCall";
  }

  systemPrompt(): string {
    return [CALL_INSTRUCTIONS, this.global && this.render(this.global), this.node.prompt && this.render(this.node.prompt)].filter(Boolean).join("\n\n");
  }

  /** The current node's tools: one per outgoing edge, and end_call at an endCall node. */
  tools(): ToolSpec[] {
    const taken = new Set<string>();
    const params = this.parameters();
    const tools: ToolSpec[] = this.outgoing().map((e) => ({
      name: toolName(e.label || `to_${e.target}`, taken),
      description: e.condition || `Move the conversation on to ${this.nodes.get(e.target)?.id}`,
      parameters: params,
    }));
    if (this.ending) {
      const p: ToolParameters = structuredClone(params);
      if (this.dispositionCodes.length) {
        p.properties.disposition = { type: "string", enum: [...this.dispositionCodes], description: "How the call turned out" };
      }
      tools.push({ name: END_CALL_TOOL, description: "End the call once you have said goodbye", parameters: p });
    }
    return tools;
  }

  private outgoing(): Edge[] {
    return this.edges.filter((e) => e.source === this.node.id);
  }

  private parameters(): ToolParameters {
    const properties: ToolParameters["properties"] = {};
    for (const v of this.node.extract) properties[v.name] = { type: v.type, ...(v.description ? { description: v.description } : {}) };
    return { type: "object", properties, required: [] };
  }

  /** What to ask the model now. */
  request(): ChatRequest {
    return { messages: [{ role: "system", content: this.systemPrompt() }, ...this.history], tools: this.tools() };
  }

  /** The callee's turn, as transcribed. */
  heard(said: string): void {
    this.history.push({ role: "user", content: said });
  }

  /**
   * The agent's turn as the callee heard it: after a barge-in only the words that played stay in the history (the
   * model must not believe it said what was cut off).
   */
  said(content: string): void {
    if (content.trim()) this.history.push({ role: "assistant", content });
  }

  /**
   * A barge-in cut the agent off: its words since the callee last spoke become the part that was played, so the
   * model does not believe it said what the callee never heard. A reply may span several messages (text, a
   * transition, more text): the played words are matched to them in order, and what follows the cut is dropped.
   */
  interrupted(played: string): void {
    const norm = (t: string) => t.trim().replace(/\s+/g, " ");
    let rest = norm(played);
    let from = this.history.length;
    while (from > 0 && this.history[from - 1].role !== "user") from--;
    for (let i = from; i < this.history.length; i++) {
      const m = this.history[i];
      if (m.role !== "assistant" || !m.content) continue;
      const content = norm(m.content);
      if (rest !== "" && rest.startsWith(content)) {
        rest = rest.slice(content.length).trim();
        continue;
      }
      if (rest) this.history[i] = { ...m, content: rest };
      else if (m.toolCalls?.length) this.history[i] = { ...m, content: "" };
      else {
        this.history.splice(i--, 1);
        continue;
      }
      rest = "";
    }
  }

  /** Follows a tool call of the model's reply; the call and its result go into the history. */
  take(call: ToolCall): TakeResult {
    const result = this.apply(call);
    this.history.push({ role: "assistant", content: "", toolCalls: [call] });
    const note =
      result.kind === "moved" ? `Moved to ${result.to}.` : result.kind === "ended" ? "The call will end after your goodbye." : `Not done: ${result.reason}`;
    this.history.push({ role: "tool", toolCallId: call.id, content: note });
    return result;
  }

  private apply(call: ToolCall): TakeResult {
    const tools = this.tools();
    const i = tools.findIndex((t) => t.name === call.name);
    if (i < 0) return { kind: "refused", reason: `no action named ${call.name} here` };
    for (const v of this.node.extract) {
      const value = coerce(call.arguments?.[v.name], v.type);
      if (value !== undefined) this.gathered[v.name] = value;
    }
    if (call.name === END_CALL_TOOL) {
      const d = call.arguments?.disposition;
      if (typeof d === "string" && this.dispositionCodes.includes(d)) this.disposition = d;
      return { kind: "ended", disposition: this.disposition };
    }
    const edge = this.outgoing()[i];
    const from = this.node.id;
    this.node = this.nodes.get(edge.target)!;
    this.path.push(this.node.id);
    return { kind: "moved", from, to: this.node.id, edge: edge.id };
  }
}
