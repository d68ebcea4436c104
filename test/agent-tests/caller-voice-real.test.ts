// A run's caller voice (`caller_voice`): the caller's lines spoken by Workers AI's Aura through the deployment's AI
// binding (faked at the binding: fake-ai.ts, answering eSpeak NG's speech from the local speech server as Aura's raw
// linear16 PCM). A persona caller on the stand-in model talks to an agent on Workers AI: the caller's lines are asked
// of Aura with the documented body, their audio goes over the carrier's protocol and the agent's own speech-to-text
// (Nova-3's live socket) hears them. Without a usable binding a caller voice is a 422.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it } from "vitest";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL } from "../../src/agent/workers-ai-speech";
import suite from "../fixtures/seats-suite.json";
import { call, createOrg } from "../helpers";
import { AgentTestAi } from "./fake-ai";
import { runTests } from "./run-helpers";

const PORT = inject("modelStandinPort");
const SPEAK_URL = inject("localSpeechUrl");
const SCRIPT = suite.agent.workflow_configurations.voice_agent.llm.script;
const LINES = ["Sure, tell me more.", "We need twelve seats."];

const PERSONA = {
  name: "Ada, spoken",
  variables: { first_name: "Ada" },
  caller: { type: "persona", prompt: `You are Ada. You say, in turn: "${LINES[0]}" and then "${LINES[1]}"`, max_turns: 3 },
  expectations: { nodes_reached: { nodes: ["start", "pitch", "bye"], in_order: true }, extraction: { seats: 12 }, end_reason: "agent_hangup" },
};

const e = env as { AI?: unknown; OFFLINE_ENGINES?: string };
const saved = { AI: e.AI, OFFLINE_ENGINES: e.OFFLINE_ENGINES };
afterEach(() => {
  e.AI = saved.AI;
  e.OFFLINE_ENGINES = saved.OFFLINE_ENGINES;
});

/** The seats agent on Workers AI (its default engines), with the persona scenario. */
async function workersAiAgent() {
  const org = await createOrg();
  expect((await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
  const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { ...suite.agent, workflow_configurations: {} } });
  expect(agent.status, agent.text).toBe(200);
  const scenario = await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body: PERSONA });
  expect(scenario.status, scenario.text).toBe(200);
  return { key: org.key, id: agent.json.id as number };
}

describe("the caller's real voice", () => {
  it("speaks a persona's lines through Workers AI's text-to-speech, and the agent's own speech-to-text hears them over the call", async () => {
    const ai = new AgentTestAi(SCRIPT, { speakUrl: SPEAK_URL, callerSpeaker: "orion" });
    e.AI = ai;
    const { key, id } = await workersAiAgent();
    const model = { base_url: `http://127.0.0.1:${PORT}/v1`, model: "standin-small", api_key: `voice-${crypto.randomUUID()}` };
    const run = await runTests(key, id, { repetitions: 1, model, caller_voice: {} });
    const rep = run.scenarios[0].runs[0];
    expect(rep.error).toBeUndefined();
    expect(rep).toMatchObject({ agent_model: `workers-ai:${WORKERS_AI_CHAT_MODEL}`, caller_voice: `workers-ai:${WORKERS_AI_TTS_MODEL}:orion` });
    expect(rep.verdicts.filter((v: any) => !v.passed)).toEqual([]);

    // Each caller line was asked of Aura with the documented body (raw 16 kHz linear PCM, the caller's speaker).
    const callerTts = ai.asked.filter((a) => a.model === WORKERS_AI_TTS_MODEL && a.inputs.speaker === "orion");
    expect(callerTts.map((a) => a.inputs)).toEqual(
      LINES.map((text) => ({ text, speaker: "orion", encoding: "linear16", container: "none", sample_rate: 16000 })),
    );
    // The audio reached the agent over Twilio's protocol: its Nova-3 socket recognized each line by its sound.
    expect(ai.asked.filter((a) => a.model === WORKERS_AI_STT_MODEL).every((a) => a.options?.websocket)).toBe(true);
    expect(ai.heard.filter(Boolean)).toEqual(LINES);
    expect(rep.transcript.filter((t: any) => t.role !== "agent").map((t: any) => t.text)).toEqual(LINES);
    // The agent spoke with its own voice (Aura's default speaker), the model answered what it heard.
    expect(ai.asked.some((a) => a.model === WORKERS_AI_TTS_MODEL && a.inputs.speaker === "asteria")).toBe(true);
    const userWords = ai.asked.filter((a) => a.model === WORKERS_AI_CHAT_MODEL).flatMap((a) => a.inputs.messages.filter((m: any) => m.role === "user"));
    expect(userWords.map((m: any) => m.content)).toEqual(expect.arrayContaining(LINES));
  }, 180_000);

  it("speaks a script's and a persona's lines in the real voice to an agent that hears by the offline speech-to-text, which learned their sound", async () => {
    const ai = new AgentTestAi([], { speakUrl: SPEAK_URL, callerSpeaker: "luna" });
    e.AI = ai;
    const org = await createOrg();
    expect((await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
    // The seats agent on its scripted model: its speech-to-text is the offline one.
    const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: suite.agent });
    expect(agent.status, agent.text).toBe(200);
    // The script's lines are learned before the call; the persona's during it (the session's learnLine).
    for (const body of [{ ...suite.scenarios[0], protocol: "vonage" }, PERSONA])
      expect((await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body })).status).toBe(200);
    const model = { base_url: `http://127.0.0.1:${PORT}/v1`, model: "standin-small", api_key: `voice-${crypto.randomUUID()}` };
    const run = await runTests(org.key, agent.json.id, { repetitions: 1, model, caller_voice: { voice: "luna" } });
    for (const s of run.scenarios) {
      const rep = s.runs[0];
      expect(rep.error, s.name).toBeUndefined();
      expect(rep, s.name).toMatchObject({ passed: true, agent_model: "scripted", caller_voice: `workers-ai:${WORKERS_AI_TTS_MODEL}:luna` });
      expect(rep.transcript.filter((t: any) => t.role !== "agent").map((t: any) => t.text)).toEqual(LINES);
    }
    // Each line synthesized once per call; nothing else asked of the binding (the agent is offline).
    expect(ai.asked.map((a) => [a.model, a.inputs.text, a.inputs.speaker]).sort()).toEqual(
      [...LINES, ...LINES].map((t) => [WORKERS_AI_TTS_MODEL, t, "luna"]).sort(),
    );
  }, 120_000);

  it("makes the repetition an error saying why when the caller's voice fails", async () => {
    e.AI = new AgentTestAi([]); // no text-to-speech: Aura answers an error
    const org = await createOrg();
    const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: suite.agent });
    expect((await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body: suite.scenarios[0] })).status).toBe(200);
    const run = await runTests(org.key, agent.json.id, { repetitions: 1, caller_voice: {} });
    expect(run.scenarios[0].runs[0]).toMatchObject({
      passed: false,
      run_id: null,
      error: `The caller's voice failed: Workers AI text-to-speech failed: no such model: ${WORKERS_AI_TTS_MODEL}`,
    });
  }, 60_000);

  it("refuses a caller voice where Workers AI is not usable", async () => {
    e.OFFLINE_ENGINES = "true";
    const { key, id } = await workersAiAgent();
    const res = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key, body: { repetitions: 1, caller_voice: { voice: "luna" } } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail[0].loc).toEqual(["body", "caller_voice"]);
    expect(res.json.detail[0].msg).toMatch(/no usable AI binding/);
    const bad = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key, body: { repetitions: 1, caller_voice: { model: "@cf/openai/whisper" } } });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "caller_voice", "model"]);
    // The agent's own setting is free-form where it is saved: one that is not a caller voice is refused at the run.
    e.OFFLINE_ENGINES = saved.OFFLINE_ENGINES;
    const org = await createOrg();
    const stored = { ...suite.agent, workflow_configurations: { ...suite.agent.workflow_configurations, agent_tests: { caller_voice: { model: "x" } } } };
    const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: stored });
    expect((await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body: suite.scenarios[0] })).status).toBe(200);
    const refused = await call("POST", `/api/v1/workflow/${agent.json.id}/tests/runs`, { key: org.key, body: { repetitions: 1 } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.detail[0]).toMatchObject({
      loc: ["body", "workflow_configurations", "agent_tests", "caller_voice"],
      msg: expect.stringMatching(/^The agent's caller voice setting is not one: A Workers AI Aura/),
    });
  }, 60_000);
});
