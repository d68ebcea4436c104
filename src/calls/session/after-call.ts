// The work after a call (post-call analysis, the agent's webhook nodes) is a message on the WEBHOOKS queue, sent as
// the session ends: it never holds up the call's end, survives the session's object going away, and is retried.
import { log } from "../../lib/log";

export type AfterCallMessage = { afterCall: { runId: number } };

export function isAfterCall(body: unknown): body is AfterCallMessage {
  const a = (body as Partial<AfterCallMessage> | null)?.afterCall;
  return typeof a === "object" && a !== null && Number.isInteger(a.runId);
}

/** Never throws: the call has ended either way; a lost message only loses its analysis and webhook nodes (logged). */
export async function enqueueAfterCall(env: Env, runId: number): Promise<void> {
  try {
    await (env.WEBHOOKS as unknown as Queue<AfterCallMessage>).send({ afterCall: { runId } });
  } catch (err) {
    log("error", "after_call_enqueue_failed", { run_id: runId, error: String(err) });
  }
}
