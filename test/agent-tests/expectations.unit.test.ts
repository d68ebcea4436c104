// Judging a test call: each expectation passes or fails on what the call left, with evidence that says why.
import { describe, expect, it } from "vitest";
import { answerLatencies, evaluate, matchesPartially, type Observed } from "../../src/agent-tests/expectations";

const CALL: Observed = {
  transcript: [
    { role: "agent", text: "Hi Ada!", start_ms: 0, end_ms: 420 },
    { role: "user", text: "Sure, tell me more.", start_ms: 900, end_ms: 2100 },
    { role: "agent", text: "Great. How many seats do you need?", start_ms: 2900, end_ms: 4800 },
    { role: "user", text: "We need twelve seats.", start_ms: 5200, end_ms: 6400 },
    { role: "agent", text: "Thank you, goodbye!", start_ms: 7800, end_ms: 8900 },
  ],
  nodes: ["start", "pitch", "bye"],
  gathered: { seats: 12 },
  actions: [{ name: "check_availability", arguments: { seats: 12 }, status: "ok" }],
  transfer: null,
  dtmf: "",
  disposition: "interested",
  endReason: "agent_hangup",
  analysis: { booked: true, seats: 12 },
};

const byName = (v: ReturnType<typeof evaluate>) => Object.fromEntries(v.map((x) => [x.expectation, x]));

describe("expectations", () => {
  it("all pass on the call that met them", () => {
    const v = evaluate(
      {
        nodes_reached: { nodes: ["start", "bye"], in_order: true },
        extraction: { seats: "12" },
        tools_called: [{ name: "check_availability", arguments: { seats: 12 } }],
        disposition: "interested",
        end_reason: "agent_hangup",
        analysis: { booked: true },
        max_answer_latency_ms: 1500,
        never_says: ["refund"],
      },
      CALL,
    );
    expect(v.filter((x) => !x.passed)).toEqual([]);
    expect(v).toHaveLength(8);
    expect(byName(v).max_answer_latency_ms.actual).toBe(1400);
  });

  it("fail with the evidence: what was expected, what happened, where in the transcript", () => {
    const v = byName(
      evaluate(
        {
          nodes_reached: { nodes: ["bye", "pitch"], in_order: true },
          extraction: { seats: 14 },
          tools_called: [{ name: "check_availability", arguments: { seats: 14 } }, { name: "book" }],
          transfer: { destination: "+14155550111", mode: "cold" },
          dtmf_sent: "1",
          disposition: "not_interested",
          max_answer_latency_ms: 1000,
          never_says: ["goodbye"],
          rubric: ["The agent is polite"],
        },
        CALL,
      ),
    );
    expect(Object.values(v).every((x) => !x.passed)).toBe(true);
    expect(v.nodes_reached.evidence).toBe("reached out of order: start → pitch → bye");
    expect(v["extraction.seats"]).toMatchObject({ expected: 14, actual: 12 });
    expect(v["tools_called.0"].evidence).toContain('check_availability({"seats":12}) ok');
    expect(v["tools_called.1"].evidence).toContain("book never called");
    expect(v.transfer.evidence).toContain("no transfer requested");
    expect(v.dtmf_sent.evidence).toBe("the agent sent no keys");
    expect(v.disposition.evidence).toContain("disposition interested");
    expect(v.max_answer_latency_ms.evidence).toContain("slowest answer 1400 ms, after: ");
    expect(v.max_answer_latency_ms.evidence).toContain("user@5200ms: We need twelve seats. | agent@7800ms");
    expect(v["never_says.goodbye"].evidence).toBe("said at 7800 ms: agent@7800ms: Thank you, goodbye!");
    expect(v["rubric.The agent is polite"].evidence).toContain("no judge model");
  });

  it("a node never reached is named; a transfer and keys are matched", () => {
    const v = byName(
      evaluate(
        { nodes_reached: { nodes: ["sales"], in_order: false }, transfer: { destination: "+14155550111" }, dtmf_sent: "12#" },
        { ...CALL, nodes: ["start", "pitch"], transfer: { destination: "+14155550111", mode: "cold" }, dtmf: "12#" },
      ),
    );
    expect(v.nodes_reached).toMatchObject({ passed: false, evidence: "never reached sales (went start → pitch)" });
    expect(v.transfer.passed).toBe(true);
    expect(v.dtmf_sent.passed).toBe(true);
  });

  it("a model's rubric verdict is used with its reasoning", () => {
    const v = evaluate({ rubric: ["Polite"] }, { ...CALL, rubric: [{ criterion: "Polite", passed: true, reasoning: "It thanked the caller." }] });
    expect(v[0]).toMatchObject({ passed: true, evidence: "It thanked the caller." });
  });

  it("answer latency is from the end of each caller turn to the agent's next turn", () => {
    expect(answerLatencies(CALL.transcript)).toEqual([
      { index: 1, ms: 800 },
      { index: 3, ms: 1400 },
    ]);
    expect(matchesPartially({ a: 1 }, { a: 1, b: 2 })).toBe(true);
    expect(matchesPartially({ a: 1 }, { b: 2 })).toBe(false);
    expect(matchesPartially("Yes", " yes")).toBe(true);
  });
});
