// The carriers' DTMF commands as edgedial sends them: Telnyx's against the telnyx SDK's calls.actions.sendDtmf
// (captured at its fetch), Vonage's digit mapping; and the session's press log (a press two sources report is one).
// (Plivo's sendDigits and @vonage/voice's playDTMF do not load in this Node project; their paths and bodies are
// checked by the simulator, which validates them as the carriers document.)
import Telnyx from "telnyx";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PressLog, oneKey } from "../../src/calls/session/keypad";
import { telnyxSendDtmf } from "../../src/telephony/providers/telnyx/dtmf";
import { vonageDigits, vonageSendDtmf } from "../../src/telephony/providers/vonage/dtmf";
import type { ConfigContext, ProviderEnv } from "../../src/telephony/providers/types";

const ENV: ProviderEnv = { baseUrls: {}, publicBaseUrl: "https://edgedial.test" };
const ctxOf = (config: Record<string, unknown>): ConfigContext => ({ id: 1, orgId: 1, config, state: {}, activeNumbers: [] });

/** Our request, caught at fetch. */
async function ours(send: () => Promise<void>, status = 200) {
  let seen: { method: string; url: string; body: unknown } | null = null;
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    seen = { method: String(init.method), url: String(url), body: init.body ? JSON.parse(String(init.body)) : null };
    return new Response(JSON.stringify({}), { status, headers: { "Content-Type": "application/json" } });
  });
  await send();
  return seen!;
}

afterEach(() => vi.unstubAllGlobals());

describe("DTMF commands as the carriers' SDKs send them", () => {
  it("vonage: our digits as Vonage writes them (w as p, W as pp); A-D refused, so the session plays tones", async () => {
    expect(vonageDigits("12w#")).toBe("12p#");
    expect(vonageDigits("1W2")).toBe("1pp2");
    expect(vonageDigits("1A")).toBeNull();
    await expect(vonageSendDtmf(ctxOf({}), ENV, "u", "A")).rejects.toThrow(/A-D/);
  });

  it("telnyx: POST /v2/calls/{call_control_id}/actions/send_dtmf with digits; a refusal is an error naming the carrier", async () => {
    let sdk: { url: string; body: unknown } | null = null;
    const client = new Telnyx({
      apiKey: "KEY-test",
      maxRetries: 0,
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        sdk = { url: String(url), body: init?.body ? JSON.parse(String(init.body)) : null };
        return new Response(JSON.stringify({ data: { result: "ok" } }), { headers: { "Content-Type": "application/json" } });
      }) as typeof fetch,
    });
    await client.calls.actions.sendDtmf("v3:AbC-12_x", { digits: "1www2WA" });
    const mine = await ours(() => telnyxSendDtmf(ctxOf({ api_key: "KEY-test" }), ENV, "v3:AbC-12_x", "1www2WA"));
    expect({ url: mine.url, body: mine.body }).toEqual(sdk);
    expect(mine.method).toBe("POST");
    await expect(ours(() => telnyxSendDtmf(ctxOf({ api_key: "KEY-test" }), ENV, "v3:x", "1"), 422)).rejects.toThrow(
      /Telnyx refused the DTMF command \(HTTP 422\)/,
    );
  });
});

describe("the session's press log", () => {
  it("one press reported by the stream and a callback is one; two presses from one source are two; stale twins are new", () => {
    const log = new PressLog();
    expect(log.accept("5", "stream", 0)).toBe(true);
    expect(log.accept("5", "callback", 300)).toBe(false);
    expect(log.accept("5", "stream", 400)).toBe(true);
    expect(log.accept("5", "stream", 500)).toBe(true);
    expect(log.accept("5", "callback", 600)).toBe(false);
    expect(log.accept("5", "callback", 700)).toBe(false);
    expect(log.accept("5", "callback", 800)).toBe(true);
    expect(log.accept("7", "callback", 10_000)).toBe(true);
    expect(log.accept("7", "stream", 12_500)).toBe(true);
  });

  it("reads one key as carriers report it", () => {
    expect([oneKey("5"), oneKey(5), oneKey(" # "), oneKey("a"), oneKey("*")]).toEqual(["5", "5", "#", "A", "*"]);
    for (const bad of ["", "55", "E", null, undefined, {}, "w"]) expect(oneKey(bad)).toBeNull();
  });
});
