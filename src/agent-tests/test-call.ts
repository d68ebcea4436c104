// One repetition of a scenario: a real call session of the agent, spoken to over the carrier's own media protocol by
// the scripted caller, and what the call left on its run judged against the scenario's expectations.
//
// The Worker plays the carrier's side itself (src/agent-tests/callee.ts, the simulator's protocols): the run is a
// test run (is_test) with no telephony configuration, its session gets exactly the carrier's stream messages, and no
// carrier's API is ever asked (there is no call to place, hang up or transfer at a carrier: a hang-up or transfer
// the agent asks for is recorded on the run and goes nowhere). The agent runs on its own model where one is usable
// (agentModelOf), else its scripted or local development's offline model, and hears the caller's lines by their sound
// (caller-voice.ts) on the offline speech-to-text.
import { eq } from "drizzle-orm";
import { SEND_DTMF_TOOL, TRANSFER_TOOL } from "../agent/actions";
import { workflowRuns } from "../db/schema";
import { getDb } from "../lib/db";
import { log } from "../lib/log";
import { createRun, getRun, isFinal, type RunRow } from "../calls/runs/runs";
import { readDetails } from "../calls/session/details-object";
import { SESSION_HEADER } from "../calls/session/protocol";
import { callSessionStub } from "../calls/session/stub";
import { sessionStart } from "../calls/start/session-start";
import { applyStatus } from "../calls/runs/status";
import { requireVariables } from "../calls/start/variables";
import type { UsableWorkflow } from "../workflows/store";
import { CALLEE_PROTOCOLS, CalleeStream } from "./callee";
import { type CallerVoice, callerSpeech } from "./caller-speech";
import { usableAi } from "./models";
import { CALLER_TIMING, type CallerEvent, type CallerTiming, playScript } from "./caller";
import { evaluate, type Observed, type Verdict } from "./expectations";
import type { ChatModel } from "../agent/chat";
import type { KnownClip } from "../agent/clip-speech";
import { enginesFor, modelFor } from "../agent/engines";
import { WORKERS_AI_CHAT_MODEL } from "../agent/workers-ai-model";
import { allowsPrivatePbx } from "../telephony/calling-policy";
import { judge, persona, type Persona } from "./persona";
import type { ScenarioInput } from "./schemas";

/** A test call is hung up by its session after this long whatever happens (a scenario is a short call). */
const TEST_CALL_MAX_SECONDS = 180;
/** How long the run may take to become final with its details after the media closed. */
const SETTLE_MS = 15_000;

export type Repetition = {
  repetition: number;
  run_id: number | null;
  passed: boolean;
  verdicts: Verdict[];
  caller: CallerEvent[];
  transcript: Observed["transcript"];
  /** What the agent ran on (AgentModel's label); absent when the call could not begin for another reason. */
  agent_model?: string;
  /** How the caller's lines sounded: `offline` (the caller voice) or the real voice (`workers-ai:<model>:<voice>`). */
  caller_voice?: string;
  /** Why the call could not be judged (the agent's model cannot run or failed, a missing variable, the session refused). */
  error?: string;
};

/**
 * What a test call runs the agent on, named in its repetition (`agent_model`): its own model where one is usable
 * (`workers-ai:<model>` through the deployment's AI binding, `openai-compatible:<model>` at its endpoint), its
 * scripted model (`scripted`), or, in local development with no usable model, local development's offline model
 * (`offline`, what `npm run dev` runs it on); else why it cannot run.
 */
export type AgentModel = { label: string; engines: { script: Array<Record<string, unknown>>; localModel?: true; ownModel?: true } } | { error: string };

export function agentModelOf(agent: UsableWorkflow, env: Env): AgentModel {
  const v = (agent.workflowConfigurations as { voice_agent?: { llm?: { provider?: string; script?: unknown; model?: string }; llm_model?: string } } | null)
    ?.voice_agent;
  const llm = v?.llm;
  if (llm?.provider === "scripted")
    return Array.isArray(llm.script) ? { label: "scripted", engines: { script: llm.script } } : { error: "The agent's scripted model has no script" };
  if (llm?.provider === "openai") return { label: `openai-compatible:${llm.model}`, engines: { script: [], ownModel: true } };
  // Workers AI: named, or the default of an agent that names no model.
  if (usableAi(env)) return { label: `workers-ai:${llm?.model ?? v?.llm_model ?? WORKERS_AI_CHAT_MODEL}`, engines: { script: [], ownModel: true } };
  if (env.LOCAL_DEV === "true") return { label: "offline", engines: { script: [], localModel: true } };
  return { error: "The agent's model is Workers AI, and this deployment has no AI binding" };
}

/** The lines the caller may say: the agent's speech-to-text is given each one's sound with its words. */
function callerLines(scenario: ScenarioInput): string[] {
  if (scenario.caller.type !== "script") return [];
  return [...new Set(scenario.caller.steps.flatMap((s) => (s.action === "say" || s.action === "interrupt" ? [s.text] : [])))];
}

async function settled(env: Env, runId: number): Promise<RunRow | null> {
  const deadline = Date.now() + SETTLE_MS;
  let run = await getRun(getDb(env), runId);
  while (run && !(isFinal(run.status) && (run.detailsKey || run.transcript)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    run = await getRun(getDb(env), runId);
  }
  return run;
}

/** What the call left on its run, as the expectations read it. */
export async function observe(env: Env, run: RunRow): Promise<Observed> {
  const details = run.detailsKey ? await readDetails(env.UPLOADS, run.detailsKey) : null;
  const transcript = (details?.transcript ?? run.transcript ?? []) as Observed["transcript"];
  const actions = ((details?.tool_calls ?? run.toolCalls ?? []) as Array<Record<string, unknown>>).map((a) => ({
    name: String(a.name),
    arguments: (a.arguments ?? {}) as Record<string, unknown>,
    status: typeof a.status === "string" ? a.status : undefined,
  }));
  const asked = actions.find((a) => a.name === TRANSFER_TOOL);
  const stored = run.transfer as { destination?: string; mode?: string } | null;
  const analysis = (details?.analysis ?? run.analysis) as { structured_data?: Record<string, unknown> } | null;
  return {
    transcript,
    nodes: details?.nodes ?? [],
    gathered: (run.gatheredContext ?? {}) as Record<string, unknown>,
    actions,
    transfer: stored ?? (asked ? { destination: String(asked.arguments.destination ?? ""), mode: String(asked.arguments.mode ?? "") } : null),
    dtmf: actions
      .filter((a) => a.name === SEND_DTMF_TOOL)
      .map((a) => String(a.arguments.digits ?? ""))
      .join(""),
    disposition: run.disposition,
    endReason: run.endReason,
    analysis: analysis?.structured_data ?? null,
  };
}

export async function runRepetition(
  env: Env,
  agent: UsableWorkflow,
  scenario: ScenarioInput,
  repetition: number,
  opts: { keyId?: number | null; timing?: CallerTiming; model?: ChatModel | null; callerVoice?: CallerVoice | null } = {},
): Promise<Repetition> {
  let agentModel: string | undefined;
  const speech = callerSpeech(env, opts.callerVoice ?? null);
  const failed = (error: string, runId: number | null = null): Repetition => ({
    repetition,
    run_id: runId,
    passed: false,
    verdicts: [],
    caller: [],
    transcript: [],
    ...(agentModel ? { agent_model: agentModel } : {}),
    caller_voice: speech.label,
    error,
  });
  const model = opts.model ?? null;
  if (scenario.caller.type === "persona" && !model)
    return failed("A persona caller needs a model (the run's `model`, the agent's agent_tests.model, or Workers AI on a deployment); this run has none");
  const chosen = agentModelOf(agent, env);
  if ("error" in chosen) return failed(chosen.error);
  agentModel = chosen.label;
  if (chosen.engines.ownModel) {
    // Checked before dialing: an endpoint the organization's policy refuses, a key that cannot be opened.
    const own = await modelFor(env, agent.orgId, agent.workflowConfigurations, () => allowsPrivatePbx(getDb(env), agent.orgId));
    if (!own.ok) return failed(`The agent's model (${agentModel}) cannot run: ${own.reason}`);
  }
  let variables: Record<string, unknown>;
  try {
    variables = requireVariables(agent, scenario.variables);
  } catch (err) {
    return failed(`The scenario's variables: ${String((err as Error).message)}`);
  }
  let clips: KnownClip[];
  try {
    clips = await Promise.all(callerLines(scenario).map((line) => speech.clip(line)));
  } catch (err) {
    return failed(String((err as Error).message));
  }
  // A real caller voice and a real speech-to-text of the agent's own: the agent runs on all its own engines (it hears
  // the caller's voice itself); otherwise its speech-to-text is the offline one, which learns each line's sound.
  const ownEngines = speech.real && !!chosen.engines.ownModel && (await hearsForItself(env, agent));
  const db = getDb(env);
  const protocol = CALLEE_PROTOCOLS[scenario.protocol];
  const callId = `test-${crypto.randomUUID()}`;
  const created = await createRun(db, {
    orgId: agent.orgId,
    workflowId: agent.id,
    workflowUuid: agent.uuid,
    definitionId: agent.definitionId,
    phoneNumber: "",
    fromNumber: null,
    initialContext: variables,
    telephonyConfigurationId: null,
    provider: scenario.protocol,
    leaseId: null,
    createdByKeyId: opts.keyId ?? null,
  });
  await db.update(workflowRuns).set({ isTest: true, providerCallId: callId }).where(eq(workflowRuns.id, created.id)).run();
  const run = { ...created, isTest: true, providerCallId: callId };
  await callSessionStub(env, run.id).prepare({
    agent: "conversation",
    maxCallSeconds: TEST_CALL_MAX_SECONDS,
    ...(ownEngines ? {} : { scripted: { ...chosen.engines, script: chosen.engines.script as never, clips } }),
    mockTools: scenario.mock_tools.map((m) => ({ tool: m.tool, status: m.status, body: m.body })),
  });
  const answered = (await applyStatus(env, run, { status: "in_progress" })).run;
  const headers = new Headers({ Upgrade: "websocket" });
  headers.set(SESSION_HEADER, JSON.stringify(await sessionStart(env, answered, scenario.protocol)));
  const res = await callSessionStub(env, run.id).fetch(new Request(`https://agent-test.invalid/${scenario.protocol}/stream/${run.id}`, { headers }));
  if (res.status !== 101 || !res.webSocket) return failed(`The call session refused the stream: HTTP ${res.status} ${await res.text()}`, run.id);
  res.webSocket.accept();
  const callee = new CalleeStream(res.webSocket, protocol);
  callee.open(callId);
  let caller: CallerEvent[] = [];
  const session = callSessionStub(env, run.id);
  const played: Persona | null =
    scenario.caller.type === "persona" && model
      ? persona(
          model,
          scenario.caller.prompt,
          scenario.caller.max_turns,
          async () => (await session.snapshot()).turns,
          async (text) => {
            const clip = await speech.clip(text);
            if (!ownEngines) await session.learnLine(clip);
          },
        )
      : null;
  try {
    const steps = scenario.caller.type === "script" ? scenario.caller.steps : [];
    caller = await playScript(callee, steps, opts.timing ?? CALLER_TIMING, played?.source, speech.made);
  } catch (err) {
    log("error", "agent_test_caller_failed", { run_id: run.id, error: String(err) });
    if (!callee.closed) callee.hangup();
  }
  const final = await settled(env, run.id);
  if (!final || !isFinal(final.status)) return { ...failed("The call's run never became final", run.id), caller };
  const observed = await observe(env, final);
  // The agent's own model failed mid-call (unreachable, an error status, timed out): the session ended the call saying
  // why; the repetition is an error, not a verdict on the agent's behaviour.
  if (chosen.engines.ownModel && final.endReason === "provider_failure")
    return {
      // On all its own engines the failure may be its speech's as well (the note says which provider failed).
      ...failed(`The agent's ${ownEngines ? "engines" : "model"} (${agentModel}) failed: ${modelFailure(final.notes)}`, run.id),
      caller,
      transcript: observed.transcript,
    };
  const personaError = played?.error();
  if (personaError) return { ...failed(personaError, run.id), caller, transcript: observed.transcript };
  if (model && scenario.expectations.rubric?.length) {
    try {
      observed.rubric = await judge(model, scenario.expectations.rubric, observed.transcript);
    } catch (err) {
      return { ...failed(String((err as Error).message), run.id), caller, transcript: observed.transcript };
    }
  }
  const verdicts = evaluate(scenario.expectations, observed);
  return {
    repetition,
    run_id: run.id,
    passed: verdicts.every((v) => v.passed),
    verdicts,
    caller,
    transcript: observed.transcript,
    agent_model: agentModel,
    caller_voice: speech.label,
  };
}

/** Whether the agent's own speech-to-text is a real engine that runs here (not scripted; Workers AI with a usable binding). */
async function hearsForItself(env: Env, agent: UsableWorkflow): Promise<boolean> {
  const stt = (agent.workflowConfigurations as { voice_agent?: { stt?: { provider?: string } } } | null)?.voice_agent?.stt?.provider ?? "workers-ai";
  if (stt === "scripted" || (stt === "workers-ai" && !usableAi(env))) return false;
  const choice = await enginesFor(env, agent.orgId, agent.workflowConfigurations, () => allowsPrivatePbx(getDb(env), agent.orgId));
  return choice.ok;
}

/** The provider's failure from the run's notes (the conversation agent's "…after a provider failure: <why>"). */
function modelFailure(notes: string | null): string {
  const m = /after a provider failure: ([^;]*)/.exec(notes ?? "");
  return m ? m[1].trim() : notes || "the call ended on a provider failure";
}
