// A live call's commands edgedial sends (a cold transfer, a warm transfer's person's call, keys pressed), next to what
// each carrier's SDK sends for the same: twilio's client in-process (its transport replaced), Plivo's and Vonage's
// captured in Node before the pool (sdk-requests.global.ts). Method, path and body compared decoded. Telnyx's
// transfer commands are compared in transfer-telnyx.test.ts, its DTMF in test/telephony/dtmf-sdk.unit.test.ts.
import Ajv from "ajv";
import addFormats from "ajv-formats";
import twilio from "twilio";
import VoiceResponse from "twilio/lib/twiml/VoiceResponse";
import { afterEach, describe, expect, inject, it } from "vitest";
import * as sim from "../../src/dev/simulator/sign";
import { plivo } from "../../src/telephony/providers/plivo";
import { twilio as twilioProvider } from "../../src/telephony/providers/twilio";
import { personForm, personTwiml } from "../../src/telephony/providers/twilio/transfer";
import type { ConfigContext, ProviderEnv, TransferLeg } from "../../src/telephony/providers/types";
import { vobiz } from "../../src/telephony/providers/vobiz";
import { vonage } from "../../src/telephony/providers/vonage";
import { transferBody } from "../../src/telephony/providers/vonage/transfer";
import nccoSchema from "../fixtures/vonage/ncco-schema.json";
import { SDK_CALL, SDK_COMMAND } from "./sdk-requests.global";

const C = SDK_COMMAND;
const leg: TransferLeg = {
  runId: 1,
  providerCallId: C.callId,
  to: C.person,
  from: C.from,
  mode: "cold",
  timeoutSeconds: C.timeoutSeconds,
  statusUrl: "https://edgedial.test/api/v1/telephony/x/transfer-status/1/tok",
  documentUrl: C.documentUrl,
};
const ctx = (config: Record<string, unknown>): ConfigContext => ({ id: 1, orgId: 1, config, state: {}, activeNumbers: [] });
const penv = { baseUrls: {}, carrierTimeoutMs: 1000 } as unknown as ProviderEnv;

/** What edgedial sends while `send` runs (its fetch is ours: nothing leaves the test). */
async function ours(send: () => Promise<unknown>, status = 202) {
  const seen: { method: string; url: URL; body: string; headers: Headers }[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    seen.push({ method: String(init?.method ?? "GET"), url: new URL(String(input)), body: String(init?.body ?? ""), headers: new Headers(init?.headers) });
    return status === 204 ? new Response(null, { status }) : new Response(JSON.stringify({ message: "ok", api_id: "a-1" }), { status });
  }) as typeof fetch;
  await send();
  expect(seen).toHaveLength(1);
  return seen[0];
}
const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

describe("Plivo and Vobiz commands against plivo's SDK", () => {
  const { plivoTransfer, plivoDtmf } = inject("sdkCommands");
  const config = { auth_id: "MA0000000000000000000", auth_token: "token-0001" };

  it("cold transfer: the JSON edgedial posts to …/Call/{uuid}/ is what calls.transfer posts (Vobiz: the same body)", async () => {
    expect(plivoTransfer.method).toBe("POST");
    for (const [provider, prefix] of [
      [plivo, "/v1/Account/"],
      [vobiz, "/api/v1/Account/"],
    ] as const) {
      const sent = await ours(async () => expect(await provider.calls!.transfer!.cold!(ctx(config), penv, leg)).toEqual({ ok: true }));
      expect(sent.method).toBe("POST");
      expect(sent.url.pathname).toBe(`${prefix}${config.auth_id}/${plivoTransfer.url}`);
      expect(JSON.parse(sent.body)).toEqual(plivoTransfer.body);
    }
  });

  it("keys: the JSON edgedial posts to …/Call/{uuid}/DTMF/ is what calls.sendDigits posts", async () => {
    const sent = await ours(() => plivo.calls!.sendDtmf!(ctx(config), penv, C.callId, C.digits));
    expect([sent.method, sent.url.pathname]).toEqual([plivoDtmf.method, `/v1/Account/${config.auth_id}/${plivoDtmf.url}`]);
    expect(JSON.parse(sent.body)).toEqual(plivoDtmf.body);
  });
});

describe("Vonage commands against @vonage/voice", () => {
  const { vonageTransfer, vonageDtmf } = inject("sdkCommands");
  const config = async () => {
    const { pkcs8 } = await sim.rsaKeyPair();
    return { application_id: SDK_CALL.applicationId, private_key: sim.pem("PRIVATE KEY", pkcs8) };
  };

  it("cold transfer: the PUT edgedial sends is what transferCallWithNCCO sends (a connect NCCO to the person)", async () => {
    const c = ctx(await config());
    const sent = await ours(async () => expect(await vonage.calls!.transfer!.cold!(c, penv, leg)).toEqual({ ok: true }), 204);
    expect([sent.method, sent.url.toString()]).toEqual([vonageTransfer.method, vonageTransfer.url]);
    expect(JSON.parse(sent.body)).toEqual(vonageTransfer.body);
    expect(sent.headers.get("authorization")).toMatch(/^Bearer /);
  });

  it("the transfer's NCCO is valid against Vonage's published NCCO schema (test/fixtures/vonage), without a caller ID too", () => {
    const { $schema: _draft, ...schema } = nccoSchema as Record<string, unknown>;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const valid = ajv.compile(schema);
    for (const l of [leg, { ...leg, from: null }]) {
      const ncco = transferBody(l).destination.ncco;
      expect(valid(ncco), JSON.stringify(valid.errors)).toBe(true);
    }
  });

  it("keys: the PUT edgedial sends to …/dtmf is what playDTMF sends (`w` written as Vonage's `p`)", async () => {
    const c = ctx(await config());
    const sent = await ours(() => vonage.calls!.sendDtmf!(c, penv, C.callId, C.digits), 200);
    expect([sent.method, sent.url.toString()]).toEqual([vonageDtmf.method, vonageDtmf.url]);
    expect(JSON.parse(sent.body)).toEqual(vonageDtmf.body);
  });
});

describe("Twilio transfer requests against twilio's SDK", () => {
  const sid = "AC00000000000000000000000000000001";
  const config = { account_sid: sid, auth_token: "token-0001" };
  /** What twilio's client sends for `send` (its HTTP client is ours). */
  async function theirs(send: (client: ReturnType<typeof twilio>) => Promise<unknown>) {
    const seen: { method: string; uri: string; data: Record<string, string | string[]> }[] = [];
    const httpClient = {
      request: async (o: (typeof seen)[number]) => (seen.push(o), { statusCode: 200, body: { sid: "CA1", status: "in-progress" }, headers: {} }),
    };
    await send(twilio(sid, "token-0001", { httpClient } as never));
    return seen[0];
  }
  const entries = (data: Record<string, string | string[]>) =>
    Object.entries(data)
      .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, String(x)]) : [[k, String(v)]]))
      .sort(([a, x], [b, y]) => (a === b ? x.localeCompare(y) : a.localeCompare(b)));

  it("cold: the update edgedial posts is calls(sid).update({twiml}) of VoiceResponse's <Dial callerId timeout><Number>", async () => {
    const callSid = "CA00000000000000000000000000000002";
    const r = new VoiceResponse();
    r.dial({ callerId: C.from, timeout: C.timeoutSeconds }).number(C.person);
    const sdk = await theirs((client) => client.calls(callSid).update({ twiml: r.toString() }));
    const sent = await ours(
      async () => expect(await twilioProvider.calls!.transfer!.cold!(ctx(config), penv, { ...leg, providerCallId: callSid })).toEqual({ ok: true }),
      200,
    );
    expect([sent.method, sent.url.pathname]).toEqual([sdk.method.toUpperCase(), new URL(sdk.uri).pathname]);
    expect([...new URLSearchParams(sent.body)]).toEqual(entries(sdk.data));
  });

  it("warm: the person's call is calls.create with the same TwiML (whisper, then the conference), callback, events and timeout", async () => {
    const warm: TransferLeg = { ...leg, mode: "warm", room: "edgedial-1-abcd", whisper: { url: "https://edgedial.test/w.wav", text: "Ada." } };
    const r = new VoiceResponse();
    r.play(warm.whisper!.url!);
    r.dial().conference({ beep: "false", endConferenceOnExit: true, waitUrl: "" }, warm.room!);
    expect(personTwiml(warm)).toBe(r.toString());
    const sdk = await theirs((client) =>
      client.calls.create({
        to: C.person,
        from: C.from,
        twiml: r.toString(),
        statusCallback: warm.statusUrl,
        statusCallbackMethod: "POST",
        statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
        timeout: C.timeoutSeconds,
      }),
    );
    expect(new URL(sdk.uri).pathname).toBe(`/2010-04-01/Accounts/${sid}/Calls.json`);
    expect(entries(Object.fromEntries([...new Set(personForm(warm).keys())].map((k) => [k, personForm(warm).getAll(k)])))).toEqual(entries(sdk.data));
  });
});
