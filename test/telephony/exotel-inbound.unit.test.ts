// Exotel's opening messages on an inbound Voicebot stream: connected, then start naming the call (as its WebSocket
// protocol documents), and its numbers read as E.164.
import { describe, expect, it } from "vitest";
import { exotelNumber, readOpening } from "../../src/telephony/providers/exotel/inbound";

const start = (s: Record<string, unknown>) => JSON.stringify({ event: "start", sequence_number: "1", stream_sid: "MZ1", start: s });

describe("Exotel inbound opening", () => {
  it("reads the documented start message", () => {
    const m = readOpening(
      start({
        stream_sid: "MZ1",
        call_sid: "CA1",
        account_sid: "AC1",
        from: "+919876543210",
        to: "+918047491899",
        custom_parameters: { key1: "value1" },
        media_format: { encoding: "audio/x-raw", sample_rate: "8000", bit_rate: "16" },
      }),
    );
    expect(m).toEqual({
      kind: "start",
      call: { callId: "CA1", from: "+919876543210", to: "+918047491899" },
      accountSid: "AC1",
      customParameters: { key1: "value1" },
    });
  });

  it("connected, other messages, binary and junk", () => {
    expect(readOpening(JSON.stringify({ event: "connected" }))).toEqual({ kind: "connected" });
    expect(readOpening(JSON.stringify({ event: "media", media: { payload: "" } }))).toEqual({ kind: "other" });
    expect(readOpening(new ArrayBuffer(4))).toEqual({ kind: "other" });
    expect(readOpening("{not json")).toEqual({ kind: "other" });
    // A start without the call's id or dialed number names no call.
    expect(readOpening(start({ to: "+918047491899" }))).toEqual({ kind: "other" });
    expect(readOpening(start({ call_sid: "CA1" }))).toEqual({ kind: "other" });
  });

  it("numbers: E.164 kept, Indian national format read as Indian, anything else as written", () => {
    expect(exotelNumber("+918047491899")).toBe("+918047491899");
    expect(exotelNumber("08047491899")).toBe("+918047491899");
    expect(exotelNumber("09876543210")).toBe("+919876543210");
    expect(exotelNumber("anonymous")).toBe("anonymous");
    expect(exotelNumber(undefined)).toBe("");
  });
});
