// The model of local development without a cloud account (`npm run dev` without --workers-ai): deterministic and
// offline, it follows the agent's graph with plausible replies instead of understanding anything. At a node it says
// what the node's prompt intends (a quoted line of the prompt, else its first instruction turned into a sentence:
// "Ask how many seats they need." → "Could you tell me how many seats you need?"); when the caller speaks it takes
// the transition whose label and condition share the most words with theirs (else the first that needs no
// arguments), filling the node's variables from their words and saying what it noted; at an endCall node it says
// goodbye and ends the call. So a sandbox call or a browser call walks the whole graph to its end, in words. Never
// used on a deployment.
import type { ChatEvent, ChatMessage, ChatModel, ChatRequest, ToolSpec } from "./chat";
import { CALL_INSTRUCTIONS } from "./graph";

export const LOCAL_MODEL_GOODBYE = "Thank you for your time. Goodbye!";
/** What the model opens a call with when the start node has no greeting and its prompt no sentence to say. */
export const LOCAL_MODEL_OPENING = "Hello! How can I help you today?";

/** Words that say yes or no, matched as one word each (so "sure" meets an edge "They said yes"). */
const YES = new Set(["yes", "yeah", "yep", "sure", "ok", "okay", "agree", "agreed", "interested", "definitely", "absolutely", "please", "great"]);
const NO = new Set(["no", "nope", "not", "don't", "dont", "never", "busy", "later", "decline", "declined", "refuse", "refused"]);
const STOP = new Set(
  "a an the and or but to of in on at for with about is are was were be been it its this that they them their you your we our i me my he she his her do does did have has had can could would should will shall may might just so than then there here what which who when where how if whether as by from up out into over".split(
    " ",
  ),
);
const NUMBER_WORDS: Record<string, number> = Object.fromEntries(
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
    .split(" ")
    .map((w, i) => [w, i] as const)
    .concat([
      ["thirty", 30],
      ["forty", 40],
      ["fifty", 50],
      ["hundred", 100],
    ]),
);

/** The words that carry meaning, lower case, a plural's or past tense's ending dropped, yes and no words merged. */
function keywords(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().match(/[a-z0-9']+/g) ?? []) {
    const w = raw.replace(/'s$/, "");
    if (YES.has(w)) out.add("yes");
    else if (NO.has(w) || w.endsWith("n't")) out.add("no");
    else if (!STOP.has(w) && w.length > 1) out.add(w.replace(/(?:ies|es|s|ed|ing)$/, "") || w);
  }
  return out;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Instructions about the caller, said to them: "they need" → "you need", "their" → "your". */
function toCaller(s: string): string {
  return s
    .replace(/\b(?:the (?:caller|customer|callee|person|lead|contact)'s|their)\b/gi, "your")
    .replace(/\b(?:the (?:caller|customer|callee|person|lead|contact)|they|them)\b/gi, "you")
    .replace(/\btheirs\b/gi, "yours")
    .replace(/\bthemselves\b/gi, "yourself")
    .replace(/\byou (?:is|was)\b/g, (m) => (m.endsWith("is") ? "you are" : "you were"))
    .replace(/\byou (has|does|wants|needs|likes|prefers)\b/g, (_m, v: string) => `you ${v === "has" ? "have" : v === "does" ? "do" : v.slice(0, -1)}`);
}

/** Who an instruction names before its content: "them", "the caller", or a name ("Ask Alan about ..."). */
const WHOM = String.raw`(?:(?:them|him|her|the (?:caller|customer|callee|person|lead|contact))|[A-Z][\w'-]*)`;
const WH = /^(?:whether|if|how|what|which|when|where|why|who)\b/i;

/** Instructions as the agent says them: the first rule whose pattern matches a clause turns it into a sentence. */
const RULES: Array<[RegExp, (m: RegExpMatchArray) => string]> = [
  [/^say (?:good-?bye|bye)\b/i, () => "Goodbye!"],
  [new RegExp(`^[Aa]sk (?:${WHOM} )?(.+)$`), (m) => askFor(toCaller(m[1]))],
  [/^find out (.+)$/i, (m) => (WH.test(m[1]) ? `Could you tell me ${toCaller(m[1])}?` : `Could you tell me about ${toCaller(m[1])}?`)],
  [new RegExp(`^(?:[Tt]ell|[Ii]nform|[Rr]emind) ${WHOM}(?: that)? (.+)$`), (m) => `${capitalize(toCaller(m[1]))}.`],
  [/^(?:say|mention|explain)(?: that)? (.+)$/i, (m) => `${capitalize(toCaller(m[1]))}.`],
  [new RegExp(`^[Ll]et ${WHOM} know(?: that)? (.+)$`), (m) => `${capitalize(toCaller(m[1]))}.`],
  [new RegExp(`^[Tt]hank ${WHOM}(?: for (.+))?$`), (m) => `Thank you for ${m[1] ? toCaller(m[1]) : "your time"}.`],
  [/^apologi[sz]e(?: for (.+))?$/i, (m) => (m[1] ? `I'm sorry for ${toCaller(m[1])}.` : "I'm sorry.")],
  [/^offer (?:them |the caller )?(.+)$/i, (m) => `I can offer you ${toCaller(m[1])}.`],
  [/^(?:confirm|repeat|read back) (.+)$/i, (m) => `Let me confirm ${toCaller(m[1])}.`],
  [/^greet\b/i, () => "Hello!"],
];

/** "Ask <rest>" as a question to the caller. */
function askFor(rest: string): string {
  if (WH.test(rest)) return `Could you tell me ${rest}?`;
  if (/^to\b/i.test(rest)) return `Could you please ${rest.replace(/^to\s+/i, "")}?`;
  return `Could I ask you ${rest}?`; // "about the conference", "for your name"
}

/** One clause of an instruction as a sentence to the caller, or null when it is not one to say. */
function clauseToSentence(raw: string): string | null {
  const c = raw
    .trim()
    .replace(/^(?:briefly|politely|kindly|warmly|first|then|also|now|finally),?\s+/i, "")
    .replace(/[.!?]+$/, "");
  for (const [pattern, say] of RULES) {
    const m = c.match(pattern);
    if (m) return say(m);
  }
  return null;
}

/** Verbs that start a new clause within one instruction ("apologise for X, thank them and say goodbye"). */
const CLAUSE =
  /(?:,\s+(?:and\s+)?|\s+and\s+)(?=(?:ask|say|tell|thank|offer|confirm|repeat|apologi[sz]e|let|mention|explain|find out|inform|remind)\b)|,\s+then\s+|\s+and then\s+/i;

/**
 * What a node's prompt intends the agent to say: its first quoted line, else its first sentence that is an
 * instruction to the caller, each of its clauses turned into a sentence ("" when none is).
 */
export function intendedLine(prompt: string): string {
  const quoted = prompt.match(/["“](\S[^"”]*\s[^"”]*\S)["”]/);
  if (quoted) return quoted[1].trim();
  const sentences = prompt
    .replace(/\s*\([^)]*\)/g, "")
    .split(/(?<=[.!?])\s+|:\s+|;\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of sentences) {
    if (/^(?:you are|you're|be|keep|never|always|don't|do not|use|reply|speak|only)\b/i.test(s)) continue;
    const said = s
      .split(CLAUSE)
      .map(clauseToSentence)
      .filter((x): x is string => x !== null);
    if (said.length) return said.join(" ");
  }
  return "";
}

/** The node's own prompt: the system prompt after the call instructions (the global prompt, if any, comes first). */
function nodePrompt(messages: ChatMessage[]): string {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const parts = system
    .replace(CALL_INSTRUCTIONS, "")
    .split(/\n\n+/)
    .filter((p) => p.trim());
  return parts[parts.length - 1] ?? "";
}

/** A value for a node's variable from the caller's words, or undefined when they do not hold one. */
function valueFrom(heard: string, type: string, only: boolean, hint: string): unknown {
  const words = heard.toLowerCase().match(/[a-z0-9.']+/g) ?? [];
  if (type === "number") {
    const digits = heard.match(/-?\d+(?:\.\d+)?/);
    if (digits) return Number(digits[0]);
    const w = words.find((x) => x in NUMBER_WORDS);
    return w === undefined ? undefined : NUMBER_WORDS[w];
  }
  const k = keywords(heard);
  if (type === "boolean") return k.has("yes") ? true : k.has("no") ? false : undefined;
  // A text variable takes the caller's words when it is the node's only one, or when its description shares theirs.
  const shared = [...keywords(hint)].some((w) => k.has(w));
  return only || shared ? heard.replace(/[.!?]+$/, "").trim() || undefined : undefined;
}

/**
 * The tool the caller's words point to: most keywords shared with its name and description, less half a word when
 * one of the two says no and the other does not ("sure" is not "not interested"); ties go to the first.
 */
function bestTool(tools: ToolSpec[], heard: string): ToolSpec | undefined {
  const said = keywords(heard);
  let best: { tool: ToolSpec; score: number } | undefined;
  for (const t of tools) {
    const k = keywords(`${t.name.replace(/_/g, " ")} ${t.description}`);
    const score = [...k].filter((w) => said.has(w)).length - (k.has("no") !== said.has("no") ? 0.5 : 0);
    if (!best || score > best.score) best = { tool: t, score };
  }
  return best?.tool;
}

export class LocalModel implements ChatModel {
  private calls = 0;

  constructor(private readonly reserved: ReadonlySet<string>) {}

  async *stream(request: ChatRequest): AsyncIterable<ChatEvent> {
    const { messages, tools } = request;
    const last = messages[messages.length - 1];
    let lastUser = messages.length - 1;
    while (lastUser >= 0 && messages[lastUser].role !== "user") lastUser--;
    const heard = lastUser >= 0 ? messages[lastUser].content.trim() : "";
    // Tools already called since the caller last spoke (an HTTP tool's answer came back): not called again.
    const called = new Set(messages.slice(lastUser + 1).flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.name) : [])));
    const ending = tools.find((t) => t.name === "end_call");
    // The graph's transitions and tools (never the agent's own actions, such as a transfer) it may call without arguments.
    const open = tools.filter((t) => !this.reserved.has(t.name) && t.parameters.required.length === 0 && !called.has(t.name));
    const intent = intendedLine(nodePrompt(messages));
    let say = "";
    let call: { name: string; arguments: Record<string, unknown> } | null = null;
    if (ending) {
      say = intent ? (/\bbye\b|goodbye/i.test(intent) ? intent : `${intent} Goodbye!`) : LOCAL_MODEL_GOODBYE;
      call = { name: ending.name, arguments: {} };
    } else if (last?.role === "tool" && /\bMoved to\b/.test(last.content)) {
      // Just arrived at this node: say what it is here for, then wait for the caller.
      say = intent;
    } else if (!heard) {
      say = intent || LOCAL_MODEL_OPENING;
    } else {
      const next = bestTool(open, heard);
      if (next) {
        const args = this.fill(next, heard);
        const noted = Object.entries(args).map(([name, v]) => `your ${name.replace(/_/g, " ")}: ${String(v)}`);
        // A tool's answer (last is a tool's result) needs no second acknowledgement.
        if (last?.role === "user") say = noted.length ? `Thank you, I've noted ${noted.join(", and ")}.` : acknowledgement(heard);
        call = { name: next.name, arguments: args };
      } else if (last?.role === "user") {
        // Nowhere to go from here: answer with the node's line again.
        say = `${acknowledgement(heard)} ${intent}`.trim();
      }
    }
    const words = say.match(/\S+\s*/g) ?? [];
    for (const w of words) yield { type: "text", text: w };
    if (call) yield { type: "tool_call", call: { id: `local_${++this.calls}`, ...call } };
    yield { type: "usage", inputTokens: messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0), outputTokens: words.length };
  }

  /** The tool's variables the caller's words hold. */
  private fill(tool: ToolSpec, heard: string): Record<string, unknown> {
    const props = Object.entries(tool.parameters.properties);
    const strings = props.filter(([, p]) => p.type === "string" && !p.enum).length;
    const args: Record<string, unknown> = {};
    for (const [name, p] of props) {
      if (p.enum) continue;
      const v = valueFrom(heard, p.type, strings === 1, `${name.replace(/_/g, " ")} ${p.description ?? ""}`);
      if (v !== undefined) args[name] = v;
    }
    return args;
  }
}

/** A short acknowledgement of the caller's words, by whether they said yes or no. */
function acknowledgement(heard: string): string {
  const k = keywords(heard);
  return k.has("no") ? "I understand." : k.has("yes") ? "Great." : "Okay.";
}
