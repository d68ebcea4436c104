// A suite run's results from its repetitions: pure. A scenario passes when every repetition passed, fails when none
// did, and is flaky when some did and some did not (a flaky scenario fails the suite: a gate must not open on luck).
import type { Repetition } from "./test-call";

export type ScenarioResult = {
  scenario_id: number;
  name: string;
  protocol: string;
  /** The scenario's revision the run used. */
  revision: number;
  passed: number;
  repetitions: number;
  pass_rate: number;
  status: "passed" | "failed" | "flaky";
  /** Each expectation's pass count over the repetitions, so a flaky one is named. */
  expectations: Array<{ expectation: string; passed: number; of: number }>;
  runs: Repetition[];
};

export type SuiteSummary = { status: "passed" | "failed"; scenarios: number; passed: number; failed: number; flaky: number; pass_rate: number };

export function scenarioResult(s: { id: number; name: string; protocol: string; revision: number }, runs: Repetition[]): ScenarioResult {
  const passed = runs.filter((r) => r.passed).length;
  const counts = new Map<string, { passed: number; of: number }>();
  for (const r of runs) {
    for (const v of r.verdicts) {
      const c = counts.get(v.expectation) ?? { passed: 0, of: 0 };
      c.of++;
      if (v.passed) c.passed++;
      counts.set(v.expectation, c);
    }
  }
  return {
    scenario_id: s.id,
    name: s.name,
    protocol: s.protocol,
    revision: s.revision,
    passed,
    repetitions: runs.length,
    pass_rate: runs.length ? Math.round((passed / runs.length) * 1000) / 1000 : 0,
    status: runs.length && passed === runs.length ? "passed" : passed === 0 ? "failed" : "flaky",
    expectations: [...counts].map(([expectation, c]) => ({ expectation, ...c })),
    runs,
  };
}

export function summarize(results: ScenarioResult[]): SuiteSummary {
  const passed = results.filter((r) => r.status === "passed").length;
  const flaky = results.filter((r) => r.status === "flaky").length;
  const reps = results.reduce((n, r) => n + r.repetitions, 0);
  const repsPassed = results.reduce((n, r) => n + r.passed, 0);
  return {
    status: results.length > 0 && passed === results.length ? "passed" : "failed",
    scenarios: results.length,
    passed,
    failed: results.length - passed - flaky,
    flaky,
    pass_rate: reps ? Math.round((repsPassed / reps) * 1000) / 1000 : 0,
  };
}
