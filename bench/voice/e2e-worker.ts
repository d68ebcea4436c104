// bench/voice --e2e: the edgedial Worker with its CallSession on stand-in engines (BenchAi at the AI binding), plus
// two bench-only routes: POST /bench/seed?calls=N stores an organization, an agent (Flux for speech-to-text) and N
// runs in D1; /bench/call/{runId} upgrades to that run's session with the conversation agent on Twilio's media
// protocol, as the stream route does once a carrier's token checked out. Everything between the socket and the
// engines (session, media loop, codecs, Flux's client, the agent, the reply runner, the pacer) is the product's own.
import { CallSession as ProductSession } from "../../src/calls/call-session";
import { SESSION_HEADER, type SessionStart } from "../../src/calls/session/call-session";
import { eq } from "drizzle-orm";
import { measureHeardGaps } from "../../src/calls/after-call/heard-latency";
import { LATENCY_FIGURES } from "../../src/calls/runs/latency";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { readDetails } from "../../src/calls/session/details-object";
import { callSessionStub } from "../../src/calls/session/stub";
import worker from "../../src/index";
import { BenchAi, DEEPGRAM_BENCH_HOST, FLUX, pathLateness, stubLateness } from "./e2e-ai";

export * from "../../src/index";

// BENCH_STT=deepgram-flux or smart-turn: the agent's Deepgram key reaches the bench's Deepgram here, in the isolate
// (the product's own client, DeepgramSpeechToText, opens it as it would api.deepgram.com). Its stub waits are not
// tracked per reply (the socket is not the session's BenchAi), so those runs report no path lateness.
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const req = new Request(input, init);
  const url = new URL(req.url);
  if (url.hostname === DEEPGRAM_BENCH_HOST && req.headers.get("Upgrade") === "websocket") return new BenchAi("deepgram").deepgram(url, req.headers);
  return realFetch(input, init);
}) as typeof fetch;

export class CallSession extends ProductSession {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, { ...env, VOICE_AGENT: "conversation", AI: new BenchAi(ctx.id.toString()) } as unknown as Env);
  }
}

const DEFINITION = {
  nodes: [{ id: "start", type: "startCall", data: { prompt: "Help {{first_name}} with their question.", greeting: "Hi {{first_name}}!" } }],
  edges: [],
};
/** The agent's speech-to-text per BENCH_STT (e2e.mjs passes it): how the end of the caller's turn is decided. */
const DEEPGRAM = { provider: "deepgram", api_key: "bench", base_url: `https://${DEEPGRAM_BENCH_HOST}` };
const STT: Record<string, unknown> = {
  // Flux on Workers AI: its events at the AI binding.
  "workers-ai-flux": { provider: "workers-ai", model: FLUX },
  // Flux on Deepgram's own API with the agent's key (v2 listen).
  "deepgram-flux": DEEPGRAM,
  // Deepgram's Nova with the agent's key (v1 live, interim results): smart-turn at the binding judges each pause.
  "smart-turn": { ...DEEPGRAM, model: "nova-3" },
};

async function seed(db: D1Database, calls: number, stt = "workers-ai-flux"): Promise<{ orgId: number; runIds: number[] }> {
  if (!STT[stt]) throw new Error(`bench: no such BENCH_STT: ${stt}`);
  const CONFIG = { voice_agent: { stt: STT[stt] } };
  const org = await db.prepare("INSERT INTO organizations (name) VALUES ('bench') RETURNING id").first<{ id: number }>();
  const orgId = org!.id;
  const uuid = crypto.randomUUID();
  const wf = await db
    .prepare("INSERT INTO workflows (org_id, uuid, name, workflow_configurations) VALUES (?, ?, 'bench', ?) RETURNING id")
    .bind(orgId, uuid, JSON.stringify(CONFIG))
    .first<{ id: number }>();
  const def = await db
    .prepare("INSERT INTO workflow_definitions (workflow_id, version_number, definition) VALUES (?, 1, ?) RETURNING id")
    .bind(wf!.id, JSON.stringify(DEFINITION))
    .first<{ id: number }>();
  const insert = db.prepare(
    "INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, definition_id, phone_number, status) VALUES (?, ?, ?, ?, ?, '+15550100', 'in_progress') RETURNING id",
  );
  const rows = await db.batch<{ id: number }>(
    Array.from({ length: calls }, () => insert.bind(orgId, `bench-${orgId}-${crypto.randomUUID()}`, wf!.id, uuid, def!.id)),
  );
  return { orgId, runIds: rows.map((r) => r.results[0].id) };
}

/**
 * Every agent reply's stored timing (docs/turn-timing.md) over the organization's runs: where the time went. `heard`
 * (BENCH_HEARD=1, the calls recorded): each run's recording measured first, as the after-call work does, and each
 * run's replies' heard_gap_ms returned in order, to set beside the bench's own figure.
 */
async function timings(env: Env, orgId: number, heard = false) {
  if (heard) for (const row of await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.orgId, orgId)).all()) await measureHeardGaps(env, row);
  // The transcripts are in the runs' details objects (docs/run-details.md).
  const { results } = await env.DB.prepare("SELECT id, details_key FROM workflow_runs WHERE org_id = ? AND details_key IS NOT NULL")
    .bind(orgId)
    .all<{ id: number; details_key: string }>();
  const transcripts = await Promise.all(results.map(async (r) => (await readDetails(env.UPLOADS, r.details_key))?.transcript ?? []));
  const replies = transcripts.flatMap((turns) => turns.flatMap((t) => (t.role === "agent" && t.timing ? [t.timing as Record<string, number>] : [])));
  // How late the stubs' waits fired since the last read (the isolate busy with other calls).
  // Per run, each reply's stub lateness on its path (the session's id is the run's, as callSessionStub names it).
  const pathLateMs = Object.fromEntries(results.map((r) => [r.id, pathLateness.get(env.CALL_SESSION.idFromName(`run:${r.id}`).toString()) ?? []]));
  // The stages in the order a reply reaches them (what was cut by a barge-in is not a stage; the gap measured on a
  // recording after the call is not either, and these calls are not recorded).
  const stages = LATENCY_FIGURES.filter((f) => f !== "cut_ms" && f !== "heard_gap_ms");
  const heardGaps = Object.fromEntries(
    results.map((r, i) => [r.id, transcripts[i].flatMap((t) => (t.role === "agent" && t.timing ? [t.timing.heard_gap_ms ?? null] : []))]),
  );
  return { stages, replies, stubLateMs: stubLateness.splice(0), pathLateMs, heardGaps };
}

/**
 * The fault: the isolate kept busy (every session in it stalls, as in a long garbage collection or a slow request).
 * A loop of work, not a wait on the clock: a Worker's clock does not advance while it computes.
 */
function stall(loops: number): number {
  let x = 0;
  for (let i = 0; i < loops; i++) x = (x + Math.sqrt(i)) % 1e9;
  return x;
}

// The production Worker's handlers (the queue consumer that runs each ended call's after-call work, its cron), with
// the bench's routes in front of its fetch: without the queue handler every call's after-call message failed.
export default {
  ...worker,
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/bench/seed" && request.method === "POST")
      return Response.json(await seed(env.DB, Number(url.searchParams.get("calls") ?? 1), url.searchParams.get("stt") ?? undefined));
    if (url.pathname === "/bench/timings") return Response.json(await timings(env, Number(url.searchParams.get("org")), url.searchParams.get("heard") === "1"));
    if (url.pathname === "/bench/stall") return Response.json({ spun: stall(Number(url.searchParams.get("loops") ?? 0)) });
    const m = /^\/bench\/call\/(\d+)$/.exec(url.pathname);
    if (!m) return worker.fetch(request, env, ctx);
    const runId = Number(m[1]);
    const stub = callSessionStub(env, runId);
    await stub.prepare({ agent: "conversation", silenceSeconds: 3600 });
    const start: SessionStart = {
      runId,
      orgId: Number(url.searchParams.get("org")),
      // The carrier whose media stream the client speaks (BENCH_CARRIER).
      provider: (url.searchParams.get("provider") ?? "twilio") as SessionStart["provider"],
      greeting: null,
      variables: { first_name: "Ada" },
      // BENCH_HEARD=1: recorded, as a product call is by default, so the gap heard can be measured on it.
      record: url.searchParams.get("record") === "1",
    };
    const headers = new Headers(request.headers);
    headers.set(SESSION_HEADER, JSON.stringify(start));
    return stub.fetch(new Request(request.url, { headers }));
  },
} satisfies ExportedHandler<Env>;
