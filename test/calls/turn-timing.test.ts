// Every reply measured on a live call: the seats conversation over Twilio's media protocol (the simulator's callee,
// the committed espeak-ng clips, the deterministic engines); each reply to the caller carries its timing on the run's
// transcript, the stages in order and plausible, and the agent's latency summary reads them (another org: 404).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { call, createOrg } from "../helpers";
import { conversationCall, listen, listenUntil, runWhen, SEATS, SURE, seatsConversation } from "./conversation-support";
import { eventually, setup } from "./support";

const SEQUENCE = ["end_of_turn_ms", "stt_final_ms", "model_first_token_ms", "first_sentence_ms", "voice_first_byte_ms", "first_audio_sent_ms"] as const;

describe("per-turn timing", () => {
  it("each reply to the caller carries its stages, in order and plausible; the latency summary reads them", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s);
    await seatsConversation(callee);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    const agent = run.transcript.filter((t: any) => t.role === "agent");
    // The greeting answers nobody: no timing. Both replies to the caller have one.
    expect(agent[0].timing).toBeUndefined();
    const replies = agent.slice(1);
    expect(replies).toHaveLength(2);
    for (const { timing } of replies) {
      for (const stage of SEQUENCE) expect(timing[stage], stage).toEqual(expect.any(Number));
      for (let i = 1; i < SEQUENCE.length; i++) expect(timing[SEQUENCE[i]], SEQUENCE[i]).toBeGreaterThanOrEqual(timing[SEQUENCE[i - 1]]);
      // The energy gate ends the turn after its 700 ms of silence (the clip's own trailing quiet counts too).
      expect(timing.end_of_turn_ms).toBeGreaterThanOrEqual(600);
      expect(timing.end_of_turn_ms).toBeLessThan(1500);
      // Nothing was playing before the reply: its first frame plays as it is sent (within a frame or two of clock skew).
      expect(timing.first_audio_heard_ms).toBeGreaterThanOrEqual(timing.end_of_turn_ms);
      expect(Math.abs(timing.first_audio_heard_ms - timing.first_audio_sent_ms)).toBeLessThanOrEqual(40);
      expect(timing.cut_ms).toBeUndefined();
    }

    // After the call its recording is measured (the after-call queue): each reply gets the gap the caller heard, from
    // the end of their voice to the start of the agent's on the two-channel recording. It agrees with the agent's own
    // clocks' answer latency within a few hundred ms: the recording counts a word's soft end (the "s" of "seats")
    // that the agent's louder energy gate does not, and places the agent's first audible sample, not its first frame.
    const measured = await eventually(
      async () => (await call("GET", `/api/v1/workflow/${agentId}/runs/${runId}`, { key: s.org.key })).json,
      (r) => r.transcript.filter((t: any) => t.timing?.heard_gap_ms !== undefined).length === 2,
      15_000,
    );
    const timed = measured.transcript.filter((t: any) => t.role === "agent" && t.timing);
    for (const { timing } of timed) {
      expect(timing.heard_gap_ms, JSON.stringify(timing)).toBeGreaterThan(300);
      expect(Math.abs(timing.heard_gap_ms - timing.first_audio_heard_ms), JSON.stringify(timing)).toBeLessThanOrEqual(300);
    }
    console.log(`heard gaps ${timed.map((t: any) => `${t.timing.heard_gap_ms} (agent's clock ${t.timing.first_audio_heard_ms})`).join(", ")}`);

    const latency = await call("GET", `/api/v1/workflow/${agentId}/latency`, { key: s.org.key });
    expect(latency.status, latency.text).toBe(200);
    expect(latency.json).toMatchObject({ workflow_id: agentId, calls: 1, replies: 2 });
    const gaps = timed.map((t: any) => t.timing.heard_gap_ms).sort((a: number, b: number) => a - b);
    expect(latency.json.figures.heard_gap_ms.count).toBe(2);
    expect(latency.json.heard).toMatchObject({ count: 2, carriers: [{ carrier: "twilio", calls: 1, count: 2 }] });
    for (const h of [latency.json.heard, latency.json.heard.carriers[0]]) {
      expect(Math.abs(h.p50 - gaps[0]), `p50 ${h.p50} for ${gaps[0]}`).toBeLessThanOrEqual(0.02 * gaps[0] + 1);
      expect(Math.abs(h.p90 - gaps[1]), `p90 ${h.p90} for ${gaps[1]}`).toBeLessThanOrEqual(0.02 * gaps[1] + 1);
    }
    const heard = replies.map((r: any) => r.timing.first_audio_heard_ms).sort((a: number, b: number) => a - b);
    // The run's latency column keeps each figure as a histogram: within 2 % (and 1 ms) of the measured values.
    const { count, p50, p95 } = latency.json.figures.first_audio_heard_ms;
    expect(count).toBe(2);
    expect(Math.abs(p50 - heard[0]), `p50 ${p50} for ${heard[0]}`).toBeLessThanOrEqual(0.02 * heard[0] + 1);
    expect(Math.abs(p95 - heard[1]), `p95 ${p95} for ${heard[1]}`).toBeLessThanOrEqual(0.02 * heard[1] + 1);
    expect(latency.json.figures.cut_ms).toEqual({ count: 0, p50: null, p95: null });

    const other = await createOrg();
    const foreign = await call("GET", `/api/v1/workflow/${agentId}/latency`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ detail: "Workflow not found" });
    const bad = await call("GET", `/api/v1/workflow/${agentId}/latency?calls=0`, { key: s.org.key });
    expect(bad.status).toBe(422);
  });

  it("a barge-in's turn says what was cut: the audio and the words never heard", async () => {
    const s = await setup("twilio");
    const { runId, callee } = await conversationCall(s, [
      { user: "tell me more", prompt: "Ask Ada", say: "Our offer is long. It has many parts. Let me explain every single one of them now." },
    ]);
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 2);
    callee.speak(SEATS.samples);
    await listen(callee, 100);
    await listenUntil(callee, () => callee.played.length >= 3);
    const snap = await callSessionStub(env, runId).snapshot();
    const cut = snap.turns.find((t) => t.interrupted)!;
    expect(cut.timing).toMatchObject({ first_audio_sent_ms: expect.any(Number), cut_ms: expect.any(Number), cut_words: expect.any(String) });
    expect(cut.timing!.cut_ms!).toBeGreaterThan(500);
    // What was heard and what was cut make up the reply.
    expect(`${cut.text} ${cut.timing!.cut_words}`.replace(/\s+/g, " ").trim()).toBe(
      "Our offer is long. It has many parts. Let me explain every single one of them now.",
    );
  });
});
