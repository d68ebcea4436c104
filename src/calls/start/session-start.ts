// What a call session is told about its run when its media connects, by the stream route (the carrier connected to
// us) or by the ARI object (the session connects to the PBX).
import { getDb } from "../../lib/db";
import { recordsCalls } from "../../telephony/calling-policy";
import type { SessionProvider } from "../session/web-media";
import { getGreeting } from "../../uploads/greetings";
import { greetingFor, missingRecordingNote } from "./greeting";
import type { RunRow } from "../runs/runs";
import type { SessionStart } from "../session/call-session";

/** The transcript's text for an audio greeting (its words are not known, only its name). */
export const audioGreetingText = (name: string) => `[audio greeting: ${name}]`;

export async function sessionStart(env: Env, run: RunRow, provider: SessionProvider): Promise<SessionStart> {
  const db = getDb(env);
  // A contact's audio greeting is played from the store; one that is gone falls back to the text greeting.
  const override = run.greetingOverride as { type?: string; recordingId?: string } | null;
  const audio = override?.type === "audio" && override.recordingId ? await getGreeting(db, run.orgId, override.recordingId) : undefined;
  return {
    runId: run.id,
    orgId: run.orgId,
    provider,
    greetingRecording: audio ? audio.key : null,
    greeting: audio ? audioGreetingText(audio.name) : (await greetingFor(db, run, missingRecordingNote(override?.recordingId ?? ""))) || null,
    variables: Object.fromEntries(Object.entries(run.initialContext ?? {}).map(([k, v]) => [k, String(v)])),
    record: await recordsCalls(db, run.orgId),
    answeredBy: run.answeredBy,
    campaign:
      run.campaignId != null && run.contactId != null && run.attempt != null
        ? { campaignId: run.campaignId, contactId: run.contactId, attempt: run.attempt }
        : null,
    voicemail: run.voicemailAction === "leave_message" ? "leave_message" : "hang_up",
    outbound: run.direction === "outbound",
  };
}
