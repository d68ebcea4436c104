// The E.164 class cache answers exactly as libphonenumber-js does: 100,000 varied numbers through both paths, and the
// pattern analysis it rests on, on patterns small enough to check by hand.
import { describe, expect, it } from "vitest";
import { ClassCache, classKey, freeDigits, MAX_CLASSES } from "../../src/telephony/e164-classes";
import { analyzeE164, analyzeE164Full, classifyE164, normalizeNumber } from "../../src/telephony/numbers";
import { freeTails, prefixReach } from "../../src/telephony/regex-shape";
import { corpus } from "./e164-corpus";

describe("pattern shapes", () => {
  it("counts the trailing digits every path of a length leaves free", () => {
    expect(freeTails("[2-9]\\d{2}")[3]).toBe(2);
    expect(freeTails("[2-9]\\d{2}")[4]).toBe(Infinity); // no string of 4 matches
    // Each alternative counts at its own length; a fixed number of one length is all constrained.
    const t = freeTails("80[08]\\d{7}|800\\d{6}|8001111");
    expect([t[7], t[9], t[10]]).toEqual([0, 6, 7]);
    expect(freeTails("(?:1|[368]\\d|4[0-8])\\d{3,5}")[6]).toBe(4); // the 4[0-8] path: four free after it
    expect(freeTails("[0-9]{4}")[4]).toBe(4); // a class of all ten digits is free
    expect(freeTails("2(?:[0-8]\\d|9[01])\\d{3}")[6]).toBe(3);
    expect(() => freeTails("(?=1)\\d")).toThrow();
  });

  it("measures how far a prefix pattern reads; an alternative ending in $ only at its own lengths", () => {
    expect(prefixReach("0|180020", 10)).toBe(6);
    expect(prefixReach("([2-9]\\d{6})$|1", 10)).toBe(1);
    expect(prefixReach("([2-9]\\d{6})$|1", 7)).toBe(Infinity);
  });
});

describe("E.164 classes", () => {
  it("give the same answer as libphonenumber-js on 100,000 varied numbers (every calling code, valid and not, national and formatted)", {
    timeout: 180_000,
  }, () => {
    const numbers = corpus(100_000);
    let keyed = 0;
    let valid = 0;
    let shared = 0;
    const seen = new Set<string>();
    const mismatches: string[] = [];
    // Twice: the second pass answers every classed number from the cache. libphonenumber-js's own answer is the
    // expensive half, so it is computed once and kept for the second pass.
    const answers = new Map<string, string>();
    for (const pass of [1, 2]) {
      for (const raw of numbers) {
        const full = pass === 1 ? analyzeE164Full(raw) : null;
        if (pass === 1) answers.set(raw, JSON.stringify(full));
        const fast = JSON.stringify(analyzeE164(raw));
        if (fast !== answers.get(raw)) mismatches.push(`${raw} (pass ${pass}): ${fast} != ${answers.get(raw)}`);
        if (pass === 2) continue;
        const key = classKey(raw);
        if (key) {
          keyed++;
          if (seen.has(key)) shared++;
          seen.add(key);
        }
        if (full) valid++;
      }
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    // The corpus exercises the cache: many numbers classed, many sharing a class, a fair share valid.
    expect(keyed).toBeGreaterThan(50_000);
    expect(shared).toBeGreaterThan(20_000);
    expect(valid).toBeGreaterThan(10_000);
  });

  it("leave the last digits free only where the plans do (the US, the UK, Germany; none for Brazil's national prefix)", () => {
    expect(freeDigits("+14155550123")).toBe(3); // some NANP plans fix all but the last 3
    expect(freeDigits("+442071234567")).toBe(3);
    expect(freeDigits("+4915123456789")).toBeGreaterThan(3);
    expect(freeDigits("+5511912345678")).toBe(0);
    expect(classKey("+1 415 555 0123")).toBeNull(); // not plain digits: parsed on its own
    expect(normalizeNumber("+14155550123", false)).toEqual({ ok: true, value: "+14155550123", kind: "e164" });
    expect(classifyE164("+14155550124")).toMatchObject({ number: "+14155550124", country: "US" });
  });

  it("stay bounded: the cache starts over past MAX_CLASSES", () => {
    let parses = 0;
    const cache = new ClassCache(
      (raw) => {
        parses++;
        return raw;
      },
      (_a, raw) => raw,
    );
    // One class per number: ten digits whose first seven differ (the last three are free under +1).
    const number = (i: number, last = "000") => `+1${2_000_000 + i}${last}`;
    for (let i = 0; i < MAX_CLASSES + 10; i++) cache.get(number(i));
    expect(parses).toBe(MAX_CLASSES + 10);
    cache.get(number(0, "001")); // the first class was dropped when the cache started over
    expect(parses).toBe(MAX_CLASSES + 11);
    cache.get(number(MAX_CLASSES + 9, "007")); // a recent one is still there
    expect(parses).toBe(MAX_CLASSES + 11);
  });
});
