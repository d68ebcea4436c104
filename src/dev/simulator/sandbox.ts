// The sandbox carrier of local development: one well-known Twilio account that the simulator keeps without being
// asked, and a callee that plays each call by itself (after the ring the configuration asked for, the outcome it
// asked for), so `npm run dev`'s calls complete with nobody driving the simulator. The credentials are public on
// purpose: only a local edgedial (LOCAL_DEV) ever offers the sandbox. It plays the rest of a carrier too (sim-object.ts):
// the person a transfer reaches (cold, or warm hearing the whisper first), a caller dialing a sandbox number (the
// account owns every number asked for), and the callee's key presses on its live stream.
import { twilioSign } from "./sign";
import type { Account, Callback, Outcome, SimCall } from "./types";

export const SANDBOX_ACCOUNT_ID = "sandbox";
/** Must equal SANDBOX_ACCOUNT in src/telephony/providers/sandbox/calls.ts (the simulator imports nothing of the app). */
export const SANDBOX_CREDENTIALS = { account_sid: `AC${"5a4db0c5".repeat(4)}`, auth_token: "edgedial-sandbox" };

const OUTCOMES = new Set<Outcome>(["answered", "busy", "no_answer", "voicemail", "failed"]);
const MAX_RING_MS = 30_000;

export function sandboxAccount(lines: Int16Array[] | undefined): Account {
  return { id: SANDBOX_ACCOUNT_ID, provider: "twilio", credentials: { ...SANDBOX_CREDENTIALS }, secret: {}, applications: [], calleeLines: lines };
}

/** What the sandbox's callee does with a call it was just asked to place: the originate's `Sandbox*` fields. */
export function sandboxPlan(call: SimCall, form: URLSearchParams): { outcome: Outcome; afterMs: number } | null {
  if (call.accountId !== SANDBOX_ACCOUNT_ID) return null;
  const asked = form.get("SandboxCallee") as Outcome | null;
  const outcome = asked && OUTCOMES.has(asked) ? asked : "answered";
  const after = Number(form.get("SandboxAnswerAfterMs") ?? 1500);
  return { outcome, afterMs: Number.isFinite(after) ? Math.min(Math.max(after, 0), MAX_RING_MS) : 1500 };
}

/** How long a transfer's simulated person talks with the caller before hanging up (which ends the caller's call too). */
export const PERSON_ON_LINE_MS = 3000;

/**
 * What a transfer's TwiML asks of the sandbox (Twilio's verbs, as edgedial sends them): a cold transfer's
 * `<Dial><Number>`, or the conference a warm transfer's person joins (after its `<Play>`, the whisper) and the caller
 * is moved into.
 */
export function transferIn(twiml: string): { dialed?: string; room?: string; whisper?: string } {
  const unAmp = (s: string) => s.replace(/&amp;/g, "&");
  const dialed = /<Dial\b[^>]*>\s*<Number\b[^>]*>([^<]+)<\/Number>/.exec(twiml)?.[1];
  const room = /<Conference\b[^>]*>([^<]+)<\/Conference>/.exec(twiml)?.[1];
  const whisper = /<Play\b[^>]*>([^<]+)<\/Play>/.exec(twiml)?.[1];
  return { ...(dialed ? { dialed } : {}), ...(room ? { room } : {}), ...(whisper ? { whisper: unAmp(whisper) } : {}) };
}

/** The status Twilio posts to a number's StatusCallback when a call that came in ends (its duration restamped when sent). */
export async function inboundCompleted(call: SimCall, account: Account): Promise<Callback | null> {
  if (!call.statusUrl) return null;
  const fields = {
    CallSid: call.id,
    AccountSid: account.credentials.account_sid,
    From: call.from,
    To: call.to,
    Direction: "inbound",
    ApiVersion: "2010-04-01",
    CallStatus: "completed",
    CallDuration: "0",
    Timestamp: new Date().toUTCString(),
  };
  const url = call.statusUrl;
  return {
    kind: "status",
    method: "POST",
    url,
    body: new URLSearchParams(fields).toString(),
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": await twilioSign(account.credentials.auth_token, url, Object.entries(fields)),
    },
  };
}
