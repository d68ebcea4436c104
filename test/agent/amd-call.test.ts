// Answering-machine detection on a call through the carrier simulator (issue 42): the callee is a voicemail greeting
// from the labelled set followed by its 850 Hz beep; the agent decides it is a machine on the audio, waits for the
// beep and leaves its greeting as the message just after it, and the run's details keep the class and the evidence.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { g711Decode } from "../../src/lib/audio/g711";
import { conversationCall, listenUntil, runWhen } from "../calls/conversation-support";
import { runRow, setup } from "../calls/support";
import { call } from "../helpers";
import labels from "../fixtures/amd/labels.json";
import greetingWav from "../fixtures/amd/machine_greeting-002.wav?inline";

const label = labels.answers.find((a) => a.id === "machine_greeting-002")!;
const bytes = Uint8Array.from(atob(greetingWav.slice(greetingWav.indexOf(",") + 1)), (c) => c.charCodeAt(0));
const GREETING = g711Decode("mulaw", bytes.subarray(58)); // 8 kHz, as the carrier sends it

describe("answering-machine detection on a call", () => {
  it("a voicemail greeting and its beep: the message starts just after the beep; the run keeps class and evidence", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s, undefined, { run: { voicemail_action: "leave_message" } });
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(GREETING);
    await listenUntil(callee, () => callee.closed !== null, 40_000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("voicemail");
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["agent", "Hi Ada!"],
    ]);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.answered_by).toBe("machine_detected");
    const key = (await runRow(runId)).detailsKey!;
    const { amd } = (await (await env.UPLOADS.get(key))!.json()) as { amd: Record<string, any> };
    expect(amd.cls).toBe("machine_greeting");
    // The beep as the callee sent it: its clip began when its voice did, less where the clip's speech starts.
    const clipAt = amd.evidence.firstVoiceMs - label.spans[0].startMs;
    expect(Math.abs(amd.beep_end_ms - (clipAt + label.beep!.endMs))).toBeLessThanOrEqual(80);
    expect(Math.abs(amd.beep_hz - label.beep!.hz)).toBeLessThanOrEqual(20);
    const after = amd.message_ms - amd.beep_end_ms;
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThanOrEqual(500);
    expect(amd.decideMs).toBeLessThan(amd.beep_end_ms);
    // The API shows the same verdict (GET the run): class, evidence and the time to decide, in its own names.
    expect(run.amd).toEqual({
      class: "machine_greeting",
      reason: amd.reason,
      decided_ms: amd.decideMs,
      evidence: {
        first_voice_ms: amd.evidence.firstVoiceMs,
        longest_speech_ms: amd.evidence.longestSpeechMs,
        voiced_ms: amd.evidence.voicedMs,
        pause_ms: amd.evidence.pauseMs ?? null,
        keyword: amd.evidence.keyword ?? null,
        tones: amd.evidence.tones.map((t: any) => ({ freq_hz: t.freqHz, start_ms: t.startMs, end_ms: t.endMs })),
      },
      beep_hz: amd.beep_hz,
      beep_end_ms: amd.beep_end_ms,
      message_ms: amd.message_ms,
    });
    expect(run.amd.message_ms - run.amd.beep_end_ms).toBeLessThanOrEqual(500);
    // Lists leave it to the run's own page (it is read from the run's details object).
    const list = (await call("GET", `/api/v1/workflow/${agentId}/runs`, { key: s.org.key })).json;
    const item = list.items.find((r: any) => r.id === runId);
    expect(item.status).toBe("voicemail");
    expect(item).not.toHaveProperty("amd");
  });

  it("the agent's own voicemail message, its template variables filled, is what the machine records", async () => {
    const s = await setup("twilio");
    const configurations = { voice_agent: { turn: { voicemail_text: "Hi {{ first_name }}, this is the seats desk. Please call us back." } } };
    const { runId, callee, agentId } = await conversationCall(s, undefined, { run: { voicemail_action: "leave_message" }, configurations });
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(GREETING);
    await listenUntil(callee, () => callee.closed !== null, 40_000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["agent", "Hi Ada, this is the seats desk. Please call us back."],
    ]);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.notes).toContain("the agent's voicemail message was left");
  });
});
