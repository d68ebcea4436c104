// The keypad on the calls side. In: a key press a carrier reported by callback (Telnyx's call.dtmf.received, ARI's
// ChannelDtmfReceived) goes to the run's call session, which hands it to the agent (once, should the stream report it
// too). Out: keys the agent presses on its call, through the carrier's own DTMF command (Telnyx send_dtmf, Vonage's PUT …/dtmf,
// Plivo's and Vobiz's …/DTMF/, ARI's channel dtmf): false where the carrier has none (Twilio while a media stream
// runs, Exotel, Cloudonix), and the call session then plays the keys as tones on the media path.
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { loadConfigContext, resolveTelephonyConfig } from "../../telephony/resolve";
import { providerEnvOf } from "../../telephony/provisioning";
import { getRun, isFinal, type RunRow } from "../runs/runs";
import { callSessionStub } from "../session/stub";

/** True once the carrier took the keys; false where it has no command; throws with the carrier's refusal. */
export async function sendRunDtmf(env: Env, orgId: number, runId: number, digits: string): Promise<boolean> {
  const run = await getRun(getDb(env), runId);
  if (!run || run.orgId !== orgId || !run.telephonyConfigurationId || !run.providerCallId) return false;
  const cfg = await resolveTelephonyConfig(env, orgId, run.telephonyConfigurationId);
  const send = cfg.provider.calls?.sendDtmf;
  if (!send) return false;
  await send(await loadConfigContext(env, cfg.row, cfg.numbers), providerEnvOf(env), run.providerCallId, digits);
  return true;
}

/** A reported key press to the run's session, when it names the run's own answered call (a session without an agent ignores it). */
export async function keyToSession(env: Env, run: RunRow | null, key: { callId: string; digit: string } | null): Promise<void> {
  if (!run || !key || key.callId !== run.providerCallId || isFinal(run.status) || run.answeredAt == null) return;
  try {
    await callSessionStub(env, run.id).dtmfReceived(key.digit);
  } catch (err) {
    // A lost press: the callee presses again when nothing happens, as with any phone menu.
    log("warning", "key_press_not_handed_over", { run_id: run.id, error: String(err) });
  }
}
