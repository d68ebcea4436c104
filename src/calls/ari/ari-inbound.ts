// A call that came in through Asterisk (its StasisStart on the configuration's events socket, held by the ARI events
// object): admitted as any inbound call (src/calls/inbound/inbound-admit.ts: number, agent, concurrent-call lease, the run),
// then answered so the events object can bridge it to the run's call session exactly as an answered outbound call.
// A caller no agent takes is hung up before answer with a cause their phone understands (busy over the cap).
import { eq } from "drizzle-orm";
import { telephonyConfigs } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { answerAriChannel, refuseAriChannel, refusalHangup } from "../../telephony/providers/ari/inbound";
import type { ConfigContext, InboundCall } from "../../telephony/providers/types";
import { providerEnvOf } from "../../telephony/provisioning";
import { admitInbound } from "../inbound/inbound-admit";
import { applyStatus } from "../runs/status";

async function refuse(env: Env, ctx: ConfigContext, call: InboundCall, reason: string): Promise<null> {
  const hangup = refusalHangup(reason);
  const done = await refuseAriChannel(ctx, providerEnvOf(env), call.callId, hangup);
  if (!done.ok) log("warning", "ari_inbound_refusal_failed", { config_id: ctx.id, call_id: call.callId, error: done.message });
  return null;
}

/**
 * Takes the incoming channel: its run (the channel mapped to it by `adopt` before it is answered, so no later event
 * of the channel is missed), then the answer. The run's id once answered; null when the call was refused or lost.
 */
export async function takeAriInbound(env: Env, ctx: ConfigContext, call: InboundCall, adopt: (runId: number) => void): Promise<number | null> {
  const row = await getDb(env).select().from(telephonyConfigs).where(eq(telephonyConfigs.id, ctx.id)).get();
  if (!row) return null;
  if (!call.to) {
    // Neither a Stasis argument nor a dialplan extension: nothing says which number was dialed.
    log("warning", "inbound_call_refused", { provider: "ari", config_id: ctx.id, call_id: call.callId, reason: "number_unknown", detail: "no dialed number" });
    return refuse(env, ctx, call, "number_unknown");
  }
  const admitted = await admitInbound(env, row, "ari", call, "ringing");
  if (!admitted.ok) return refuse(env, ctx, call, admitted.reason);
  const run = admitted.run;
  adopt(run.id);
  const answered = await answerAriChannel(ctx, providerEnvOf(env), call.callId);
  if (!answered.ok) {
    // Most often the caller hung up before the answer: the run ends, its lease freed.
    log("warning", "ari_inbound_answer_failed", { run_id: run.id, error: answered.message });
    await applyStatus(env, run, { status: "failed", error: `Answering the incoming call failed: ${answered.message}` });
    return null;
  }
  await applyStatus(env, run, { status: "in_progress", providerCallId: call.callId });
  return run.id;
}
