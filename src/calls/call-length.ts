// How long a call may last: the campaign engine's attempt timeout, the single call's lease and the run watchdog
// all derive from these, so they live with calls and the campaign engine imports them.

/** A call with no final status this long after it was dialed is given up on (`unknown`). */
export const MAX_CALL_SECONDS = 3600;
/** Extra time for a carrier's late final status before a run is given up on. */
export const TIMEOUT_GRACE_SECONDS = 120;
