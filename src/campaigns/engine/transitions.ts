// The campaign state machine, as data. Anything the table does not list is refused (409).
import type { CampaignState } from "./object-api";

export type Trigger = "imported" | "start" | "resume" | "pause" | "breaker_trip" | "complete" | "cancel" | "source_failed" | "redial" | "update" | "append";

export const STATES: readonly CampaignState[] = ["importing", "draft", "running", "paused", "completed", "cancelled", "failed"];
export const FINISHED_STATES: ReadonlySet<CampaignState> = new Set(["completed", "cancelled", "failed"]);

const TABLE: Record<Trigger, Partial<Record<CampaignState, CampaignState>>> = {
  // A background import's last contact stored.
  imported: { importing: "draft" },
  start: { draft: "running", paused: "running" },
  resume: { paused: "running" },
  pause: { running: "paused" },
  breaker_trip: { running: "paused" },
  complete: { running: "completed" },
  cancel: { importing: "cancelled", draft: "cancelled", running: "cancelled", paused: "cancelled" },
  // For an import: the file could not be read, or its rows did not pass (its contacts are removed).
  source_failed: { importing: "failed", draft: "failed", running: "failed" },
  // Redial leaves the parent as it is and creates a new draft child.
  redial: { completed: "completed", cancelled: "cancelled" },
  // Settings may change until the campaign is finished.
  update: { importing: "importing", draft: "draft", running: "running", paused: "paused" },
  // Contacts may be added (POST /campaign/{id}/contacts) once the first import is done and until the campaign ends.
  append: { draft: "draft", running: "running", paused: "paused" },
};

/** The state `trigger` leads to from `from`, or null when the table does not allow it. */
export function nextState(from: CampaignState, trigger: Trigger): CampaignState | null {
  return TABLE[trigger][from] ?? null;
}

const VERB: Record<Trigger, string> = {
  imported: "finish importing",
  start: "start",
  resume: "resume",
  pause: "pause",
  breaker_trip: "pause",
  complete: "complete",
  cancel: "cancel",
  source_failed: "fail",
  redial: "redial",
  update: "update",
  append: "add contacts to",
};

/** The 409 message for a refused trigger, e.g. "Cannot pause a campaign in state 'draft'". */
export function refusal(from: CampaignState, trigger: Trigger): string {
  return `Cannot ${VERB[trigger]} a campaign in state '${from}'`;
}

export const isFinished = (s: CampaignState) => FINISHED_STATES.has(s);
