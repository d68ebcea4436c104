// Web calls (docs/web-calls.md): POST /workflow/{id}/web-call makes a short-lived, single-use token for one
// organization's agent; its WebSocket refuses anything else before any audio; and a browser-like client speaking the
// documented protocol (JSON control messages, 16 kHz 16-bit PCM frames) converses with the seats agent on the
// deterministic engines with the committed espeak-ng clips, and the run completes with direction web and a transcript.
import { exports, env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { streamToken } from "../../src/calls/callbacks/callback-urls";
import { clock } from "../../src/lib/clock";
import { Resampler } from "../../src/lib/audio/resample";
import { g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { pcm16FromBytes, pcm16ToBytes } from "../../src/lib/audio/pcm";
import { readWav } from "../../src/lib/audio/wav";
import { organizationStub } from "../../src/organizations/organization-object";
import { call, createOrg, type Org } from "../helpers";
import { DEFINITION, prepareScripted, SEATS, SEATS_DISPOSITIONS, SURE } from "./conversation-support";
import { runRow, setup, startCall } from "./support";

afterEach(() => clock.set(null));

async function seatsAgent(org: Org) {
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS },
  });
  expect(wf.status, wf.text).toBe(200);
  return wf.json as { id: number };
}

const webCall = (org: Org, agentId: number, body: unknown = { initial_context: { first_name: "Ada" } }) =>
  call("POST", `/api/v1/workflow/${agentId}/web-call`, { key: org.key, body });

const httpUrl = (wsUrl: string) => wsUrl.replace(/^ws/, "http");
const open = (url: string, headers: Record<string, string> = { Upgrade: "websocket" }) => exports.default.fetch(new Request(httpUrl(url), { headers }));

/** The browser's side of the protocol: what it received, and its microphone as 20 ms frames. */
class Browser {
  readonly audio: Int16Array[] = [];
  /** Every frame of the microphone, in order (what the recording's left channel holds). */
  readonly sent: Int16Array[] = [];
  readonly marks: string[] = [];
  readonly transcript: Array<{ role: string; text: string; interrupted: boolean }> = [];
  clears = 0;
  closed: { code: number; reason: string } | null = null;
  private readonly up = new Resampler(8000, 16000);

  constructor(readonly ws: WebSocket) {
    // As a browser page asks for it (the default is Blob).
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") return void this.audio.push(pcm16FromBytes(new Uint8Array(e.data as ArrayBuffer)));
      const m = JSON.parse(e.data);
      if (m.type === "mark") {
        this.marks.push(m.name);
        // Played at once (the test has no speaker): the echo tells the agent its audio was heard.
        ws.send(JSON.stringify({ type: "mark", name: m.name }));
      } else if (m.type === "clear") this.clears++;
      else if (m.type === "transcript") this.transcript.push(m);
    });
    ws.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
    });
  }

  frame(samples: Int16Array) {
    if (this.closed) return;
    this.sent.push(samples);
    this.ws.send(pcm16ToBytes(samples).buffer as ArrayBuffer);
  }

  /** 8 kHz speech (the committed clips), sent at 16 kHz 20 ms at a time. */
  async speak(samples8k: Int16Array) {
    const s = this.up.convert(samples8k);
    for (let i = 0; i < s.length && !this.closed; i += 320) {
      this.frame(s.slice(i, i + 320));
      await tick();
    }
  }

  /** Silence until `test` holds (or the call closed), 20 ms at a time. */
  async listenUntil(test: () => boolean, maxMs = 20_000) {
    for (let t = 0; t < maxMs && !this.closed && !test(); t += 20) {
      this.frame(new Int16Array(320));
      await tick();
    }
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

async function connect(url: string): Promise<Browser> {
  const res = await open(url);
  if (res.status !== 101) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const b = new Browser(ws);
  ws.send(JSON.stringify({ type: "start" }));
  return b;
}

describe("POST /workflow/{id}/web-call", () => {
  it("answers a single-use token and a WebSocket URL; records a web run; the token opens one socket", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const res = await webCall(org, agent.id);
    expect(res.status, res.text).toBe(200);
    const made = res.json;
    expect(made).toEqual({
      workflow_run_id: expect.any(Number),
      workflow_run_name: `WR-${made.workflow_run_id}`,
      websocket_url: `ws://edgedial.test/api/v1/web-call/${made.workflow_run_id}/${made.token}`,
      token: expect.stringMatching(/^\d+\.[0-9a-f]{32}\.[0-9a-f]{64}$/),
      expires_at: expect.any(String),
      sample_rate: 16000,
      input_mode: "text",
    });
    const ttl = Date.parse(made.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    expect(await runRow(made.workflow_run_id)).toMatchObject({ direction: "web", provider: "web", status: "queued", telephonyConfigurationId: null });

    const b = await connect(made.websocket_url);
    const again = await open(made.websocket_url);
    expect(again.status).toBe(403);
    expect(await again.json()).toEqual({ detail: "This web call's token was already used" });
    b.ws.close(1000, "bye");
  });

  it("404 for another organization's agent or an unknown one; 401 without a key; 422 for a missing variable or an unknown field", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const other = await createOrg();
    for (const res of [await webCall(other, agent.id), await webCall(org, 99_999_999), await webCall(org, "abc" as never)]) {
      expect(res.status, res.text).toBe(404);
    }
    expect((await call("POST", `/api/v1/workflow/${agent.id}/web-call`, { body: {} })).status).toBe(401);
    const missing = await webCall(org, agent.id, {});
    expect(missing.status).toBe(422);
    expect(missing.text).toContain("first_name");
    const extra = await webCall(org, agent.id, { initial_context: { first_name: "Ada" }, phone_number: "+14155550100" });
    expect(extra.status).toBe(422);
    expect(extra.json.detail[0]).toMatchObject({ loc: ["body", "phone_number"], type: "extra_forbidden" });
    expect((await call("PUT", `/api/v1/workflow/${agent.id}/status`, { key: org.key, body: { status: "archived" } })).status).toBe(200);
    expect((await webCall(org, agent.id)).status).toBe(409);
  });

  it("the socket refuses an expired, forged or another run's token, a phone call's run, a plain request and a bad path", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const made = (await webCall(org, agent.id)).json;
    const base = `http://edgedial.test/api/v1/web-call`;

    clock.set(Date.now() + 301_000);
    const expired = await open(made.websocket_url);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ detail: "This web call's token has expired" });
    clock.set(null);

    const forged = `${made.token.slice(0, -1)}${made.token.endsWith("0") ? "1" : "0"}`;
    const second = (await webCall(org, agent.id)).json;
    const phone = await startCall(await setup("twilio"));
    for (const url of [
      `${base}/${made.workflow_run_id}/${forged}`,
      `${base}/${second.workflow_run_id}/${made.token}`, // the token names its own run
      `${base}/${made.workflow_run_id}/not-a-token`,
    ]) {
      const res = await open(url);
      expect(res.status, url).toBe(401);
      expect(await res.json()).toEqual({ detail: "Invalid web call token" });
    }
    const notWeb = await open(`${base}/${phone}/${await streamToken(env.CALLBACK_SECRET, "web", phone)}`);
    expect(notWeb.status).toBe(404);
    expect((await open(made.websocket_url, {})).status).toBe(426);
    expect((await open(`${base}/abc/${made.token}`)).status).toBe(404);
    expect((await open(`${base}/${made.workflow_run_id}`)).status).toBe(404);
    // None of these spent the token: it still opens its socket once.
    const b = await connect(made.websocket_url);
    b.ws.close(1000, "bye");
  });

  it("counts against the organization's cap: at a cap of one a second web call is 429 until the first ends", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    await organizationStub(env, org.id).setCap(1);
    const first = (await webCall(org, agent.id)).json;
    const full = await webCall(org, agent.id);
    expect(full.status).toBe(429);
    expect(full.json).toEqual({ detail: "Concurrent call limit reached" });
    expect(Number(full.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);

    await prepareScripted(first.workflow_run_id);
    const b = await connect(first.websocket_url);
    await b.listenUntil(() => b.audio.length > 0);
    b.ws.send(JSON.stringify({ type: "stop" }));
    await b.listenUntil(() => b.closed !== null, 2000);
    const run = await eventuallyRun(first.workflow_run_id, (r) => r.status === "completed");
    expect(run.endReason).toBe("callee_hangup");
    expect(await organizationStub(env, org.id).usage()).toEqual({ inUse: 0, cap: 1 });
    expect((await webCall(org, agent.id)).status).toBe(200);
  });
});

describe("a web call's conversation", () => {
  it("greets, hears the caller's words, replies, and ends completed with direction web, a transcript and a recording", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const made = (await webCall(org, agent.id)).json;
    const runId = made.workflow_run_id as number;
    await prepareScripted(runId);
    const b = await connect(made.websocket_url);

    // The greeting ("Hi Ada!", a tone from the clip engine) arrives as 16 kHz PCM frames, then its mark.
    await b.listenUntil(() => b.marks.length >= 1);
    expect(b.audio.length).toBeGreaterThan(10);
    expect(new Set(b.audio.map((f) => f.length))).toEqual(new Set([320]));
    expect(Math.max(...b.audio.flatMap((f) => Array.from(f)))).toBeGreaterThan(1000);
    await b.listenUntil(() => b.transcript.length >= 1);
    expect(b.transcript[0]).toMatchObject({ role: "agent", text: "Hi Ada!" });

    await b.speak(SURE.samples);
    await b.listenUntil(() => b.transcript.some((t) => t.text === "Great. How many seats do you need?"));
    await b.listenUntil(() => b.marks.length >= 3);
    await b.speak(SEATS.samples);
    await b.listenUntil(() => b.closed !== null);
    expect(b.closed?.reason).toBe("agent_hangup");

    const roles = b.transcript.map((t) => `${t.role}: ${t.text}`);
    expect(roles).toEqual([
      "agent: Hi Ada!",
      "user: Sure, tell me more.",
      "agent: Great. How many seats do you need?",
      "user: We need twelve seats.",
      "agent: Thank you, goodbye!",
    ]);
    // The transcript is in the run's details object (details_key); the API reads it there.
    const run = await eventuallyRun(runId, (r) => r.status === "completed" && r.detailsKey !== null);
    expect(run).toMatchObject({ direction: "web", status: "completed", endReason: "agent_hangup", disposition: "interested" });
    const detail = (await call("GET", `/api/v1/workflow/${agent.id}/runs/${runId}`, { key: org.key })).json;
    expect(detail.transcript.map((t: { text: string }) => t.text)).toEqual(b.transcript.map((t) => t.text));
    expect(run.recordingKey).toMatch(new RegExp(`^recordings/${org.id}/${runId}\\.ulaw$`));
    const api = (await call("GET", `/api/v1/workflow/${agent.id}/runs/${runId}`, { key: org.key })).json;
    await expectRecordingOfBrowser(run.recordingKey!, api.recording_url, b);
    expect(api).toMatchObject({ status: "completed", end_reason: "agent_hangup", gathered_context: { seats: 12 } });
    expect(await organizationStub(env, org.id).usage()).toMatchObject({ inUse: 0 });
  });
});

/**
 * The web call's recording: stored as μ-law at 16 kHz (a byte a channel), served through the run's link as a 16-bit
 * WAV of exactly the advertised length, whose left channel is the browser's microphone within G.711's error.
 */
async function expectRecordingOfBrowser(key: string, link: string, b: Browser) {
  const stored = await env.UPLOADS.head(key);
  const res = await exports.default.fetch(new Request(link));
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
  const wav = readWav(bytes);
  expect(wav).toMatchObject({ rate: 16000, channels: 2 });
  expect(wav.samples.length).toBe(stored!.size); // 2 bytes stored a stereo sample, 2 samples served
  const left = wav.samples.filter((_, i) => i % 2 === 0);
  const sent = Int16Array.from(b.sent.flatMap((f) => Array.from(f)));
  // The call ended on the agent's hang-up: the recording holds the frames before it, in order.
  expect(left.length).toBeGreaterThan(sent.length - 320 * 10);
  const n = Math.min(left.length, sent.length);
  expect([...left.subarray(0, n)]).toEqual([...g711Decode("mulaw", g711Encode("mulaw", sent.subarray(0, n)))]);
  let worst = 0;
  for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(left[i] - sent[i]) - Math.abs(sent[i]) / 16);
  expect(worst).toBeLessThanOrEqual(8);
  expect(Math.max(...left)).toBeGreaterThan(1000); // the caller's speech, not silence
}

async function eventuallyRun(runId: number, ok: (r: Awaited<ReturnType<typeof runRow>>) => boolean) {
  for (let i = 0; i < 100; i++) {
    const r = await runRow(runId);
    if (ok(r)) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error("the run never got there");
}
