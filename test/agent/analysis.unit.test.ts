// Post-call analysis against a scripted model: a conforming answer is taken; a non-conforming one is sent back once
// with its reason, and a second bad answer is recorded as failed with that reason.
import { describe, expect, it } from "vitest";
import { analyzeCall, type CallForAnalysis, checkAnswer } from "../../src/agent/analysis";
import { ScriptedModel } from "../../src/agent/scripted-model";
import { AnalysisSettings, dataValidator } from "../../src/workflows/analysis-schema";

const SETTINGS: AnalysisSettings = {
  summary_prompt: "One sentence.",
  data_schema: {
    type: "object",
    properties: { seats: { type: "integer", minimum: 1 }, disposition: { type: "string", enum: ["interested", "call_back_later"] } },
    required: ["seats"],
  },
  success_criteria: "The callee said how many seats they need.",
};
const CALL: CallForAnalysis = {
  turns: [
    { role: "agent", text: "How many seats?" },
    { role: "callee", text: "Twelve." },
  ],
  gathered: { seats: 12 },
  disposition: null,
  dispositionCodes: ["interested", "call_back_later"],
  variables: { name: "Ada" },
};
const GOOD = JSON.stringify({ summary: "Ada needs 12 seats.", data: { seats: 12, disposition: "interested" }, success: true, success_reason: "She said 12." });
const BAD = JSON.stringify({ summary: "Ada needs seats.", data: { seats: "twelve" }, success: true, success_reason: "ok" });
const now = () => "2026-05-01T10:00:00.000Z";

describe("post-call analysis", () => {
  it("a conforming answer is the analysis; the prompt carries the schema, criteria and disposition codes", async () => {
    const model = new ScriptedModel([{ prompt: "post-call analysis", say: `\`\`\`json\n${GOOD}\n\`\`\`` }]);
    const a = await analyzeCall(model, SETTINGS, CALL, now);
    expect(a).toEqual({
      status: "completed",
      summary: "Ada needs 12 seats.",
      data: { seats: 12, disposition: "interested" },
      success: true,
      success_reason: "She said 12.",
      error: null,
      attempts: 1,
      analyzed_at: now(),
    });
    const [system, user] = model.requests[0].messages;
    expect(system.content).toContain('"minimum":1');
    expect(system.content).toContain("The callee said how many seats they need.");
    expect(system.content).toContain("interested, call_back_later");
    expect(user.content).toContain("Callee: Twelve.");
  });

  it("a non-conforming answer is retried once with its reason, and the second answer is taken", async () => {
    const model = new ScriptedModel([
      { user: "was not valid", say: GOOD },
      { prompt: "post-call analysis", say: BAD },
    ]);
    const a = await analyzeCall(model, SETTINGS, CALL, now);
    expect(a).toMatchObject({ status: "completed", attempts: 2, data: { seats: 12 } });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1].messages.at(-1)?.content).toMatch(/data\.seats/);
  });

  it("two non-conforming answers: failed, with the reason; no third request", async () => {
    const model = new ScriptedModel([{ prompt: "post-call analysis", say: BAD }]);
    const a = await analyzeCall(model, SETTINGS, CALL, now);
    expect(a.status).toBe("failed");
    expect(a.attempts).toBe(2);
    expect(a.error).toMatch(/^The model's answer did not conform twice; last: "data" does not conform to the schema at data\.seats/);
    expect(a.data).toBeNull();
    expect(model.requests).toHaveLength(2);
  });

  it("a model that fails is recorded as failed with why", async () => {
    const model = new ScriptedModel([{ prompt: "post-call analysis", fail: "HTTP 503" }]);
    const a = await analyzeCall(model, SETTINGS, CALL, now);
    expect(a).toMatchObject({ status: "failed", attempts: 1, error: "The model could not be asked: HTTP 503" });
  });

  it("checks each part: not JSON, no summary, success without a boolean; without criteria success is null", () => {
    const v = dataValidator(SETTINGS.data_schema);
    expect(checkAnswer("Sure! Here it is", SETTINGS, v)).toEqual({ ok: false, reason: "The answer is not a JSON object" });
    expect(checkAnswer('{"data":{"seats":1}}', SETTINGS, v)).toMatchObject({ ok: false, reason: '"summary" must be a non-empty string' });
    expect(checkAnswer('{"summary":"x","data":{"seats":1},"success":"yes"}', SETTINGS, v)).toMatchObject({
      ok: false,
      reason: '"success" must be true or false',
    });
    expect(checkAnswer('{"summary":"x"}', { summary_prompt: "Short." }, null)).toEqual({
      ok: true,
      value: { summary: "x", data: null, success: null, success_reason: null },
    });
  });

  it("the settings refuse a schema that is not an object's, or that zod cannot read", () => {
    expect(AnalysisSettings.safeParse({ data_schema: { type: "string" } }).error?.issues[0].message).toMatch(/Must describe an object/);
    expect(AnalysisSettings.safeParse({ data_schema: { type: "object", properties: { a: { type: "strin" } } } }).error?.issues[0].message).toMatch(
      /Not a usable JSON Schema: Unsupported type: strin/,
    );
    expect(AnalysisSettings.safeParse({ success_criteria: "" }).success).toBe(false);
    expect(AnalysisSettings.safeParse({ extra: 1 }).success).toBe(false);
  });
});
