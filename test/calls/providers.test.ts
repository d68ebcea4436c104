// Each carrier against the simulator: the originate request's exact shape and auth, the answer document,
// every outcome the carrier distinguishes, signatures (valid accepted, forged refused, nothing changed),
// duplicate and out-of-order callbacks, hang-up, and a carrier refusal (502, run failed with its message).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Callback, Outcome } from "../../src/dev/simulator/types";
import type { CallStatus, ProviderName } from "../../src/telephony/providers/types";
import { hangupRun } from "../../src/calls/start/start";
import { call } from "../helpers";
import {
  CALLEE,
  CALLER,
  deliver,
  deliverAll,
  drain,
  flush,
  ONCE_ONLY,
  play,
  redeliver,
  runApi,
  runRow,
  setup,
  simFault,
  simRequests,
  startCall,
  type Recorded,
  type Setup,
  CONTEXT,
} from "./support";

const enc = new TextEncoder();
const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");

/** The per-run token, computed here independently: hex(HMAC-SHA256(CALLBACK_SECRET, provider:run)). */
async function token(provider: string, runId: number) {
  const key = await crypto.subtle.importKey("raw", enc.encode(env.CALLBACK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await crypto.subtle.sign("HMAC", key, enc.encode(`${provider}:${runId}`)));
}
async function urls(provider: string, runId: number) {
  const t = await token(provider, runId);
  return {
    answer: `http://edgedial.test/api/v1/telephony/${provider}/answer/${runId}/${t}`,
    status: `http://edgedial.test/api/v1/telephony/${provider}/status/${runId}/${t}`,
    stream: `ws://edgedial.test/api/v1/telephony/${provider}/stream/${runId}/${t}`,
  };
}
const basic = (u: string, p: string) => `Basic ${btoa(`${u}:${p}`)}`;
const GREETING = "Hello Ada, this is Edgedial & co.";

/** The originate request the simulator received (provisioning requests, if any, come before it). */
async function originateRequest(s: Setup, path: RegExp): Promise<Recorded> {
  const reqs = (await simRequests(s.acct)).filter((r) => path.test(r.path) && r.method === "POST");
  expect(reqs.length, "exactly one originate request").toBe(1);
  return reqs[0];
}

type Spec = {
  provider: ProviderName;
  extra?: Record<string, unknown>;
  outcomes: Partial<Record<Outcome, CallStatus>>;
  checkOriginate(s: Setup, runId: number): Promise<void>;
  /** Checks the answer document response (or what stands for it). */
  checkAnswer(s: Setup, runId: number, answers: Array<{ cb: Callback; status: number; text: string; headers: Headers }>): Promise<void>;
  /** Ways to forge a callback; each must be refused with the status given. */
  forgeries: Array<{
    name: string;
    status: 401 | 403;
    tweak: (cb: Callback) => Parameters<typeof deliver>[1] | Promise<Parameters<typeof deliver>[1]>;
    opts?: { stale?: boolean; expired?: boolean; apiKey?: string };
  }>;
  /** What a hang-up through the provider module leads to (none: the carrier documents no hang-up). */
  hangup?: CallStatus;
};

const flipLastChar = (s: string) => s.slice(0, -2) + (s.at(-2) === "A" ? "B" : "A") + s.at(-1);
const wrongToken = (cb: Callback) => ({ url: cb.url.replace(/\/[0-9a-f]{64}(\?|$)/, `/${"0".repeat(64)}$1`) });

/** Every outcome but a timeout, each a CallStatus of the same name (answered: completed). */
const OUTCOMES: Spec["outcomes"] = {
  answered: "completed",
  busy: "busy",
  no_answer: "no_answer",
  voicemail: "voicemail",
  failed: "failed",
  declined: "declined",
  canceled: "canceled",
};

// Plivo and Vobiz share the originate body and the CallStatus table; what differs
// (path, auth headers, signatures, answer check) stays in each spec.
const PLIVO_FAMILY_OUTCOMES: Spec["outcomes"] = { ...OUTCOMES, timeout: "failed" };

/** The answer check of a carrier whose answer document speaks the greeting: one document, of `contentType`, as `check` wants it. */
const oneAnswer =
  (contentType: string, check: (text: string) => void): Spec["checkAnswer"] =>
  async (_s, _runId, answers) => {
    expect(answers).toHaveLength(1);
    expect(answers[0].headers.get("content-type")).toBe(contentType);
    check(answers[0].text);
  };
const SAY_AND_HANG_UP = '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello Ada, this is Edgedial &amp; co.</Say><Hangup/></Response>';
async function expectPlivoFamilyBody(r: Recorded, provider: "plivo" | "vobiz", runId: number) {
  const u = await urls(provider, runId);
  expect(JSON.parse(r.body)).toEqual({
    from: CALLER.slice(1),
    to: CALLEE.slice(1),
    answer_url: u.answer,
    answer_method: "POST",
    ring_url: u.status,
    ring_method: "POST",
    hangup_url: u.status,
    hangup_method: "POST",
    ring_timeout: 60,
  });
}

const SPECS: Spec[] = [
  {
    provider: "twilio",
    extra: { amd_enabled: true },
    outcomes: OUTCOMES,
    async checkOriginate(s, runId) {
      const sid = s.acct.credentials.account_sid;
      const r = await originateRequest(s, /Calls\.json$/);
      const u = await urls("twilio", runId);
      expect(r.path).toBe(`/2010-04-01/Accounts/${sid}/Calls.json`);
      expect(r.headers.authorization).toBe(basic(sid, s.acct.credentials.auth_token));
      expect(r.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      const f = new URLSearchParams(r.body);
      expect([...f.keys()].sort()).toEqual(
        [
          "From",
          "MachineDetection",
          "Method",
          "StatusCallback",
          "StatusCallbackEvent",
          "StatusCallbackEvent",
          "StatusCallbackEvent",
          "StatusCallbackEvent",
          "StatusCallbackMethod",
          "Timeout",
          "To",
          "Url",
        ].sort(),
      );
      expect(f.get("To")).toBe(CALLEE);
      expect(f.get("From")).toBe(CALLER);
      expect(f.get("Url")).toBe(u.answer);
      expect(f.get("Method")).toBe("POST");
      expect(f.get("StatusCallback")).toBe(u.status);
      expect(f.get("StatusCallbackMethod")).toBe("POST");
      expect(f.getAll("StatusCallbackEvent")).toEqual(["initiated", "ringing", "answered", "completed"]);
      expect(f.get("Timeout")).toBe("60");
      expect(f.get("MachineDetection")).toBe("Enable");
    },
    checkAnswer: oneAnswer("text/xml", (text) => expect(text).toBe(SAY_AND_HANG_UP)),
    forgeries: [
      {
        name: "a forged X-Twilio-Signature",
        status: 403,
        tweak: (cb) => ({ headers: { "X-Twilio-Signature": flipLastChar(cb.headers["X-Twilio-Signature"]) } }),
      },
      { name: "no signature", status: 403, tweak: () => ({ headers: { "X-Twilio-Signature": null } }) },
      {
        name: "a body changed under a valid signature",
        status: 403,
        tweak: (cb) => ({ body: cb.body.replace(/CallStatus=[a-z-]+/, "CallStatus=completed") + "&x=1" }),
      },
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
    ],
    hangup: "canceled",
  },
  {
    provider: "plivo",
    outcomes: PLIVO_FAMILY_OUTCOMES,
    async checkOriginate(s, runId) {
      const id = s.acct.credentials.auth_id;
      const r = await originateRequest(s, /\/Call\/$/);
      expect(r.path).toBe(`/v1/Account/${id}/Call/`);
      expect(r.headers.authorization).toBe(basic(id, s.acct.credentials.auth_token));
      expect(r.headers["content-type"]).toBe("application/json");
      await expectPlivoFamilyBody(r, "plivo", runId);
    },
    checkAnswer: oneAnswer("application/xml", (text) =>
      expect(text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Speak>Hello Ada, this is Edgedial &amp; co.</Speak><Hangup/></Response>'),
    ),
    forgeries: [
      {
        name: "a forged V3 signature",
        status: 403,
        tweak: (cb) => ({ headers: { "X-Plivo-Signature-V3": flipLastChar(cb.headers["X-Plivo-Signature-V3"]) } }),
      },
      { name: "a missing nonce", status: 403, tweak: () => ({ headers: { "X-Plivo-Signature-V3-Nonce": null } }) },
      { name: "a body changed under a valid signature", status: 403, tweak: (cb) => ({ body: cb.body + "&Duration=99" }) },
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
    ],
    hangup: "canceled",
  },
  {
    provider: "vobiz",
    outcomes: PLIVO_FAMILY_OUTCOMES,
    async checkOriginate(s, runId) {
      const id = s.acct.credentials.auth_id;
      const r = await originateRequest(s, /\/Call\/$/);
      expect(r.path).toBe(`/api/v1/Account/${id}/Call/`);
      expect(r.headers["x-auth-id"]).toBe(id);
      expect(r.headers["x-auth-token"]).toBe(s.acct.credentials.auth_token);
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers["content-type"]).toBe("application/json");
      await expectPlivoFamilyBody(r, "vobiz", runId);
    },
    checkAnswer: oneAnswer("application/xml", (text) => expect(text).toContain("<Speak>Hello Ada, this is Edgedial &amp; co.</Speak><Hangup/>")),
    forgeries: [
      {
        name: "forged V3 and V2 signatures",
        status: 403,
        tweak: (cb) => ({
          headers: {
            "X-Vobiz-Signature-V3": flipLastChar(cb.headers["X-Vobiz-Signature-V3"]),
            "X-Vobiz-Signature-V2": flipLastChar(cb.headers["X-Vobiz-Signature-V2"]),
          },
        }),
      },
      {
        name: "no signature headers",
        status: 403,
        tweak: () => ({ headers: { "X-Vobiz-Signature-V3": null, "X-Vobiz-Signature-V2": null } }),
      },
      // Vobiz signs only the URL: a body naming another call under a valid signature is caught by the id cross-check.
      {
        name: "a body naming another call (valid signature)",
        status: 403,
        tweak: (cb) => ({
          body: cb.body.replace(/CallUUID=[^&]+/, `CallUUID=${crypto.randomUUID()}`).replace(/RequestUUID=[^&]+/, `RequestUUID=${crypto.randomUUID()}`),
        }),
      },
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
    ],
    hangup: "canceled",
  },
  {
    provider: "telnyx",
    outcomes: OUTCOMES,
    async checkOriginate(s, runId) {
      const r = await originateRequest(s, /^\/v2\/calls$/);
      const u = await urls("telnyx", runId);
      const cfg = (await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}`, { key: s.org.key })).json;
      expect(cfg.credentials.connection_id).toMatch(/^\d+$/); // provisioned on save
      expect(r.headers.authorization).toBe(`Bearer ${s.acct.credentials.api_key}`);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(r.body)).toEqual({
        connection_id: cfg.credentials.connection_id,
        to: CALLEE,
        from: CALLER,
        timeout_secs: 30,
        webhook_url: u.status,
        webhook_url_method: "POST",
        client_state: btoa(`run:${runId}`),
      });
    },
    // No answer document: on call.answered the greeting is spoken by a command, then the call is hung up.
    async checkAnswer(s) {
      const commands = (await simRequests(s.acct)).filter((r) => /\/actions\//.test(r.path));
      expect(commands.map((r) => r.path.split("/").at(-1))).toEqual(["speak", "hangup"]);
      expect(JSON.parse(commands[0].body)).toEqual({
        payload: GREETING,
        voice: "female",
        language: "en-US",
        service_level: "basic",
        client_state: btoa("greeting-part:0"),
        command_id: "greeting-0",
      });
      expect(JSON.parse(commands[1].body)).toEqual({ command_id: "greeting-hangup" });
      expect(commands[0].headers.authorization).toBe(`Bearer ${s.acct.credentials.api_key}`);
    },
    forgeries: [
      { name: "a flipped body byte", status: 403, tweak: (cb) => ({ body: cb.body.replace('"event_type"', '"event_typf"') }) },
      {
        name: "a forged signature",
        status: 403,
        tweak: (cb) => ({ headers: { "telnyx-signature-ed25519": flipLastChar(cb.headers["telnyx-signature-ed25519"]) } }),
      },
      { name: "a timestamp older than 300 s", status: 403, tweak: () => ({}), opts: { stale: true } },
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
    ],
    hangup: "canceled",
  },
  {
    provider: "vonage",
    outcomes: OUTCOMES,
    async checkOriginate(s, runId) {
      const r = await originateRequest(s, /^\/v1\/calls$/);
      const u = await urls("vonage", runId);
      const jwt = /^Bearer (.+)$/.exec(r.headers.authorization)![1];
      const [h, c] = jwt
        .split(".")
        .slice(0, 2)
        .map((p) => JSON.parse(atob(p.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (p.length % 4)) % 4))));
      expect(h).toEqual({ alg: "RS256", typ: "JWT" });
      expect(c.application_id).toBe(s.acct.credentials.application_id);
      expect(c.exp - c.iat).toBe(900);
      expect(c.jti).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(r.body)).toEqual({
        to: [{ type: "phone", number: CALLEE.slice(1) }],
        from: { type: "phone", number: CALLER.slice(1) },
        answer_url: [u.answer],
        answer_method: "GET",
        event_url: [u.status],
        event_method: "POST",
        ringing_timer: 60,
      });
    },
    async checkAnswer(_s, _runId, answers) {
      expect(answers).toHaveLength(1);
      expect(answers[0].cb.method).toBe("GET");
      expect(answers[0].headers.get("content-type")).toBe("application/json");
      expect(JSON.parse(answers[0].text)).toEqual([{ action: "talk", text: GREETING }]);
    },
    forgeries: [
      { name: "a payload_hash mismatch (body changed)", status: 403, tweak: (cb) => ({ body: cb.body.replace('"status":"', '"status": "') }) },
      { name: "a wrong api_key claim", status: 403, tweak: () => ({}), opts: { apiKey: "not-ours" } },
      { name: "an unsigned event", status: 403, tweak: () => ({ headers: { Authorization: null } }) },
      { name: "an iat older than 300 s", status: 403, tweak: () => ({}), opts: { stale: true } },
      { name: "an exp already passed (iat still fresh)", status: 403, tweak: () => ({}), opts: { expired: true } },
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
    ],
    hangup: "canceled",
  },
  {
    provider: "cloudonix",
    outcomes: { answered: "completed", busy: "busy", no_answer: "no_answer", failed: "failed", canceled: "canceled" },
    async checkOriginate(s, runId) {
      const domain = s.acct.credentials.domain_id;
      const r = await originateRequest(s, /\/application$/);
      const u = await urls("cloudonix", runId);
      expect(r.path).toBe(`/calls/${domain}/application`);
      expect(r.headers.authorization).toBe(`Bearer ${s.acct.credentials.bearer_token}`);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(r.body)).toEqual({ destination: CALLEE.slice(1), "caller-id": CALLER.slice(1), url: u.answer, callback: u.status, timeout: 60 });
    },
    checkAnswer: oneAnswer("application/xml", (text) => expect(text).toBe(SAY_AND_HANG_UP)),
    forgeries: [
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
      {
        name: "another run's valid token",
        status: 401,
        tweak: async (cb) => {
          const [, run] = /\/(\d+)\/[0-9a-f]{64}$/.exec(cb.url)!;
          return { url: cb.url.replace(/[0-9a-f]{64}$/, await token("cloudonix", Number(run) + 1)) };
        },
      },
      { name: "a body naming another session", status: 403, tweak: (cb) => ({ body: cb.body.replace(/"token":"[0-9a-f]+"/, '"token":"0000"') }) },
    ],
    hangup: "canceled",
  },
  {
    provider: "exotel",
    outcomes: { answered: "completed", busy: "busy", no_answer: "no_answer", voicemail: "voicemail", failed: "failed" },
    async checkOriginate(s, runId) {
      const sid = s.acct.credentials.account_sid;
      const r = await originateRequest(s, /connect\.json$/);
      const u = await urls("exotel", runId);
      expect(r.path).toBe(`/v1/Accounts/${sid}/Calls/connect.json`);
      expect(r.headers.authorization).toBe(basic(s.acct.credentials.api_key, s.acct.credentials.api_token));
      expect(r.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      const f = new URLSearchParams(r.body);
      expect([...f.entries()]).toEqual([
        ["from", CALLEE],
        ["callerid", CALLER],
        ["streamurl", expect.stringMatching(new RegExp(`^ws://edgedial\\.test/api/v1/telephony/exotel/stream/${runId}/\\d+\\.[0-9a-f]{32}\\.[0-9a-f]{64}$`))],
        ["streamtype", "bidirectional"],
        ["statuscallback", u.status],
        ["statuscallbackevents[]", "terminal"],
        ["statuscallbackevents[]", "answered"],
        ["timelimit", "3600"],
        ["timeout", "60"],
        ["customfield", `run:${runId}`],
      ]);
    },
    // No answer document: the media socket is the call. With the greeting agent and no speech to play, the call
    // session ends the call (closes the socket) once the stream starts. The completed run's stream is refused.
    async checkAnswer(s, endedRunId) {
      // The stream URL is the one Exotel got in the originate request (its token is its own, single-use).
      const upgrade = async (runId: number, token?: string) => {
        const originate = (await simRequests(s.acct)).filter((r) => r.path.endsWith("/connect.json") && r.body.includes(`run%3A${runId}`));
        const url = new URLSearchParams(originate.at(-1)!.body).get("streamurl")!.replace(/^ws/, "http");
        return exports.default.fetch(new Request(token ? url.replace(/[^/]+$/, token) : url, { headers: { Upgrade: "websocket" } }));
      };
      expect((await upgrade(endedRunId)).status).toBe(409);
      const runId = await startCall(s);
      const res = await upgrade(runId);
      expect(res.status).toBe(101);
      const ws = res.webSocket!;
      ws.accept();
      const closed = new Promise<number>((r) => ws.addEventListener("close", (e) => r(e.code)));
      ws.send(JSON.stringify({ event: "connected" }));
      ws.send(JSON.stringify({ event: "start", start: { call_sid: "x" } }));
      expect(await closed).toBe(1000);
      // A replayed upgrade of the same stream URL (its token spent; 409 once the run is final), and a forged token.
      expect([403, 409]).toContain((await upgrade(runId)).status);
      expect((await upgrade(runId, "0".repeat(64))).status).toBe(401);
    },
    forgeries: [
      { name: "a wrong per-run token", status: 401, tweak: wrongToken },
      { name: "a body naming another call", status: 403, tweak: (cb) => ({ body: cb.body.replace(/CallSid=[0-9a-f]+/, "CallSid=ffff") }) },
    ],
  },
];

describe.each(SPECS)("$provider", (spec) => {
  it("originates exactly as the carrier documents it, then speaks the greeting and hangs up", async () => {
    const s = await setup(spec.provider, spec.extra);
    const runId = await startCall(s);
    await spec.checkOriginate(s, runId);
    const run = await runRow(runId);
    expect(run).toMatchObject({ status: "initiated", provider: spec.provider, phoneNumber: CALLEE, fromNumber: CALLER, name: `WR-${runId}` });
    const delivered = await deliverAll(await play(run.providerCallId!, "answered"));
    await drain(run.providerCallId!);
    await spec.checkAnswer(
      s,
      runId,
      delivered.filter((d) => d.cb.kind === "answer"),
    );
    const api = await runApi(s, runId);
    expect(api).toMatchObject({
      id: runId,
      status: "completed",
      workflow_id: s.agent.id,
      workflow_uuid: s.agent.workflow_uuid,
      campaign_id: null,
      telephony_configuration_id: s.configId,
      provider: spec.provider,
      error: null,
    });
    expect(api.answered_at).not.toBeNull();
    expect(api.ended_at).not.toBeNull();
    expect(api.duration_seconds).toBe(7);
  });

  it("maps every outcome the carrier distinguishes", async () => {
    const s = await setup(spec.provider, spec.extra);
    for (const [outcome, expected] of Object.entries(spec.outcomes)) {
      const runId = await startCall(s);
      const callId = (await runRow(runId)).providerCallId!;
      await deliverAll(await play(callId, outcome as Outcome));
      await drain(callId);
      expect((await runRow(runId)).status, `${spec.provider} ${outcome}`).toBe(expected);
    }
  });

  it("accepts its valid signed callbacks and refuses forged ones, changing nothing", async () => {
    const s = await setup(spec.provider, spec.extra);
    for (const forgery of spec.forgeries) {
      const runId = await startCall(s);
      const before = await runRow(runId);
      const cbs = (await play(before.providerCallId!, "busy", forgery.opts ?? {})).filter((c) => c.kind === "status");
      const last = cbs.at(-1)!;
      const res = await deliver(last, await forgery.tweak(last));
      expect(res.status, `${spec.provider}: ${forgery.name} (${res.text})`).toBe(forgery.status);
      expect(JSON.parse(res.text)).toEqual({ detail: expect.any(String) });
      expect(await runRow(runId), forgery.name).toEqual(before);
      if (!forgery.opts) {
        // The genuine callback is still accepted afterwards.
        expect((await deliver(last)).status).toBeLessThan(300);
        expect((await runRow(runId)).status).toBe("busy");
      }
    }
  });

  it("ignores duplicate and out-of-order callbacks: a final status is never overwritten", async () => {
    const s = await setup(spec.provider, spec.extra);
    const runId = await startCall(s);
    const callId = (await runRow(runId)).providerCallId!;
    const cbs = await play(callId, "no_answer", { duplicate: true, reverse: true });
    const statuses = cbs.filter((c) => c.kind === "status");
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    // The final callback arrives first (reversed), each one twice (the carrier's retry, signed afresh).
    await deliverAll(cbs);
    const done = await runRow(runId);
    expect(done.status).toBe("no_answer");
    // A late replay of the same bytes changes nothing at all: refused as a replay where deliveries are
    // once-only (a nonce, a timestamp, a JWT id), accepted and ignored where they are not.
    for (const cb of cbs.filter((c) => c.kind !== "stream")) {
      const r = await deliver(cb);
      if (ONCE_ONLY.has(spec.provider)) expect(r.status, r.text).toBe(403);
      else expect(r.status, r.text).toBeLessThan(300);
    }
    expect(await runRow(runId)).toEqual(done);
  });

  it("refuses the carrier's 5xx with a 502 and keeps the run as failed with the carrier's message", async () => {
    const s = await setup(spec.provider, spec.extra);
    // A 500 is ambiguous (the call may exist), so it is never retried (a 429/503 is: originate-retry.test.ts).
    await simFault(s.acct, "originate", 500, "carrier maintenance window");
    const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toContain("carrier maintenance window");
    expect(res.json.detail).toContain("HTTP 500");
    const runs = (await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key })).json.items;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", error: res.json.detail, provider_call_id: null });
    // Nothing was retried blindly.
    expect((await simRequests(s.acct)).filter((r) => r.method === "POST" && !/Application|call_control_applications|applications/.test(r.path))).toHaveLength(
      1,
    );
  });

  it.runIf(spec.hangup)("hangs up through the carrier's API", async () => {
    const s = await setup(spec.provider, spec.extra);
    const runId = await startCall(s);
    await hangupRun(env, s.org.id, runId);
    const cbs = await flush((await runRow(runId)).providerCallId!);
    expect(cbs.length).toBeGreaterThan(0);
    await deliverAll(cbs);
    expect((await runRow(runId)).status).toBe(spec.hangup);
    // A second hang-up of an ended call is fine (the carrier says it is gone).
    await hangupRun(env, s.org.id, runId);
  });
});

describe("telnyx commands", () => {
  it("a redelivered call.answered speaks the greeting once", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const cbs = await play((await runRow(runId)).providerCallId!, "answered");
    await deliverAll(cbs);
    const answered = cbs.find((c) => JSON.parse(c.body).data.event_type === "call.answered")!;
    await deliverAll([await redeliver((await runRow(runId)).providerCallId!, answered)]);
    expect((await simRequests(s.acct)).filter((r) => /\/actions\/speak$/.test(r.path))).toHaveLength(1);
  });
});
