// The token-bucket arithmetic behind the rate limits (src/lib/token-bucket.ts): pure, time passed in.
import { describe, expect, it } from "vitest";
import { parseLimit, refill, secondsUntil, take, takeAll, type BucketLimit, type BucketState } from "../../src/lib/token-bucket";
import { knownEmpty, remember } from "../../src/organizations/request-limit";

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const limit: BucketLimit = { rate: 2, burst: 3 };

describe("take", () => {
  it("a new bucket is full: `burst` takes pass at one instant, the next is refused with a whole-second Retry-After", () => {
    let state: BucketState | undefined;
    for (let i = 0; i < 3; i++) {
      const r = take(state, limit, T0);
      expect(r.ok).toBe(true);
      state = r.state;
    }
    expect(state).toEqual({ tokens: 0, at: T0 });
    const refused = take(state, limit, T0);
    expect(refused).toEqual({ ok: false, state: { tokens: 0, at: T0 }, retryAfterSeconds: 1 });
  });

  it("refills at `rate` per second, never above `burst`", () => {
    const empty = { tokens: 0, at: T0 };
    expect(take(empty, limit, T0 + 499).ok).toBe(false); // 0.998 tokens
    expect(take(empty, limit, T0 + 500)).toMatchObject({ ok: true, state: { tokens: 0, at: T0 + 500 } });
    expect(refill(empty, limit, T0 + 60_000)).toEqual({ tokens: 3, at: T0 + 60_000 });
  });

  it("Retry-After is the whole seconds until one token, at least 1", () => {
    const slow: BucketLimit = { rate: 0.25, burst: 1 };
    expect(take({ tokens: 0, at: T0 }, slow, T0).retryAfterSeconds).toBe(4);
    expect(take({ tokens: 0.9, at: T0 }, slow, T0).retryAfterSeconds).toBe(1);
    expect(secondsUntil({ tokens: 0.99, at: T0 }, { rate: 100, burst: 1 })).toBe(1);
  });

  it("a clock moved backwards refills nothing and keeps the later time", () => {
    expect(refill({ tokens: 1, at: T0 }, limit, T0 - 10_000)).toEqual({ tokens: 1, at: T0 });
  });
});

describe("takeAll", () => {
  it("spends from every bucket or from none; the wait is the longest among the refusing buckets", () => {
    const org = { state: { tokens: 5, at: T0 }, limit: { rate: 1, burst: 5 } };
    const key = { state: { tokens: 0, at: T0 }, limit: { rate: 0.5, burst: 2 } };
    const refused = takeAll([org, key], T0);
    expect(refused.map((r) => r.ok)).toEqual([false, false]);
    expect(refused[0].state.tokens).toBe(5); // the organization's token was not spent by the key's refusal
    expect(refused[0].retryAfterSeconds).toBe(2);

    const granted = takeAll([org, { ...key, state: { tokens: 1, at: T0 } }], T0);
    expect(granted.map((r) => [r.ok, r.state.tokens])).toEqual([
      [true, 4],
      [true, 0],
    ]);
  });
});

describe("parseLimit", () => {
  const fallback = { rate: 7, burst: 9 };
  it("reads RATE,BURST", () => {
    expect(parseLimit("2,10", fallback)).toEqual({ rate: 2, burst: 10 });
    expect(parseLimit(" 0.5 , 3 ", fallback)).toEqual({ rate: 0.5, burst: 3 });
  });
  it("anything else is the fallback, never an error", () => {
    for (const bad of [undefined, null, "", "10", "0,5", "5,0", "-1,5", "1,2,3", "x,y", "1,2.5"]) expect(parseLimit(bad, fallback)).toEqual(fallback);
  });
});

describe("the isolate's memory of a key's bucket (request-limit.ts)", () => {
  it("refuses without asking the object while the remembered bucket is empty, and asks again once it has refilled", () => {
    const keyId = 900_000_001;
    const limit = { rate: 0.5, burst: 2 };
    expect(knownEmpty(keyId, T0)).toBeNull(); // never seen: ask
    remember(keyId, { ok: true, retryAfterSeconds: 0, state: { tokens: 1, at: T0 }, limit });
    expect(knownEmpty(keyId, T0)).toBeNull(); // a token left as far as this isolate knows: ask
    remember(keyId, { ok: false, retryAfterSeconds: 2, state: { tokens: 0, at: T0 }, limit });
    expect(knownEmpty(keyId, T0)).toBe(2);
    expect(knownEmpty(keyId, T0 + 1_000)).toBe(1);
    expect(knownEmpty(keyId, T0 + 2_000)).toBeNull();
  });
});
