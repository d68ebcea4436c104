// How long a call may last lives with the call session, which enforces it; the campaign engine and the run
// watchdog derive their bounds from it.
export { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../session/call-length";
