// No per-run token in any line the Worker logs: a call through its answer, media and status callbacks (with a replayed
// stream URL and refused callbacks, whose paths the client-error log records) is run while the Worker's console is
// captured (the pool runs the Worker in the test's isolate). Also what `npm run dev` prints of wrangler's request log.
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { callbackToken } from "../../src/calls/callbacks/callback-urls";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../src/dev/simulator/media/callee";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import type { Callback } from "../../src/dev/simulator/types";
import { redactTokens } from "../../src/lib/redact";
import { ECHO_WORKER, echoCall, fetchWorker, upgradeAt } from "./media-support";
import { callbackRequest, play, runRow } from "./support";

const live = (req: Request) => fetchWorker(req, ECHO_WORKER);
const send = (cb: Callback, url = cb.url) => live(callbackRequest(cb, url));

let lines: string[] = [];
beforeEach(() => {
  lines = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
  }
});
afterEach(() => vi.restoreAllMocks());

describe("per-run tokens stay out of the Worker's logs", () => {
  it.each(["twilio", "plivo"] as const)("%s: a call through its callbacks and media, with replays and refusals", async (provider) => {
    const { runId } = await echoCall(provider);
    const callId = (await runRow(runId)).providerCallId!;
    const callbacks = await play(callId, "answered");
    const answer = callbacks.find((c) => c.kind === "answer")!;
    const doc = await send(answer);
    expect(doc.status, doc.text).toBe(200);
    const streamUrl = streamUrlIn(doc.text)!;

    const res = await upgradeAt(provider, runId, streamUrl.replace(/^ws/, "http"));
    expect(res.status).toBe(101);
    res.webSocket!.accept();
    const callee = new CalleeStream(res.webSocket!, CALLEE_PROTOCOLS[provider]);
    callee.open(callId);
    callee.silence(200);
    // The stream URL replayed while the call is up (403), and callbacks refused on their tokens or signatures (401,
    // 403): each is a client-error line naming the path.
    expect((await upgradeAt(provider, runId, streamUrl.replace(/^ws/, "http"))).status).toBe(403);
    const status = callbacks.find((c) => c.kind === "status")!;
    expect((await send(status, status.url.replace(/[0-9a-f]{64}$/, "0".repeat(64)))).status).toBe(401);
    expect((await live(new Request(status.url, { method: "POST", body: "CallStatus=completed" }))).status).toBe(403);
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    for (const cb of callbacks) if (cb.kind === "status") expect((await send(cb)).status).toBeLessThan(300);

    const runToken = await callbackToken(env.CALLBACK_SECRET, provider, runId);
    const streamToken = new URL(streamUrl).pathname.split("/").pop()!;
    // The capture saw the refusals (so a leak would have shown), their paths redacted.
    expect(lines.some((l) => l.includes(`/stream/${runId}/[redacted]`))).toBe(true);
    expect(lines.some((l) => l.includes(`/status/${runId}/[redacted]`))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(runToken);
      expect(line).not.toContain(streamToken);
      expect(line).not.toContain(streamToken.split(".")[2]);
      expect(line).not.toMatch(/[0-9a-f]{64}/);
    }
  });

  it("an error naming a URL is redacted by log() and the 500 handler alike", async () => {
    const { log } = await import("../../src/lib/log");
    const token = await callbackToken(env.CALLBACK_SECRET, "exotel", 7);
    log("error", "carrier_refused", {
      error: `streamurl wss://dial.example.com/api/v1/telephony/exotel/stream/7/1700000900.${"a".repeat(32)}.${token} is invalid`,
    });
    expect(lines).toEqual([
      JSON.stringify({
        level: "error",
        event: "carrier_refused",
        error: "streamurl wss://dial.example.com/api/v1/telephony/exotel/stream/7/[redacted] is invalid",
      }),
    ]);
    // The unknown route's 404 is a client error too: its path is redacted like a callback's.
    await exports.default.fetch(new Request(`http://edgedial.test/api/v1/telephony/twilio/answer/7/${token}/x`));
    expect(lines.join("\n")).not.toContain(token);
  });
});

describe("redactTokens (the Worker's log lines and npm run dev's echo of wrangler)", () => {
  const run = "a".repeat(64);
  const stream = `1790000000.${"b".repeat(32)}.${"c".repeat(64)}`;
  it.each([
    [
      `[wrangler:info] GET /api/v1/telephony/twilio/stream/12/${stream} 101 Switching Protocols (5ms)`,
      "[wrangler:info] GET /api/v1/telephony/twilio/stream/12/[redacted] 101 Switching Protocols (5ms)",
    ],
    [
      `[wrangler:info] POST /api/v1/telephony/plivo/status/12/${run} 204 No Content (9ms)`,
      "[wrangler:info] POST /api/v1/telephony/plivo/status/12/[redacted] 204 No Content (9ms)",
    ],
    [
      `[wrangler:info] GET /api/v1/telephony/vonage/answer/12/${run}?uuid=u-1 200 OK (7ms)`,
      "[wrangler:info] GET /api/v1/telephony/vonage/answer/12/[redacted]?uuid=u-1 200 OK (7ms)",
    ],
    [
      `[wrangler:info] GET /api/v1/telephony/ari/stream?run_id=12&token=${stream} 101`,
      "[wrangler:info] GET /api/v1/telephony/ari/stream?run_id=12&token=[redacted] 101",
    ],
    [`transport_data=f(json)v(run_id=12,token=${stream})`, "transport_data=f(json)v(run_id=12,token=[redacted])"],
    [`POST /api/v1/telephony/twilio/resume/12/${run}`, "POST /api/v1/telephony/twilio/resume/12/[redacted]"],
    // Outside any callback path or parameter (an error echoing a token alone, a URL cut to its last segment): the
    // shape alone, 64 hex characters, or a stream token's expiry.nonce.mac.
    [`callback refused: token ${run} does not match`, "callback refused: token [redacted] does not match"],
    [`…/12/${run.toUpperCase()}`, "…/12/[redacted]"],
    [`stream token ${stream} expired`, "stream token [redacted] expired"],
    ["GET /api/v1/campaign/12/progress 200 OK", "GET /api/v1/campaign/12/progress 200 OK"],
  ])("%s", (line, redacted) => {
    expect(redactTokens(line)).toBe(redacted);
  });
});

// Issue 39: the path rule took only [a-z_]+ routes, so hyphenated ones were left to the 64-hex fallback, which misses a
// token with anything appended (a mistyped or probing request's path still carries the whole token).
describe("every token route, hyphenated ones included, by the path rule (not the 64-hex fallback)", () => {
  const leaky = `${"d".repeat(64)}0`;
  it.each([
    ["answer", `POST /api/v1/telephony/twilio/answer/12/${leaky} 401`],
    ["transfer-status", `POST /api/v1/telephony/twilio/transfer-status/12/${leaky} 401`],
    ["transfer-whisper", `GET /api/v1/telephony/plivo/transfer-whisper/12/${leaky} 401`],
    ["inbound", `POST /api/v1/telephony/vonage/inbound/3/${leaky}?from=1 401`],
    ["inbound-stream", `GET /api/v1/telephony/exotel/inbound-stream/3/${leaky} 401`],
    ["web-call", `GET /api/v1/web-call/12/${leaky} 403`],
  ])("%s", (_route, line) => {
    const out = redactTokens(line);
    expect(out).not.toContain("d".repeat(16));
    expect(out).toBe(line.replace(leaky, "[redacted]"));
  });

  it("the Worker's client-error line of a refused transfer-status request", async () => {
    const token = await callbackToken(env.CALLBACK_SECRET, "twilio", 7);
    const res = await exports.default.fetch(
      new Request(`http://edgedial.test/api/v1/telephony/twilio/transfer-status/7/${token}x`, { method: "POST", body: "CallStatus=completed" }),
    );
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(lines.some((l) => l.includes("/transfer-status/7/[redacted]"))).toBe(true);
    expect(lines.join("\n")).not.toContain(token);
  });
});
