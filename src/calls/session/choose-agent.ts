// Which agent talks on a call: the prepared one, else the deployment's VOICE_AGENT. The conversation agent runs the
// run's agent graph on the engines its settings choose (Workers AI by default), or on prepared deterministic
// engines (tests, the demo); without a usable graph or engines the call gets the greeting agent, and the log says why.
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { allowsPrivatePbx } from "../../telephony/calling-policy";
import { loadGreeting } from "../../uploads/greetings";
import { ConversationAgent } from "../../agent/conversation-agent";
import { enginesFor, modelFor } from "../../agent/engines";
import { conversationFor, scriptedEngines, toolAccess, type ScriptedEngines } from "../../agent/load";
import { EchoAgent, GreetingAgent, KeypadAgent, liveAgent } from "./agents";
import { TransferTestAgent } from "./transfer-agent";
import type { SessionRecord } from "./store";
import type { VoiceAgent } from "../../agent/voice-agent";
import type { ToolAccess, ToolMock } from "../../agent/action-runner";
import type { SampleRate } from "../../lib/audio/resample";
import type { KnownClip } from "../../agent/clip-speech";

export type GreetingClip = { samples: Int16Array; rate: SampleRate };

/** What the session prepared beside its record (kept in its key-value storage: binary clips, engine scripts, mocks). */
export type Prepared = { greetingClip: GreetingClip | undefined; scripted: ScriptedEngines | undefined; mockTools?: ToolMock[] };

/** Keeps what prepare() was given beyond the record, so a restarted session chooses the same agent. */
export async function savePrepared(storage: DurableObjectStorage, options: Partial<Prepared>): Promise<void> {
  if (options.greetingClip) await storage.put("greeting_clip", options.greetingClip);
  if (options.scripted) await storage.put("scripted_engines", options.scripted);
  if (options.mockTools?.length) await storage.put("mock_tools", options.mockTools);
}

/** A line learned mid-call joins the scripted engines' clips, so a restarted session still knows it. */
export async function rememberLine(storage: DurableObjectStorage, clip: KnownClip): Promise<void> {
  const scripted = await storage.get<ScriptedEngines>("scripted_engines");
  if (scripted && !scripted.clips.some((c) => c.text === clip.text)) await storage.put("scripted_engines", { ...scripted, clips: [...scripted.clips, clip] });
}

export async function loadPrepared(storage: DurableObjectStorage): Promise<Prepared> {
  return {
    greetingClip: await storage.get<GreetingClip>("greeting_clip"),
    scripted: await storage.get<ScriptedEngines>("scripted_engines"),
    mockTools: await storage.get<ToolMock[]>("mock_tools"),
  };
}

/** The call's tool access with a test scenario's mocked answers in front (by tool name). */
function withMocks(access: ToolAccess, mocks: ToolMock[] | undefined): ToolAccess {
  if (!mocks?.length) return access;
  return { ...access, mocked: (tool) => mocks.find((m) => m.tool === tool.name) };
}

export async function chooseAgent(env: Env, s: Readonly<SessionRecord>, prepared: Prepared): Promise<VoiceAgent> {
  const name = s.agent ?? liveAgent(env);
  const runId = s.runId ?? 0;
  if (name === "echo") return new EchoAgent();
  if (name === "keypad") return new KeypadAgent();
  if (name === "transfer") return new TransferTestAgent();
  if (name === "conversation") {
    const agent = await conversationFor(env, runId, s.variables);
    const allowsPrivate = () => allowsPrivatePbx(getDb(env), s.orgId);
    const choice = agent ? await enginesFor(env, s.orgId, agent.configurations, allowsPrivate) : null;
    const tools = withMocks(toolAccess(env, s.orgId, allowsPrivate), prepared.mockTools);
    if (agent && prepared.scripted && !prepared.scripted.ownModel)
      return new ConversationAgent(agent.conversation, scriptedEngines(prepared.scripted), choice?.turn, tools);
    if (agent && prepared.scripted?.ownModel) {
      // An agent test of an agent on a real model: its own model (the URL policy applied), the caller heard by the clips.
      const own = await modelFor(env, s.orgId, agent.configurations, allowsPrivate);
      if (own.ok) return new ConversationAgent(agent.conversation, { ...scriptedEngines(prepared.scripted), model: own.model }, choice?.turn, tools);
      log("warning", "conversation_agent_unavailable", { run_id: runId, graph: true, reason: own.reason });
      return new GreetingAgent(await greetingClip(env, s, prepared));
    }
    if (agent && choice?.ok) return new ConversationAgent(agent.conversation, choice.engines, choice.turn, tools);
    log("warning", "conversation_agent_unavailable", { run_id: runId, graph: !!agent, reason: choice && !choice.ok ? choice.reason : null });
  }
  return new GreetingAgent(await greetingClip(env, s, prepared));
}

/** The greeting as audio: a prepared clip, else the contact's audio greeting from the store, else none. */
async function greetingClip(env: Env, s: Readonly<SessionRecord>, prepared: Prepared): Promise<GreetingClip | null> {
  if (prepared.greetingClip) return prepared.greetingClip;
  return s.greetingRecording ? loadGreeting(env.UPLOADS, s.greetingRecording) : null;
}
