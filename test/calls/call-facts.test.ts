// What a run says happened (issue 39 item 3): a callee who speaks makes a conversation, one who stays silent does
// not; the media figures count what went each way; the duration is the recording's length (±1 s, read from its WAV).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { readWav } from "../../src/lib/audio/wav";
import { call } from "../helpers";
import { connect } from "./media-support";
import { conversationCall, seatsConversation } from "./conversation-support";
import { eventually, runApi, runRow, setup, startCall } from "./support";

const wavSeconds = async (url: string) => {
  const res = await exports.default.fetch(new Request(url));
  expect(res.status).toBe(200);
  const w = readWav(new Uint8Array(await res.arrayBuffer()));
  expect(w.channels).toBe(2);
  return w.samples.length / w.channels / w.rate;
};

describe("a run says what happened on its call", () => {
  it("a callee who speaks: a conversation, audio both ways, the duration the recording's length", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s);
    await seatsConversation(callee);
    const row = await eventually(
      () => runRow(runId),
      (r) => r.conversation !== null && r.recordingKey !== null,
      10_000,
    );
    expect(row.conversation).toBe(true);
    expect(row.media).toMatchObject({ gaps: expect.any(Number), underruns: 0 });
    expect(row.media!.caller_audio_s).toBeGreaterThan(1);
    expect(row.media!.agent_audio_s).toBeGreaterThan(0.3);
    const run = (await call("GET", `/api/v1/workflow/${agentId}/runs/${runId}`, { key: s.org.key })).json;
    expect(run).toMatchObject({ conversation: true, media: row.media });
    expect(Math.abs((await wavSeconds(run.recording_url)) - run.duration_seconds)).toBeLessThanOrEqual(1);
  }, 60_000);

  it("a callee who stays silent: answered, no conversation; no callee audio heard as words; duration the recording's", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo", silenceSeconds: 1 });
    const callee = await connect("twilio", runId);
    // Real time: the session's wall clock ends the call after 1 s of silence.
    const t0 = Date.now();
    let sent = 0;
    while (!callee.closed && Date.now() - t0 < 15_000) {
      for (; sent < Date.now() - t0; sent += 20) callee.silence(20);
      await new Promise((r) => setTimeout(r, 10));
    }
    const row = await eventually(
      () => runRow(runId),
      (r) => r.conversation !== null && r.recordingKey !== null,
      10_000,
    );
    expect(row).toMatchObject({ conversation: false, endReason: "callee_silent" });
    expect(row.media!.caller_audio_s).toBeGreaterThan(0.5);
    const run = await runApi(s, runId);
    expect(run.conversation).toBe(false);
    expect(Math.abs((await wavSeconds(run.recording_url)) - run.duration_seconds)).toBeLessThanOrEqual(1);
  }, 60_000);
});
