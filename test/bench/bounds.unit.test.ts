// The benches' shared bounds (bench/lib/bounds.mjs): a run ends within its wall-clock bound, stops after N failures
// in a row, a wait has a deadline, and a failed setup is a refusal (exit 1) rather than figures.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BenchStopped, consecutiveFailures, startBench, within } from "../../bench/lib/bounds.mjs";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A bench whose exit, log and child-killing are recorded rather than done. */
function bench(seconds: number, extra: Record<string, unknown> = {}) {
  const exits: number[] = [];
  const lines: string[] = [];
  const kills: number[] = [];
  const b = startBench("bench:test", {
    seconds,
    exit: (code: number) => exits.push(code),
    log: (line: string) => lines.push(line),
    killChildren: () => kills.push(1),
    outsideGuard: () => {},
    ...extra,
  });
  return { b, exits, lines, kills };
}

describe("bench bounds", () => {
  it("stops after N failures in a row, naming the last ones; a success in between resets the count", () => {
    const f = consecutiveFailures(3, "requests to the carrier");
    f.fail(new Error("a"));
    f.fail(new Error("b"));
    f.ok();
    f.fail(new Error("c"));
    f.fail(new Error("d"));
    expect(f.inRow).toBe(2);
    expect(() => f.fail(new Error("Network connection lost"))).toThrow(BenchStopped);
    expect(() => f.fail("x")).toThrow(/4 requests to the carrier failed in a row \(6 in all\); the last: d; Network connection lost; x/);
  });

  it("a wait with a deadline rejects once it has passed, and resolves as its promise does before", async () => {
    const never = new Promise(() => {});
    const late = within(never, 5_000, "the campaign's state");
    const caught = late.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5_000);
    const err = await caught;
    expect(err).toBeInstanceOf(BenchStopped);
    expect(String((err as Error).message)).toBe("the campaign's state: no answer within 5 s");
    await expect(within(Promise.resolve(7), 5_000, "x")).resolves.toBe(7);
  });

  it("a run that outlives its bound is stopped: cleanups run, children killed, exit 1 with the phase it was at", async () => {
    const { b, exits, lines, kills } = bench(60);
    const cleaned: string[] = [];
    b.cleanup(() => cleaned.push("worker"));
    b.cleanup(() => cleaned.push("carrier"));
    b.phase("bursts of 100: waiting for completion");
    void b.run(() => new Promise(() => {})); // hangs, as bench:dispatch did
    await vi.advanceTimersByTimeAsync(59_999);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([1]);
    expect(cleaned).toEqual(["carrier", "worker"]);
    expect(kills).toEqual([1]);
    expect(lines.at(-1)).toBe("bench:test: did not finish within its bound of 60 s (at: bursts of 100: waiting for completion); stopped, nothing reported.");
  });

  it("a failed setup is a refusal: exit 1 naming the phase and the error, never exit 0", async () => {
    const { b, exits, lines } = bench(600);
    b.phase("migrations");
    await b.run(async () => {
      throw new Error("no such table: campaigns");
    });
    expect(exits).toEqual([1]);
    expect(lines.at(-1)).toMatch(/^bench:test: refusing to report: failed at migrations: Error: no such table: campaigns/);
  });

  it("a cleanup that never ends does not hold the exit; a run that ends exits 0 and its bound no longer fires", async () => {
    const { b, exits, lines } = bench(600, { cleanupMs: 1_000 });
    b.cleanup(() => new Promise(() => {}));
    const done = b.run(async () => {});
    await vi.advanceTimersByTimeAsync(1_000);
    await done;
    expect(exits).toEqual([0]);
    expect(lines).toEqual(["bench:test: cleanup failed: cleanup: no answer within 1 s"]);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(exits).toEqual([0]);
  });

  it("BENCH_TIMEOUT_S overrides the stated bound", async () => {
    vi.stubEnv("BENCH_TIMEOUT_S", "5");
    try {
      const { b, exits } = bench(600);
      void b.run(() => new Promise(() => {}));
      expect(b.bound).toBe(5);
      // What is left, as a synchronous child's timeout: whole milliseconds (spawnSync refuses a fraction).
      await vi.advanceTimersByTimeAsync(1_234.5);
      expect(Number.isInteger(b.remainingMs())).toBe(true);
      expect(b.remainingMs()).toBeLessThanOrEqual(3_766);
      await vi.advanceTimersByTimeAsync(3_766);
      expect(exits).toEqual([1]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
