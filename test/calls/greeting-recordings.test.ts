// The audio greetings store: upload (the body is the WAV), list, read, download, delete; every bad upload a clear
// 4xx; another organization's greeting a 404. A campaign's contacts must name greetings that exist, and a call on
// the media path plays the contact's audio greeting from the store.
import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { startCampaignCall } from "../../src/calls/start/start";
import { callSessionStub } from "../../src/calls/session/stub";
import { fromWire } from "../../src/dev/simulator/media/callee";
import { rms } from "../../src/lib/audio/level";
import { Resampler } from "../../src/lib/audio/resample";
import { readWav, wavFile } from "../../src/lib/audio/wav";
import { MAX_GREETING_BODY_BYTES } from "../../src/lib/body-limit";
import { call, createOrg, type Org } from "../helpers";
import { CAMPAIGNS, createCampaign, upload, world } from "../campaigns/support";
import { connect } from "./media-support";
import { CALLEE, campaignId, runApi, runRow, setup, type Setup } from "./support";

const AGENT = readWav(Uint8Array.from(atob(inject("audioClips")["agent-16k.wav"]), (c) => c.charCodeAt(0)));

function post(org: Org, body: Uint8Array | string, type = "audio/wav", name?: string) {
  const q = name ? `?name=${encodeURIComponent(name)}` : "";
  return exports.default.fetch(
    new Request(`http://edgedial.test/api/v1/greeting-recordings${q}`, { method: "POST", headers: { "X-API-Key": org.key, "Content-Type": type }, body }),
  );
}

async function uploadGreeting(org: Org, name = "spring"): Promise<{ recording_id: string; [k: string]: unknown }> {
  const res = await post(org, wavFile(AGENT.samples, 16000), "audio/wav", name);
  expect(res.status).toBe(201);
  return res.json();
}

/** A campaign's call whose contact names an audio greeting. */
async function callWithAudioGreeting(s: Setup, recordingId: string) {
  const r = await startCampaignCall(env, {
    orgId: s.org.id,
    campaignId: campaignId(),
    contactId: 1,
    attempt: 1,
    workflowId: s.agent.id,
    telephonyConfigurationId: s.configId,
    phoneNumber: CALLEE,
    initialContext: { first_name: "Bo" },
    greetingOverride: { type: "audio", recordingId },
  });
  if (!r.ok) throw new Error(r.message);
  return r;
}

const detail = async (res: Response) => ((await res.json()) as { detail: any }).detail;

describe("audio greetings store", () => {
  it("stores an upload, lists it, serves it back sample-exact, and deletes it (file and all)", async () => {
    const org = await createOrg();
    const created = await uploadGreeting(org);
    expect(created).toEqual({
      recording_id: expect.stringMatching(/^rec_[0-9a-f]{24}$/),
      name: "spring",
      sample_rate: 16000,
      duration_ms: Math.round((AGENT.samples.length / 16000) * 1000),
      size_bytes: 44 + AGENT.samples.length * 2,
      created_at: expect.any(String),
    });
    const id = created.recording_id;
    const list = await call("GET", "/api/v1/greeting-recordings", { key: org.key });
    expect(list.status).toBe(200);
    expect(list.json.items).toEqual([created]);
    expect((await call("GET", `/api/v1/greeting-recordings/${id}`, { key: org.key })).json).toEqual(created);

    const file = await exports.default.fetch(new Request(`http://edgedial.test/api/v1/greeting-recordings/${id}/audio`, { headers: { "X-API-Key": org.key } }));
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("audio/wav");
    const back = readWav(new Uint8Array(await file.arrayBuffer()));
    expect(back).toMatchObject({ rate: 16000, channels: 1 });
    expect(back.samples).toEqual(AGENT.samples);

    const del = await call("DELETE", `/api/v1/greeting-recordings/${id}`, { key: org.key });
    expect(del.status).toBe(204);
    expect((await call("GET", `/api/v1/greeting-recordings/${id}`, { key: org.key })).status).toBe(404);
    expect((await call("DELETE", `/api/v1/greeting-recordings/${id}`, { key: org.key })).status).toBe(404);
    expect(await env.UPLOADS.head(`greetings/${org.id}/${id}.wav`)).toBeNull();
    const audit = await call("GET", "/api/v1/organizations/audit-log", { key: org.key });
    expect(audit.json.items.filter((e: any) => e.resource_type === "greeting_recording").map((e: any) => e.action)).toEqual(["delete", "create"]);
  });

  it("stores stereo as mono, the mean of its channels", async () => {
    const org = await createOrg();
    const stereo = new Int16Array([1000, 3000, -2000, -4000, 7, 8, 32767, 32767]);
    const res = await post(org, wavFile(stereo, 8000, 2));
    expect(res.status).toBe(201);
    const { recording_id } = await res.json<{ recording_id: string }>();
    const file = await exports.default.fetch(
      new Request(`http://edgedial.test/api/v1/greeting-recordings/${recording_id}/audio`, { headers: { "X-API-Key": org.key } }),
    );
    expect(Array.from(readWav(new Uint8Array(await file.arrayBuffer())).samples)).toEqual([2000, -3000, 7, 32767]);
  });

  it("refuses what it cannot play with a clear 4xx, and stores nothing", async () => {
    const org = await createOrg();
    const tone = (rate: number, seconds: number) => new Int16Array(Math.round(rate * seconds)).fill(1000);
    const wrongType = await post(org, wavFile(tone(8000, 1), 8000), "application/json");
    expect(wrongType.status).toBe(415);
    expect(await detail(wrongType)).toBe("Content-Type must be audio/wav");

    const cases: Array<[Uint8Array | string, RegExp]> = [
      ["not audio at all", /^Not a playable WAV file \(not a WAV file\)/],
      [wavFile(tone(44100, 1), 44100), /Sample rate 44100 Hz is not supported: use 8000, 16000 or 24000 Hz/],
      [wavFile(tone(8000, 121), 8000), /longer than 120 seconds/],
      [wavFile(new Int16Array(0), 8000), /holds no audio/],
    ];
    for (const [body, msg] of cases) {
      const res = await post(org, body);
      expect(res.status).toBe(422);
      const [item] = await detail(res);
      expect(item).toMatchObject({ loc: ["body"], type: "audio_error" });
      expect(item.msg).toMatch(msg);
    }
    const big = await post(org, new Uint8Array(MAX_GREETING_BODY_BYTES + 1));
    expect(big.status).toBe(413);
    expect((await call("GET", "/api/v1/greeting-recordings", { key: org.key })).json.items).toEqual([]);
  });

  it("another organization's greeting is a 404 everywhere", async () => {
    const owner = await createOrg();
    const other = await createOrg();
    const { recording_id } = await uploadGreeting(owner);
    for (const [method, path] of [
      ["GET", `/api/v1/greeting-recordings/${recording_id}`],
      ["GET", `/api/v1/greeting-recordings/${recording_id}/audio`],
      ["DELETE", `/api/v1/greeting-recordings/${recording_id}`],
    ]) {
      const res = await call(method, path, { key: other.key });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "Greeting recording not found" });
    }
    expect((await call("GET", "/api/v1/greeting-recordings", { key: other.key })).json.items).toEqual([]);
    expect((await call("GET", `/api/v1/greeting-recordings/${recording_id}`, { key: owner.key })).status).toBe(200);
  });
});

describe("a campaign's audio greetings", () => {
  it("a contact naming a greeting the organization does not have is a located row error; one it has is taken", async () => {
    const w = await world();
    const { recording_id } = await uploadGreeting(w);
    const csv = [
      "phone_number,first_name,greeting_override_type,greeting_override_recording_id",
      "+14155550100,Ada,audio," + recording_id,
      "+14155550101,Bob,audio,rec_000000000000000000000000",
    ].join("\n");
    const bad = await createCampaign(w, { source_url: await upload(w, csv) });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.json.detail).toEqual([
      expect.objectContaining({
        loc: ["body", "source_url", 3, "greeting_override_recording_id"],
        type: "unknown_recording",
        input: "rec_000000000000000000000000",
      }),
    ]);
    const good = await createCampaign(w, { source_url: await upload(w, csv.split("\n").slice(0, 2).join("\n")) });
    expect(good.status, good.text).toBe(200);
    expect((await call("GET", `${CAMPAIGNS}/${good.json.id}`, { key: w.key })).json.total_rows).toBe(1);
  });
});

describe("a call on the media path plays the contact's audio greeting", () => {
  it("from the store, resampled to the carrier's rate; the transcript names it", async () => {
    const s = await setup("twilio");
    const { recording_id } = await uploadGreeting(s.org, "spring promo");
    const r = await callWithAudioGreeting(s, recording_id);
    await callSessionStub(env, r.runId).prepare({ agent: "greeting" });
    const callee = await connect("twilio", r.runId);
    const reference = new Resampler(16000, 8000).convert(AGENT.samples);
    const frames = Math.ceil(reference.length / 160);
    // The callee listens, 20 ms at a time, until all of it has arrived and played (Twilio then echoes the closing
    // mark, and the agent hangs up).
    for (let i = 0; callee.received.length < frames && !callee.closed; i++) {
      if (i > 400) throw new Error("the greeting never ended");
      callee.silence(20);
      await callee.until(() => callee.received.length >= Math.min(i + 4, frames) || callee.closed !== null);
    }
    for (let k = 0; !callee.played.length && !callee.closed && k < 10; k++) callee.silence(20);
    await callee.until(() => callee.closed !== null);
    const heard = fromWire(callee.protocol.format, callee.receivedWire());
    expect(Math.abs(heard.length - reference.length)).toBeLessThanOrEqual(160);
    expect(rms(heard) / rms(reference)).toBeGreaterThan(0.95);
    expect(rms(heard) / rms(reference)).toBeLessThan(1.05);
    const snap = await callSessionStub(env, r.runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    expect(snap.turns.map((t) => t.text)).toEqual(["[audio greeting: spring promo]"]);
    // The audio was played: no fallback note on the run.
    expect((await runRow(r.runId)).notes).toBeNull();
    expect((await runApi(s, r.runId)).transcript[0].text).toBe("[audio greeting: spring promo]");
  });

  it("a greeting deleted since the campaign was made: the text greeting's turn, and the run says why", async () => {
    const s = await setup("twilio");
    const r = await callWithAudioGreeting(s, "rec_gone");
    await callSessionStub(env, r.runId).prepare({ agent: "greeting" });
    const callee = await connect("twilio", r.runId);
    callee.silence(20);
    // No audio to play (the greeting agent speaks no text yet): it hangs up at once.
    await callee.until(() => callee.closed !== null);
    expect((await runRow(r.runId)).notes).toBe("The greeting recording rec_gone does not exist (deleted?); the text greeting was used instead");
  });
});
