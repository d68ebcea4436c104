// A call that comes in through a real Asterisk 22: the peers' dialplan sends a call for an extension into the Stasis
// application (`[to-stasis] exten => _X.,1,Stasis(dialer,${EXTEN})`), the configuration's app is `dialer`, and the
// extension is one of its numbers with an agent attached. Attaching the agent holds the ARI events socket open; the
// caller's channel entering the app becomes an inbound run, is answered and bridged with an external media channel to
// the run's call session as an answered outbound call is, and hears the agent's greeting (Goertzel on what Asterisk
// records of the audio the caller's channel is sent). The greeting agent hangs up after it, and the run completes
// `inbound`.
//
// The caller's phone is the sipp UAS of the suite (PJSIP/100@sipp). The peers' pjsip.conf routes every INVITE from
// sipp to `[from-sipp]` (answer, wait, hang up), so a sipp UAC cannot reach `[to-stasis]` without changing the shared
// peers; instead Asterisk places the caller's leg to the sipp phone and runs `[to-stasis]` for it once answered, which
// is what the dialplan does for a trunk's incoming call: a channel edgedial did not make entering the app with the
// dialed number as its Stasis argument.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { eq } from "drizzle-orm";
import { callSessionStub } from "../../src/calls/session/stub";
import { workflowRuns } from "../../src/db/schema";
import { readWav } from "../../src/lib/audio/wav";
import { getDb } from "../../src/lib/db";
import { ariEventsStub } from "../../src/telephony/providers/ari/lifecycle";
import { call } from "../helpers";
import { ARI, ARI_PASSWORD, ARI_USER, finalStatus, setupAri } from "./ari-support";

const RATE = 8000;
const TONE_HZ = 440;
const NUMBER = "2001";
const CALLING = "+14155550177";

const ariAuth = { Authorization: `Basic ${btoa(`${ARI_USER}:${ARI_PASSWORD}`)}` };
const ari = (method: string, path: string) => fetch(`${ARI}/ari${path}`, { method, headers: ariAuth });

function tone(seconds: number): Int16Array {
  const out = new Int16Array(RATE * seconds);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / RATE));
  return out;
}

/** The longest run of 20 ms frames that are loud and dominated by the tone (Goertzel). */
function toneFrames(samples: number[]): number {
  const k = 2 * Math.cos((2 * Math.PI * TONE_HZ) / RATE);
  let best = 0;
  let run = 0;
  for (let i = 0; i + 160 <= samples.length; i += 160) {
    let s1 = 0;
    let s2 = 0;
    let total = 0;
    for (let j = i; j < i + 160; j++) {
      const s0 = samples[j] + k * s1 - s2;
      s2 = s1;
      s1 = s0;
      total += samples[j] * samples[j];
    }
    const share = total ? (2 * (s1 * s1 + s2 * s2 - k * s1 * s2)) / (160 * total) : 0;
    run = Math.sqrt(total / 160) > 1000 && share > 0.8 ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("ARI inbound against Asterisk", () => {
  it.runIf(inject("sipp"))(
    "a call the dialplan sends into the Stasis app reaches the number's agent: answered, bridged, the greeting heard, the run completed inbound",
    { timeout: 40_000 },
    async () => {
      const s = await setupAri("dialer");
      const configId = (await call("GET", "/api/v1/organizations/telephony-configs", { key: s.org.key })).json.items[0].id as number;
      const number = await call("POST", `/api/v1/organizations/telephony-configs/${configId}/phone-numbers`, {
        key: s.org.key,
        body: { address: NUMBER, inbound_workflow_id: s.agentId },
      });
      expect(number.status, number.text).toBe(200);
      // Attaching opened the events socket: it listens with no call in flight.
      expect(await ariEventsStub(env, configId).status()).toMatchObject({ connected: true, inFlight: 0, listening: true });

      // The run this call will make, its session told beforehand to play a two-second tone as the greeting (the call
      // is answered and bridged at once, with no ring time to prepare it in).
      const next = (await env.DB.prepare("SELECT COALESCE(MAX(id), 0) + 1 AS next FROM workflow_runs").first<{ next: number }>())!.next;
      await callSessionStub(env, next).prepare({ agent: "greeting", greetingClip: { samples: tone(2), rate: RATE } });

      const caller = `it-caller-${Date.now()}`;
      const placed = await ari(
        "POST",
        `/channels?${new URLSearchParams({ endpoint: "PJSIP/100@sipp", extension: NUMBER, context: "to-stasis", priority: "1", callerId: CALLING, channelId: caller, timeout: "15" })}`,
      );
      expect(placed.status, await placed.text()).toBe(200);
      // Asterisk records what the caller's channel is sent (a snoop spying on its outgoing audio). The snoop's id is
      // edgedial-like so that edgedial, which sees it enter the same app, never takes it for a caller.
      const snoopId = `edgedial-it-snoop-${Date.now()}`;
      const snoop = await ari("POST", `/channels/${caller}/snoop?${new URLSearchParams({ spy: "out", app: s.app, snoopId })}`);
      expect(snoop.status, await snoop.text()).toBe(200);
      const recording = `edgedial-it-${snoopId}`;
      // The snoop takes a moment to enter the app (409 until it has).
      const rec = await until(
        () =>
          ari(
            "POST",
            `/channels/${snoopId}/record?${new URLSearchParams({ name: recording, format: "wav", maxDurationSeconds: "20", ifExists: "overwrite" })}`,
          ),
        (r) => r.status !== 409,
        3000,
      );
      expect(rec.status, await rec.text()).toBe(201);

      const run = await until(
        () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.providerCallId, caller)).get(),
        (r) => r !== undefined,
        15_000,
      );
      expect(run).toMatchObject({ id: next, direction: "inbound", phoneNumber: CALLING, fromNumber: NUMBER, workflowId: s.agentId });
      expect(run?.initialContext).toMatchObject({ caller_number: CALLING, called_number: NUMBER });

      // The greeting played, the agent hung up, the run completed.
      expect(await finalStatus(next, 20_000)).toBe("completed");
      const snap = await callSessionStub(env, next).snapshot();
      expect(snap.endReason).toBe("agent_hangup");
      expect(snap.streamId).toBe(`edgedial-media-in-${caller}`);
      const api = (await call("GET", `/api/v1/workflow/${s.agentId}/runs/${next}`, { key: s.org.key })).json;
      expect(api).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });

      // What the caller was sent: the two seconds of tone (100 frames; a few at each edge may straddle start and end).
      let heard: Response | null = null;
      for (let i = 0; i < 50; i++) {
        heard = await ari("GET", `/recordings/stored/${recording}/file`);
        if (heard.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(heard?.status).toBe(200);
      const far = readWav(new Uint8Array(await heard!.arrayBuffer()));
      expect(far.rate).toBe(RATE);
      expect(toneFrames(Array.from(far.samples))).toBeGreaterThanOrEqual(80);
      await ari("DELETE", `/recordings/stored/${recording}`);
      // The caller's channel, its bridge and the media channel are gone; the socket still listens for the next caller.
      expect((await ari("GET", `/channels/${caller}`)).status).toBe(404);
      expect((await ari("GET", `/bridges/edgedial-bridge-in-${caller}`)).status).toBe(404);
      expect(await ariEventsStub(env, configId).status()).toMatchObject({ connected: true, listening: true });
    },
  );
});
