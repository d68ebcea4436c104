// Keys the agent presses on its call, through the carrier's own DTMF command (Telnyx send_dtmf, Vonage's PUT …/dtmf,
// Plivo's and Vobiz's …/DTMF/, ARI's channel dtmf): false where the carrier has none (Twilio while a media stream
// runs, Exotel, Cloudonix), and the call session then plays the keys as tones on the media path.
import { getDb } from "../lib/db";
import { loadConfigContext, resolveTelephonyConfig } from "../telephony/resolve";
import { providerEnvOf } from "../telephony/provisioning";
import { getRun } from "./runs";

/** True once the carrier took the keys; false where it has no command; throws with the carrier's refusal. */
export async function sendRunDtmf(env: Env, orgId: number, runId: number, digits: string): Promise<boolean> {
  const run = await getRun(getDb(env), runId);
  if (!run || run.orgId !== orgId || !run.telephonyConfigurationId || !run.providerCallId) return false;
  const cfg = await resolveTelephonyConfig(env, orgId, run.telephonyConfigurationId);
  const send = cfg.provider.calls?.sendDtmf;
  if (!send) return false;
  await send(await loadConfigContext(env, cfg.row), providerEnvOf(env), run.providerCallId, digits);
  return true;
}
