// Calls that lose their media socket to a reset, driven the way the carrier drives them: the deployed Worker (a voice
// agent on the media path) answers the simulator's callbacks, the simulated callee talks on the stream the answer
// document names, the call session is reset (its storage kept, its sockets dropped), and the simulator does what
// the carrier documents once a stream's socket closes with the call up.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import type { Callback } from "../../src/dev/simulator/types";
import { Resampler } from "../../src/lib/audio/resample";
import { DEFINITION, listen, prepareScripted, SEATS_DISPOSITIONS } from "./conversation-support";
import { fetchWorker, upgradeAt } from "./media-support";
import { CALLEE, callbackRequest, play, runRow, sim, type Setup } from "./support";

/** The Worker as deployed: answered calls run the conversation agent on the media path. */
export const LIVE = { ...env, VOICE_AGENT: "conversation" } as Env;

/** One request to the deployed Worker, its background work (waitUntil) finished. */
export const liveFetch = (req: Request) => fetchWorker(req, LIVE);

/** A carrier's callback delivered to the deployed Worker, accepted (2xx). */
export async function deliverLive(cb: Callback) {
  const r = await liveFetch(callbackRequest(cb));
  expect(r.status, `${cb.kind} ${cb.url}: ${r.text}`).toBeLessThan(300);
  return r;
}

export type AnsweredCall = { runId: number; callId: string; document: string; streamUrl: string };
export type LiveCall = AnsweredCall & { callee: CalleeStream };

/**
 * The seats agent's call, answered: started through the deployed Worker, the session prepared with the scripted
 * engines, the carrier's callbacks up to the answer delivered, and the callee on the stream the answer connects
 * (Telnyx: the stream asked for on dial).
 */
export async function answeredLiveCall(s: Setup, provider: MediaProvider): Promise<LiveCall> {
  const call = await answerLive(s, provider);
  return { ...call, callee: await calleeAt(provider, call.runId, call.callId, call.streamUrl) };
}

/** The seats agent's call answered by the deployed Worker, its stream not connected yet. */
export async function answerLive(s: Setup, provider: MediaProvider): Promise<AnsweredCall> {
  const wf = await liveFetch(
    new Request("http://edgedial.test/api/v1/workflow/create", {
      method: "POST",
      headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS }),
    }),
  );
  expect(wf.status, wf.text).toBe(200);
  const started = await liveFetch(
    new Request(`http://edgedial.test/api/v1/public/agent/${JSON.parse(wf.text).workflow_uuid}`, {
      method: "POST",
      headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
      body: JSON.stringify({ phone_number: CALLEE, initial_context: { first_name: "Ada" } }),
    }),
  );
  expect(started.status, started.text).toBe(200);
  const runId = JSON.parse(started.text).workflow_run_id as number;
  await prepareScripted(runId);
  const callId = (await runRow(runId)).providerCallId!;
  let document = "";
  for (const cb of await untilAnswered(callId, provider)) {
    if (cb.kind === "stream") continue;
    const r = await deliverLive(cb);
    if (cb.kind === "answer") document = r.text;
  }
  const streamUrl = provider === "telnyx" ? String((await simCall(callId)).streamUrl) : streamUrlIn(document);
  expect(streamUrl, `a stream in ${document}`).toMatch(/^wss?:\/\//);
  return { runId, callId, document, streamUrl: streamUrl! };
}

/**
 * The simulator's callbacks of an answered call, its scripted end left out (the last one, except for Telnyx, whose call
 * ends only by command): the call goes on.
 */
export async function untilAnswered(callId: string, provider: MediaProvider): Promise<Callback[]> {
  const cbs = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
  const answered = provider === "telnyx" ? cbs : cbs.slice(0, -1);
  carriersEnd.set(callId, cbs.slice(answered.length));
  return answered;
}

/** The carrier's report of each call's end, held back by `untilAnswered` (a test delivers it when the callee hangs up). */
export const carriersEnd = new Map<string, Callback[]>();

/** The simulator's view of a call (its current stream URL among the rest). */
export const simCall = (callId: string) => sim<{ streamUrl?: string; state: string }>("GET", `/calls/${encodeURIComponent(callId)}`);

/** The simulated callee on the stream at `url`, connected as the carrier connects (Twilio signs the upgrade). */
export async function calleeAt(provider: MediaProvider, runId: number, callId: string, url: string): Promise<CalleeStream> {
  const res = await upgradeAt(provider, runId, url.replace(/^ws/, "http"));
  expect(res.status, `upgrade to ${url}`).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS[provider]);
  callee.open(callId);
  return callee;
}

/** The callee says a clip (8 kHz) on its stream's own rate (Vonage's is 16 kHz). */
export function say(callee: CalleeStream, clip: { samples: Int16Array }) {
  const rate = callee.protocol.format.rate;
  callee.speak(rate === 8000 ? clip.samples : new Resampler(8000, rate).convert(clip.samples));
}

/** The callee listens until the agent has said something and then been quiet for `quietMs`. */
export async function hearAgent(callee: CalleeStream, quietMs = 700, maxMs = 15_000) {
  let heard = callee.received.length;
  let quiet = 0;
  for (let t = 0; t < maxMs && !callee.closed; t += 20) {
    await listen(callee, 20);
    const now = callee.received.length;
    quiet = now > heard ? 0 : quiet + 20;
    heard = now;
    if (heard > 0 && quiet >= quietMs) return;
  }
}

/**
 * Resets the run's call session as a deploy does: storage kept, in-memory state and sockets lost (the carrier's socket
 * sees 1006). The old stub is broken afterwards: callSessionStub gives a new one.
 */
export async function resetSession(runId: number) {
  await runInDurableObject(callSessionStub(env, runId), (_instance, state) => {
    setTimeout(() => {
      try {
        state.abort("reset");
      } catch {
        // the abort throws in the object, by design
      }
    }, 0);
  });
}

/** What the simulated carrier does once the call's stream socket closed with the call up, given the running document. */
export const mediaEnded = async (callId: string, document: string) =>
  (await sim<{ callbacks: Callback[] }>("POST", `/calls/${encodeURIComponent(callId)}/media-ended`, { document })).callbacks;
