// Calls held in real time with the conversation agent on real HTTP engines: the Node stand-ins for an
// OpenAI-compatible model and Deepgram's and ElevenLabs' speech APIs (test/calls/speech-standin.global.ts), reached
// through the pool's outbound simulator like any provider. For Asterisk, the PBX's end of the session's outbound media
// socket is played inside the session's own object (a Worker cannot hold another object's socket), so the test drives
// that callee from within the object.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { callSessionStub } from "../../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../../src/dev/simulator/media/callee";
import { call } from "../../helpers";
import { startSeatsCall } from "../conversation-support";
import type { Setup } from "../support";

export const STANDIN = `http://127.0.0.1:${inject("speechStandinPort")}`;

/** Which stand-in answers each engine, and under which key (the key's first word picks its behaviour: ok, slow, ...). */
export type Engines = { llmKey: string; stt: "deepgram"; sttKey: string; tts: "deepgram" | "elevenlabs"; ttsKey: string };

/** What the stand-ins recorded under a key (chat requests are kept under `chat:<key>`). */
export const standinLog = async (key: string) => (await (await fetch(`${STANDIN}/_standin/log?key=${encodeURIComponent(key)}`)).json()) as any[];

/**
 * The seats agent on the stand-ins, and its call started and prepared for the conversation agent (recorded). The
 * organization allows private endpoints: the stand-ins listen on 127.0.0.1.
 */
export async function standinCall(s: Setup, e: Engines): Promise<number> {
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: s.org.key, body: { allow_private_pbx: true } });
  expect(policy.status, policy.text).toBe(200);
  const { runId } = await startSeatsCall(s, {
    workflow_configurations: {
      voice_agent: {
        llm: { provider: "openai", base_url: `${STANDIN}/v1`, model: "llama3.1", api_key: e.llmKey },
        // Nova-3 on Deepgram's live protocol (v1), the path these figures were taken on (a Deepgram key without a
        // model now hears turns on Flux, v2).
        stt: { provider: e.stt, model: "nova-3", base_url: STANDIN, api_key: e.sttKey },
        tts: { provider: e.tts, base_url: STANDIN, api_key: e.ttsKey, ...(e.tts === "elevenlabs" ? { voice: "voice-1" } : {}) },
        // A silent callee is asked nothing again: the agent says goodbye and hangs up (the carrier's hang-up request).
        turn: { reprompt_after_ms: 3000, max_reprompts: 0 },
      },
    },
  });
  await callSessionStub(env, runId).prepare({ agent: "conversation", record: true });
  return runId;
}

const tick = () => new Promise((r) => setTimeout(r, 10));

/**
 * The callee on the line in real time (a frame every 20 ms of wall clock): `speech` first, then silence, until
 * `done` holds (and the speech is out), the call closes or `maxMs` passes. Returns the audio sent, in ms.
 */
export async function onLine(callee: CalleeStream, speech: Int16Array | null, done: () => boolean, maxMs = 15_000): Promise<number> {
  const frame = callee.protocol.format.rate / 50;
  const start = Date.now();
  let sentMs = 0;
  let at = 0;
  const spoken = () => !speech || at >= speech.length;
  while (!callee.closed && Date.now() - start < maxMs && !(spoken() && done())) {
    for (; sentMs < Date.now() - start && !callee.closed; sentMs += 20) {
      if (speech && at < speech.length) {
        callee.speak(speech.subarray(at, at + frame));
        at += frame;
      } else callee.silence(20);
    }
    await tick();
  }
  return sentMs;
}

/** True once the agent has spoken since now and then been quiet for `quietMs` of wall clock. */
export function repliedThenQuiet(callee: CalleeStream, quietMs = 1000): () => boolean {
  const before = callee.received.length;
  let last = before;
  let since = Date.now();
  return () => {
    if (callee.received.length !== last) [last, since] = [callee.received.length, Date.now()];
    return last > before && Date.now() - since > quietMs;
  };
}

/**
 * Asterisk's end of external media in server mode: the socket the session opens to the PBX's `/media/{id}` is
 * answered inside the session's object, where the callee then plays Asterisk's part (MEDIA_START, ulaw frames).
 * `answer` is for routeLocally; `callee` resolves once the session connected.
 */
export function asteriskMedia(mediaUrl: string, mediaChannelId: string) {
  let connected!: (c: CalleeStream) => void;
  const callee = new Promise<CalleeStream>((r) => {
    connected = r;
  });
  const answer = (input: RequestInfo | URL) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url !== mediaUrl) return null;
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const c = new CalleeStream(server, CALLEE_PROTOCOLS.ari);
    c.open(mediaChannelId);
    connected(c);
    return Promise.resolve(new Response(null, { status: 101, webSocket: client }));
  };
  return { answer, callee };
}

/** Runs `fn` inside the run's session object (where the Asterisk callee's socket lives). */
export const inSession = <T>(runId: number, fn: () => Promise<T>): Promise<T> => runInDurableObject(callSessionStub(env, runId), () => fn());
