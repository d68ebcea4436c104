// The number → time-zone map: area codes narrow multi-zone countries, one-zone countries answer from the calling
// code, unknown and non-E.164 numbers are not judged, and every zone named is one the runtime knows.
import { describe, expect, it } from "vitest";
import { allMappedZones, numberZoneKey } from "../../src/telephony/number-zones";
import { isValidTimeZone } from "../../src/lib/time-zones";

describe("number zones", () => {
  it("narrows by area code where a country has several zones", () => {
    expect(numberZoneKey("+12125550100")).toBe("America/New_York");
    expect(numberZoneKey("+14155550100")).toBe("America/Los_Angeles");
    expect(numberZoneKey("+13125550100")).toBe("America/Chicago");
    expect(numberZoneKey("+18085550100")).toBe("Pacific/Honolulu");
    expect(numberZoneKey("+61291234567")).toBe("Australia/Sydney");
    expect(numberZoneKey("+5599991234567")).toBe("America/Sao_Paulo");
  });

  it("answers from the calling code where a country has one zone", () => {
    expect(numberZoneKey("+33123456789")).toBe("Europe/Paris");
    expect(numberZoneKey("+4930123456")).toBe("Europe/Berlin");
    expect(numberZoneKey("+919812345678")).toBe("Asia/Calcutta");
  });

  it("keeps every zone of the country when the number does not narrow it, sorted", () => {
    // A toll-free +1 800 number is anywhere in the North American plan: Honolulu to Newfoundland.
    const key = numberZoneKey("+18005550100");
    expect(key.split("&")).toContain("Pacific/Honolulu");
    expect(key.split("&")).toContain("America/St_Johns");
    expect(key.split("&")).toEqual([...key.split("&")].sort());
  });

  it("does not judge numbers it cannot place: non-geographic codes, extensions, dial strings", () => {
    expect(numberZoneKey("+80012345678")).toBe("");
    expect(numberZoneKey("1001")).toBe("");
    expect(numberZoneKey("PJSIP/200@sipp")).toBe("");
  });

  it("names only zones the runtime knows", () => {
    const zones = allMappedZones();
    expect(zones.length).toBeGreaterThan(250);
    expect(zones.filter((z) => !isValidTimeZone(z))).toEqual([]);
  });
});
