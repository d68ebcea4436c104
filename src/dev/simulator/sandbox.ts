// The sandbox carrier of local development: one well-known Twilio account that the simulator keeps without being
// asked, and a callee that plays each call by itself (after the ring the configuration asked for, the outcome it
// asked for), so `npm run dev`'s calls complete with nobody driving the simulator. The credentials are public on
// purpose: only a local edgedial (LOCAL_DEV) ever offers the sandbox.
import type { Account, Outcome, SimCall } from "./types";

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
