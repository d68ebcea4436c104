// The conversation tests' shared parts: the seats agent and its scripted model (shared with `npm run demo`), the
// callee's committed espeak-ng clips, a call on the media path with the session prepared for the conversation
// agent, and the callee's listening loops.
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
import { CALLEE, type Setup } from "./support";

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
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: s.org.key,
    body: {
      name: "seats",
      workflow_definition: DEFINITION,
      call_disposition_codes: { disposition_codes: ["interested", "not_interested"] },
      ...(o.configurations ? { workflow_configurations: o.configurations } : {}),
    },
  });
  expect(wf.status, wf.text).toBe(200);
  const res = await call("POST", `/api/v1/public/agent/${wf.json.workflow_uuid}`, {
    key: s.org.key,
    body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
  });
  expect(res.status, res.text).toBe(200);
  const runId = res.json.workflow_run_id as number;
  // What a campaign or the carrier left on the run before its media connects (a campaign's voicemail_action, AMD).
  if (o.run?.voicemail_action) await env.DB.prepare("UPDATE workflow_runs SET voicemail_action = ? WHERE id = ?").bind(o.run.voicemail_action, runId).run();
  if (o.run?.campaign_id) {
    await env.DB.prepare("UPDATE workflow_runs SET campaign_id = ?, contact_id = 1, attempt = 1 WHERE id = ?").bind(o.run.campaign_id, runId).run();
  }
  if (o.run?.greeting_override) {
    await env.DB.prepare("UPDATE workflow_runs SET greeting_override = ? WHERE id = ?").bind(JSON.stringify(o.run.greeting_override), runId).run();
  }
  if (o.run?.answered_by) await env.DB.prepare("UPDATE workflow_runs SET answered_by = ? WHERE id = ?").bind(o.run.answered_by, runId).run();
  await callSessionStub(env, runId).prepare({ agent: "conversation", scripted: { script, clips: [SURE, SEATS, MACHINE], ttsFailsOn: o.ttsFailsOn ?? [] } });
  return { runId, callee: await connect(o.provider ?? "twilio", runId), agentId: wf.json.id };
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

/** Keeps listening until the agent has sent `frames` frames in all (or the call closed). */
export async function listenUntil(callee: CalleeStream, test: () => boolean, maxMs = 20_000) {
  for (let t = 0; t < maxMs && !callee.closed && !test(); t += 20) {
    callee.silence(20);
    await new Promise((r) => setTimeout(r, 0));
  }
}
