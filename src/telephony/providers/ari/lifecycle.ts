// ARI's outcomes come over the configuration's events socket (held by the ARI events object, reached through its
// binding), so the socket is opened before a call is placed, and told about calls it should forget or expect to end.
import type { CallLifecycle } from "../types";

/** The events object of one ARI configuration. */
export function ariEventsStub(env: Env, configId: number): ReturnType<Env["ARI_EVENTS"]["get"]> {
  return env.ARI_EVENTS.get(env.ARI_EVENTS.idFromName(`ari:${configId}`));
}

export const ariLifecycle: CallLifecycle = {
  async beforeOriginate(env, ctx, runId) {
    // Events can arrive before the originate reply: the events socket must be open first.
    const watch = await ariEventsStub(env, ctx.id).track(ctx.id, runId);
    return watch.connected ? { ok: true } : { ok: false, message: `ARI events connection failed: ${watch.error ?? "unknown error"}` };
  },
  async originateFailed(env, ctx, runId) {
    await ariEventsStub(env, ctx.id).untrack(runId);
  },
  async beforeHangup(env, ctx, providerCallId) {
    // Told first, so a cause 16 before answer reads as canceled.
    await ariEventsStub(env, ctx.id).noteHangup(providerCallId);
  },
  async listen(env, ctx) {
    // Callers reach us as StasisStart on the events socket: it stays open while a number has an inbound agent.
    const held = await ariEventsStub(env, ctx.id).listen(ctx.id);
    return held.connected ? { ok: true } : { ok: false, message: `ARI events connection failed: ${held.error ?? "unknown error"}` };
  },
};
