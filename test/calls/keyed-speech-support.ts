// Calls whose agent hears on a speech engine with its own key (Deepgram, ElevenLabs), here the Node stand-in
// (test/calls/speech-standin.global.ts, Flux in flux-standin.ts), while Workers AI is faked at the AI binding.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { call } from "../helpers";
import { listen, listenUntil, SEATS_DISPOSITIONS, startSeatsCall } from "./conversation-support";
import { connect } from "./media-support";
import { setup } from "./support";

export const BASE = `http://127.0.0.1:${inject("speechStandinPort")}`;
/** A fresh API key: the stand-in records what it got under it (its first word may pick a behaviour: deny, fail...). */
export const key = (what = "ok") => `${what}-${crypto.randomUUID()}`;

/** What the stand-in recorded under a key (polled: a socket's close lands a moment after the client's). */
export async function sent(apiKey: string, until: (log: any[]) => boolean = (l) => l.length > 0): Promise<any[]> {
  for (let i = 0; ; i++) {
    const log = (await (await fetch(`${BASE}/_standin/log?key=${encodeURIComponent(apiKey)}`)).json()) as any[];
    if (until(log) || i > 100) return log;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The words the stand-in gives the key's turns: on Flux one entry a turn (or a resumed turn's new words), on Nova's
 * live socket one entry a socket (interim and final).
 */
export async function script(apiKey: string, words: string[], timing: { eagerMs?: number; eotMs?: number } = {}) {
  const res = await fetch(`${BASE}/_standin/flux?key=${encodeURIComponent(apiKey)}`, { method: "POST", body: JSON.stringify({ words, ...timing }) });
  expect(res.status).toBe(200);
}

/**
 * A seats call whose agent hears on `stt` (the stand-in; the organization allows private addresses) and talks on
 * `ai` at the binding, heard up to the greeting and a little quiet. `turn`: the agent's turn settings.
 */
export async function keyedCall(ai: unknown, stt: Record<string, unknown>, turn: Record<string, unknown> = {}) {
  const s = await setup("twilio");
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: s.org.key, body: { allow_private_pbx: true } });
  expect(policy.status, policy.text).toBe(200);
  const voice_agent = { stt: { base_url: BASE, ...stt }, turn };
  const { runId } = await startSeatsCall(s, { call_disposition_codes: SEATS_DISPOSITIONS, workflow_configurations: { voice_agent } });
  await runInDurableObject(callSessionStub(env, runId), (instance) => {
    const o = instance as unknown as { env: Env };
    o.env = { ...o.env, VOICE_AGENT: "conversation", AI: ai } as unknown as Env;
  });
  const callee = await connect("twilio", runId);
  await listenUntil(callee, () => callee.played.length >= 1);
  await listen(callee, 200);
  return { runId, callee };
}
