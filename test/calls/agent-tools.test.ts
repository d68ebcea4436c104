// The agent's HTTP tools on a live call (Twilio's media protocol through the simulator, the scripted model): the
// customer's system (a stand-in on 127.0.0.1) receives the model's arguments and the sealed header; a slow tool gets
// the filler; a tool that fails or times out still gets a reply; a private address is refused unless the
// organization allows it; the header's value appears in no response and no log line. Also the definition's tools
// over the API: 422s at the field, headers sealed at rest and shown masked.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { callSessionStub } from "../../src/calls/session/stub";
import { call } from "../helpers";
import { listenLive, listenUntil, prepareScripted, runWhen, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { setup, startCall } from "./support";

const SECRET = "Bearer sk-tool-secret-7f3a9c";
const PORT = inject("toolStandinPort");
const toolUrl = (key: string, query = "") => `http://127.0.0.1:${PORT}/tool/${key}${query}`;

const definition = (url: string, timeout_ms = 3000) => ({
  tools: [
    {
      name: "lookup_order",
      description: "Look up the caller's order",
      parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
      url,
      method: "POST",
      headers: { Authorization: SECRET },
      timeout_ms,
      nodes: ["start"],
    },
  ],
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Ask about the order.", greeting: "Hi {{first_name}}!" } },
    { id: "bye", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
  ],
  edges: [{ id: "e1", source: "start", target: "bye", data: { label: "done", condition: "The question was answered" } }],
});

const SCRIPT: ScriptStep[] = [
  { user: "tell me more", prompt: "Ask about", call: { name: "lookup_order", arguments: { order: "A17" } } },
  { user: "tell me more", prompt: "Ask about", say: "Thanks for waiting.", call: { name: "done" } },
  { prompt: "Thank them", say: "Goodbye!", call: { name: "end_call" } },
];

const lines: string[] = [];
beforeEach(() => {
  lines.length = 0;
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  }
});
afterEach(() => vi.restoreAllMocks());

async function allowPrivate(key: string) {
  const res = await call("PUT", "/api/v1/organizations/calling-policy", { key, body: { allow_private_pbx: true } });
  expect(res.status, res.text).toBe(200);
}

/** The call: the greeting, the callee's one answer, then listening in real time until the agent hangs up. */
async function toolCall(url: string, o: { allow?: boolean; timeout_ms?: number } = {}) {
  const s = await setup("twilio");
  if (o.allow !== false) await allowPrivate(s.org.key);
  const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "tools", workflow_definition: definition(url, o.timeout_ms) } });
  expect(wf.status, wf.text).toBe(200);
  const runId = await startCall({ ...s, agent: wf.json });
  await prepareScripted(runId, SCRIPT);
  const callee = await connect("twilio", runId);
  await listenUntil(callee, () => callee.played.length >= 1);
  callee.speak(SURE.samples);
  await listenLive(callee, () => callee.closed !== null);
  const snap = await callSessionStub(env, runId).snapshot();
  const run = await runWhen(s, wf.json.id, runId, (r) => !!r.transcript?.length);
  return { s, wf: wf.json, snap, run };
}

const seen = async (key: string) => (await (await fetch(`http://127.0.0.1:${PORT}/_log?key=${key}`)).json()) as any[];
const texts = (run: any) => run.transcript.map((t: any) => `${t.role}: ${t.text}`);

describe("an agent's HTTP tool on a call", () => {
  it("a slow tool: the stand-in gets the model's arguments and the header, the caller hears the filler, then the reply; recorded on the run", async () => {
    const key = crypto.randomUUID();
    const { run, wf, s } = await toolCall(toolUrl(key, "?delay=1800"));
    const [req] = await seen(key);
    expect(req).toMatchObject({ method: "POST", body: '{"order":"A17"}' });
    expect(req.headers.authorization).toBe(SECRET);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(run.end_reason).toBe("agent_hangup");
    expect(run.tool_calls).toEqual([
      { name: "lookup_order", arguments: { order: "A17" }, status: "ok", http_status: 200, duration_ms: expect.any(Number), at_ms: expect.any(Number) },
    ]);
    expect(run.tool_calls[0].duration_ms).toBeGreaterThanOrEqual(1700);
    const t = texts(run);
    expect(t[0]).toBe("agent: Hi Ada!");
    expect(t[1]).toBe("callee: Sure, tell me more.");
    expect(t).toContain("tool: lookup_order: ok, HTTP 200 (" + run.tool_calls[0].duration_ms + " ms)");
    // The filler played while the tool ran (about a second in), then the reply.
    expect(t.at(-1)).toBe("agent: One moment. Thanks for waiting. Goodbye!");
    // The header's value: in no response, no log line; the agent shows it masked, and D1 holds it sealed.
    const shown = await call("GET", `/api/v1/workflow/fetch/${wf.id}`, { key: s.org.key });
    expect(shown.json.workflow_definition.tools[0].headers.Authorization).toBe(`${"*".repeat(SECRET.length - 4)}${SECRET.slice(-4)}`);
    const row = await env.DB.prepare("SELECT definition FROM workflow_definitions WHERE workflow_id = ?").bind(wf.id).first<{ definition: string }>();
    expect(row?.definition).not.toContain("sk-tool-secret");
    expect(JSON.parse(row!.definition).tools[0].headers.Authorization).toMatchObject({ kid: expect.any(String), ct: expect.any(String) });
    for (const text of [JSON.stringify(run), shown.text, ...lines]) expect(text).not.toContain("sk-tool-secret");
    expect(lines.some((l) => l.includes("agent_tool_call"))).toBe(true);
  });

  it.each([
    ["answers 500", "?status=500", 3000, { status: "error", http_status: 500 }],
    ["does not answer in time", "?delay=4000", 1000, { status: "timeout", http_status: null }],
  ])("a tool that %s: the model reads the error and the call goes on", async (_what, query, timeout_ms, record) => {
    const { run } = await toolCall(toolUrl(crypto.randomUUID(), query), { timeout_ms });
    expect(run.tool_calls).toEqual([expect.objectContaining({ name: "lookup_order", ...record })]);
    expect(texts(run).at(-1)).toMatch(/Thanks for waiting. Goodbye!$/);
  });

  it("a tool on a private address is refused unless the organization allows private addresses", async () => {
    const key = crypto.randomUUID();
    const { run } = await toolCall(toolUrl(key), { allow: false });
    expect(run.tool_calls).toEqual([expect.objectContaining({ name: "lookup_order", status: "refused", http_status: null })]);
    expect(await seen(key)).toEqual([]);
    expect(texts(run).at(-1)).toBe("agent: Thanks for waiting. Goodbye!");
  });
});

describe("the definition's tools over the API", () => {
  it("422s at the field; the mask sent back keeps the sealed value (no new version); a mask for another origin is refused", async () => {
    const s = await setup("twilio");
    const base = definition("https://api.example.com/orders");
    const bad = async (tools: unknown[], loc: (string | number)[]) => {
      const res = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "t", workflow_definition: { ...base, tools } } });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail.map((d: any) => d.loc)).toContainEqual(["body", "workflow_definition", "tools", ...loc]);
      expect(res.text).not.toContain("sk-tool-secret");
    };
    const tool = base.tools[0];
    await bad([{ ...tool, url: "http://169.254.169.254/latest" }], [0, "url"]);
    await bad([{ ...tool, name: "end_call" }], [0, "name"]);
    await bad([tool, tool], [1, "name"]);
    await bad([{ ...tool, headers: { Host: "x" } }], [0, "headers", "Host"]);
    await bad([{ ...tool, timeout_ms: 60_000 }], [0, "timeout_ms"]);
    await bad([{ ...tool, headers: { Authorization: "****abcd" } }], [0, "headers", "Authorization"]);

    const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "t", workflow_definition: base } });
    expect(wf.status, wf.text).toBe(200);
    const shown = wf.json.workflow_definition;
    const same = await call("PUT", `/api/v1/workflow/${wf.json.id}`, { key: s.org.key, body: { workflow_definition: shown } });
    expect(same.status, same.text).toBe(200);
    expect(same.json.version_number).toBe(1);
    const moved = { ...shown, tools: [{ ...shown.tools[0], url: "https://elsewhere.example.com/x" }] };
    const refused = await call("PUT", `/api/v1/workflow/${wf.json.id}`, { key: s.org.key, body: { workflow_definition: moved } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.detail[0].loc).toEqual(["body", "workflow_definition", "tools", 0, "headers", "Authorization"]);
  });
});
