// The CLI's JUnit report: a suite per scenario, a case per repetition, a failure per failed expectation with its
// evidence, errors apart, and XML's special characters escaped.
import { describe, expect, it } from "vitest";
// @ts-expect-error a plain ES module of the CLI's, without types
import { junitXml } from "../../scripts/lib/junit.mjs";

const run = {
  workflow_id: 7,
  version_number: 2,
  scenarios: [
    {
      name: "happy <path>",
      protocol: "vonage",
      runs: [
        { repetition: 1, passed: true, verdicts: [{ expectation: "disposition", passed: true, expected: "interested", actual: "interested", evidence: "" }] },
        {
          repetition: 2,
          passed: false,
          verdicts: [{ expectation: "nodes_reached", passed: false, expected: ["bye"], actual: ["start"], evidence: "never reached bye (went start)" }],
        },
      ],
    },
    { name: "persona", protocol: "twilio", runs: [{ repetition: 1, passed: false, verdicts: [], error: "A persona caller needs a model & more" }] },
  ],
};

describe("the JUnit report", () => {
  it("has a suite per scenario, a case per repetition, the failures with evidence and the errors", () => {
    const xml: string = junitXml(run);
    expect(xml).toContain('<testsuites name="agent 7 v2">');
    expect(xml).toContain('<testsuite name="happy &lt;path&gt; (vonage)" tests="2" failures="1" errors="0">');
    expect(xml).toContain('<testcase classname="happy &lt;path&gt;" name="happy &lt;path&gt; #1"></testcase>');
    expect(xml).toContain('<failure message="nodes_reached">expected [&quot;bye&quot;], got [&quot;start&quot;]: never reached bye (went start)</failure>');
    expect(xml).toContain('<testsuite name="persona (twilio)" tests="1" failures="0" errors="1">');
    expect(xml).toContain('<error message="A persona caller needs a model &amp; more"/>');
  });
});
