// The one way to log: a structured line (JSON, as Workers Logs indexes it) with a level, an event name and its
// fields. Per-run tokens are redacted, whatever a field (an error echoing a URL) carries. The console method
// matches the level, so Workers Logs' own level agrees with the line's.
import { redactTokens } from "./redact";

export type LogLevel = "info" | "warning" | "error";

const WRITE: Record<LogLevel, (line: string) => void> = {
  info: (line) => console.info(line),
  warning: (line) => console.warn(line),
  error: (line) => console.error(line),
};

export function log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
  WRITE[level](redactTokens(JSON.stringify({ level, event, ...fields })));
}
