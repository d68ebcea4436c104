// What a call says until the real-time agent exists: the contact's text override or the Start
// node's greeting, with template variables filled from the run's initial_context.
import { and, eq, isNull, sql } from "drizzle-orm";
import { workflowDefinitions, workflowRuns } from "../../db/schema";
import type { Db } from "../../lib/db";
import { renderTemplate, startGreeting } from "../../workflows";
import { parseStoredDefinition } from "../../workflows/store";
import type { RunRow } from "../runs/runs";

export const AUDIO_FALLBACK_NOTE =
  "The greeting recording is played only when a voice agent takes the call (the media path); the carrier spoke the text greeting instead";
export const missingRecordingNote = (id: string) => `The greeting recording ${id} does not exist (deleted?); the text greeting was used instead`;

/** The greeting text of a run; records on the run why an audio override was not played. */
export async function greetingFor(db: Db, run: RunRow, audioNote = AUDIO_FALLBACK_NOTE): Promise<string> {
  const override = run.greetingOverride as { type?: string; text?: string } | null;
  if (override?.type === "text" && typeof override.text === "string" && override.text.trim()) {
    return renderTemplate(override.text, run.initialContext).text;
  }
  if (override?.type === "audio" && !run.notes) {
    await db
      .update(workflowRuns)
      .set({ notes: audioNote })
      .where(and(eq(workflowRuns.id, run.id), isNull(workflowRuns.notes)));
  }
  if (run.definitionId == null) return "";
  // Read as raw text, as the agents module does, so a corrupt stored definition cannot throw here.
  const def = await db
    .select({ text: sql<string | null>`${workflowDefinitions.definition}` })
    .from(workflowDefinitions)
    .where(eq(workflowDefinitions.id, run.definitionId))
    .get();
  const greeting = startGreeting(parseStoredDefinition(def?.text ?? null));
  return greeting ? renderTemplate(greeting, run.initialContext).text : "";
}
