// The agent's graph as a conversation: which node the call is at, what the model is told there and which transitions
// it may take. The current node's prompt (after the globalNode's, rendered with the call's variables) is the system
// prompt; each outgoing edge is offered as a tool (named from its label, described by its condition) whose arguments
// are the variables the node declares for extraction; calling one moves the call to the edge's target. At an endCall
// node the model says goodbye and may name the call's disposition; once that reply is spoken the call ends.
// Pure: no I/O, so every path is unit-tested over scripted model turns.
import { renderTemplate } from "../workflows";
import {
  type Action,
  DTMF_KEYS,
  type HttpTool,
  httpToolSpec,
  httpTools,
  RESERVED_TOOL_NAMES,
  SEND_DTMF_SPEC,
  SEND_DTMF_TOOL,
  TRANSFER_TOOL,
  type TransferNode,
  transferNode,
} from "./actions";
import type { ChatMessage, ChatRequest, ToolCall, ToolParameters, ToolSpec } from "./chat";

export type ExtractionVariable = { name: string; type: "string" | "number" | "boolean"; description: string };

type Node = {
  id: string;
  type: string;
  prompt: string;
  greeting: string | null;
  extract: ExtractionVariable[];
  /** The node offers send_dtmf (an automated phone menu is expected here). */
  allowDtmf: boolean;
  transfer: TransferNode | null;
};
/** `on: "no_answer"`: the way on from a transferCall node when the transfer did not connect (never a model tool). */
type Edge = { id: string; source: string; target: string; label: string; condition: string; on: string | null; dtmf: string | null };

/** What one of the current node's tools does. */
type ToolUse = { kind: "edge"; edge: Edge } | { kind: "end" } | { kind: "http"; tool: HttpTool } | { kind: "dtmf" };

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
  | { kind: "refused"; reason: string }
  /** Something to carry out (a request, a transfer, key presses): its result goes back with `toolResult`. */
  | { kind: "action"; action: Action };

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
  /** The agent's HTTP tools, headers as stored (the runner opens them). */
  readonly httpTools: HttpTool[];
  private actionIds = 0;

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
      this.nodes.set(n.id, {
        id: n.id,
        type: n.type,
        prompt: text(data.prompt),
        greeting: text(data.greeting) || null,
        extract: extraction(data),
        allowDtmf: data.allow_dtmf === true,
        transfer: n.type === "transferCall" ? transferNode(data) : null,
      });
    }
    for (const e of Array.isArray(def.edges) ? def.edges : []) {
      if (!isObj(e) || typeof e.source !== "string" || typeof e.target !== "string" || !this.nodes.has(e.target)) continue;
      const data = isObj(e.data) ? e.data : {};
      const dtmf = typeof data.dtmf === "string" && DTMF_KEYS.test(data.dtmf) ? data.dtmf : null;
      const on = typeof data.on === "string" ? data.on : null;
      this.edges.push({ id: text(e.id), source: e.source, target: e.target, label: text(data.label), condition: text(data.condition), on, dtmf });
    }
    this.httpTools = httpTools(def);
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

  /**
   * The current node's tools: the agent's HTTP tools offered here, send_dtmf where the node allows it, one per
   * outgoing edge, and end_call at an endCall node. A transferCall node offers none: the agent transfers at once.
   */
  tools(): ToolSpec[] {
    return [...this.toolUses().values()].map(({ use: _use, ...spec }) => spec);
  }

  private toolUses(): Map<string, ToolSpec & { use: ToolUse }> {
    const out = new Map<string, ToolSpec & { use: ToolUse }>();
    if (this.node.transfer) return out;
    const taken = new Set<string>();
    for (const t of this.httpTools) {
      if (RESERVED_TOOL_NAMES.has(t.name) || taken.has(t.name) || (t.nodes && !t.nodes.includes(this.node.id))) continue;
      taken.add(t.name);
      out.set(t.name, { ...httpToolSpec(t), use: { kind: "http", tool: t } });
    }
    if (this.node.allowDtmf) {
      taken.add(SEND_DTMF_TOOL);
      out.set(SEND_DTMF_TOOL, { ...SEND_DTMF_SPEC, use: { kind: "dtmf" } });
    }
    const params = this.parameters();
    for (const e of this.outgoing()) {
      const name = toolName(e.label || `to_${e.target}`, taken);
      out.set(name, { name, description: e.condition || `Move the conversation on to ${e.target}`, parameters: params, use: { kind: "edge", edge: e } });
    }
    if (this.ending) {
      const p: ToolParameters = structuredClone(params);
      if (this.dispositionCodes.length) {
        p.properties.disposition = { type: "string", enum: [...this.dispositionCodes], description: "How the call turned out" };
      }
      out.set(END_CALL_TOOL, { name: END_CALL_TOOL, description: "End the call once you have said goodbye", parameters: p, use: { kind: "end" } });
    }
    return out;
  }

  /** The edges the model may take from here (a transferCall node's no-answer edge is the agent's to take). */
  private outgoing(): Edge[] {
    return this.edges.filter((e) => e.source === this.node.id && e.on === null);
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

  /**
   * Follows a tool call of the model's reply; the call goes into the history, and its result too unless it is an
   * action, whose result the agent reports with `toolResult` once it is known.
   */
  take(call: ToolCall): TakeResult {
    const result = this.apply(call);
    this.history.push({ role: "assistant", content: "", toolCalls: [call] });
    if (result.kind === "action") return result;
    const note =
      result.kind === "moved" ? `Moved to ${result.to}.` : result.kind === "ended" ? "The call will end after your goodbye." : `Not done: ${result.reason}`;
    this.toolResult(call.id, note);
    return result;
  }

  /** An action's result (or its error), for the model to read. */
  toolResult(callId: string, content: string): void {
    this.history.push({ role: "tool", toolCallId: callId, content });
  }

  /**
   * At a transferCall node: the transfer, as a transfer_call the agent makes in the model's name (no round trip);
   * `calling` puts it into the history once the node's message is said.
   */
  transferCall(): { call: ToolCall; transfer: TransferNode } | null {
    const t = this.node.transfer;
    if (!t) return null;
    const call: ToolCall = {
      id: `agent_${++this.actionIds}_${this.path.length}`,
      name: TRANSFER_TOOL,
      arguments: { destination: t.destination, mode: t.mode },
    };
    return { call, transfer: { ...t, message: this.render(t.message), whisperPrompt: this.render(t.whisperPrompt) } };
  }

  /** A tool call the agent makes itself, into the history (its result follows with `toolResult`). */
  calling(call: ToolCall): void {
    this.history.push({ role: "assistant", content: "", toolCalls: [call] });
  }

  /** The transfer did not connect: on along the node's no-answer edge (false when it has none: the call stays here). */
  noAnswer(): boolean {
    const edge = this.edges.find((e) => e.source === this.node.id && e.on === "no_answer");
    if (!edge) return false;
    this.moveTo(edge);
    return true;
  }

  /** The key strings the current node's edges wait for (`dtmf` in an edge's data). */
  dtmfChoices(): string[] {
    return this.outgoing().flatMap((e) => (e.dtmf ? [e.dtmf] : []));
  }

  /**
   * The callee pressed keys: the model sees them as their turn, and an edge waiting for exactly these keys is taken
   * at once (without the model), recorded in the history as if the model had chosen it.
   */
  pressed(digits: string): TakeResult | null {
    this.heard(`[The caller pressed ${digits.split("").join(" ")}]`);
    const keys = digits.replace(/#$/, "");
    const edge = this.outgoing().find((e) => e.dtmf !== null && (e.dtmf === digits || e.dtmf === keys));
    if (!edge) return null;
    const name = [...this.toolUses()].find(([, t]) => t.use.kind === "edge" && t.use.edge === edge)?.[0] ?? "keypad";
    const call: ToolCall = { id: `agent_${++this.actionIds}_${this.path.length}`, name, arguments: {} };
    this.calling(call);
    const from = this.node.id;
    this.moveTo(edge);
    this.toolResult(call.id, `The caller's keys chose this. Moved to ${this.node.id}.`);
    return { kind: "moved", from, to: this.node.id, edge: edge.id };
  }

  private moveTo(edge: Edge) {
    this.node = this.nodes.get(edge.target)!;
    this.path.push(this.node.id);
  }

  private apply(call: ToolCall): TakeResult {
    const found = this.toolUses().get(call.name);
    if (!found) return { kind: "refused", reason: `no action named ${call.name} here` };
    const use = found.use;
    if (use.kind === "http") return { kind: "action", action: { type: "http", tool: use.tool, arguments: isObj(call.arguments) ? call.arguments : {} } };
    if (use.kind === "dtmf") {
      const digits = String(call.arguments?.digits ?? "").replace(/\s+/g, "");
      if (!DTMF_KEYS.test(digits)) return { kind: "refused", reason: "digits must be 1 to 32 of 0-9, *, #, A-D and w" };
      return { kind: "action", action: { type: "dtmf", digits } };
    }
    for (const v of this.node.extract) {
      const value = coerce(call.arguments?.[v.name], v.type);
      if (value !== undefined) this.gathered[v.name] = value;
    }
    if (use.kind === "end") {
      const d = call.arguments?.disposition;
      if (typeof d === "string" && this.dispositionCodes.includes(d)) this.disposition = d;
      return { kind: "ended", disposition: this.disposition };
    }
    const from = this.node.id;
    this.moveTo(use.edge);
    return { kind: "moved", from, to: this.node.id, edge: use.edge.id };
  }
}
