// One structured log line (JSON, as Workers Logs indexes it): a level, an event name and its fields. Per-run tokens
// are redacted, whatever a field (an error echoing a URL) carries.
import { redactTokens } from "./redact";

export function log(level: "info" | "warning" | "error", event: string, fields: Record<string, unknown> = {}): void {
  const line = redactTokens(JSON.stringify({ level, event, ...fields }));
  if (level === "error") console.error(line);
  else console.log(line);
}
