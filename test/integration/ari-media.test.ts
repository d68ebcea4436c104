// A voice agent's audio over ARI external media (chan_websocket) with a real Asterisk 22: the call to a sipp UAS
// rings 1.5 s, is answered, and its audio reaches the run's call session over the WebSocket the session opens to
// Asterisk (the session's clock is that audio). The agent plays a 440 Hz tone; Asterisk itself records what the
// call's channel is sent (a snoop channel spying on its outgoing audio), and the tone must be in that recording.
import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { readWav } from "../../src/lib/audio/wav";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call } from "../helpers";
import { ARI, ARI_PASSWORD, ARI_USER, dial, finalStatus, setupAri } from "./ari-support";

const RATE = 8000;
const TONE_HZ = 440;

function tone(seconds: number): Int16Array {
  const out = new Int16Array(RATE * seconds);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / RATE));
  return out;
}

/** The power at one frequency relative to the signal's whole power (Goertzel): near 1 for a pure tone. */
function toneShare(samples: ArrayLike<number>, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let s1 = 0;
  let s2 = 0;
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = samples[i] + k * s1 - s2;
    s2 = s1;
    s1 = s0;
    total += samples[i] * samples[i];
  }
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return total ? (2 * power) / (samples.length * total) : 0;
}

/** The longest run of 20 ms frames on which the tone dominates. */
function toneFrames(samples: number[]): number {
  let best = 0;
  let run = 0;
  for (let i = 0; i + 160 <= samples.length; i += 160) {
    const frame = samples.slice(i, i + 160);
    const loud = Math.sqrt(frame.reduce((n, x) => n + x * x, 0) / 160) > 1000;
    run = loud && toneShare(frame, TONE_HZ) > 0.8 ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}

async function providerCallId(runId: number): Promise<string> {
  const run = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, runId)).get();
  return run!.providerCallId!;
}

const ariAuth = { Authorization: `Basic ${btoa(`${ARI_USER}:${ARI_PASSWORD}`)}` };
const ari = (method: string, path: string) => fetch(`${ARI}/ari${path}`, { method, headers: ariAuth });

describe("ARI external media against Asterisk", () => {
  it.runIf(inject("sipp"))(
    "the session receives the call's audio over chan_websocket, and what the agent plays is heard at the far end",
    { timeout: 30_000 },
    async () => {
      const s = await setupAri();
      const runId = await dial(s, "PJSIP/100@sipp");
      // While the far end rings: the greeting agent gets a one-second tone to play, then hangs up once Asterisk
      // reports it played (MEDIA_MARK_PROCESSED).
      await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: tone(1), rate: RATE } });
      // Asterisk records what the callee is sent: a snoop channel on the call's outgoing audio, recorded as WAV.
      const runChannel = await providerCallId(runId);
      const snoopId = `it-snoop-${runId}-${Date.now()}`;
      const snoop = await ari("POST", `/channels/${runChannel}/snoop?${new URLSearchParams({ spy: "out", app: s.app, snoopId })}`);
      expect(snoop.status, await snoop.text()).toBe(200);
      const recording = `edgedial-it-${snoopId}`;
      const rec = await ari(
        "POST",
        `/channels/${snoopId}/record?${new URLSearchParams({ name: recording, format: "wav", maxDurationSeconds: "15", ifExists: "overwrite" })}`,
      );
      expect(rec.status, await rec.text()).toBe(201);
      expect(await finalStatus(runId, 20_000)).toBe("completed");

      const snap = await callSessionStub(env, runId).snapshot();
      expect(snap.endReason).toBe("agent_hangup");
      // The stream is Asterisk's external media channel for this run.
      expect(snap.streamId).toMatch(new RegExp(`^edgedial-media-${runId}-`));
      // The greeting turn ends when Asterisk said it had played: a second of tone, on the call's audio clock (which
      // the pacer runs up to three frames ahead of).
      expect(snap.turns).toHaveLength(1);
      expect(snap.turns[0].endMs).toBeGreaterThanOrEqual(900);
      expect(snap.turns[0].endMs).toBeLessThan(2500);

      // The recording is saved once the session has ended, after the run's final status.
      let run: any;
      for (let i = 0; i < 100; i++) {
        run = (await call("GET", `/api/v1/workflow/${s.agentId}/runs/${runId}`, { key: s.org.key })).json;
        if (run.recording_url) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(run.recording_url).toBeTruthy();
      const res = await exports.default.fetch(new Request(run.recording_url));
      expect(res.status).toBe(200);
      const wav = readWav(new Uint8Array(await res.arrayBuffer()));
      expect(wav.channels).toBe(2);
      expect(wav.rate).toBe(RATE);
      const agent = Array.from(wav.samples.filter((_, i) => i % 2 === 1));
      // The agent's side: the tone, about a second of it (50 frames; a frame or two at each edge may straddle the
      // start or the hang-up, and a loaded machine has shown 44).
      expect(toneFrames(agent)).toBeGreaterThanOrEqual(40);

      // What Asterisk sent the callee: the same second of tone (the snoop's recording ends with the call).
      let heard: Response | null = null;
      for (let i = 0; i < 50; i++) {
        heard = await ari("GET", `/recordings/stored/${recording}/file`);
        if (heard.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(heard?.status).toBe(200);
      const far = readWav(new Uint8Array(await heard!.arrayBuffer()));
      expect(far.rate).toBe(RATE);
      expect(toneFrames(Array.from(far.samples))).toBeGreaterThanOrEqual(40);
      await ari("DELETE", `/recordings/stored/${recording}`);
      // The recording lasts as long as the session's clock ran (the call from answer to hang-up).
      expect(wav.samples.length / 2 / RATE).toBeGreaterThanOrEqual(0.9);
    },
  );
});
