// The campaign's state changes: the only code that writes `campaign.state`. Every change is a trigger of the
// transition table (transitions.ts), checked here, and written with the columns that go with it, inside the caller's
// transaction. A state the table does not lead to cannot be written.
import { sql, type DoSql, type SqlFragment } from "../../lib/do-sql";
import type { CampaignState } from "./object-api";
import { EngineError, engineConflict } from "./refusals";
import { nextState, refusal, type Trigger } from "./transitions";
import { iso } from "../../lib/helpers";

/** The state `trigger` leads to from `from`; a 409 with the table's refusal when there is none. */
export function allowed(from: CampaignState, trigger: Trigger): CampaignState {
  const to = nextState(from, trigger);
  if (!to) throw engineConflict(refusal(from, trigger));
  return to;
}

/** What else a trigger writes along with the state (`now`: the clock at the change). */
const ALSO: Partial<Record<Trigger, (now: number, error: string | null) => SqlFragment>> = {
  start: (now) => sql`, started_at = coalesce(started_at, ${iso(now)}), breaker_since = ${now}, window_open = NULL, blocked = NULL`,
  // The breaker's window starts afresh: what tripped it is behind us. It opens one millisecond after `now`, since
  // every attempt already finished ended at or before `now`, so the failures that tripped it stay out of it even
  // when no time passes between the trip and the resume (the window counts `ended_at >= breaker_since`).
  resume: (now) => sql`, breaker_since = ${now + 1}, window_open = NULL, blocked = NULL`,
  complete: (now) => sql`, completed_at = ${iso(now)}`,
  source_failed: (_now, error) => sql`, source_error = ${error}`,
};

/**
 * Moves the campaign by `trigger` and returns its new state (409 when the table refuses; 404 before `initialize`).
 * The D1 summary row is marked for rewriting. `error`: what failed, for `source_failed`.
 */
export function transition(db: DoSql, trigger: Trigger, now: number, error: string | null = null): CampaignState {
  const from = db.value<CampaignState>`SELECT state FROM campaign WHERE id = 1`;
  if (from === null) throw new EngineError(404, "Campaign not found");
  const to = allowed(from, trigger);
  db.run`UPDATE campaign SET state = ${to}, summary_dirty = 1${ALSO[trigger]?.(now, error) ?? sql``} WHERE id = 1`;
  return to;
}
