// The simulator's Twilio reports a call as it ran: a status scripted before the conversation and sent after it
// carries the moment it is sent (Timestamp) and the seconds since the answer (CallDuration), signed as Twilio signs
// (checked with the twilio SDK's own validateRequest), so the service's duration agrees with the call's recording.
import twilioSdk from "twilio";
import { describe, expect, it } from "vitest";
import { twilio } from "../../src/dev/simulator/carriers/twilio";
import type { Callback, SimCall, SimState } from "../../src/dev/simulator/types";

describe("the simulator's Twilio, a status sent after the call's media", () => {
  it("has the send time, the call's real duration and a valid signature", async () => {
    const token = "0123456789abcdef0123456789abcdef";
    const state = { accounts: new Map([["a1", { credentials: { account_sid: "AC1", auth_token: token } }]]) } as unknown as SimState;
    const call = { id: "CA1", accountId: "a1", extra: { answeredAtMs: Date.now() - 9_400 } } as unknown as SimCall;
    const url = "https://edgedial.test/api/v1/telephony/twilio/status/1?t=x";
    const stale = "Thu, 01 Jan 2026 00:00:00 GMT";
    const cb: Callback = {
      kind: "status",
      method: "POST",
      url,
      body: new URLSearchParams({ CallSid: "CA1", CallStatus: "completed", CallDuration: "7", Timestamp: stale }).toString(),
      headers: { "X-Twilio-Signature": "old" },
    };
    const sent = await twilio.restamp!(state, call, cb);
    const fields = Object.fromEntries(new URLSearchParams(sent.body));
    expect(fields.CallDuration).toBe("9");
    expect(Math.abs(Date.parse(fields.Timestamp) - Date.now())).toBeLessThan(2000);
    expect(twilioSdk.validateRequest(token, sent.headers["X-Twilio-Signature"], url, fields)).toBe(true);
  });
});
