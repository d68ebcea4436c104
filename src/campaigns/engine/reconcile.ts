// Restart recovery: attempts left `dialing` by a previous instance, for which the carrier may or may not have been
// asked. The run record decides when it can; otherwise the outcome is `unknown` and the contact is not dialed again
// (when in doubt, don't dial).
import { clock } from "../../lib/clock";
import { PROGRESS_ORDER, isFinalStatus } from "./outcomes";
import type { AttemptRow } from "./attempts";
import type { CampaignCore } from "./core";
import type { AttemptEndings } from "./endings";
import { runOfAttempt } from "./run-records";

export async function reconcile(core: CampaignCore, endings: AttemptEndings): Promise<void> {
  const { db, log } = core;
  const c = core.campaign();
  if (!c) return;
  const stuck = db.all<AttemptRow>`SELECT * FROM attempts WHERE status = 'dialing'`;
  for (const a of stuck) {
    const run = await runOfAttempt(core.env, c.campaign_id, a.contact_id, a.attempt);
    const now = clock.now();
    if (run && isFinalStatus(run.status)) {
      db.run`UPDATE attempts SET run_id = coalesce(run_id, ${run.id}) WHERE id = ${a.id}`;
      await endings.finish({ ...a, run_id: run.id }, run.status, now, {});
      log.write("warning", "attempt_reconciled", `An interrupted call start was found finished (${run.status}) in its run record`, {
        contact_id: a.contact_id,
        attempt: a.attempt,
        run_id: run.id,
        outcome: run.status,
      });
    } else if (run && (run.provider_call_id || PROGRESS_ORDER[run.status] > PROGRESS_ORDER.initiated)) {
      // A call id or a status past `initiated` came from the carrier (a run is recorded `initiated` before it is asked).
      // The carrier has the call: keep waiting for its statuses (the timeout still applies).
      db.run`UPDATE attempts SET status = 'in_flight', run_id = ${run.id}, provider_call_id = ${run.provider_call_id}
        WHERE id = ${a.id} AND status = 'dialing'`;
      log.write("info", "attempt_reconciled", "An interrupted call start was found placed; waiting for its outcome", {
        contact_id: a.contact_id,
        attempt: a.attempt,
        run_id: run.id,
      });
    } else {
      await endings.finish(a, "unknown", now, { noRetry: true, error: "Interrupted while starting the call" });
      log.write(
        "warning",
        "attempt_reconciled",
        "A call start was interrupted; it may have been placed, so the contact is not dialed again (outcome unknown)",
        {
          contact_id: a.contact_id,
          attempt: a.attempt,
          run_id: run?.id ?? null,
        },
      );
    }
  }
  if (stuck.length) {
    if (core.campaign()?.state === "running") core.pokeDispatch(clock.now());
    await core.settle();
  }
}
