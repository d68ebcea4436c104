// A suite's results: pass rate per scenario, the flaky ones named down to the expectation, the suite's verdict.
import { describe, expect, it } from "vitest";
import { scenarioResult, summarize } from "../../src/agent-tests/results";
import type { Repetition } from "../../src/agent-tests/test-call";

const rep = (repetition: number, passed: boolean[]): Repetition => ({
  repetition,
  run_id: repetition,
  passed: passed.every(Boolean),
  verdicts: passed.map((p, i) => ({ expectation: `e${i}`, passed: p, expected: 1, actual: p ? 1 : 2, evidence: "" })),
  caller: [],
  transcript: [],
});
const S = { id: 1, name: "happy", protocol: "twilio", revision: 1 };

describe("suite results", () => {
  it("a scenario passed in every repetition passes; in none fails; in some is flaky, naming the expectation", () => {
    expect(scenarioResult(S, [rep(1, [true, true]), rep(2, [true, true])])).toMatchObject({ status: "passed", pass_rate: 1 });
    expect(scenarioResult(S, [rep(1, [false, true]), rep(2, [true, false])])).toMatchObject({ status: "failed", pass_rate: 0 });
    const flaky = scenarioResult(S, [rep(1, [true, true]), rep(2, [true, false]), rep(3, [true, true])]);
    expect(flaky).toMatchObject({ status: "flaky", passed: 2, repetitions: 3, pass_rate: 0.667 });
    expect(flaky.expectations).toEqual([
      { expectation: "e0", passed: 3, of: 3 },
      { expectation: "e1", passed: 2, of: 3 },
    ]);
  });

  it("the suite passes only when every scenario passed", () => {
    const ok = scenarioResult(S, [rep(1, [true])]);
    const flaky = scenarioResult(S, [rep(1, [true]), rep(2, [false])]);
    expect(summarize([ok, ok])).toEqual({ status: "passed", scenarios: 2, passed: 2, failed: 0, flaky: 0, pass_rate: 1 });
    expect(summarize([ok, flaky])).toMatchObject({ status: "failed", flaky: 1, failed: 0, pass_rate: 0.667 });
    expect(summarize([]).status).toBe("failed");
  });
});
