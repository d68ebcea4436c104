// What the agent can do on the call besides talking and moving through its graph, as the definition declares it:
// the agent's HTTP tools (offered at the nodes they name), a transferCall node's hand-over, and pressing keys at
// nodes that allow it. Pure: read from the definition as stored (headers still sealed), no I/O.
import { DTMF_KEYS, HTTP_METHODS, RESERVED_TOOL_NAMES } from "../workflows/tools";
import type { ToolParameters, ToolSpec } from "./chat";

export { DTMF_KEYS, HTTP_METHODS, RESERVED_TOOL_NAMES };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === "string" ? v : "");

export const TRANSFER_TOOL = "transfer_call";
export const SEND_DTMF_TOOL = "send_dtmf";
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const DEFAULT_TOOL_TIMEOUT_MS = 5000;

/** An agent-level HTTP tool as stored: header values are sealed envelopes (opened only for a call), or plain text. */
export type HttpTool = {
  name: string;
  description: string;
  parameters: ToolParameters | Obj;
  url: string;
  method: HttpMethod;
  headers: Record<string, unknown>;
  timeoutMs: number;
  /** The node ids that offer it; null: every conversation node. */
  nodes: string[] | null;
};

/** A transferCall node's data. */
export type TransferNode = {
  destination: string;
  mode: "cold" | "warm";
  message: string;
  whisperPrompt: string;
  timeoutSeconds: number;
};

export const DEFAULT_TRANSFER_TIMEOUT_SECONDS = 30;

/** What a tool call of the model asks the agent to do (the runner carries it out). */
export type Action = { type: "http"; tool: HttpTool; arguments: Obj } | { type: "transfer"; transfer: TransferNode } | { type: "dtmf"; digits: string };

/** The agent's HTTP tools from a definition's `tools` (malformed entries are skipped: the validator reports them). */
export function httpTools(definition: unknown): HttpTool[] {
  const list = isObj(definition) && Array.isArray(definition.tools) ? definition.tools : [];
  const out: HttpTool[] = [];
  for (const t of list) {
    if (!isObj(t) || typeof t.name !== "string" || typeof t.url !== "string") continue;
    const method = String(t.method ?? "POST").toUpperCase();
    out.push({
      name: t.name,
      description: text(t.description),
      parameters: isObj(t.parameters) ? t.parameters : { type: "object", properties: {}, required: [] },
      url: t.url,
      method: (HTTP_METHODS as readonly string[]).includes(method) ? (method as HttpMethod) : "POST",
      headers: isObj(t.headers) ? t.headers : {},
      timeoutMs: typeof t.timeout_ms === "number" && t.timeout_ms > 0 ? t.timeout_ms : DEFAULT_TOOL_TIMEOUT_MS,
      nodes: Array.isArray(t.nodes) && t.nodes.length ? t.nodes.filter((n): n is string => typeof n === "string") : null,
    });
  }
  return out;
}

export function transferNode(data: Obj): TransferNode {
  const t = Number(data.timeout_seconds);
  return {
    destination: text(data.destination).trim(),
    mode: data.mode === "warm" ? "warm" : "cold",
    message: text(data.message),
    whisperPrompt: text(data.whisper_prompt),
    timeoutSeconds: Number.isFinite(t) && t > 0 ? t : DEFAULT_TRANSFER_TIMEOUT_SECONDS,
  };
}

export function httpToolSpec(t: HttpTool): ToolSpec {
  return { name: t.name, description: t.description || `Calls ${t.name}`, parameters: t.parameters as ToolParameters };
}

export const SEND_DTMF_SPEC: ToolSpec = {
  name: SEND_DTMF_TOOL,
  description:
    "Press keys on the phone's keypad, e.g. to choose an option of an automated phone menu. Only when a menu asks for it, never while talking with a person.",
  parameters: {
    type: "object",
    properties: { digits: { type: "string", description: "The keys to press in order: 0-9, *, #; w waits half a second" } },
    required: ["digits"],
  },
};
