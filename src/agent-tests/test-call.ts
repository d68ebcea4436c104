// One repetition of a scenario: a real call session of the agent, spoken to over the carrier's own media protocol by
// the scripted caller, and what the call left on its run judged against the scenario's expectations.
//
// The Worker plays the carrier's side itself (src/agent-tests/callee.ts, the simulator's protocols): the run is a
// test run (is_test) with no telephony configuration, its session gets exactly the carrier's stream messages, and no
// carrier's API is ever asked (there is no call to place, hang up or transfer at a carrier: a hang-up or transfer
// the agent asks for is recorded on the run and goes nowhere). Offline, the agent runs on its scripted model and
// hears the caller's lines by their sound (caller-voice.ts).
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
import { callerClip } from "./caller-voice";
import { CALLER_TIMING, type CallerEvent, type CallerTiming, playScript } from "./caller";
import { evaluate, type Observed, type Verdict } from "./expectations";
import type { ChatModel } from "../agent/chat";
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
  /** Why the call could not be judged (the agent cannot run offline, a missing variable, the session refused). */
  error?: string;
};

type ScriptedLlm = { provider: "scripted"; script: Array<Record<string, unknown>>; local?: boolean };

/**
 * The model a test call runs the agent on, offline: its scripted model; or, in local development, local development's
 * offline model for an agent that names no model (what `npm run dev` runs it on: the README tour's agent); null for an
 * agent on a real model.
 */
export function scriptedModelOf(agent: UsableWorkflow, env?: Pick<Env, "LOCAL_DEV">): ScriptedLlm | null {
  const llm = (agent.workflowConfigurations as { voice_agent?: { llm?: { provider?: string; script?: unknown } } } | null)?.voice_agent?.llm;
  if (!llm && env?.LOCAL_DEV === "true") return { provider: "scripted", script: [], local: true };
  return llm?.provider === "scripted" && Array.isArray(llm.script) ? (llm as ScriptedLlm) : null;
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
  opts: { keyId?: number | null; timing?: CallerTiming; model?: ChatModel | null } = {},
): Promise<Repetition> {
  const failed = (error: string, runId: number | null = null): Repetition => ({
    repetition,
    run_id: runId,
    passed: false,
    verdicts: [],
    caller: [],
    transcript: [],
    error,
  });
  const model = opts.model ?? null;
  if (scenario.caller.type === "persona" && !model)
    return failed("A persona caller needs a model (the run's `model`, the agent's agent_tests.model, or Workers AI on a deployment); this run has none");
  const scripted = scriptedModelOf(agent, env);
  if (!scripted)
    return failed("Offline, the agent needs a scripted model (voice_agent.llm.provider scripted), or no model in local development, to run a test call");
  let variables: Record<string, unknown>;
  try {
    variables = requireVariables(agent, scenario.variables);
  } catch (err) {
    return failed(`The scenario's variables: ${String((err as Error).message)}`);
  }
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
    scripted: { script: scripted.script as never, clips: callerLines(scenario).map(callerClip), ...(scripted.local ? { localModel: true } : {}) },
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
          (text) => session.learnLine(callerClip(text)),
        )
      : null;
  try {
    const steps = scenario.caller.type === "script" ? scenario.caller.steps : [];
    caller = await playScript(callee, steps, opts.timing ?? CALLER_TIMING, played?.source);
  } catch (err) {
    log("error", "agent_test_caller_failed", { run_id: run.id, error: String(err) });
    if (!callee.closed) callee.hangup();
  }
  const final = await settled(env, run.id);
  if (!final || !isFinal(final.status)) return { ...failed("The call's run never became final", run.id), caller };
  const observed = await observe(env, final);
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
  return { repetition, run_id: run.id, passed: verdicts.every((v) => v.passed), verdicts, caller, transcript: observed.transcript };
}
