// The Tests tab's pure parts (public/dashboard/agent-test-logic.js): a scenario to JSON and back, where a 422's items
// go, and what a run's results say (flaky scenarios and expectations, the one-line verdict).
import { describe, expect, it } from "vitest";
import {
  callerSummary,
  editableJson,
  enginesText,
  flakyOf,
  scenarioBody,
  scenarioPath,
  splitProblems,
  standing,
  summaryText,
  // @ts-expect-error: the dashboard's plain JavaScript modules (no type declarations, no build step)
} from "../../public/dashboard/agent-test-logic.js";
import { ScenarioInput } from "../../src/agent-tests/schemas";

describe("a scenario in the editor", () => {
  it("shows what the API takes, and the new scenario's starting point is a valid scenario", () => {
    const stored = { id: 4, workflow_id: 2, revision: 3, agent_version: 1, created_at: "x", updated_at: "y", name: "n", protocol: "vonage" };
    expect(JSON.parse(editableJson(stored))).toEqual({ protocol: "vonage" });
    const made = scenarioBody("starter", editableJson(null));
    expect(ScenarioInput.safeParse(made.body).success).toBe(true);
  });

  it("refuses JSON that is not an object before asking the API", () => {
    expect(scenarioBody("a", "{").error).toMatch(/^Not JSON: /);
    expect(scenarioBody("a", "[1]").error).toBe("The scenario must be a JSON object");
    expect(scenarioBody("a", '{"name":"b","protocol":"ari"}').body).toEqual({ name: "a", protocol: "ari" });
  });

  it("puts the name's problems at the name and the others under the JSON by their path", () => {
    expect(scenarioPath(["body", "caller", "steps", 0, "text"])).toBe("caller.steps[0].text");
    expect(scenarioPath(["body"])).toBe("(the scenario)");
    expect(
      splitProblems([
        { loc: ["body", "name"], msg: "An agent's scenarios need distinct names" },
        { loc: ["body", "expectations", "transfer", "mode"], msg: "Invalid option" },
        { loc: ["body"], msg: "At most 100" },
      ]),
    ).toEqual({ name: ["An agent's scenarios need distinct names"], json: ["expectations.transfer.mode: Invalid option", "(the scenario): At most 100"] });
    expect(callerSummary({ type: "script", steps: [{ action: "say" }, { action: "press" }] })).toBe("script: say, press");
  });
});

describe("a run's results in words", () => {
  const run = (scenarios: unknown[], summary: unknown, status = "failed") => ({ status, summary, scenarios });

  it("names the flaky scenarios and the expectations that passed only sometimes", () => {
    const flaky = {
      name: "interrupts",
      status: "flaky",
      passed: 2,
      repetitions: 3,
      expectations: [
        { expectation: "nodes_reached", passed: 3, of: 3 },
        { expectation: "extraction", passed: 2, of: 3 },
      ],
    };
    const steady = { name: "silent", status: "failed", passed: 0, repetitions: 3, expectations: [{ expectation: "disposition", passed: 0, of: 3 }] };
    expect(flakyOf(run([flaky, steady], null))).toEqual([{ name: "interrupts", passed: 2, of: 3, expectations: ["extraction"] }]);
    expect(flaky.expectations.map(standing)).toEqual(["passed", "flaky"]);
    expect(standing(steady.expectations[0])).toBe("failed");
  });

  it("says the suite's verdict in one line", () => {
    expect(summaryText({ status: "running", summary: null })).toMatch(/^Running/);
    expect(summaryText({ status: "error", summary: null, error: "The test run was interrupted" })).toBe("Ended in error: The test run was interrupted");
    expect(summaryText(run([], { status: "passed", scenarios: 6, passed: 6, failed: 0, flaky: 0, pass_rate: 1 }, "passed"))).toBe(
      "Passed: all 6 scenarios passed in every repetition.",
    );
    expect(summaryText(run([], { status: "failed", scenarios: 3, passed: 1, failed: 1, flaky: 1, pass_rate: 0.667 }))).toBe(
      "Failed: 1 of 3 scenarios passed (1 failed, 1 flaky); 67% of the test calls passed.",
    );
  });

  it("says what a test call ran on", () => {
    expect(enginesText({ agent_model: "openai-compatible:llama3", caller_voice: "offline" })).toBe(
      "The agent ran on its own model, openai-compatible:llama3; the caller spoke in the offline caller voice.",
    );
    expect(enginesText({ agent_model: "scripted", caller_voice: "workers-ai:@cf/deepgram/aura-1:orion" })).toBe(
      "The agent ran on its scripted model; the caller spoke in a real voice, workers-ai:@cf/deepgram/aura-1:orion.",
    );
    expect(enginesText({ caller_voice: "offline" })).toBe("The caller spoke in the offline caller voice.");
    expect(enginesText({})).toBeNull();
  });
});
