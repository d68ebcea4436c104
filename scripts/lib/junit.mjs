// An agent test run (GET /workflow/{id}/tests/runs/{id}) as a JUnit XML report, for CI: one test suite per scenario,
// one test case per repetition, a failure per expectation that failed (its evidence as the message's body).

const esc = (s) => String(s).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);

export function junitXml(run) {
  const suites = run.scenarios.map((s) => {
    const cases = s.runs.map((r) => {
      const name = `${s.name} #${r.repetition}`;
      const failed = r.verdicts.filter((v) => !v.passed);
      const body = r.error
        ? `<error message="${esc(r.error)}"/>`
        : failed
            .map(
              (v) =>
                `<failure message="${esc(v.expectation)}">${esc(`expected ${JSON.stringify(v.expected)}, got ${JSON.stringify(v.actual)}: ${v.evidence}`)}</failure>`,
            )
            .join("");
      return `    <testcase classname="${esc(s.name)}" name="${esc(name)}">${body}</testcase>`;
    });
    const failures = s.runs.filter((r) => !r.passed && !r.error).length;
    const errors = s.runs.filter((r) => r.error).length;
    return [
      `  <testsuite name="${esc(s.name)} (${esc(s.protocol)})" tests="${s.runs.length}" failures="${failures}" errors="${errors}">`,
      ...cases,
      "  </testsuite>",
    ].join("\n");
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="agent ${run.workflow_id} v${run.version_number}">\n${suites.join("\n")}\n</testsuites>\n`;
}
