// `npm run org:create` (and the dev banner's key) beside a running `npm run dev`: wrangler's SQLITE_BUSY is
// retried with a bounded, growing pause; anything else fails at once (scripts/lib/busy-retry.ts).
import { describe, expect, it } from "vitest";
import { BUSY_ATTEMPTS, BusyRetryError, busyBackoffMs, retryWhileBusy, type Attempt } from "../../scripts/lib/busy-retry";

const BUSY_OUTPUT = "✘ [ERROR] D1_ERROR: SQLITE_BUSY: database is locked";

/** A scripted wrangler: answers from `script` in order, recording the attempts and the pauses asked for. */
function scripted(script: Attempt[]) {
  const pauses: number[] = [];
  const attempts: number[] = [];
  const run = (n: number) => {
    attempts.push(n);
    return script[Math.min(n - 1, script.length - 1)];
  };
  return { run, pauses, attempts, sleep: (ms: number) => void pauses.push(ms) };
}

describe("retryWhileBusy", () => {
  it("retries a busy database, then returns what the successful attempt printed", () => {
    const w = scripted([
      { ok: false, output: BUSY_OUTPUT },
      { ok: false, output: "Error: database is locked" },
      { ok: true, value: '[{"results":[]}]' },
    ]);
    const told: string[] = [];
    const out = retryWhileBusy(w.run, "wrangler d1 execute", { sleep: w.sleep, random: () => 0, onRetry: (n, ms, max) => told.push(`${n}/${max} ${ms}`) });
    expect(out).toBe('[{"results":[]}]');
    expect(w.attempts).toEqual([1, 2, 3]);
    expect(w.pauses).toEqual([100, 200]);
    expect(told).toEqual([`1/${BUSY_ATTEMPTS - 1} 100`, `2/${BUSY_ATTEMPTS - 1} 200`]);
  });

  it("does not retry any other failure: one attempt, thrown with wrangler's output", () => {
    const w = scripted([
      { ok: false, output: "✘ [ERROR] no such table: organizations" },
      { ok: true, value: "never" },
    ]);
    let thrown: unknown;
    try {
      retryWhileBusy(w.run, "wrangler d1 execute", { sleep: w.sleep });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(BusyRetryError);
    expect((thrown as BusyRetryError).message).toBe("wrangler d1 execute failed");
    expect((thrown as BusyRetryError).output).toContain("no such table");
    expect(w.attempts).toEqual([1]);
    expect(w.pauses).toEqual([]);
  });

  it("gives up after the bound with a message that says what to do", () => {
    const w = scripted([{ ok: false, output: BUSY_OUTPUT }]);
    expect(() => retryWhileBusy(w.run, "wrangler d1 execute", { sleep: w.sleep, attempts: 4, random: () => 1 })).toThrow(
      "wrangler d1 execute the local D1 database stayed busy after 4 attempts (stop `npm run dev` or try again)",
    );
    expect(w.attempts).toEqual([1, 2, 3, 4]);
    // 100, 200, 400 ms with the full 50% jitter.
    expect(w.pauses).toEqual([150, 300, 600]);
  });

  it("a single-attempt run (output not captured) is never retried", () => {
    const w = scripted([{ ok: false, output: BUSY_OUTPUT }]);
    expect(() => retryWhileBusy(w.run, "wrangler dev", { sleep: w.sleep, attempts: 1 })).toThrow(/stayed busy after 1 attempts/);
    expect(w.attempts).toEqual([1]);
  });

  it("the pause doubles from 100 ms, caps at 3.2 s and adds at most half again as jitter", () => {
    expect([1, 2, 3, 6, 7, 12].map((n) => busyBackoffMs(n, () => 0))).toEqual([100, 200, 400, 3200, 3200, 3200]);
    expect(busyBackoffMs(7, () => 0.999)).toBeLessThanOrEqual(4800);
    expect(busyBackoffMs(1, () => 0.5)).toBe(125);
  });
});
