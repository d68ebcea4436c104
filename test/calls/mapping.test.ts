// Pure status mapping per carrier, ARI's Q.850 table, and dial strings.
import { describe, expect, it } from "vitest";
import { mapTwilio } from "../../src/telephony/providers/twilio-family";
import { mapPlivo } from "../../src/telephony/providers/plivo-family";
import { mapTelnyx } from "../../src/telephony/providers/telnyx/calls";
import { mapVonage } from "../../src/telephony/providers/vonage/calls";
import { mapCloudonix } from "../../src/telephony/providers/cloudonix/calls";
import { exotelFields, mapExotel } from "../../src/telephony/providers/exotel/calls";
import { ariBase, dialString, mapAriEvent, mapQ850, runIdOfChannel, ariChannelId, type AriChannelState } from "../../src/telephony/providers/ari/calls";
import { effectiveStatus } from "../../src/calls/runs/status";
import { matchesRun } from "../../src/calls/callbacks/proof";
import type { ConfigContext } from "../../src/telephony/providers/types";

describe("Twilio CallStatus", () => {
  it.each([
    [{ CallStatus: "queued" }, "initiated"],
    [{ CallStatus: "initiated" }, "initiated"],
    [{ CallStatus: "ringing" }, "ringing"],
    [{ CallStatus: "in-progress" }, "in_progress"],
    [{ CallStatus: "completed", AnsweredBy: "human" }, "completed"],
    [{ CallStatus: "completed", AnsweredBy: "unknown" }, "completed"],
    [{ CallStatus: "completed", AnsweredBy: "machine_start" }, "voicemail"],
    [{ CallStatus: "completed", AnsweredBy: "machine_end_beep" }, "voicemail"],
    [{ CallStatus: "completed", AnsweredBy: "machine_end_silence" }, "voicemail"],
    [{ CallStatus: "completed", AnsweredBy: "machine_end_other" }, "voicemail"],
    [{ CallStatus: "completed", AnsweredBy: "fax" }, "voicemail"],
    [{ CallStatus: "busy" }, "busy"],
    [{ CallStatus: "busy", SipResponseCode: "603" }, "declined"],
    [{ CallStatus: "no-answer" }, "no_answer"],
    [{ CallStatus: "failed", SipResponseCode: "404" }, "failed"],
    [{ CallStatus: "canceled" }, "canceled"],
  ])("%o -> %s", (fields, status) => {
    expect(mapTwilio({ CallSid: "CA1", ...fields })?.status).toBe(status);
  });
  it("ignores unknown statuses and keeps duration and call id", () => {
    expect(mapTwilio({ CallStatus: "whatever" })).toBeNull();
    expect(mapTwilio({ CallSid: "CA1", CallStatus: "completed", CallDuration: "42" })).toMatchObject({ providerCallId: "CA1", durationSeconds: 42 });
  });
});

describe("Plivo / Vobiz CallStatus and hang-up causes", () => {
  it.each([
    [{ CallStatus: "ringing" }, "ringing"],
    [{ CallStatus: "in-progress" }, "in_progress"],
    [{ CallStatus: "completed" }, "completed"],
    [{ CallStatus: "completed", Machine: "true" }, "voicemail"],
    [{ CallStatus: "busy" }, "busy"],
    [{ CallStatus: "busy", HangupCauseName: "Rejected" }, "declined"],
    [{ CallStatus: "no-answer" }, "no_answer"],
    [{ CallStatus: "cancel" }, "canceled"],
    [{ CallStatus: "timeout" }, "failed"],
    [{ CallStatus: "failed" }, "failed"],
    [{ CallStatus: "completed", HangupCauseCode: "1000" }, "canceled"],
    [{ CallStatus: "failed", HangupCauseCode: "1010" }, "failed"],
    [{ CallStatus: "completed", HangupCauseCode: "2040" }, "failed"],
    [{ CallStatus: "completed", HangupCauseCode: "4010" }, "completed"],
    [{ CallStatus: "busy", HangupCauseCode: "0" }, "busy"],
  ])("%o -> %s", (fields, status) => {
    expect(mapPlivo({ CallUUID: "u", RequestUUID: "r", ...fields })?.status).toBe(status);
  });
  it("carries both ids for correlation", () => {
    expect(mapPlivo({ CallUUID: "u", RequestUUID: "r", CallStatus: "ringing" })).toMatchObject({ providerCallId: "u", requestId: "r" });
  });
});

describe("Telnyx events and hang-up causes", () => {
  const ev = (event_type: string, payload: Record<string, unknown> = {}) => ({
    data: { event_type, occurred_at: "2024-01-01T00:00:00Z", payload: { call_control_id: "v3:x", ...payload } },
  });
  it.each([
    ["normal_clearing", "completed", "failed"],
    ["time_limit", "completed", "failed"],
    ["unspecified", "completed", "failed"],
    ["user_busy", "busy", undefined],
    ["no_answer", "no_answer", undefined],
    ["timeout", "no_answer", undefined],
    ["call_rejected", "declined", undefined],
    ["originator_cancel", "canceled", undefined],
    ["not_found", "failed", undefined],
  ])("call.hangup %s -> %s (never answered: %s)", (cause, status, unanswered) => {
    const [u] = mapTelnyx(ev("call.hangup", { hangup_cause: cause }));
    expect(u.status).toBe(status);
    expect(u.unansweredStatus).toBe(unanswered);
    // The applier decides with the run's history.
    expect(effectiveStatus({ status: "initiated", answeredAt: null, answeredBy: null }, u)).toBe(unanswered ?? status);
    expect(effectiveStatus({ status: "in_progress", answeredAt: "x", answeredBy: null }, u)).toBe(status);
  });
  it("initiated, answered, AMD and unknown events", () => {
    expect(mapTelnyx(ev("call.initiated"))[0].status).toBe("initiated");
    expect(mapTelnyx(ev("call.answered"))[0].status).toBe("in_progress");
    expect(mapTelnyx(ev("call.machine.detection.ended", { result: "machine" }))[0]).toMatchObject({ status: "in_progress", answeredBy: "machine" });
    expect(
      effectiveStatus({ status: "in_progress", answeredAt: "x", answeredBy: "machine" }, mapTelnyx(ev("call.hangup", { hangup_cause: "normal_clearing" }))[0]),
    ).toBe("voicemail");
    expect(mapTelnyx(ev("streaming.started"))).toEqual([]);
    expect(mapTelnyx(null)).toEqual([]);
  });
});

describe("Vonage status", () => {
  it.each([
    ["started", "initiated"],
    ["ringing", "ringing"],
    ["answered", "in_progress"],
    ["human", "in_progress"],
    ["machine", "voicemail"],
    ["completed", "completed"],
    ["busy", "busy"],
    ["timeout", "no_answer"],
    ["unanswered", "no_answer"],
    ["rejected", "declined"],
    ["cancelled", "canceled"],
    ["failed", "failed"],
  ])("%s -> %s", (status, expected) => {
    expect(mapVonage({ uuid: "c", status })?.status).toBe(expected);
  });
  it("ignores disconnected (a WebSocket leg) and reads duration", () => {
    expect(mapVonage({ uuid: "c", status: "disconnected" })).toBeNull();
    expect(mapVonage({ uuid: "c", status: "completed", duration: "7" })?.durationSeconds).toBe(7);
  });
});

describe("Cloudonix sources", () => {
  it.each([
    ["ANSWER", "completed"],
    ["BUSY", "busy"],
    ["NOANSWER", "no_answer"],
    ["CANCEL", "canceled"],
    ["FAILED", "failed"],
    ["CONGESTION", "failed"],
  ])("CDR %s -> %s", (disposition, status) => {
    expect(mapCloudonix({ domain: "d", session: { token: "t" }, disposition, billsec: 3 })).toMatchObject({ status, providerCallId: "t" });
  });
  it("session updates and voice-application requests", () => {
    expect(mapCloudonix({ token: "t", status: "ringing", callAnswerTime: 0 })?.status).toBe("ringing");
    expect(mapCloudonix({ token: "t", status: "processing", callAnswerTime: 0 })?.status).toBe("initiated");
    expect(mapCloudonix({ token: "t", status: "whatever", callAnswerTime: 1700000000000 })?.status).toBe("in_progress");
    expect(mapCloudonix({ CallSid: "x", Session: "t", CallStatus: "in-progress" })).toMatchObject({ status: "in_progress", providerCallId: "t" });
    expect(mapCloudonix({ CallSid: "x", Session: "t", CallStatus: "no-answer" })?.status).toBe("no_answer");
  });
});

describe("Exotel status callbacks", () => {
  it.each([
    ["EventType=answered&Status=in-progress", "in_progress"],
    ["EventType=terminal&Status=completed&Legs%5B0%5D%5BAnsweredBy%5D=human", "completed"],
    ["EventType=terminal&Status=completed&Legs%5B0%5D%5BAnsweredBy%5D=machine", "voicemail"],
    ["Status=busy", "busy"],
    ["Status=no-answer", "no_answer"],
    ["Status=failed", "failed"],
    ["Status=canceled", "canceled"],
  ])("%s -> %s", (body, status) => {
    const { fields, legsAnsweredBy } = exotelFields(`CallSid=s1&${body}`);
    expect(mapExotel(fields, legsAnsweredBy)).toMatchObject({ status, providerCallId: "s1" });
  });
  it("reads the JSON variant and classic capitalization", () => {
    const { fields, legsAnsweredBy } = exotelFields(JSON.stringify({ callsid: "s2", status: "completed", Legs: [{ AnsweredBy: "machine" }] }));
    expect(mapExotel(fields, legsAnsweredBy)).toMatchObject({ status: "voicemail", providerCallId: "s2" });
  });
});

describe("ARI", () => {
  const fresh = (): AriChannelState => ({ answered: false, hungUpByUs: false });
  it.each([
    [16, "no_answer"],
    [17, "busy"],
    [18, "no_answer"],
    [19, "no_answer"],
    [20, "no_answer"],
    [21, "declined"],
    [1, "failed"],
    [3, "failed"],
    [22, "failed"],
    [28, "failed"],
    [27, "failed"],
    [34, "failed"],
    [38, "failed"],
    [41, "failed"],
    [42, "failed"],
    [58, "failed"],
    [127, "failed"],
    [31, "failed"],
    [0, "failed"],
  ])("never answered, cause %i -> %s", (cause, status) => {
    expect(mapQ850(cause, fresh())).toBe(status);
  });
  it("answered first: 16, 31 and 0 are completed; our hang-up makes 16 and 0 canceled; a Dial status explains cause 0", () => {
    for (const c of [16, 31, 0]) expect(mapQ850(c, { answered: true, hungUpByUs: false })).toBe("completed");
    expect(mapQ850(16, { answered: false, hungUpByUs: true })).toBe("canceled");
    expect(mapQ850(0, { answered: false, hungUpByUs: true })).toBe("canceled");
    expect(mapQ850(0, { answered: false, hungUpByUs: false, dialStatus: "BUSY" })).toBe("busy");
  });
  it("maps the event stream of an answered call", () => {
    const s = fresh();
    const ch = (state: string) => ({ id: "edgedial-run-7-ab", state });
    expect(mapAriEvent({ type: "ChannelStateChange", channel: ch("Ringing") }, s)?.status).toBe("ringing");
    expect(mapAriEvent({ type: "ChannelStateChange", channel: ch("Up") }, s)?.status).toBe("in_progress");
    expect(mapAriEvent({ type: "StasisStart", args: ["run=7"], channel: ch("Up") }, s)?.status).toBe("in_progress");
    expect(mapAriEvent({ type: "ChannelHangupRequest", cause: 16, channel: ch("Up") }, s)).toBeNull();
    expect(mapAriEvent({ type: "ChannelDestroyed", cause: 16, cause_txt: "Normal Clearing", channel: ch("Up") }, s)).toMatchObject({
      status: "completed",
      providerCallId: "edgedial-run-7-ab",
    });
  });
  it("dial strings: the template applies; a dial string passes unchanged", () => {
    expect(dialString(undefined, "1001")).toBe("PJSIP/1001");
    expect(dialString("Local/{number}@from-internal", "+14155550123")).toBe("Local/+14155550123@from-internal");
    expect(dialString("Local/{number}@from-internal", "PJSIP/200@sipp")).toBe("PJSIP/200@sipp");
    expect(dialString("PJSIP/{number}", "SIP/trunk/555")).toBe("SIP/trunk/555");
    expect(dialString("PJSIP/{number}", "Local/100@default")).toBe("Local/100@default");
  });
  it("channel ids carry the run; the endpoint may carry the ARI user", () => {
    const id = ariChannelId(42);
    expect(runIdOfChannel(id)).toBe(42);
    expect(runIdOfChannel("some-other-channel")).toBeNull();
    const c = (ari_endpoint: string): ConfigContext => ({
      id: 1,
      orgId: 1,
      config: { ari_endpoint, app_name: "a", app_password: "p" },
      state: {},
      activeNumbers: [],
    });
    expect(ariBase(c("http://pbx:8088"))).toBe("http://pbx:8088/ari");
    expect(ariBase(c("http://pbx:8088/ari/"))).toBe("http://pbx:8088/ari");
    expect(ariBase(c("http://tester@pbx:8088/ari"))).toBe("http://pbx:8088/ari");
  });
});

describe("callback id cross-check", () => {
  it("matches the stored call id or the request id it replaces; unsigned bodies must name the call", () => {
    expect(matchesRun({ providerCallId: null }, { status: "ringing", providerCallId: "x" }, true)).toBe(true);
    expect(matchesRun({ providerCallId: "x" }, { status: "ringing", providerCallId: "x" }, true)).toBe(true);
    expect(matchesRun({ providerCallId: "r" }, { status: "ringing", providerCallId: "u", requestId: "r" }, true)).toBe(true);
    expect(matchesRun({ providerCallId: "x" }, { status: "ringing", providerCallId: "y" }, false)).toBe(false);
    expect(matchesRun({ providerCallId: "x" }, { status: "ringing" }, false)).toBe(true);
    expect(matchesRun({ providerCallId: "x" }, { status: "ringing" }, true)).toBe(false);
  });
});
