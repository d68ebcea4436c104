// Typed turns on a web call (docs/web-calls.md): GET /workflow/{id}/web-call names the template variables to ask for
// (with the agent's defaults) and whether the caller speaks or types; a `{"type":"text"}` message is a caller turn of
// the same session and graph as a spoken one: logged as the user's, answered in audio and in the live transcript,
// and each turn is followed by a `state` message (node, gathered values, tool calls) the playground shows; an action
// (a transfer decision) reaches the page as a `tool` turn and in the state's tool calls, as the run records it.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pcm16ToBytes } from "../../src/lib/audio/pcm";
import { call, createOrg, type Org } from "../helpers";
import { DEFINITION, prepareScripted, SCRIPT, SEATS_DISPOSITIONS } from "./conversation-support";
import { PERSON, TRANSFER_SCRIPT, transferDefinition } from "./transfer-support";
import { runRow } from "./support";

type State = { node: string | null; nodes: string[]; gathered: Record<string, unknown>; disposition: string | null; tool_calls: unknown[] };

async function seatsAgent(org: Org, fields: Record<string, unknown> = {}) {
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS, ...fields },
  });
  expect(wf.status, wf.text).toBe(200);
  return wf.json as { id: number };
}

/** A page in typing mode: no microphone, silence sent 20 ms at a time (the agent's audio is paced on it), marks echoed. */
class TypingPage {
  audioFrames = 0;
  readonly transcript: Array<{ role: string; text: string }> = [];
  readonly states: State[] = [];
  closed: { code: number; reason: string } | null = null;

  constructor(readonly ws: WebSocket) {
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") return void this.audioFrames++;
      const m = JSON.parse(e.data);
      if (m.type === "mark") ws.send(JSON.stringify({ type: "mark", name: m.name }));
      else if (m.type === "transcript") this.transcript.push(m);
      else if (m.type === "state") this.states.push(m);
    });
    ws.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
    });
  }

  /** `ms` of wall time, 20 ms of silence at a time, saying it is typing every 500 ms when `typing`. */
  async wait(ms: number, typing: boolean) {
    const silence = pcm16ToBytes(new Int16Array(320)).buffer as ArrayBuffer;
    for (let t = 0; t < ms && !this.closed; t += 20) {
      if (typing && t % 500 === 0) this.ws.send(JSON.stringify({ type: "typing" }));
      this.ws.send(silence);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  type(text: unknown) {
    this.ws.send(JSON.stringify({ type: "text", text }));
  }

  async waitFor(test: () => boolean, maxMs = 20_000) {
    const silence = pcm16ToBytes(new Int16Array(320)).buffer as ArrayBuffer;
    for (let t = 0; t < maxMs && !this.closed && !test(); t += 20) {
      this.ws.send(silence);
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(test(), `waited ${maxMs} ms of call audio`).toBe(true);
  }
}

async function typingCall(org: Org, agentId: number, script = SCRIPT): Promise<{ page: TypingPage; runId: number; made: Record<string, unknown> }> {
  const res = await call("POST", `/api/v1/workflow/${agentId}/web-call`, { key: org.key, body: { initial_context: { first_name: "Ada" } } });
  expect(res.status, res.text).toBe(200);
  const runId = res.json.workflow_run_id as number;
  await prepareScripted(runId, script);
  const up = await exports.default.fetch(new Request(String(res.json.websocket_url).replace(/^ws/, "http"), { headers: { Upgrade: "websocket" } }));
  expect(up.status).toBe(101);
  up.webSocket!.accept();
  const page = new TypingPage(up.webSocket!);
  page.ws.send(JSON.stringify({ type: "start" }));
  return { page, runId, made: res.json };
}

describe("GET /workflow/{id}/web-call", () => {
  it("names the agent's template variables with its defaults, and the caller types where the engines understand no speech", async () => {
    const org = await createOrg();
    const plain = await seatsAgent(org);
    const res = await call("GET", `/api/v1/workflow/${plain.id}/web-call`, { key: org.key });
    expect(res.status, res.text).toBe(200);
    // The test Worker is local development without VOICE_AGENT: a Workers AI agent runs on the offline engines.
    expect(res.json).toEqual({ variables: [{ name: "first_name", default: null }], input_mode: "text", refused: null });

    const withDefault = await seatsAgent(org, { template_context_variables: { first_name: "Grace" } });
    expect((await call("GET", `/api/v1/workflow/${withDefault.id}/web-call`, { key: org.key })).json.variables).toEqual([
      { name: "first_name", default: "Grace" },
    ]);

    // Scripted speech (the demo's agent) knows only its clips: the caller types.
    const scripted = await seatsAgent(org, {
      workflow_configurations: { voice_agent: { stt: { provider: "scripted", clips: [{ text: "Hi", recording_id: "r" }] } } },
    });
    expect((await call("GET", `/api/v1/workflow/${scripted.id}/web-call`, { key: org.key })).json.input_mode).toBe("text");
    // Its own keyed speech engines understand speech: the caller speaks.
    const keyed = await seatsAgent(org, {
      workflow_configurations: {
        voice_agent: {
          llm: { provider: "scripted", script: SCRIPT },
          stt: { provider: "deepgram", api_key: "k" },
          tts: { provider: "deepgram", api_key: "k" },
        },
      },
    });
    expect((await call("GET", `/api/v1/workflow/${keyed.id}/web-call`, { key: org.key })).json.input_mode).toBe("speech");

    expect((await call("GET", `/api/v1/workflow/999999/web-call`, { key: org.key })).status).toBe(404);
    // An archived agent is a page to show, with why a call would be refused (the POST's 409).
    expect((await call("PUT", `/api/v1/workflow/${plain.id}/status`, { key: org.key, body: { status: "archived" } })).status).toBe(200);
    const archived = await call("GET", `/api/v1/workflow/${plain.id}/web-call`, { key: org.key });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.json).toEqual({ variables: [], input_mode: "speech", refused: "Workflow is archived" });
    const other = await createOrg();
    expect((await call("GET", `/api/v1/workflow/${plain.id}/web-call`, { key: other.key })).status).toBe(404);
  });

  it("the call's answer says the same mode; without the variable the call is refused 422 at the variable", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const missing = await call("POST", `/api/v1/workflow/${agent.id}/web-call`, { key: org.key, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0]).toMatchObject({ loc: ["body", "initial_context", "first_name"], type: "missing" });
    const { made, page } = await typingCall(org, agent.id);
    expect(made.input_mode).toBe("text");
    page.ws.send(JSON.stringify({ type: "stop" }));
    await page.waitFor(() => page.closed !== null, 2000);
  });
});

describe("a typed turn on a web call", () => {
  it("is the caller's turn on the same graph: answered in audio and text, each turn followed by the agent's state", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org);
    const { page, runId } = await typingCall(org, agent.id);

    await page.waitFor(() => page.transcript.length >= 1);
    expect(page.transcript[0]).toMatchObject({ role: "agent", text: "Hi Ada!" });
    expect(page.states.at(-1)).toMatchObject({ node: "start", nodes: ["start"], gathered: {} });

    // Blank, over-long or malformed typed turns are ignored, as unknown messages are.
    page.type("   ");
    page.type("x".repeat(1001));
    page.type(42);
    const greetingAudio = page.audioFrames;
    page.type("  Sure,   tell me more. ");
    await page.waitFor(() => page.transcript.some((t) => t.text === "Great. How many seats do you need?"));
    expect(page.transcript.map((t) => `${t.role}: ${t.text}`)).toEqual([
      "agent: Hi Ada!",
      "user: Sure, tell me more.",
      "agent: Great. How many seats do you need?",
    ]);
    // The reply was spoken as well as written: its audio came after the greeting's.
    expect(page.audioFrames).toBeGreaterThan(greetingAudio + 10);
    expect(page.states.at(-1)).toMatchObject({ node: "pitch", nodes: ["start", "pitch"] });

    page.type("We need twelve seats.");
    await page.waitFor(() => page.closed !== null);
    expect(page.closed?.reason).toBe("agent_hangup");
    expect(page.transcript.map((t) => t.text).slice(3)).toEqual(["We need twelve seats.", "Thank you, goodbye!"]);
    expect(page.states.at(-1)).toMatchObject({ node: "bye", gathered: { seats: 12 }, disposition: "interested" });

    for (let i = 0; i < 100 && !(await runRow(runId)).detailsKey; i++) await new Promise((r) => setTimeout(r, 20));
    const detail = (await call("GET", `/api/v1/workflow/${agent.id}/runs/${runId}`, { key: org.key })).json;
    expect(detail).toMatchObject({ direction: "web", gathered_context: { seats: 12 } });
    expect(detail.transcript.map((t: { text: string }) => t.text)).toEqual(page.transcript.map((t) => t.text));
    expect((await runRow(runId)).endReason).toBe("agent_hangup");
  });
});

describe("the agent's actions on a web call", () => {
  it("a transfer decision reaches the page as a tool turn and in the state's tool calls, as the run records it", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org, { workflow_definition: transferDefinition(PERSON, "cold") });
    const { page, runId } = await typingCall(org, agent.id, TRANSFER_SCRIPT);
    await page.waitFor(() => page.transcript.length >= 1);
    page.type("Sure, tell me more.");
    await page.waitFor(() => page.transcript.some((t) => t.role === "tool"));
    expect(page.transcript.find((t) => t.role === "tool")?.text).toMatch(/^transfer_call: /);
    await page.waitFor(() => (page.states.at(-1)?.tool_calls.length ?? 0) > 0);
    const shown = page.states.at(-1)!.tool_calls as Array<{ name: string; status: string }>;
    expect(shown[0]).toMatchObject({ name: "transfer_call", arguments: expect.any(Object) });
    page.ws.send(JSON.stringify({ type: "stop" }));
    await page.waitFor(() => page.closed !== null, 2000);
    for (let i = 0; i < 100 && !(await runRow(runId)).detailsKey; i++) await new Promise((r) => setTimeout(r, 20));
    const detail = (await call("GET", `/api/v1/workflow/${agent.id}/runs/${runId}`, { key: org.key })).json;
    expect(detail.tool_calls.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual(shown.map((t) => [t.name, t.status]));
  });
});

describe("typing on a web call", () => {
  it("is the caller's activity: the agent's re-prompt waits while they type, and comes once they stop", async () => {
    const org = await createOrg();
    const agent = await seatsAgent(org, { workflow_configurations: { voice_agent: { turn: { reprompt_after_ms: 2000 } } } });
    const { page } = await typingCall(org, agent.id);
    await page.waitFor(() => page.transcript.length >= 1);
    await page.wait(4000, true); // twice the re-prompt's wait, typing
    expect(page.transcript.map((t) => t.text)).toEqual(["Hi Ada!"]);
    const reprompted = () => page.transcript.some((t) => t.text === "Are you still there?");
    for (let i = 0; i < 30 && !reprompted(); i++) await page.wait(500, false);
    expect(reprompted()).toBe(true);
    page.ws.send(JSON.stringify({ type: "stop" }));
    await page.waitFor(() => page.closed !== null, 2000);
  });
});
