// Which carrier requests announce a new incoming call (and which are the same call's later events): Telnyx's
// call.initiated with direction incoming, Vonage's answer webhook (GET query or POST body, never an event with a
// status), Cloudonix's CXML request while ringing.
import { describe, expect, it } from "vitest";
import { cloudonixInbound } from "../../src/telephony/providers/cloudonix/inbound";
import { telnyxInbound } from "../../src/telephony/providers/telnyx/inbound";
import { vonageInbound } from "../../src/telephony/providers/vonage/inbound";

const post = (body: unknown) => [new Request("https://e.test/in", { method: "POST", body: JSON.stringify(body) }), JSON.stringify(body)] as const;
const telnyx = (event_type: string, direction: string) => ({
  data: { event_type, payload: { call_control_id: "v3:abc", from: "+14155550177", to: "+14155550100", direction } },
});

describe("inbound requests read", () => {
  it("Telnyx: only call.initiated of an incoming call is a new call", () => {
    expect(telnyxInbound.read(...post(telnyx("call.initiated", "incoming")))).toEqual({ to: "+14155550100", from: "+14155550177", callId: "v3:abc" });
    expect(telnyxInbound.read(...post(telnyx("call.initiated", "outgoing")))).toBeNull();
    expect(telnyxInbound.read(...post(telnyx("call.answered", "incoming")))).toBeNull();
    expect(telnyxInbound.read(new Request("https://e.test/in", { method: "POST", body: "not json" }), "not json")).toBeNull();
  });

  it("Vonage: the answer webhook by GET or POST; an event (it has a status) is not a new call", () => {
    const q = new URLSearchParams({ to: "14155550100", from: "14155550177", uuid: "u-1", conversation_uuid: "CON-1" });
    expect(vonageInbound.read(new Request(`https://e.test/in?${q}`), "")).toEqual({ to: "14155550100", from: "14155550177", callId: "u-1" });
    expect(vonageInbound.read(...post({ to: "14155550100", from: "14155550177", uuid: "u-1" }))).toEqual({
      to: "14155550100",
      from: "14155550177",
      callId: "u-1",
    });
    expect(vonageInbound.read(...post({ to: "14155550100", from: "14155550177", uuid: "u-1", status: "completed" }))).toBeNull();
  });

  it("Cloudonix: the inbound request while ringing, by its session token; a final status is not a new call", () => {
    const base = { CallSid: "c-1", Session: "tok-1", From: "14155550177", To: "14155550100", Direction: "inbound" };
    expect(cloudonixInbound.read(...post({ ...base, CallStatus: "ringing" }))).toEqual({ to: "14155550100", from: "14155550177", callId: "tok-1" });
    expect(cloudonixInbound.read(...post({ ...base, CallStatus: "completed" }))).toBeNull();
    expect(cloudonixInbound.read(...post({ ...base, Direction: "outbound-api", CallStatus: "ringing" }))).toBeNull();
  });
});
