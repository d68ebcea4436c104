// One request of an agent's HTTP tool on the model's behalf: the organization's outbound-URL policy checked at every
// request (the policy may have changed since the agent was saved), against the addresses the name resolves to too
// (DNS over HTTPS, lib/dns.ts) and never this service itself, no redirects followed (a redirect could lead
// anywhere the policy refuses), a timeout, and the answer capped. The model gets the answer's text or a plain error;
// the run gets a record without the answer. Header values are secrets: they are sent, and nowhere else (an answer
// that echoes one has it blanked before the model reads it).
import { dohResolver, type Resolve } from "../lib/dns";
import { checkOutboundUrl, checkResolved, classifyHost } from "../lib/url-guard";
import type { HttpTool } from "./actions";
import type { ToolCallRecord } from "./voice-agent";

/** What the model reads of an answer at most (a phone call cannot wait for a model to read more). */
export const MAX_TOOL_RESPONSE_BYTES = 16 * 1024;
const ERROR_BODY_CHARS = 500;

export type HttpToolContext = {
  /** The tool's headers, opened (names as declared). */
  headers: Record<string, string>;
  /** Whether the organization lets requests go to private addresses, asked at every request. */
  allowsPrivate: () => Promise<boolean>;
  fetcher?: typeof fetch;
  /** Where this service is reached (PUBLIC_BASE_URL): a tool may not call edgedial's own API. */
  ownOrigins?: ReadonlyArray<string | null | undefined>;
  /** The name's addresses; by default DNS over HTTPS, none asked when a `fetcher` (its own network) is given alone. */
  resolve?: Resolve | null;
  /** Milliseconds, for the duration (a clock passed in: tests and the call's own). */
  now?: () => number;
};

export type HttpToolOutcome = { content: string; record: ToolCallRecord };

export async function runHttpTool(tool: HttpTool, args: Record<string, unknown>, ctx: HttpToolContext): Promise<HttpToolOutcome> {
  const now = ctx.now ?? Date.now;
  const started = now();
  const record = (status: ToolCallRecord["status"], httpStatus: number | null, error: string | null): ToolCallRecord => ({
    name: tool.name,
    arguments: args,
    status,
    http_status: httpStatus,
    duration_ms: Math.max(0, Math.round(now() - started)),
    ...(error ? { error } : {}),
  });
  const secrets = Object.values(ctx.headers).filter((v) => v.length >= 4);
  const blank = (s: string) => secrets.reduce((out, v) => out.split(v).join("[redacted]"), s);
  const fail = (status: ToolCallRecord["status"], httpStatus: number | null, message: string): HttpToolOutcome => {
    const safe = blank(message);
    return { content: `Error: ${safe}`, record: record(status, httpStatus, safe.slice(0, 300)) };
  };

  const allowPrivate = await ctx.allowsPrivate();
  const verdict = checkOutboundUrl(tool.url, { allowPrivate, ownOrigins: ctx.ownOrigins, refuseSpecialUse: true });
  if (!verdict.ok) return fail("refused", null, `the tool's address is refused: ${verdict.message}`);
  const url = new URL(tool.url);
  // A name (not an address) is judged by what it resolves to; an answer DNS could not give refuses the request.
  const resolve = ctx.resolve !== undefined ? ctx.resolve : ctx.fetcher ? null : dohResolver();
  if (resolve && !/^[\d.]+$|^\[/.test(url.hostname) && classifyHost(url.hostname) === "public") {
    const addresses = await resolve(url.hostname);
    if (!addresses) return fail("refused", null, `the tool's address is refused: ${url.hostname} could not be resolved to check where it points`);
    const resolved = checkResolved(url.hostname, addresses, { allowPrivate });
    if (!resolved.ok) return fail("refused", null, `the tool's address is refused: ${resolved.message}`);
  }
  const hasBody = tool.method !== "GET" && tool.method !== "DELETE";
  if (!hasBody) for (const [k, v] of Object.entries(args)) url.searchParams.set(k, typeof v === "string" ? v : JSON.stringify(v));
  const headers = new Headers({ Accept: "application/json, text/plain;q=0.9, */*;q=0.5", "User-Agent": "edgedial-agent-tool/1" });
  if (hasBody) headers.set("Content-Type", "application/json");
  for (const [k, v] of Object.entries(ctx.headers)) headers.set(k, v);

  let res: Response;
  try {
    res = await (ctx.fetcher ?? fetch).call(undefined, url.toString(), {
      method: tool.method,
      headers,
      body: hasBody ? JSON.stringify(args) : undefined,
      redirect: "manual",
      signal: AbortSignal.timeout(tool.timeoutMs),
    });
  } catch (err) {
    const e = err as Error;
    if (e?.name === "TimeoutError" || e?.name === "AbortError") return fail("timeout", null, `the tool did not answer within ${tool.timeoutMs / 1000} s`);
    return fail("error", null, `the tool could not be reached: ${String(e?.message ?? err)}`);
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {});
    return fail("error", res.status, `the tool answered with a redirect (HTTP ${res.status}), which is not followed`);
  }
  let body: { text: string; truncated: boolean };
  try {
    body = await readCapped(res, MAX_TOOL_RESPONSE_BYTES);
  } catch (err) {
    const e = err as Error;
    if (e?.name === "TimeoutError" || e?.name === "AbortError") return fail("timeout", res.status, `the tool did not answer within ${tool.timeoutMs / 1000} s`);
    return fail("error", res.status, `the tool's answer could not be read: ${String(e?.message ?? err)}`);
  }
  if (!res.ok) {
    const shown = body.text.trim().slice(0, ERROR_BODY_CHARS);
    return fail("error", res.status, `the tool answered HTTP ${res.status}${shown ? `: ${shown}` : ""}`);
  }
  const text = blank(body.text);
  const note = body.truncated ? `\n[The answer was cut at ${MAX_TOOL_RESPONSE_BYTES} bytes]` : "";
  return { content: text.trim() ? `${text}${note}` : `(The tool answered HTTP ${res.status} with no content)`, record: record("ok", res.status, null) };
}

/** The answer's text, at most `max` bytes of it (the rest is not read: the connection is let go). */
async function readCapped(res: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: "", truncated: false };
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > max) {
      parts.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    parts.push(value);
    size += value.length;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  // A multi-byte character cut at the cap decodes as one replacement character, which the model reads past.
  return { text: new TextDecoder().decode(all), truncated };
}
