// Every way a call session ends a call leaves its reason on the run: `end_reason` (distinct for each path) and, where
// the transcript does not explain it, a note. One row per path, each driven the way it happens on a real call.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import { isVoiced } from "../../src/lib/audio/level";
import { readWav } from "../../src/lib/audio/wav";
import { conversationCall, listen, listenLive, listenUntil, SCRIPT, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { resetSession } from "./resume-support";
import { eventually, runApi, runRow, setup, startCall, type Setup } from "./support";

const SPEECH = readWav(Uint8Array.from(atob(inject("audioClips")["callee-8k.wav"]), (c) => c.charCodeAt(0))).samples;
const VOICED = (() => {
  for (let i = 0; i + 160 <= SPEECH.length; i += 160) if (isVoiced(SPEECH.subarray(i, i + 160))) return SPEECH.subarray(i, i + 160);
  throw new Error("no speech in the clip");
})();
const TONE = new Int16Array(4000).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));

type Call = { s: Setup; runId: number; callee: CalleeStream };

async function echo(options: { silenceSeconds?: number; maxCallSeconds?: number } = {}): Promise<Call> {
  const s = await setup("twilio");
  const runId = await startCall(s);
  await callSessionStub(env, runId).prepare({ agent: "echo", ...options });
  return { s, runId, callee: await connect("twilio", runId) };
}

async function conversation(script = SCRIPT, o: Parameters<typeof conversationCall>[2] = {}): Promise<Call> {
  const s = await setup("twilio");
  const { runId, callee } = await conversationCall(s, script, o);
  return { s, runId, callee };
}

const untilClosed = (callee: CalleeStream) => callee.until(() => callee.closed !== null);

const PATHS: Array<[string, () => Promise<Call>, (c: Call) => Promise<void>, RegExp | null]> = [
  [
    "agent_hangup",
    async () => {
      const s = await setup("twilio");
      const runId = await startCall(s);
      await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: TONE, rate: 8000 } });
      return { s, runId, callee: await connect("twilio", runId) };
    },
    async ({ callee }) => listenUntil(callee, () => callee.closed !== null),
    null,
  ],
  [
    "callee_hangup",
    () => echo(),
    async ({ callee }) => {
      callee.speak(VOICED);
      callee.hangup();
      await untilClosed(callee);
    },
    /^The callee hung up: the carrier's media stream stopped$/,
  ],
  ["callee_silent", () => echo({ silenceSeconds: 1 }), async ({ callee }) => untilClosed(callee), /said nothing for 1 s/],
  ["max_call_seconds", () => echo({ maxCallSeconds: 1 }), async ({ callee }) => listenLive(callee, () => callee.closed !== null), /maximum length of 1 s/],
  [
    "media_error",
    () => echo(),
    async ({ callee }) => {
      for (let i = 0; i < 500; i++) callee.ws.send(JSON.stringify({ event: "media", streamSid: callee.streamId, media: { payload: "%%" } }));
      await untilClosed(callee);
    },
    /media stream failed: 500 unreadable media messages in a row/,
  ],
  [
    "media_lost",
    () => echo(),
    async ({ runId, callee }) => {
      callee.speak(VOICED);
      await callee.until(() => callee.received.length > 0);
      await resetSession(runId);
      await eventually(
        () => callSessionStub(env, runId).snapshot(),
        (snap) => snap.ended,
        15_000,
      );
    },
    /media connection was lost/,
  ],
  [
    "voicemail",
    () => conversation(SCRIPT, { run: { answered_by: "machine_end_beep" } }),
    async ({ callee }) => listenUntil(callee, () => callee.closed !== null),
    /An answering machine answered \(the carrier reported machine_end_beep\); the call was hung up/,
  ],
  [
    "provider_failure",
    () => conversation([{ user: "tell me more", say: "", fail: "The model endpoint answered HTTP 503: overloaded" }]),
    async ({ callee }) => {
      await listenUntil(callee, () => callee.played.length >= 1);
      await listen(callee, 200);
      callee.speak(SURE.samples);
      await listenUntil(callee, () => callee.closed !== null);
    },
    /provider failure: The model endpoint answered HTTP 503/,
  ],
  [
    "dead_air",
    () => conversation([{ user: "tell me more", stall: true }], { configurations: { voice_agent: { turn: { max_wait_ms: 1000, filler_after_ms: 0 } } } }),
    async ({ callee }) => {
      await listenUntil(callee, () => callee.played.length >= 1);
      await listen(callee, 200);
      callee.speak(SURE.samples);
      await listenLive(callee, () => callee.closed !== null);
    },
    /No reply within 1 s of the callee's turn/,
  ],
];

describe("every end of a call leaves its reason on the run", () => {
  it.each(PATHS)("%s", async (reason, start, drive, note) => {
    const c = await start();
    await drive(c);
    expect((await callSessionStub(env, c.runId).snapshot()).endReason).toBe(reason);
    const run = await eventually(
      () => runRow(c.runId),
      (r) => r.endReason === reason,
    );
    expect(run.endReason).toBe(reason);
    if (note) expect(run.notes).toMatch(note);
    else expect(run.notes).toBeNull();
  });

  it("the reasons are distinct, and the run's details show them", async () => {
    expect(new Set(PATHS.map(([reason]) => reason)).size).toBe(PATHS.length);
    const c = await echo({ silenceSeconds: 1 });
    await untilClosed(c.callee);
    await eventually(
      () => runRow(c.runId),
      (r) => r.endReason !== null,
    );
    expect(await runApi(c.s, c.runId)).toMatchObject({ end_reason: "callee_silent", notes: expect.stringMatching(/said nothing/) });
  });
});
