// node scripts/sandbox-check.mjs: the sandbox's carrier side end to end, as `npm run dev` runs it (the carrier
// simulator and edgedial as two local Workers, the simulator delivering its own callbacks), on a temporary storage.
// What the test pool cannot do (its simulator cannot reach the Worker): a cold and a warm transfer to the simulated
// person (who answers and hears the whisper), an inbound call placed by POST …/sandbox-call, and keys pressed by POST
// …/sandbox-keys on a live call; each must complete with the run recording it. Exits 1 on the first that does not.
// 1 to 3 minutes; offline (scripted engines, no Workers AI).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { unstable_startWorker } from "wrangler";
import { apiClient } from "./lib/api.mjs";
import { localBindings } from "./lib/local-bindings.ts";
import { CALLEE_CLIPS, clip, freePort, startSandboxSimulator } from "./lib/sandbox-sim.mjs";
import { createOrganization, wrangler } from "./lib/wrangler.mjs";

process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
const ROOT = new URL("../", import.meta.url).pathname;
const state = mkdtempSync(`${tmpdir()}/edgedial-sandbox-check-`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const failures = [];
const check = (what, ok, detail) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok ? "" : `: ${detail}`}`);
  if (!ok) failures.push(what);
};

wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { quiet: true });
const { key } = createOrganization("Sandbox check", { persistTo: state });
const sim = await startSandboxSimulator({ persist: `${state}/sim` });
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const plain = (o) => Object.fromEntries(Object.entries(o).map(([k, value]) => [k, { type: "plain_text", value }]));
const app = await unstable_startWorker({
  config: `${ROOT}wrangler.jsonc`,
  bindings: plain({
    ...localBindings("d1"),
    PUBLIC_BASE_URL: base,
    CARRIER_BASE_URLS: JSON.stringify({ sandbox: `${sim.origin}/twilio` }),
    VOICE_AGENT: "conversation",
    CALLING_RULES_DEFAULTS: "off",
  }),
  dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "error", remote: false },
});
await app.ready;

const api = apiClient(base, key);
const simCall = async (id) => (await fetch(`${sim.origin}/_sim/calls/${encodeURIComponent(id)}`)).json();
const final = (r) => ["completed", "failed", "busy", "no_answer", "canceled"].includes(r.status) && r.transcript?.length > 0;
async function waitRun(agentId, runId, ok, ms = 90_000) {
  for (const until = Date.now() + ms; ; await sleep(1000)) {
    const r = await api("GET", `/workflow/${agentId}/runs/${runId}`);
    if (ok(r) || Date.now() > until) return r;
  }
}
const said = (run) => run.transcript?.map((t) => `${t.role}: ${t.text}`).join(" | ");

try {
  // The callee's clips as recordings: the scripted speech-to-text hears them as their words.
  const clips = [];
  for (const l of CALLEE_CLIPS) {
    const res = await fetch(`${base}/api/v1/greeting-recordings?name=${encodeURIComponent(l.text)}`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "audio/wav" },
      body: clip(l.file),
    });
    clips.push({ text: l.text, recording_id: (await res.json()).recording_id });
  }
  const engines = (script) => ({ voice_agent: { llm: { provider: "scripted", script }, stt: { provider: "scripted", clips }, tts: { provider: "scripted" } } });
  const config = await api("POST", "/organizations/telephony-configs", {
    name: "Sandbox",
    is_default_outbound: true,
    config: { provider: "sandbox", answer_after_ms: 500 },
  });
  await api("POST", `/organizations/telephony-configs/${config.id}/phone-numbers`, { address: "+14155550100", is_default_caller_id: true });
  const seats = JSON.parse(readFileSync(`${ROOT}test/fixtures/seats-agent.json`, "utf8"));

  for (const mode of ["cold", "warm"]) {
    const definition = {
      nodes: [
        { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} whether they want to talk to a person.", greeting: "Hi {{first_name}}!" } },
        {
          id: "xfer",
          type: "transferCall",
          data: { destination: "+14155550199", mode, message: "Putting you through.", whisper_prompt: "Summarize for the rep.", timeout_seconds: 20 },
        },
        { id: "bye", type: "endCall", data: { prompt: "Apologize that nobody is free and say goodbye." } },
      ],
      edges: [
        { id: "e1", source: "start", target: "xfer", data: { label: "transfer", condition: "They want a person" } },
        { id: "e2", source: "xfer", target: "bye", data: { label: "nobody", condition: "Nobody answered", on: "no_answer" } },
      ],
    };
    const script = [
      { user: "tell me more", prompt: "whether they want", call: { name: "transfer" } },
      { prompt: "Summarize for the rep", say: "Ada wants to talk to a person." },
      { prompt: "Apologize", say: "Sorry, nobody is free. Goodbye!", call: { name: "end_call", arguments: {} } },
    ];
    const agent = await api("POST", "/workflow/create", {
      name: `Transfer ${mode}`,
      workflow_definition: definition,
      workflow_configurations: engines(script),
    });
    const started = await api("POST", `/public/agent/${agent.workflow_uuid}`, { phone_number: "+14155550123", initial_context: { first_name: "Ada" } });
    const run = await waitRun(agent.id, started.workflow_run_id, (r) => final(r) && r.transfer?.outcome);
    const caller = await simCall(run.provider_call_id);
    const person = caller.extra?.transfer?.person_call ? await simCall(caller.extra.transfer.person_call) : null;
    check(
      `${mode} transfer: the run ends transferred, connected`,
      run.end_reason === "transferred" && run.transfer?.outcome === "connected" && run.transfer?.mode === mode,
      JSON.stringify({ status: run.status, end: run.end_reason, transfer: run.transfer, said: said(run) }),
    );
    check(
      `${mode} transfer: the simulator put the caller with the person`,
      caller.extra?.transfer?.to === "+14155550199",
      JSON.stringify(caller.extra?.transfer),
    );
    if (mode === "warm")
      check(
        "warm transfer: the person heard the whisper and was bridged",
        person?.extra?.whisper?.status === 200 && person.extra.whisper.bytes > 44 && person.extra.bridgedWith === caller.id,
        JSON.stringify(person?.extra),
      );
  }

  const inboundAgent = await api("POST", "/workflow/create", {
    name: "Receptionist",
    workflow_definition: seats.definition,
    template_context_variables: { first_name: "there" },
    workflow_configurations: engines(seats.script),
  });
  const num = await api("POST", `/organizations/telephony-configs/${config.id}/phone-numbers`, {
    address: "+14155550111",
    inbound_workflow_id: inboundAgent.id,
  });
  const placed = await api("POST", `/organizations/telephony-configs/${config.id}/phone-numbers/${num.id}/sandbox-call`, { from: "+14155550177" });
  check("inbound: the simulator's call was answered and became a run", placed.answered && placed.run_id != null, JSON.stringify(placed));
  if (placed.run_id) {
    const run = await waitRun(inboundAgent.id, placed.run_id, (r) => r.status === "completed" && r.transcript?.length > 1);
    check(
      "inbound: the run completed, direction inbound, the caller talked",
      run.status === "completed" && run.direction === "inbound" && run.phone_number === "+14155550177" && run.transcript.some((t) => t.role === "callee"),
      JSON.stringify({ status: run.status, direction: run.direction, said: said(run) }),
    );
  }

  const keysAgent = await api("POST", "/workflow/create", {
    name: "Keys",
    workflow_definition: seats.definition,
    workflow_configurations: engines(seats.script),
  });
  const started = await api("POST", `/public/agent/${keysAgent.workflow_uuid}`, { phone_number: "+14155550123", initial_context: { first_name: "Ada" } });
  await waitRun(keysAgent.id, started.workflow_run_id, (r) => r.status === "in_progress", 30_000);
  // The agent's greeting has begun: a press now barges in like speech.
  await sleep(1500);
  const pressed = await api("POST", `/workflow/${keysAgent.id}/runs/${started.workflow_run_id}/sandbox-keys`, { digits: "1#" }).catch((e) => e);
  check("keys: the simulated callee pressed them on the live call", !(pressed instanceof Error), String(pressed?.message));
  const run = await waitRun(keysAgent.id, started.workflow_run_id, (r) => final(r));
  check(
    "keys: the run's transcript has the press",
    run.transcript?.some((t) => t.role === "callee" && /pressed 1 #/.test(t.text)),
    said(run),
  );
} catch (err) {
  check("the check ran to its end", false, err.message);
} finally {
  await app.dispose().catch(() => {});
  await sim.worker.dispose().catch(() => {});
  rmSync(state, { recursive: true, force: true });
}
console.log(failures.length ? `${failures.length} failed` : "the sandbox transfers, takes inbound calls and presses keys");
process.exit(failures.length ? 1 : 0);
