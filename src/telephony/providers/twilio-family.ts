// What Twilio and Cloudonix (whose voice applications post Twilio-style callbacks) share: the mapping of a
// Twilio-style status callback to a normalized update. At the kit level because carriers do not import one another.
import type { CallStatus, StatusUpdate } from "./types";
import { intOrNull, isMachine } from "./kit";

const STATUS: Record<string, CallStatus> = {
  queued: "initiated",
  initiated: "initiated",
  ringing: "ringing",
  "in-progress": "in_progress",
  completed: "completed",
  busy: "busy",
  "no-answer": "no_answer",
  failed: "failed",
  canceled: "canceled",
};

/** Maps one Twilio callback (status callback or the answer request) to a normalized update. */
export function mapTwilio(p: Record<string, string>): StatusUpdate | null {
  let status = STATUS[p.CallStatus ?? ""];
  if (!status) return null;
  const answeredBy = p.AnsweredBy || null;
  if (status === "completed" && isMachine(answeredBy)) status = "voicemail";
  if (status === "busy" && p.SipResponseCode === "603") status = "declined";
  const update: StatusUpdate = { status, providerCallId: p.CallSid || undefined };
  if (answeredBy) update.answeredBy = answeredBy;
  const duration = intOrNull(p.CallDuration);
  if (duration !== null) update.durationSeconds = duration;
  if (status === "failed" && p.SipResponseCode) update.error = `Call failed (SIP ${p.SipResponseCode})`;
  if (p.Timestamp) {
    const t = Date.parse(p.Timestamp);
    if (Number.isFinite(t)) update.at = new Date(t).toISOString();
  }
  return update;
}
