// `npm run dev` echoes wrangler's output through this rather than letting it write to the terminal: wrangler logs
// every request's path, and a carrier callback's path holds its per-run token (`[wrangler:info] GET
// /api/v1/telephony/twilio/stream/12/<token> 101 ...`). Whole lines are redacted (src/lib/redact.ts, as the Worker's
// own log lines), so a token split across two chunks of output is still caught. Pure, for tests.
import { redactTokens } from "../../src/lib/redact.ts";

export type LineRedactor = {
  /** The complete lines in what has arrived so far, redacted; a line without its end yet is held back. */
  push(chunk: string): string;
  /** What is held back (a prompt waiting for input has no newline), redacted. */
  flush(): string;
};

export function lineRedactor(): LineRedactor {
  let held = "";
  return {
    push(chunk) {
      held += chunk;
      const end = held.lastIndexOf("\n");
      if (end < 0) return "";
      const lines = held.slice(0, end + 1);
      held = held.slice(end + 1);
      return redactTokens(lines);
    },
    flush() {
      const rest = held;
      held = "";
      return redactTokens(rest);
    },
  };
}
