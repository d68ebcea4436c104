// The after-call measuring of what the caller heard (issue 42): the run's two-channel recording is read from R2 as
// it streams (never whole in memory), each side's voice found (src/lib/audio/voice-activity.ts), and each reply's
// gap from the end of the caller's voice to the start of the agent's stored on its turn as `heard_gap_ms`, beside
// the stage timing the agent measured on its own clocks; the run's latency column is rewritten to count it. Once per
// run (the details object records it); a failure is logged and leaves the run as it was, never failing the rest of
// the after-call work.
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { isoNow } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { recordingCodecOf } from "../../lib/audio/recording-format";
import { type Exchange, RecordingVoices } from "../../lib/audio/voice-activity";
import { withHeardGaps } from "./heard-turns";
import type { RunRow } from "../runs/runs";
import { latencySummary, readDetails, writeDetails } from "../session/details-object";

/** The exchanges of a stored recording, read as it streams; null where the object is gone. */
export async function recordingExchanges(bucket: R2Bucket, key: string, rate: number): Promise<Exchange[] | null> {
  const object = await bucket.get(key);
  if (!object) return null;
  const voices = new RecordingVoices(rate, recordingCodecOf(key));
  const reader = object.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    voices.push(value);
  }
  return voices.finish().exchanges;
}

/** Whether the run has what the measuring needs: a recording, a details object and a reply with a timing. */
const measurable = (run: RunRow) => !!run.recordingKey && !!run.recordingRate && !!run.detailsKey && run.latency != null;

/** Measures the run's recording once (see the file's head); how many replies got a gap, or null when not measured. */
export async function measureHeardGaps(env: Env, run: RunRow): Promise<number | null> {
  if (!measurable(run)) return null;
  try {
    const details = await readDetails(env.UPLOADS, run.detailsKey as string);
    if (!details?.transcript?.length || details.heard) return null;
    if (!details.transcript.some((t) => t.role === "agent" && t.timing)) return null;
    const found = await recordingExchanges(env.UPLOADS, run.recordingKey as string, run.recordingRate as number);
    if (!found) return null;
    const { transcript, matched } = withHeardGaps(details.transcript, found);
    await writeDetails(env.UPLOADS, run.detailsKey as string, { ...details, transcript, heard: { measured_at: isoNow(), exchanges: found.length, matched } });
    if (matched)
      await getDb(env)
        .update(workflowRuns)
        .set({ latency: latencySummary(transcript) })
        .where(eq(workflowRuns.id, run.id))
        .run();
    return matched;
  } catch (err) {
    log("error", "heard_latency_failed", { run_id: run.id, error: String(err) });
    return null;
  }
}
