// Retry policy: only busy / no_answer / voicemail (each behind its flag), at most max_retries
// retries, due at the outcome's time plus the delay. The window is waited for by dispatch, not here.
import type { RetryConfig } from "./settings";

const FLAG_OF: Readonly<Record<string, keyof RetryConfig>> = {
  busy: "retry_on_busy",
  no_answer: "retry_on_no_answer",
  voicemail: "retry_on_voicemail",
};

/**
 * When the contact's next attempt is due, or null when it gets none.
 * `attemptsMade` counts the attempt that just ended (1 for the first call).
 */
export function retryDueAt(outcome: string, attemptsMade: number, cfg: RetryConfig, outcomeAtMs: number): number | null {
  if (!cfg.enabled) return null;
  const flag = FLAG_OF[outcome];
  if (!flag || cfg[flag] !== true) return null;
  if (attemptsMade - 1 >= cfg.max_retries) return null;
  return outcomeAtMs + cfg.retry_delay_seconds * 1000;
}
