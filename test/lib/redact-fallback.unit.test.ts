// Log redaction's two nets (src/lib/redact.ts, docs/deployment.md: "the token segment of every such path is redacted,
// whatever its shape, ... so are tokens elsewhere in a line"). The fallback: a 64-hex token or a stream token
// anywhere in a line, outside any callback path (an error echoing a carrier's answer, a JSON field, another query
// parameter). The path rule: every hyphenated token route (transfer-status, transfer-whisper, Exotel's
// inbound-stream) takes the whole segment, even a token the fallback cannot see (something appended to it).
import { describe, expect, it } from "vitest";
import { redactTokens } from "../../src/lib/redact";

const HEX = "0123456789abcdef".repeat(4);
const STREAM = `1790000000.${"b".repeat(32)}.${"c".repeat(64)}`;

describe("the fallback: a token outside any callback path", () => {
  it.each([
    [`carrier refused: token ${HEX} is not valid`, "carrier refused: token [redacted] is not valid"],
    [`{"level":"error","callback_secret_mac":"${HEX}"}`, `{"level":"error","callback_secret_mac":"[redacted]"}`],
    [`GET https://carrier.example/hooks?sig=${HEX}&x=1`, "GET https://carrier.example/hooks?sig=[redacted]&x=1"],
    [`upper case ${HEX.toUpperCase()}.`, "upper case [redacted]."],
    [`/api/v1/other/${HEX}/x`, "/api/v1/other/[redacted]/x"],
    [`stream token ${STREAM} echoed`, "stream token [redacted] echoed"],
  ])("%s", (line, redacted) => {
    expect(redactTokens(line)).toBe(redacted);
  });

  it("leaves what is not a token: shorter or longer hex runs, ids, uuids", () => {
    const line = `sha ${"a".repeat(40)} long ${"e".repeat(65)} run 12 uuid 0f8fad5b-d9cb-469f-a165-70867728950e`;
    expect(redactTokens(line)).toBe(line);
  });
});

describe("the path rule on hyphenated routes: the whole token segment, whatever its shape", () => {
  // A stream token with a byte appended is not a token to the fallback (no word boundary after it).
  const odd = `${STREAM}z`;
  it.each([
    ["transfer-status", `POST /api/v1/telephony/twilio/transfer-status/12/${odd} 401`, "POST /api/v1/telephony/twilio/transfer-status/12/[redacted] 401"],
    ["transfer-whisper", `GET /api/v1/telephony/telnyx/transfer-whisper/12/${odd}?x=1`, "GET /api/v1/telephony/telnyx/transfer-whisper/12/[redacted]?x=1"],
    [
      "inbound-stream",
      `GET wss://e.test/api/v1/telephony/exotel/inbound-stream/3/${odd} 403`,
      "GET wss://e.test/api/v1/telephony/exotel/inbound-stream/3/[redacted] 403",
    ],
    [
      "transfer-status, a plain token",
      `{"path":"/api/v1/telephony/plivo/transfer-status/9/${HEX}"}`,
      `{"path":"/api/v1/telephony/plivo/transfer-status/9/[redacted]"}`,
    ],
  ])("%s", (_route, line, redacted) => {
    expect(redactTokens(line)).toBe(redacted);
  });
});
