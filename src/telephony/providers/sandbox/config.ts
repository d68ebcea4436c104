// The sandbox: a carrier for local development only (LOCAL_DEV). It needs no account: calls go to the carrier
// simulator `npm run dev` starts beside the service, whose callee answers and talks back, so a newcomer's first
// call and campaign complete offline.
import { callerIdStep } from "../checklist";
import { defineConfig, integer, oneOf } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Sandbox (local simulator)";
export const docsUrl = "https://github.com/edgedial/edgedial/blob/main/docs/sandbox.md";

/** What the simulated callee does with a call: answer and talk, or one of the ways a call goes unanswered. */
export const SANDBOX_OUTCOMES = ["answered", "busy", "no_answer", "voicemail", "failed"] as const;

export const definition = defineConfig("sandbox", {
  callee: oneOf(SANDBOX_OUTCOMES, "What the simulated callee does with every call.", { default: "answered" }),
  answer_after_ms: integer("How long the simulated phone rings before the callee's outcome, in milliseconds.", 0, 30_000, 1500),
});

export function steps(ctx: ConfigContext) {
  return [callerIdStep(ctx.activeNumbers.length, true)];
}
