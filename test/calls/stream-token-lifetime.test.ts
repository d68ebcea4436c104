// A stream URL opens a socket for 15 minutes after it was minted (docs/live-calls.md, docs/deployment.md), and not
// after: checked a second either side of the documented 15 minutes on the clock the tokens are read with, for the
// URLs handed to carriers (callbackUrls) and a token minted on its own. The bound is the documented number, so a
// longer (or shorter) lifetime in the code fails here.
import { afterEach, describe, expect, it } from "vitest";
import { callbackUrls, readStreamToken, streamToken } from "../../src/calls/callbacks/callback-urls";
import { clock } from "../../src/lib/clock";

const SECRET = "test-callback-secret";
const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const tokenOf = (url: string) => new URL(url).pathname.split("/").pop()!;

afterEach(() => clock.set(null));

describe("a stream token's lifetime", () => {
  for (const offsetMs of [0, 400, 999]) {
    it(`minted ${offsetMs} ms into a second: opens at 15 min - 1 s, expired at 15 min + 1 s`, async () => {
      const t0 = 1_800_000_000_000 + offsetMs;
      clock.set(t0);
      const { streamUrl } = await callbackUrls(SECRET, "https://edgedial.test", "vonage", 42);
      const alone = await streamToken(SECRET, "vonage", 42);
      for (const token of [tokenOf(streamUrl), alone]) {
        clock.set(t0 + FIFTEEN_MINUTES_MS - 1000);
        expect(await readStreamToken(SECRET, "vonage", 42, token)).toMatchObject({ ok: true });
        clock.set(t0 + FIFTEEN_MINUTES_MS + 1000);
        expect(await readStreamToken(SECRET, "vonage", 42, token)).toEqual({ ok: false, reason: "expired" });
      }
    });
  }

  it("the token says when it expires: within the second before 15 minutes after minting", async () => {
    const t0 = 1_800_000_000_250;
    clock.set(t0);
    const check = await readStreamToken(SECRET, "plivo", 7, await streamToken(SECRET, "plivo", 7));
    expect(check.ok).toBe(true);
    const expiresAtMs = (check as { expiresAtMs: number }).expiresAtMs;
    expect(expiresAtMs).toBeLessThanOrEqual(t0 + FIFTEEN_MINUTES_MS);
    expect(expiresAtMs).toBeGreaterThan(t0 + FIFTEEN_MINUTES_MS - 1000);
  });
});
