// A crash in the middle of a call (issue 28): the Worker runs as its own process (`wrangler dev`, persistent local
// storage), places a call through the real Asterisk of ../shared/tools/peers to a sipp UAS (it answers and stays on
// the line), and while its agent is talking kills the process group (SIGKILL) and starts it again on the same port
// and storage. Within 15 s of the restarted Worker answering, the call must either have resumed (the far end hears
// the agent again: Asterisk records what the call's channel is sent) or have been hung up by edgedial with its run
// final and `media_lost`. Either passes; the test prints which happened and how long each step took.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from "vitest";
import { localBindings } from "../../../scripts/lib/local-bindings.ts";
// @ts-expect-error: a plain JavaScript helper of the local scripts (no type declarations)
import { createOrganization, wrangler } from "../../../scripts/lib/wrangler.mjs";
import {
  agentFrames,
  ari,
  ARI,
  ARI_PASSWORD,
  ARI_USER,
  AriApp,
  createdAt,
  firstVoice,
  freePort,
  sleep,
  snapshotSources,
  until,
  WorkerProcess,
} from "./restart-support";

const FINAL = new Set(["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"]);
/** How long after the restarted Worker answers the call must have resumed or ended (the issue's bound). */
const WITHIN_MS = 15_000;
/** The agent's greeting: about 18 s of the scripted voice (60 ms a character), still playing when the Worker dies. */
const GREETING = "Hello, this is a long message. ".repeat(10).trim();

let scratch = "";
let worker: WorkerProcess | null = null;
let recorder: AriApp | null = null;
let key = "";
let runChannel = "";
let recording = "";

async function api(method: string, path: string, body?: unknown, type = "application/json"): Promise<any> {
  const res = await fetch(`${worker!.origin}/api/v1${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": type }) },
    body: body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

describe.skipIf(!inject("asterisk") || !inject("sipp"))("a Worker killed during an Asterisk call", () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "edgedial-restart-"));
    const state = join(scratch, "state");
    wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { quiet: true });
    key = createOrganization("Restart", { persistTo: state }).key;
    const port = await freePort();
    worker = new WorkerProcess({
      cwd: snapshotSources(join(scratch, "app")),
      port,
      persist: state,
      logFile: join(scratch, "worker.log"),
      // The same secrets on both starts: the configuration's ARI password is encrypted with ENCRYPTION_KEYS.
      bindings: {
        ...localBindings("rs"),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        VOICE_AGENT: "conversation",
        CALLING_RULES_DEFAULTS: "off",
      },
    });
    await worker.start();
    recorder = await AriApp.open(`restart-recorder-${crypto.randomUUID().slice(0, 8)}`);
  }, 180_000);

  afterAll(async () => {
    // Nothing left on the PBX: the call (if a failure left it up) and the recording.
    if (runChannel) await ari("DELETE", `/channels/${runChannel}`).catch(() => undefined);
    if (recording) await ari("DELETE", `/recordings/stored/${recording}`).catch(() => undefined);
    recorder?.close();
    await worker?.kill("SIGTERM");
    await worker?.kill("SIGKILL");
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 30_000);

  it("resumes the call or hangs it up with the run final (media_lost) within 15 s of the restart", { timeout: 150_000 }, async () => {
    const w = worker!;
    onTestFailed(() => console.log(`worker-restart: the Worker's log ends:\n${w.logTail()}`));
    const policy = await api("PUT", "/organizations/calling-policy", { allow_private_pbx: true });
    expect(policy.allow_private_pbx).toBe(true);
    const app = `edgedial-restart-${crypto.randomUUID().slice(0, 8)}`;
    const u = new URL(ARI);
    u.username = ARI_USER;
    await api("POST", "/organizations/telephony-configs", {
      name: "asterisk",
      is_default_outbound: true,
      config: {
        provider: "ari",
        ari_endpoint: u.toString().replace(/\/$/, ""),
        app_name: app,
        app_password: ARI_PASSWORD,
        // The sipp target is dialed whole; a dial string must have a form the configuration names (docs/carriers.md).
        allowed_dial_strings: ["PJSIP/{number}@sipp"],
      },
    });
    // The conversation agent on the deterministic engines (local development only): its voice is a tone. Its
    // speech-to-text must know one clip and its model one step, neither of which this silent callee reaches.
    const clip = await api("POST", "/greeting-recordings?name=sure", readFileSync("test/fixtures/audio/callee-sure-8k.wav"), "audio/wav");
    const agent = await api("POST", "/workflow/create", {
      name: "restart",
      workflow_definition: {
        nodes: [
          { id: "s", type: "startCall", data: { prompt: "Talk", greeting: GREETING } },
          { id: "e", type: "endCall", data: { prompt: "Say goodbye" } },
        ],
        edges: [{ id: "se", source: "s", target: "e", data: { label: "done", condition: "always" } }],
      },
      workflow_configurations: {
        voice_agent: {
          llm: { provider: "scripted", script: [{ user: "tell me more", say: "Good." }] },
          stt: { provider: "scripted", clips: [{ text: "Sure, tell me more.", recording_id: clip.recording_id }] },
          tts: { provider: "scripted" },
        },
      },
    });
    const runPath = `/workflow/${agent.id}/runs`;
    const started = await api("POST", `/public/agent/${agent.workflow_uuid}`, { phone_number: "PJSIP/100@sipp" });
    const runId: number = started.workflow_run_id;
    const run = () => api("GET", `${runPath}/${runId}`);

    // The call answered: its channel is up at Asterisk. What that channel is sent (the callee hears) is recorded.
    runChannel = await until("the call's channel to be up at Asterisk", 20_000, async () => {
      const { json } = await ari("GET", "/channels");
      return (json as any[]).find((c) => String(c.id).startsWith(`edgedial-run-${runId}-`) && c.state === "Up")?.id;
    });
    const snoopId = `restart-snoop-${runId}-${Date.now()}`;
    const snoop = await ari("POST", `/channels/${runChannel}/snoop?${new URLSearchParams({ spy: "out", app: recorder!.name, snoopId })}`);
    expect(snoop.status, JSON.stringify(snoop.json)).toBe(200);
    recording = `edgedial-restart-${runId}-${Date.now()}`;
    const rec = await ari("POST", `/channels/${snoopId}/record?${new URLSearchParams({ name: recording, format: "wav", maxDurationSeconds: "90" })}`);
    expect(rec.status, JSON.stringify(rec.json)).toBe(201);
    const t0 = Date.now();

    // The agent's audio flows once the external media channel is up; a moment later it is mid-greeting.
    const mediaChannel = runChannel.replace(/^edgedial-run-/, "edgedial-media-");
    await until("the call's external media channel (the agent's audio)", 20_000, async () =>
      (await ari("GET", `/channels/${mediaChannel}`)).status === 200 ? true : undefined,
    );
    const firstMedia = createdAt((await ari("GET", `/channels/${mediaChannel}`)).json);
    await sleep(2500);

    const tKill = Date.now();
    await w.kill("SIGKILL");
    const killedMs = Date.now() - tKill;
    const restartMs = await w.start();
    const tReady = Date.now();

    // Whichever comes first: the run final (edgedial hung up), or a new media channel (the call resumes).
    let outcome: { kind: "resumed"; mediaAt: number } | { kind: "hung_up"; at: number; run: any } | null = null;
    let last: any = null;
    while (!outcome && Date.now() < tReady + WITHIN_MS) {
      last = await run();
      if (FINAL.has(last.status)) outcome = { kind: "hung_up", at: Date.now(), run: last };
      else {
        const media = await ari("GET", `/channels/${mediaChannel}`);
        // The same id is reused: a new channel is told by its creation time.
        if (media.status === 200 && createdAt(media.json) !== firstMedia) outcome = { kind: "resumed", mediaAt: createdAt(media.json) };
      }
      if (!outcome) await sleep(250);
    }
    if (!outcome) {
      throw new Error(
        `within ${WITHIN_MS} ms of the restart the call neither resumed (no new media channel at Asterisk) nor ended ` +
          `(run ${runId}: ${last?.status}, end_reason ${last?.end_reason})`,
      );
    }
    // A resumed call: time for the agent to be heard again (its apology for the gap is about 2 s).
    if (outcome.kind === "resumed") await sleep(Math.max(0, Math.min(outcome.mediaAt + 4000, tReady + WITHIN_MS) - Date.now()));

    await ari("POST", `/recordings/live/${recording}/stop`);
    const file = await until("Asterisk's recording of the call", 10_000, async () => {
      const res = await ari("GET", `/recordings/stored/${recording}/file`);
      return res.status === 200 ? res.bytes : undefined;
    });
    const frames = agentFrames(file);
    const killAt = tKill - t0;
    // The agent was talking when the Worker died.
    const before = firstVoice(frames, 0, killAt, 10);
    expect(before, "the far end heard no agent before the kill").not.toBeNull();
    // What a carrier may still have buffered when the socket died is not the agent coming back.
    const after = firstVoice(frames, killAt + 500);
    const timings = `killed in ${killedMs} ms, restarted (health answering) in ${restartMs} ms`;

    if (outcome.kind === "resumed") {
      expect(
        after,
        `a new media channel came up ${outcome.mediaAt - tReady} ms after the restart, but the far end did not hear the agent again`,
      ).not.toBeNull();
      const heardAt = t0 + after!.atMs;
      expect(heardAt - tReady, "the agent heard again too late").toBeLessThanOrEqual(WITHIN_MS);
      console.log(
        `worker-restart: RESUMED. ${timings}; new media channel ${outcome.mediaAt - tReady} ms after the restart; the far end heard the agent again ` +
          `${heardAt - tKill} ms after the kill (${heardAt - tReady} ms after the restart), ${after!.ms} ms of voice in the recording`,
      );
      // The callee hangs up: the run ends as the PBX reports it.
      await ari("DELETE", `/channels/${runChannel}`);
      const ended = await until("the run to be final after the callee hung up", 15_000, async () => {
        const r = await run();
        return FINAL.has(r.status) ? r : undefined;
      });
      console.log(`worker-restart: after the callee hung up the run is ${ended.status} (end_reason ${ended.end_reason})`);
    } else {
      expect(outcome.run.end_reason, `run ${runId} ended ${outcome.run.status} without media_lost`).toBe("media_lost");
      // edgedial hung the call up at the PBX: its channel is gone.
      await until("the call's channel to be gone at Asterisk", 5000, async () =>
        (await ari("GET", `/channels/${runChannel}`)).status === 404 ? true : undefined,
      );
      console.log(
        `worker-restart: HUNG UP by edgedial. ${timings}; run ${outcome.run.status}, end_reason media_lost ${outcome.at - tReady} ms after the restart ` +
          `(${outcome.at - tKill} ms after the kill); agent heard after the kill: ${after ? `${after.ms} ms at ${after.atMs - killAt} ms` : "none"}`,
      );
    }
  });
});
