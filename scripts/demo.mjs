// npm run demo: the whole product on one machine. Starts the carrier simulator and edgedial locally (on the storage
// `npm run dev` uses, so its dashboard shows the demo's campaign afterwards; or `--keep DIR`), creates an organization, an agent and a Twilio-style configuration on the simulator, uploads a sample
// CSV, starts a campaign, plays the carrier's side of every call (answered, busy, no answer, ...) and prints live
// progress until the campaign completes. Answered calls are conversations over live audio: the simulated callee says
// committed espeak-ng clips, the agent runs its graph on the deterministic engines (a scripted model, clips recognized
// by their sound, its replies spoken by eSpeak NG: scripts/lib/local-speech.mjs), and one call's transcript, gathered
// values and disposition are printed.
// One contact (Grace) goes further: the agent asks the customer's system (an HTTP tool: a small "check availability"
// server the demo runs on 127.0.0.1) and then hands her to a sales rep (a cold transfer); that call is printed too.
// Before the campaign, the agent's starter test suite (scripts/lib/demo-suite.mjs) runs and its verdicts are printed.
//
// A run's campaign is noted in the storage while it runs (demo-campaign.json): a run killed midway leaves it there, and
// the next run on that storage cancels that campaign first thing, so it never dials again. Its local servers (workerd
// processes) outlive a killed run, holding the storage and dialing: they are noted there too (demo-servers.json), and
// the next run stops them before it opens the storage (scripts/lib/demo-leftovers.mjs). Ctrl-C while the campaign
// runs cancels it before the demo exits.
//
// It ends by printing the dashboard's URL, the demo organization's key and the first call's page, and leaves both
// servers up (the recording links are signed URLs on the service's origin) until Ctrl-C.
//
//   npm run demo                # 24 contacts, on npm run dev's storage (.wrangler/state)
//   npm run demo -- 60          # another size
//   npm run demo -- --keep DIR  # on a storage of its own in DIR, kept
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_startWorker } from "wrangler";
import { createOrganization, wrangler as runWrangler } from "./lib/wrangler.mjs";
import { localBindings } from "./lib/local-bindings.ts";
import { devVars } from "./lib/dev-vars.mjs";
import { DEFAULT_PORT } from "./lib/dev-args.ts";
import { runDemoSuite } from "./lib/demo-suite.mjs";
import { forgetServers, noteServers, stopLeftoverServers } from "./lib/demo-leftovers.mjs";
import { startLocalSpeech } from "./lib/local-speech.mjs";

// Offline, each local Worker's fetch of a sample `Request.cf` object would print a getaddrinfo stack trace; the
// service reads no `request.cf`, so wrangler's placeholder is all it needs (npm run dev does the same).
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const argv = process.argv.slice(2);
const keepAt = argv.indexOf("--keep");
const keep = keepAt >= 0 ? argv[keepAt + 1] : undefined;
if (keepAt >= 0 && (!keep || keep.startsWith("-"))) {
  console.error("npm run demo: --keep needs a directory (npm run demo -- --keep ./demo-state)");
  process.exit(2);
}
const CONTACTS = Number(argv.find((a, i) => /^\d+$/.test(a) && i !== keepAt + 1) ?? 24);
// npm run dev's storage (wrangler's default for this project), or the directory asked for.
const state = keep ? resolve(keep) : `${ROOT}.wrangler/state`;
mkdirSync(state, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const wrangler = (args) => runWrangler(args, { quiet: true });

function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Whether edgedial answers at `url`: `npm run dev` on the same storage would share its files with the demo's. */
async function edgedialAt(url) {
  try {
    const res = await fetch(`${url}/api/v1/health`, { signal: AbortSignal.timeout(1500) });
    return res.status === 200 || res.status === 503;
  } catch {
    return false;
  }
}

function portFree(port) {
  return new Promise((resolve) => {
    const srv = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * The local secrets of .dev.vars in place of fresh ones: what the demo seals and signs, npm run dev opens later. On a
 * storage of its own (--keep), a .dev.vars of its own there: nothing is left in the checkout for other runs to read.
 */
function demoBindings() {
  const vars = devVars(keep ? `${state}/.dev.vars` : undefined);
  const bindings = localBindings("d1");
  for (const name of Object.keys(bindings)) if (name !== "VOICE_AGENT" && name !== "LOCAL_DEV" && vars[name]) bindings[name] = vars[name];
  return bindings;
}

async function http(method, url, { key, body, headers = {} } = {}) {
  const res = await fetch(url, {
    method,
    headers: {
      ...(key ? { "X-API-Key": key } : {}),
      ...(body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array) ? { "Content-Type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  if (!res.ok) throw new Error(`${method} ${new URL(url).pathname} → ${res.status} ${text.slice(0, 400)}`);
  return json;
}

/** The campaign a run has going, noted in its storage until it completes (a killed run leaves it for the next one). */
const RUNNING = `${state}/demo-campaign.json`;

/** Cancels the campaign a killed run left going (its organization's key is in the note), before it dials again. */
async function cancelLeftover(base) {
  if (!existsSync(RUNNING)) return;
  const left = JSON.parse(readFileSync(RUNNING, "utf8"));
  const res = await fetch(`${base}/api/v1/campaign/${left.campaign_id}/cancel`, { method: "POST", headers: { "X-API-Key": left.key } }).catch((e) => e);
  // 409: it was already final (it completed, or was cancelled) after all.
  const status = res instanceof Error ? res.message : res.status;
  console.log(
    `  a previous demo run was stopped midway: its campaign ${left.campaign_id} ${status === 200 || status === 409 ? "is cancelled" : `could not be cancelled (${status})`}`,
  );
  rmSync(RUNNING, { force: true });
}

const step = (msg) => console.log(`\x1b[1m▸ ${msg}\x1b[0m`);
const workers = [];

/** The customer's system the agent's tool calls: answers whether the seats asked for are free (and records the asks). */
function availabilityServer() {
  const asked = [];
  const server = createHttpServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      asked.push({ method: req.method, path: req.url, body });
      const seats = Number(JSON.parse(body || "{}").seats ?? 0);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ available: seats <= 40, seats_free: 40, earliest_start: "next Monday" }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, asked, url: `http://127.0.0.1:${server.address().port}/availability` })),
  );
}

/**
 * The seats agent, plus what the agent does on a live call: an HTTP tool offered at the pitch node, and a transferCall
 * node (cold, to a sales rep) the pitch can lead to. The scripted model takes that way for Grace only: it checks the
 * availability of her twelve seats, tells her, and hands her over; everyone else gets the seats conversation as is.
 */
function demoAgent(seats, toolUrl) {
  const def = structuredClone(seats.definition);
  def.nodes.find((n) => n.id === "pitch").data.prompt = "Ask {{first_name}} how many seats they need.";
  def.nodes.push({
    id: "sales",
    type: "transferCall",
    data: { destination: "+14155550188", mode: "cold", message: "I'm putting you through to our sales team now.", timeout_seconds: 25 },
  });
  def.edges.push(
    { id: "e3", source: "pitch", target: "sales", data: { label: "sales_rep", condition: "They want to book the seats with a sales rep" } },
    { id: "e4", source: "sales", target: "bye", data: { label: "nobody", condition: "Nobody answered", on: "no_answer" } },
  );
  def.tools = [
    {
      name: "check_availability",
      description: "Whether the number of seats the caller needs is available, and from when",
      parameters: { type: "object", properties: { seats: { type: "number" } }, required: ["seats"] },
      url: toolUrl,
      method: "POST",
      timeout_ms: 3000,
      nodes: ["pitch"],
    },
  ];
  const script = [
    { user: "twelve seats", prompt: "Ask Grace how many", call: { name: "check_availability", arguments: { seats: 12 } } },
    {
      user: "twelve seats",
      prompt: "Ask Grace how many",
      say: "Good news: twelve seats are free from next Monday.",
      call: { name: "sales_rep", arguments: { seats: 12 } },
    },
    ...seats.script,
  ];
  return { definition: def, script };
}

const tool = await availabilityServer();
try {
  const devUrl = `http://127.0.0.1:${DEFAULT_PORT}`;
  if (!keep && (await edgedialAt(devUrl))) {
    console.error(
      `npm run demo: edgedial already answers on ${devUrl} (npm run dev?). The demo runs on npm run dev's storage: stop it ` +
        "(Ctrl-C) and run the demo again, or give the demo a storage of its own: npm run demo -- --keep ./demo-state",
    );
    process.exit(1);
  }
  step(`local storage (${keep ? state : "npm run dev's, .wrangler/state"}), migrations and a Demo organization`);
  // A killed run's servers still hold this storage (and dial its campaign): stopped before anything opens it.
  const leftover = stopLeftoverServers(`${state}/demo-servers.json`);
  if (leftover) console.log(`  a previous demo run was killed: its ${leftover} local server processes are stopped`);
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const { key } = createOrganization("Demo", { persistTo: state });

  step("the carrier simulator and edgedial");
  const sim = await unstable_startWorker({
    config: `${ROOT}src/dev/simulator/wrangler.toml`,
    dev: { inspector: false, server: { hostname: "127.0.0.1", port: await freePort() }, persist: `${state}/demo-sim`, watch: false, logLevel: "warn" },
  });
  workers.push(sim);
  await sim.ready;
  const simUrl = String(await sim.url).replace(/\/$/, "");
  // npm run dev's port where it is free, so the dashboard and the recording links keep their address afterwards.
  const port = !keep && (await portFree(DEFAULT_PORT)) ? DEFAULT_PORT : await freePort();
  const base = `http://127.0.0.1:${port}`;
  const plain = (o) => Object.fromEntries(Object.entries(o).map(([k, value]) => [k, { type: "plain_text", value }]));
  // The agent's voice: eSpeak NG in this process (scripts/lib/local-speech.mjs), asked by the Worker over HTTP.
  const speech = await startLocalSpeech();
  workers.push({ dispose: () => speech.close() });
  const app = await unstable_startWorker({
    config: `${ROOT}wrangler.jsonc`,
    bindings: plain({
      ...demoBindings(),
      PUBLIC_BASE_URL: base,
      CARRIER_BASE_URLS: JSON.stringify({ twilio: `${simUrl}/twilio` }),
      // Answered calls carry live audio: the callee and the agent converse, both sides are recorded.
      VOICE_AGENT: "conversation",
      // The recipients' local hours would hold the demo's Los Angeles numbers at night: the demo runs at any hour.
      CALLING_RULES_DEFAULTS: "off",
      LOCAL_SPEECH_URL: speech.url,
    }),
    // remote: false: the demo's agent runs on the scripted engines; Workers AI (remote only) is not asked for.
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  });
  workers.push(app);
  await app.ready;
  // The servers so far; the Worker's own process starts with its first request, so they are noted again below.
  noteServers(`${state}/demo-servers.json`);
  await cancelLeftover(base);
  console.log(`  edgedial  ${base}   (API key ${key})\n  simulator ${simUrl}`);
  const api = (method, path, body) => http(method, `${base}/api/v1${path}`, { key, body });

  step("the callee's words (espeak-ng clips) for the simulator, and as recordings the agent's engine recognizes");
  const clip = (name) => readFileSync(`${ROOT}test/fixtures/audio/${name}`);
  const pcmOf = (wav) => {
    // The samples of the WAV's data chunk (16-bit mono, 8 kHz).
    for (let at = 12; at + 8 <= wav.length; at += 8 + wav.readUInt32LE(at + 4)) {
      if (wav.toString("latin1", at, at + 4) === "data") return wav.subarray(at + 8, at + 8 + wav.readUInt32LE(at + 4));
    }
    throw new Error("no data chunk");
  };
  const lines = [
    { file: "callee-sure-8k.wav", text: "Sure, tell me more." },
    { file: "callee-seats-8k.wav", text: "We need twelve seats." },
  ];
  const account = await http("POST", `${simUrl}/_sim/accounts`, {
    body: { provider: "twilio", callee_lines: lines.map((l) => pcmOf(clip(l.file)).toString("base64")) },
  });
  const recordings = [];
  for (const l of lines) {
    const rec = await http("POST", `${base}/api/v1/greeting-recordings?name=${encodeURIComponent(l.text)}`, {
      key,
      body: clip(l.file),
      headers: { "Content-Type": "audio/wav" },
    });
    recordings.push({ text: l.text, recording_id: rec.recording_id });
  }

  // The seats agent (three nodes, an extraction, a disposition) and its scripted model, shared with the tests.
  const seats = JSON.parse(readFileSync(`${ROOT}test/fixtures/seats-agent.json`, "utf8"));
  const demo = demoAgent(seats, tool.url);
  step("an agent (the seats graph, an HTTP tool, a transfer to sales; a scripted model), a configuration on the simulator, a caller ID");
  // The tool's server is on 127.0.0.1: the organization's policy must allow private addresses (refused by default).
  await api("PUT", "/organizations/calling-policy", { allow_private_pbx: true });
  const agent = await api("POST", "/workflow/create", {
    name: "Seats offer",
    workflow_definition: demo.definition,
    call_disposition_codes: { disposition_codes: seats.disposition_codes },
    workflow_configurations: {
      voice_agent: {
        llm: { provider: "scripted", script: demo.script },
        stt: { provider: "scripted", clips: recordings },
        tts: { provider: "scripted" },
      },
    },
  });
  const config = await api("POST", "/organizations/telephony-configs", {
    name: "Simulated Twilio",
    is_default_outbound: true,
    config: { provider: "twilio", ...account.credentials },
  });
  await api("POST", `/organizations/telephony-configs/${config.id}/phone-numbers`, { address: "+14155550100", is_default_caller_id: true });

  // Before it calls anyone: the agent's starter suite, one test call per scenario (docs/agent-tests.md).
  step("the agent's test suite: 2 scenarios, a test call each over Twilio's and Vonage's media protocols (nothing dialed)");
  const testRun = await runDemoSuite(api, agent.id);

  step(`a CSV of ${CONTACTS} contacts, uploaded through a presigned URL`);
  // One Grace (the call that uses the tool and is transferred), answered whatever the draw below.
  const names = ["Ada", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"];
  const nameOf = (i) => (i === 1 ? "Grace" : names[i % names.length]);
  const grace = "+14155552001";
  const csv = ["phone_number,first_name", ...Array.from({ length: CONTACTS }, (_, i) => `+1415555${String(2000 + i)},${nameOf(i)}`)].join("\n") + "\n";
  const presign = await api("POST", "/s3/presigned-upload-url", { file_name: "demo.csv", file_size: Buffer.byteLength(csv), content_type: "text/csv" });
  await http("PUT", presign.upload_url, { body: csv, headers: { "Content-Type": "text/csv" } });

  step("a campaign: 4 calls at a time, 2 per second, busy and no-answer retried after 30 s");
  const campaign = await api("POST", "/campaign/create", {
    name: "Demo campaign",
    workflow_id: agent.id,
    source_url: presign.file_key,
    max_concurrency: 4,
    rate_limit: 2,
    retry_config: { enabled: true, max_retries: 1, retry_delay_seconds: 30, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false },
  });
  writeFileSync(RUNNING, JSON.stringify({ campaign_id: campaign.id, key }), { mode: 0o600 });
  noteServers(`${state}/demo-servers.json`);
  await api("POST", `/campaign/${campaign.id}/start`);
  // Ctrl-C (or a kill) while it runs: the campaign is cancelled before the demo goes, not left to dial later.
  let stopping = false;
  const cancelAndExit = async () => {
    if (stopping) return;
    stopping = true;
    console.log("\n  stopped: cancelling the demo's campaign");
    await api("POST", `/campaign/${campaign.id}/cancel`).catch(() => undefined);
    rmSync(RUNNING, { force: true });
    for (const w of workers.reverse()) await w.dispose().catch(() => undefined);
    forgetServers(`${state}/demo-servers.json`);
    process.exit(130);
  };
  process.on("SIGINT", cancelAndExit);
  process.on("SIGTERM", cancelAndExit);

  step("live progress (the simulator answers each call after a moment, with a random outcome)");
  const played = new Set();
  const firstSeen = new Map();
  const outcomes = ["answered", "answered", "answered", "answered", "answered", "busy", "no_answer", "voicemail", "declined"];
  let last = "";
  const started = Date.now();
  for (;;) {
    // The label counts seconds since the start, whatever a turn of this loop takes on a busy machine.
    const t = Math.round((Date.now() - started) / 1000);
    // Stopping: the loop waits here while the campaign is cancelled and the servers stop (cancelAndExit exits).
    if (stopping) await new Promise(() => {});
    const calls = await http("GET", `${simUrl}/_sim/accounts/${account.id}/calls`);
    for (const call of calls) {
      if (played.has(call.id) || call.state === "ended") continue;
      if (!firstSeen.has(call.id)) firstSeen.set(call.id, Date.now());
      if (Date.now() - firstSeen.get(call.id) < 1500 + Math.random() * 2500) continue;
      played.add(call.id);
      const outcome = call.to === grace ? "answered" : outcomes[Math.floor(Math.random() * outcomes.length)];
      await http("POST", `${simUrl}/_sim/calls/${encodeURIComponent(call.id)}/outcome`, { body: { outcome, deliver: true } });
      // The simulator scripts an answered call to its end up front (its completed status waits for the conversation),
      // so it reads the call as over while the callee talks; Twilio would refuse a transfer of a call not in progress.
      // Grace's call is picked up again for the length of her conversation, as a live call is.
      if (call.to === grace) await http("POST", `${simUrl}/_sim/calls/${encodeURIComponent(call.id)}/pick-up`, { body: {} });
    }
    const p = await api("GET", `/campaign/${campaign.id}/progress`);
    const line =
      `  [${String(t).padStart(3)}s] ${p.state.padEnd(9)} ${"█".repeat(Math.round(p.progress_percentage / 5)).padEnd(20, "·")} ` +
      `${p.processed}/${p.total} dialed · ${p.completed} reached · ${p.answered_no_conversation ?? 0} answered, no conversation · ${p.failed} not reached · ${p.in_progress} in progress · ` +
      // Dialed = reached + not reached + in progress + waiting to retry; with pending, the total.
      `${p.retry_waiting} waiting to retry · ${p.pending} pending · ${p.failed_calls} unsuccessful calls (busy, no answer, voicemail, ...)`;
    if (line.slice(8) !== last) console.log(line);
    last = line.slice(8);
    if (p.state === "completed") break;
    if (t > 600) throw new Error("the campaign did not complete within 10 minutes");
    await sleep(1000);
  }

  rmSync(RUNNING, { force: true });
  process.off("SIGINT", cancelAndExit);
  process.off("SIGTERM", cancelAndExit);
  const logs = await api("GET", `/campaign/${campaign.id}/logs?limit=8`);
  const runs = await api("GET", `/campaign/${campaign.id}/runs?limit=100`);
  step("done");
  console.log(`  ${runs.items.length} calls placed; newest log entries:`);
  for (const l of logs.items.reverse()) console.log(`    ${l.ts}  ${l.level.padEnd(7)} ${l.event.padEnd(22)} ${l.message}`);
  const done = await api("GET", `/campaign/${campaign.id}/progress`);
  console.log(`  dispositions the agent chose: ${JSON.stringify(done.dispositions)}`);
  const transcript = (run) => {
    for (const t of run.transcript) {
      console.log(`    ${(t.start_ms / 1000).toFixed(1).padStart(5)} s  ${t.role.padEnd(6)} ${t.text}${t.interrupted ? "  (interrupted)" : ""}`);
    }
  };
  const details = [];
  for (const r of runs.items) details.push(await api("GET", `/workflow/${agent.id}/runs/${r.workflow_run_id ?? r.id}`).catch(() => null));
  // Grace's call: the tool call (the customer's system saw the model's arguments) and the hand-over to sales.
  const graceRun = details.find((run) => run?.phone_number === grace && run.transcript?.length);
  if (graceRun) {
    console.log(`  ${graceRun.name} (${graceRun.phone_number}), ${graceRun.status}, ended ${graceRun.end_reason}:`);
    transcript(graceRun);
    for (const c of graceRun.tool_calls ?? [])
      console.log(`    tool ${c.name}(${JSON.stringify(c.arguments)}): ${c.status}, HTTP ${c.http_status}, ${c.duration_ms} ms`);
    if (graceRun.transfer) console.log(`    transfer: ${graceRun.transfer.mode} to ${graceRun.transfer.destination}, ${graceRun.transfer.outcome}`);
    console.log(`    the availability server was asked: ${tool.asked.map((a) => `${a.method} ${a.path} ${a.body}`).join("; ")}`);
  }
  // One other answered call: its conversation, what the agent gathered, and its recording (length, how loud each side was).
  let shown = null;
  for (const run of details) {
    if (!run?.recording_url || !run.transcript?.length || run.phone_number === grace) continue;
    console.log(`  ${run.name} (${run.phone_number}), ${run.status}:`);
    transcript(run);
    console.log(`    gathered ${JSON.stringify(run.gathered_context)}, disposition ${run.disposition}, usage ${JSON.stringify(run.usage)}`);
    const wav = new Uint8Array(await (await fetch(run.recording_url)).arrayBuffer());
    const view = new DataView(wav.buffer);
    const rate = view.getUint32(24, true);
    const frames = (wav.length - 44) / 4;
    const level = (ch) => {
      let sum = 0;
      for (let i = 0; i < frames; i++) sum += view.getInt16(44 + i * 4 + ch * 2, true) ** 2;
      return Math.round(Math.sqrt(sum / frames));
    };
    console.log(
      `  recording of ${run.name}: ${(frames / rate).toFixed(1)} s, two channels (callee RMS ${level(0)}, agent RMS ${level(1)})\n    ${run.recording_url}`,
    );
    shown = run;
    break;
  }

  // What is kept, where to look at it, and how to talk to the agent; the servers stay up for the links to work.
  if (!keep) writeFileSync(`${ROOT}.demo-api-key`, `${key}\n`, { mode: 0o600 });
  const firstCall = shown ?? details.find((run) => run?.transcript?.length) ?? details.find(Boolean);
  const dashboard = `${base}/dashboard/`;
  step("kept: the campaign, its calls, transcripts and recordings");
  console.log(`  dashboard      ${dashboard}   (sign in with the Demo organization's key below)
  API key        ${key}${keep ? "" : "   (also in .demo-api-key)"}
  the campaign   ${dashboard}#/campaigns/${campaign.id}
  the test run   ${dashboard}#/agents/${agent.id}/tests/runs/${testRun.id}${firstCall ? `\n  a call's page  ${dashboard}#/runs/${agent.id}/${firstCall.id}` : ""}
  storage        ${keep ? state : ".wrangler/state (npm run dev's: after Ctrl-C, npm run dev shows all of it on the same address)"}

  Talk to this agent: open ${dashboard}#/agents/${agent.id} and press "Talk to this agent" (your microphone, in the
  browser; docs/web-calls.md). The servers stay up, and the recording links work, until Ctrl-C.`);
  // npm passes Ctrl-C on as well as the terminal: a second signal within a second is the same one; a later one
  // (the servers slow to stop) ends the demo at once.
  await new Promise((done) => {
    let first = 0;
    const stop = () => {
      if (first && Date.now() - first > 1000) process.exit(130);
      first ||= Date.now();
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  console.log("\n  stopping the demo's servers; its data stays");
} finally {
  tool.server.close();
  for (const w of workers.reverse()) await w.dispose().catch(() => undefined);
  forgetServers(`${state}/demo-servers.json`);
}
