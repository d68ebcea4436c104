// What a call session is told about its run when its media connects, by the stream route (the carrier connected to
// us) or by the ARI object (the session connects to the PBX).
import { getDb } from "../../lib/db";
import { recordsCalls } from "../../telephony/calling-policy";
import type { ProviderName } from "../../telephony/providers/types";
import { greetingFor } from "../greeting";
import type { RunRow } from "../runs";
import type { SessionStart } from "./call-session";

export async function sessionStart(env: Env, run: RunRow, provider: ProviderName): Promise<SessionStart> {
  const db = getDb(env);
  return {
    runId: run.id,
    orgId: run.orgId,
    provider,
    greeting: (await greetingFor(db, run)) || null,
    variables: Object.fromEntries(Object.entries(run.initialContext ?? {}).map(([k, v]) => [k, String(v)])),
    record: await recordsCalls(db, run.orgId),
  };
}
