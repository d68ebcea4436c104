// Which StasisStart is a caller's new call, and the number it dialed (the first Stasis argument, else the dialplan
// extension); how a refused caller is hung up.
import { describe, expect, it } from "vitest";
import { incomingAriCall, refusalHangup } from "../../src/telephony/providers/ari/inbound";

const start = (channel: Record<string, unknown>, args: unknown[] = []) => ({ type: "StasisStart", application: "app", args, channel });

describe("ARI calls that come in", () => {
  it("a channel edgedial did not make is a new call; the Stasis argument wins over the extension", () => {
    const channel = { id: "1761245643.7", caller: { number: "+14155550177" }, dialplan: { context: "from-trunk", exten: "+14155550100" } };
    expect(incomingAriCall(start(channel))).toEqual({ callId: "1761245643.7", to: "+14155550100", from: "+14155550177" });
    expect(incomingAriCall(start(channel, ["2001"]))).toMatchObject({ to: "2001" });
    // The `s` extension (a dialplan that jumped there) names no number; the caller may be withheld.
    expect(incomingAriCall(start({ id: "x.1", dialplan: { exten: "s" } }))).toEqual({ callId: "x.1", to: "", from: "" });
  });

  it("our own channels (originated, external media, transfer) and other events are no new call", () => {
    for (const id of ["edgedial-run-5-0011aabb", "edgedial-media-in-1761245643.7", "edgedial-xfer-5-00112233"])
      expect(incomingAriCall(start({ id, dialplan: { exten: "100" } }))).toBeNull();
    // An originate's `run=` argument is never taken for a number.
    expect(incomingAriCall(start({ id: "1.2", dialplan: { exten: "100" } }, ["run=5"]))).toMatchObject({ to: "100" });
    expect(incomingAriCall({ type: "ChannelDestroyed", channel: { id: "1.2" } })).toBeNull();
    expect(incomingAriCall(null)).toBeNull();
  });

  it("refusals hang up with the cause a phone understands", () => {
    expect(refusalHangup("concurrent_call_limit")).toBe("busy");
    expect(refusalHangup("number_unknown")).toBe("unallocated");
    for (const r of ["number_inactive", "configuration_inactive", "no_agent", "agent_unusable"]) expect(refusalHangup(r)).toBe("rejected");
  });
});
