// PII redaction of stored transcripts (src/lib/pii-redact.ts) and the session's application of it to a call's results.
import { describe, expect, it } from "vitest";
import { luhnValid, REDACTED, redactText, redactValue, sensitiveValuesOf } from "../../src/lib/pii-redact";
import { redactResults, sensitiveNames } from "../../src/calls/session/redaction";

describe("redactText", () => {
  it("replaces card numbers that pass the Luhn check, however grouped, and keeps other long numbers", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(redactText("my card is 4111 1111 1111 1111, expiry soon")).toBe(`my card is ${REDACTED.card}, expiry soon`);
    expect(redactText("card 5500-0000-0000-0004")).toBe(`card ${REDACTED.card}`);
    expect(redactText("amex 378282246310005 ok")).toBe(`amex ${REDACTED.card} ok`);
    // 16 digits failing Luhn: too long for a phone number, not a card either.
    expect(redactText("order 4111111111111112")).toBe("order 4111111111111112");
  });

  it("replaces emails and phone numbers, and keeps amounts, times, dates and counts", () => {
    expect(redactText("write to ada.lovelace+work@example.co.uk please")).toBe(`write to ${REDACTED.email} please`);
    expect(redactText("call me on +1 (415) 555-0123 or 020 7946 0958")).toBe(`call me on ${REDACTED.phone} or ${REDACTED.phone}`);
    expect(redactText("+14155550123")).toBe(REDACTED.phone);
    expect(redactText("We need 12 seats at 10:30 for $1,200 on 2026-12-01, ticket 4521")).toBe(
      "We need 12 seats at 10:30 for $1,200 on 2026-12-01, ticket 4521",
    );
  });

  it("replaces the values of sensitive variables, the longest first", () => {
    expect(redactText("My name is Ada Lovelace, Ada to friends", ["Ada Lovelace", "Ada"])).toBe(
      `My name is ${REDACTED.sensitive}, ${REDACTED.sensitive} to friends`,
    );
    // A one-character value would blank every occurrence of the letter: ignored.
    expect(redactText("a cat", ["a"])).toBe("a cat");
  });
});

describe("redactValue and the call's results", () => {
  it("redacts every string of a tool call's arguments and the values of keys named sensitive", () => {
    const args = { email: "ada@example.com", nested: { note: "card 4111111111111111" }, list: ["+14155550123"], seats: 12, dob: "1815-12-10" };
    expect(redactValue(args, [], new Set(["dob"]))).toEqual({
      email: REDACTED.email,
      nested: { note: `card ${REDACTED.card}` },
      list: [REDACTED.phone],
      seats: 12,
      dob: REDACTED.sensitive,
    });
  });

  it("finds the definition's sensitive variables and applies the policy to transcript, gathered values and tool arguments", () => {
    const definition = {
      nodes: [
        { id: "a", data: { extraction_variables: [{ name: "dob", sensitive: true }, { name: "seats" }] } },
        { id: "b", data: { extraction_variables: [{ name: "account", type: "string", sensitive: true }] } },
      ],
    };
    const sensitive = sensitiveNames(definition);
    expect([...sensitive].sort()).toEqual(["account", "dob"]);
    expect(sensitiveValuesOf({ dob: "10 December 1815", seats: 12, account: null }, sensitive)).toEqual(["10 December 1815"]);
    const results = {
      transcript: [{ role: "callee", text: "Born 10 December 1815, mail ada@example.com", start_ms: 0, end_ms: 1, interrupted: false }],
      gathered: { dob: "10 December 1815", seats: 12 },
      toolCalls: [{ name: "crm", arguments: { dob: "10 December 1815", seats: 12 }, status: "ok" as const, http_status: 200, duration_ms: 5 }],
    };
    expect(redactResults({ redact: false, sensitive }, results)).toBe(results);
    const r = redactResults({ redact: true, sensitive }, results);
    expect(r.transcript[0].text).toBe(`Born ${REDACTED.sensitive}, mail ${REDACTED.email}`);
    expect(r.gathered).toEqual({ dob: REDACTED.sensitive, seats: 12 });
    expect(r.toolCalls?.[0].arguments).toEqual({ dob: REDACTED.sensitive, seats: 12 });
  });
});
