// Per-run callback tokens out of log lines. A token in a carrier URL is the whole credential for that URL (the
// answer/status token lets anyone post a status for a carrier that signs nothing), so every line the Worker logs,
// and `npm run dev`'s echo of wrangler's request log, passes through here. Dependency-free: Node
// imports it for `npm run dev` (scripts/lib/redacted-lines.ts).

const MARK = "[redacted]";

// Tokens are URL-safe characters (hex, dots; base64url or percent-escapes should one ever be), so anything else,
// such as the escape codes wrangler colors its request log with, ends one.
const TOKEN_CHARS = "[\\w.~%-]+";
// The token segment of a callback path: /telephony/{provider}/{route}/{id}/{token}, where the route may be hyphenated
// (answer, status, stream, resume, inbound, transfer-status, transfer-whisper, Exotel's inbound-stream, ...) and the
// id is a run's or a configuration's; and a web call's /web-call/{run_id}/{token}. The path rule, not the 64-hex
// fallback below, is what catches a token with anything appended (a mistyped or probing request's path).
const PATH_TOKEN = new RegExp(`(/telephony/[\\w-]+/[a-z][a-z_-]*/\\d+/|/web-call/\\d+/)${TOKEN_CHARS}`, "g");
// A token as a parameter: the stream route's ?token=, Asterisk's transport_data v(run_id=…,token=…).
const PARAM_TOKEN = new RegExp(`(\\btoken=)${TOKEN_CHARS}`, "gi");
// Anything shaped like one wherever else it lands (an error echoing a URL): the answer/status token (64 hex) and
// the stream token (expiry.nonce.mac).
const STREAM_TOKEN = /\b\d{1,12}\.[0-9a-f]{32}\.[0-9a-f]{64}\b/gi;
const HEX64 = /\b[0-9a-f]{64}\b/gi;

export function redactTokens(text: string): string {
  return text.replace(PATH_TOKEN, `$1${MARK}`).replace(PARAM_TOKEN, `$1${MARK}`).replace(STREAM_TOKEN, MARK).replace(HEX64, MARK);
}
