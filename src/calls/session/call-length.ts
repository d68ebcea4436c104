// How long a call may last, and the call session's other time bounds. The campaign engine's attempt timeout, the
// single call's lease and the run watchdog derive from MAX_CALL_SECONDS (through src/calls/campaign/call-length.ts).

/** A call with no final status this long after it was dialed is given up on (`unknown`). */
export const MAX_CALL_SECONDS = 3600;
/** Extra time for a carrier's late final status before a run is given up on. */
export const TIMEOUT_GRACE_SECONDS = 120;

/** The callee's silence after which the call is ended, unless prepared otherwise. */
export const SILENCE_TIMEOUT_SECONDS = 30;
/** How often a live session checks its wall-clock limits and its socket, and saves what a restart needs. */
export const HEARTBEAT_MS = 1000;
/** How long a call whose media socket was lost waits for the carrier to reconnect before it is hung up. */
export const RESUME_GRACE_MS = 5000;
