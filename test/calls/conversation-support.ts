// The conversation tests' shared parts: the seats agent and its scripted model (shared with `npm run demo`), the
// callee's committed espeak-ng clips, a call on the media path with the session prepared for the conversation
// agent, and the callee's listening loops and its side of the seats conversation.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject } from "vitest";
import type { KnownClip } from "../../src/agent/clip-speech";
import { END_CALL_TOOL } from "../../src/agent/graph";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream, MediaProvider } from "../../src/dev/simulator/media/callee";
import type { SampleRate } from "../../src/lib/audio/resample";
import { readWav } from "../../src/lib/audio/wav";
import seats from "../fixtures/seats-agent.json";
import { call } from "../helpers";
import { connect } from "./media-support";
import { type Setup, setup, startCall } from "./support";

export const clip = (name: string, text: string): KnownClip => {
  const w = readWav(Uint8Array.from(atob(inject("audioClips")[name]), (c) => c.charCodeAt(0)));
  return { text, samples: w.samples, rate: w.rate as SampleRate };
};
export const SURE = clip("callee-sure-8k.wav", "Sure, tell me more.");
export const SEATS = clip("callee-seats-8k.wav", "We need twelve seats.");
export const MACHINE = clip("callee-voicemail-8k.wav", "Hi, you have reached Ada. I can't take your call right now. Please leave a message after the tone.");

// The seats agent and its scripted model, shared with `npm run demo`.
export const DEFINITION = seats.definition;
export const SCRIPT: ScriptStep[] = seats.script;
expect(SCRIPT.at(-1)?.call?.name).toBe(END_CALL_TOOL);

export type CallOptions = {
  provider?: MediaProvider;
  ttsFailsOn?: string[];
  run?: { voicemail_action?: string; answered_by?: string; campaign_id?: number; greeting_override?: Record<string, string> };
  configurations?: unknown;
};

export async function conversationCall(s: Setup, script = SCRIPT, o: CallOptions = {}): Promise<{ runId: number; callee: CalleeStream; agentId: number }> {
  const { runId, agentId } = await startSeatsCall(s, {
    call_disposition_codes: SEATS_DISPOSITIONS,
    ...(o.configurations ? { workflow_configurations: o.configurations } : {}),
  });
  // What a campaign or the carrier left on the run before its media connects (a campaign's voicemail_action, AMD).
  if (o.run?.voicemail_action) await env.DB.prepare("UPDATE workflow_runs SET voicemail_action = ? WHERE id = ?").bind(o.run.voicemail_action, runId).run();
  if (o.run?.campaign_id) {
    await env.DB.prepare("UPDATE workflow_runs SET campaign_id = ?, contact_id = 1, attempt = 1 WHERE id = ?").bind(o.run.campaign_id, runId).run();
  }
  if (o.run?.greeting_override) {
    await env.DB.prepare("UPDATE workflow_runs SET greeting_override = ? WHERE id = ?").bind(JSON.stringify(o.run.greeting_override), runId).run();
  }
  if (o.run?.answered_by) await env.DB.prepare("UPDATE workflow_runs SET answered_by = ? WHERE id = ?").bind(o.run.answered_by, runId).run();
  await prepareScripted(runId, script, o.ttsFailsOn);
  return { runId, callee: await connect(o.provider ?? "twilio", runId), agentId };
}

/** The dispositions the seats script's endCall chooses from. */
export const SEATS_DISPOSITIONS = { disposition_codes: ["interested", "not_interested"] };

/**
 * The seats agent created (`fields`: more of the workflow's body, e.g. its dispositions or voice agent settings) and
 * its call started through the public endpoint.
 */
export async function startSeatsCall(s: Setup, fields: Record<string, unknown> = {}): Promise<{ runId: number; agentId: number }> {
  const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "seats", workflow_definition: DEFINITION, ...fields } });
  expect(wf.status, wf.text).toBe(200);
  return { runId: await startCall({ ...s, agent: wf.json }), agentId: wf.json.id as number };
}

/** The run's session prepared for the conversation agent on the deterministic engines: `script`, the callee's clips. */
export async function prepareScripted(runId: number, script = SCRIPT, ttsFailsOn: string[] = []) {
  await callSessionStub(env, runId).prepare({ agent: "conversation", scripted: { script, clips: [SURE, SEATS, MACHINE], ttsFailsOn } });
}

/**
 * The callee's side of the seats conversation, until the agent hangs up. Returns how many frames the agent had sent
 * when its greeting began (what came after is its replies).
 */
export async function seatsConversation(callee: CalleeStream): Promise<number> {
  // The greeting (a tone from the clip engine, 60 ms a character: "Hi Ada!" is 420 ms) plays first.
  await listenUntil(callee, () => callee.played.length >= 1);
  const greetingFrames = callee.received.length;
  await listen(callee, 300);
  callee.speak(SURE.samples);
  // The reply plays sentence by sentence, each marked ("Great." and the question); the callee then answers.
  await listenUntil(callee, () => callee.played.length >= 3);
  await listen(callee, 300);
  callee.speak(SEATS.samples);
  await listenUntil(callee, () => callee.closed !== null);
  expect(callee.closed).not.toBeNull();
  return greetingFrames;
}

/** The callee listens for `ms` (silence, 20 ms at a time), letting the session's clock run. */
export async function listen(callee: CalleeStream, ms: number) {
  for (let t = 0; t < ms && !callee.closed; t += 20) {
    callee.silence(20);
    // Let the session take each frame before the next (and answer with its own audio).
    await new Promise((r) => setTimeout(r, 0));
  }
}

/**
 * Listens in real time until `test` holds (or the call closed): the callee's audio clock kept level with the wall
 * clock, for what runs on the wall clock (the re-prompt, a slow reply's filler, dead air).
 */
export async function listenLive(callee: CalleeStream, test: () => boolean, maxMs = 20_000) {
  const start = Date.now();
  let sentMs = 0;
  while (sentMs < maxMs && !callee.closed && !test()) {
    for (; sentMs < Date.now() - start && !callee.closed; sentMs += 20) callee.silence(20);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type SessionTurn = Awaited<ReturnType<ReturnType<typeof callSessionStub>["snapshot"]>>["turns"][number];

/** The call's transcript (from its session) once `done` holds, or after 10 s, listening in real time meanwhile. */
export async function transcriptWhen(runId: number, callee: CalleeStream, done: (turns: SessionTurn[]) => boolean): Promise<SessionTurn[]> {
  for (let waited = 0; ; waited += 200) {
    const { turns } = await callSessionStub(env, runId).snapshot();
    if (done(turns) || waited >= 10_000) return turns;
    await listenLive(callee, () => false, 200);
  }
}

/** Keeps listening until the agent has sent `frames` frames in all (or the call closed). */
export async function listenUntil(callee: CalleeStream, test: () => boolean, maxMs = 20_000) {
  for (let t = 0; t < maxMs && !callee.closed && !test(); t += 20) {
    callee.silence(20);
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** The run's details once `ready` says they are there (the session writes the run after the call), asked every 20 ms. */
export async function runWhen(s: Setup, agentId: number, runId: number, ready: (run: any) => boolean, tries = 50) {
  for (let i = 0; i < tries; i++) {
    const r = (await call("GET", `/api/v1/workflow/${agentId}/runs/${runId}`, { key: s.org.key })).json;
    if (ready(r)) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error("the run never got there");
}

/**
 * A seats call (on Twilio's protocol) whose session runs the conversation agent on `ai` at the AI binding (Workers AI
 * faked at its boundary), heard up to the greeting and a little quiet. `fields`: more of the agent's settings.
 */
export async function fakeAiCall(
  ai: unknown,
  fields: Record<string, unknown> = {},
  quietMs = 200,
): Promise<{ s: Setup; runId: number; agentId: number; callee: CalleeStream }> {
  const s = await setup("twilio");
  const { runId, agentId } = await startSeatsCall(s, { call_disposition_codes: SEATS_DISPOSITIONS, ...fields });
  await runInDurableObject(callSessionStub(env, runId), (instance) => {
    const o = instance as unknown as { env: Env };
    o.env = { ...o.env, VOICE_AGENT: "conversation", AI: ai } as unknown as Env;
  });
  const callee = await connect("twilio", runId);
  await listenUntil(callee, () => callee.played.length >= 1);
  await listen(callee, quietMs);
  return { s, runId, agentId, callee };
}
