// Carries out what the model's tool calls ask for on a call: an HTTP tool's request (headers opened for it alone), a
// transfer to a person (a warm one first gets a summary of the call, written by the model with a template to fall
// back on, and spoken in the agent's voice), and key presses. Each is recorded for the run's `tool_calls` and as a
// `tool` turn of the transcript: the name, how it went, how long it took; never a header, never the answer.
import { log } from "../lib/log";
import type { Action, HttpTool, TransferNode } from "./actions";
import type { ChatModel, ToolCall } from "./chat";
import type { Conversation } from "./graph";
import { runHttpTool } from "./http-tool";
import type { TextToSpeech } from "./speech";
import type { ActionResult } from "./turn";
import type { AgentControls, ToolCallRecord, TransferOutcome, TransferRequest } from "./voice-agent";

/** What a call's HTTP tools need beyond the definition: their headers opened, and the organization's network policy. */
export type ToolAccess = {
  headers(tool: HttpTool): Promise<Record<string, string>>;
  /** Whether the organization lets requests go to private addresses (asked at every request). */
  allowsPrivate(): Promise<boolean>;
  /** Where this service is reached: never a tool's address. */
  ownOrigins?: ReadonlyArray<string | null | undefined>;
  fetcher?: typeof fetch;
  /** A test call's mocked answer for a tool (agent tests' `mock_tools`): the tool's address is never asked. */
  mocked?(tool: HttpTool): ToolMock | undefined;
};

/** A tool's answer fixed in advance: a test scenario's, so a suite never reaches the systems the tools call. */
export type ToolMock = { tool: string; status: number; body: unknown };

/** A fetch that answers every request with the mock (the request itself is built and checked as any other). */
function mockFetch(mock: ToolMock): typeof fetch {
  return async () =>
    new Response(mock.body === undefined ? null : JSON.stringify(mock.body), { status: mock.status, headers: { "Content-Type": "application/json" } });
}

export const WARM_SUMMARY_MS = 4000;
const DEFAULT_WHISPER =
  "You are handing a phone call over to a colleague. In two or three short spoken sentences, tell them who is calling, what they want and what you learned. No greeting, no lists.";

export type RunnerDeps = {
  controls: () => AgentControls;
  conversation: Conversation;
  model: ChatModel;
  tts: TextToSpeech;
  access: ToolAccess | null;
  /** Resolves once what the agent has queued to say has been heard (the caller hears "let me transfer you" first). */
  untilHeard: () => Promise<void>;
};

export class ActionRunner {
  readonly records: ToolCallRecord[] = [];

  constructor(private readonly d: RunnerDeps) {}

  readonly run = async (action: Action, call: ToolCall): Promise<ActionResult> => {
    const c = this.d.controls();
    const startMs = c.now();
    const wallStart = c.wallNow();
    let out: { result: ActionResult; record: ToolCallRecord };
    try {
      if (action.type === "http") out = await this.http(action.tool, action.arguments);
      else if (action.type === "dtmf") out = await this.dtmf(action.digits);
      else out = await this.transfer(action.transfer);
    } catch (err) {
      // The runner's own failure (a carrier command that threw): the model reads it and the call goes on.
      const message = String((err as Error)?.message ?? err).slice(0, 300);
      const record: ToolCallRecord = { name: call.name, arguments: call.arguments, status: "error", http_status: null, duration_ms: 0, error: message };
      out = { result: { content: `Error: ${message}`, ...(action.type === "transfer" ? { transfer: "failed" as const } : {}) }, record };
    }
    const record = { ...out.record, duration_ms: out.record.duration_ms || Math.max(0, c.wallNow() - wallStart), at_ms: startMs };
    this.records.push(record);
    const how = record.http_status !== null ? `${record.status}, HTTP ${record.http_status}` : record.status;
    c.log({ role: "tool", text: `${record.name}: ${how} (${record.duration_ms} ms)${record.error ? `: ${record.error}` : ""}`, startMs, endMs: c.now() });
    log("info", "agent_tool_call", { name: record.name, status: record.status, http_status: record.http_status, duration_ms: record.duration_ms });
    return out.result;
  };

  private async http(tool: HttpTool, args: Record<string, unknown>) {
    const access = this.d.access;
    if (!access) {
      const record: ToolCallRecord = { name: tool.name, arguments: args, status: "error", http_status: null, duration_ms: 0, error: "tools are not available" };
      return { result: { content: "Error: this tool is not available on this call" }, record };
    }
    let headers: Record<string, string>;
    try {
      headers = await access.headers(tool);
    } catch {
      const record: ToolCallRecord = {
        name: tool.name,
        arguments: args,
        status: "error",
        http_status: null,
        duration_ms: 0,
        error: "its headers could not be opened",
      };
      return { result: { content: "Error: the tool is misconfigured and cannot be used now" }, record };
    }
    const mock = access.mocked?.(tool);
    const out = await runHttpTool(tool, args, {
      headers,
      allowsPrivate: () => access.allowsPrivate(),
      ownOrigins: access.ownOrigins,
      // A mocked tool still passes the URL policy (a scenario does not make a refused address work) but asks no DNS.
      ...(mock ? { fetcher: mockFetch(mock), resolve: null } : { fetcher: access.fetcher }),
    });
    return { result: { content: out.content }, record: out.record };
  }

  private async dtmf(digits: string) {
    await this.d.untilHeard();
    const started = Date.now();
    await this.d.controls().sendDtmf(digits);
    const record: ToolCallRecord = { name: "send_dtmf", arguments: { digits }, status: "ok", http_status: null, duration_ms: Date.now() - started };
    return { result: { content: `Pressed ${digits}.` }, record };
  }

  private async transfer(t: TransferNode) {
    await this.d.untilHeard();
    const started = Date.now();
    const request: TransferRequest = { destination: t.destination, mode: t.mode, timeoutSeconds: t.timeoutSeconds };
    if (t.mode === "warm") {
      request.summary = await this.summary(t.whisperPrompt);
      request.summaryAudio = await this.d.tts.synthesize(request.summary).catch((err) => {
        log("warning", "warm_summary_speech_failed", { error: String((err as Error)?.message ?? err) });
        return null;
      });
    }
    const outcome: TransferOutcome = await this.d.controls().transfer(request);
    const record: ToolCallRecord = {
      name: "transfer_call",
      arguments: { destination: t.destination, mode: t.mode },
      status: outcome === "connected" ? "ok" : "error",
      http_status: null,
      duration_ms: Date.now() - started,
      ...(outcome === "connected" ? {} : { error: outcome }),
    };
    return { result: { content: TRANSFER_RESULTS[outcome](t), transfer: outcome }, record };
  }

  /** The warm transfer's summary for the person taking over: by the model, else from a template. */
  async summary(whisperPrompt: string): Promise<string> {
    const conv = this.d.conversation;
    const said = conv.history
      .filter((m) => (m.role === "user" || m.role === "assistant") && m.content.trim())
      .map((m) => `${m.role === "user" ? "Caller" : "Agent"}: ${m.content.trim()}`)
      .join("\n");
    const gathered = Object.entries(conv.gathered).map(([k, v]) => `${k}: ${String(v)}`);
    const facts = `${said}${gathered.length ? `\n\nGathered: ${gathered.join("; ")}` : ""}`;
    try {
      let text = "";
      const timeout = AbortSignal.timeout(WARM_SUMMARY_MS);
      const request = {
        messages: [
          { role: "system" as const, content: whisperPrompt.trim() || DEFAULT_WHISPER },
          { role: "user" as const, content: `The call so far:\n${facts}` },
        ],
        tools: [],
      };
      for await (const ev of this.d.model.stream(request, timeout)) {
        if (timeout.aborted) break;
        if (ev.type === "text") text += ev.text;
      }
      if (text.trim()) return text.trim();
    } catch (err) {
      log("warning", "warm_summary_failed", { error: String((err as Error)?.message ?? err) });
    }
    return templateSummary(conv.gathered);
  }
}

/** The summary when the model gives none: what was gathered, in one sentence. */
export function templateSummary(gathered: Record<string, unknown>): string {
  const facts = Object.entries(gathered).map(([k, v]) => `${k.replace(/_/g, " ")} ${String(v)}`);
  return `I have a caller for you${facts.length ? `: ${facts.join(", ")}` : ""}. Connecting you now.`;
}

const TRANSFER_RESULTS: Record<TransferOutcome, (t: TransferNode) => string> = {
  connected: () => "The call was handed over; you are no longer on it.",
  no_answer: (t) => `Nobody answered within ${t.timeoutSeconds} s. The caller has been told; carry on helping them.`,
  failed: () => "The transfer failed. The caller has been told; carry on helping them.",
  unsupported: () => "This line cannot transfer calls. The caller has been told; carry on helping them.",
};
