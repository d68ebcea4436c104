// The dashboard's pure modules (public/dashboard/): reading a CSV for the preview and placing a 422's row problems,
// where an agent's 422 items and validate issues are shown in the editor, and a call's cost estimate and turn timing.
import { describe, expect, it } from "vitest";
// @ts-expect-error: the dashboard's plain JavaScript modules (no type declarations, no build step)
import { fieldOfIssue, fieldOfLoc } from "../../public/dashboard/agent-fields.js";
// Typed by cost.d.ts: the Worker imports the same rate table.
import { DEFAULT_ENGINES, enginesOf, estimateCost, RATES, turnTimings, usd } from "../../public/dashboard/cost.js";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL } from "../../src/agent/workers-ai-speech";
import { FAILED_CALL_STATUSES } from "../../src/campaigns/engine/outcomes";
// The page's source as text (Vite's ?raw), to read its counter sentences.
import campaignsSource from "../../public/dashboard/campaigns.js?raw";
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
  const run = {
    provider: "twilio",
    direction: "outbound",
    duration_seconds: 61,
    usage: { stt_seconds: 60, tts_seconds: 120, input_tokens: 1e6, output_tokens: 1e6 },
  };

  it("prices the engines the agent uses by default, which the rate table names and prices", () => {
    // The defaults are the Worker's own constants: a changed default model cannot leave the table pricing another.
    expect(DEFAULT_ENGINES).toEqual({
      llm: `workers-ai:${WORKERS_AI_CHAT_MODEL}`,
      stt: `workers-ai:${WORKERS_AI_STT_MODEL}`,
      tts: `workers-ai:${WORKERS_AI_TTS_MODEL}`,
    });
    expect(enginesOf({})).toEqual(DEFAULT_ENGINES);
    const cost = estimateCost(run)!;
    expect(cost.carrier).toBeCloseTo(2 * RATES.carrierPerMinute.default);
    // Nova-3 streamed: $0.0092 a minute; Aura-1: $0.015 per 1 000 characters, 900 characters a minute of speech.
    expect(cost.stt).toBeCloseTo(0.0092, 6);
    expect(cost.tts).toBeCloseTo(2 * 0.9 * 0.015, 6);
    expect(cost.model).toBeCloseTo(0.293 + 2.253, 6);
    expect(cost.total).toBeCloseTo(cost.carrier + cost.stt! + cost.tts! + cost.model!);
    expect(cost.unpriced).toEqual([]);
    expect(estimateCost({ ...run, provider: "sandbox" })!.carrier).toBe(0);
    expect(estimateCost({ ...run, direction: "web" })!.carrier).toBe(0);
    expect(estimateCost({ provider: "twilio", duration_seconds: null, usage: null })).toBe(null);
    expect(usd(0.00012)).toBe("$0.0001");
    expect(usd(1.5)).toBe("$1.50");
  });

  it("prices an agent's chosen engines, and leaves unpriced the keyed ones the table cannot know", () => {
    const engines = enginesOf({
      voice_agent: {
        llm_model: "@cf/meta/llama-3.1-8b-instruct",
        stt: { provider: "workers-ai", model: "@cf/openai/whisper" },
        tts: { provider: "elevenlabs", api_key: "k" },
      },
    });
    expect(engines).toEqual({ llm: "workers-ai:@cf/meta/llama-3.1-8b-instruct", stt: "workers-ai:@cf/openai/whisper", tts: "elevenlabs" });
    const cost = estimateCost(run, engines)!;
    expect(cost.model).toBeCloseTo(0.282 + 0.827, 6);
    expect(cost.stt).toBeCloseTo(0.0005, 6);
    expect(cost.tts).toBe(null);
    expect(cost.unpriced).toEqual(["elevenlabs"]);
    expect(cost.total).toBeCloseTo(cost.carrier + 0.0005 + 0.282 + 0.827, 6);
    const scripted = estimateCost(run, enginesOf({ voice_agent: { llm: { provider: "scripted", script: [] }, tts: { provider: "scripted" } } }))!;
    expect([scripted.model, scripted.tts, scripted.unpriced]).toEqual([0, 0, []]);
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

describe("the campaign page's counter sentences", () => {
  it("explains Failed calls by the statuses the engine counts in it, each named", () => {
    const sentence = /\["failed_calls", "Failed calls", "([^"]+)"\]/.exec(campaignsSource)?.[1];
    expect(sentence).toBeTruthy();
    for (const status of FAILED_CALL_STATUSES) expect(sentence).toContain(status.replace(/_/g, " "));
    // Nothing counted there may be said to be left out of it.
    expect(sentence).not.toMatch(/\bnot\b/);
  });
});
