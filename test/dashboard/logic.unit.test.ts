// The dashboard's pure modules (public/dashboard/): reading a CSV for the preview and placing a 422's row problems,
// where an agent's 422 items and validate issues are shown in the editor, and a call's cost estimate and turn timing.
import { describe, expect, it } from "vitest";
// @ts-expect-error: the dashboard's plain JavaScript modules (no type declarations, no build step)
import { fieldOfIssue, fieldOfLoc } from "../../public/dashboard/agent-fields.js";
// Typed by cost.d.ts: the Worker imports the same rate table.
import { estimateCost, RATES, turnTimings, usd } from "../../public/dashboard/cost.js";
// @ts-expect-error: as above
import { parseCsv, rowProblems } from "../../public/dashboard/csv-parse.js";

describe("the CSV preview", () => {
  it("reads quoted fields, doubled quotes, CRLF and a last line without a newline", () => {
    expect(parseCsv('phone_number,note\r\n+14155550100,"a, b"\n+14155550101,"say ""hi"""')).toEqual([
      ["phone_number", "note"],
      ["+14155550100", "a, b"],
      ["+14155550101", 'say "hi"'],
    ]);
    expect(parseCsv("")).toEqual([]);
  });

  it("groups a 422's items by row and column, and keeps the ones without a row apart", () => {
    const { byRow, general } = rowProblems([
      { loc: ["body", "source_url", 3, 1], msg: "Not a phone number" },
      { loc: ["body", "source_url", 3, 2], msg: "Too long" },
      { loc: ["body", "source_url", 5], msg: "Row has 3 values" },
      { loc: ["body", "source_url"], msg: "File not found" },
    ]);
    expect([...byRow.entries()]).toEqual([
      [
        3,
        [
          { column: 1, msg: "Not a phone number" },
          { column: 2, msg: "Too long" },
        ],
      ],
      [5, [{ column: undefined, msg: "Row has 3 values" }]],
    ]);
    expect(general).toEqual([{ loc: ["body", "source_url"], msg: "File not found" }]);
  });
});

describe("where the agent editor shows a problem", () => {
  const def = { nodes: [{ id: "start" }, { id: "ask" }], edges: [{ id: "e1" }] };
  it("maps a 422's loc to its control", () => {
    expect(fieldOfLoc(["body", "name"])).toBe("agent-name");
    expect(fieldOfLoc(["body", "workflow_definition", "nodes", 1, "data", "prompt"])).toBe("node-1-prompt");
    expect(fieldOfLoc(["body", "workflow_definition", "nodes", 0, "type"])).toBe("node-0-type");
    expect(fieldOfLoc(["body", "workflow_definition", "edges", 0, "target"])).toBe("edge-0-target");
    expect(fieldOfLoc(["body", "workflow_definition", "edges", 0, "data", "condition"])).toBe("edge-0-condition");
    expect(fieldOfLoc(["body", "workflow_configurations", "voice_agent", "llm", "api_key"])).toBe("voice-llm-api_key");
    expect(fieldOfLoc(["body", "workflow_configurations", "analysis"])).toBe("agent-config");
    expect(fieldOfLoc(["body", "workflow_definition"])).toBe("agent-json");
    expect(fieldOfLoc(["query", "x"])).toBe(null);
  });

  it("maps a validate issue to its node's or edge's field by position", () => {
    expect(fieldOfIssue({ kind: "node", id: "ask", field: "data.prompt" }, def)).toBe("node-1-prompt");
    expect(fieldOfIssue({ kind: "node", id: "start", field: null }, def)).toBe("node-0-id");
    expect(fieldOfIssue({ kind: "edge", id: "e1", field: "target" }, def)).toBe("edge-0-target");
    expect(fieldOfIssue({ kind: "workflow", id: null, field: "nodes" }, def)).toBe(null);
    expect(fieldOfIssue({ kind: "node", id: "gone", field: "data.prompt" }, def)).toBe(null);
  });
});

describe("a call's cost and timing", () => {
  it("adds carrier minutes (per started minute), speech and tokens at the configured rates", () => {
    const run = {
      provider: "twilio",
      direction: "outbound",
      duration_seconds: 61,
      usage: { stt_seconds: 60, tts_seconds: 120, input_tokens: 1e6, output_tokens: 1e6 },
    };
    const cost = estimateCost(run)!;
    expect(cost.carrier).toBeCloseTo(2 * RATES.carrierPerMinute.default);
    expect(cost.stt).toBeCloseTo(RATES.sttPerMinute);
    expect(cost.tts).toBeCloseTo(2 * RATES.ttsPerMinute);
    expect(cost.model).toBeCloseTo(RATES.inputPerMillion + RATES.outputPerMillion);
    expect(cost.total).toBeCloseTo(cost.carrier + cost.stt + cost.tts + cost.model);
    expect(estimateCost({ ...run, provider: "sandbox" })!.carrier).toBe(0);
    expect(estimateCost({ ...run, direction: "web" })!.carrier).toBe(0);
    expect(estimateCost({ provider: "twilio", duration_seconds: null, usage: null })).toBe(null);
    expect(usd(0.00012)).toBe("$0.0001");
    expect(usd(1.5)).toBe("$1.50");
  });

  it("times each turn and the agent's answer after the callee stopped", () => {
    const t = turnTimings([
      { role: "agent", start_ms: 0, end_ms: 2900 },
      { role: "callee", start_ms: 3600, end_ms: 5000 },
      { role: "agent", start_ms: 5700, end_ms: 9900 },
    ]);
    expect(t.map((x: { length_ms: number; wait_ms: number | null }) => [x.length_ms, x.wait_ms])).toEqual([
      [2900, null],
      [1400, null],
      [4200, 700],
    ]);
  });
});
