// The README's tour, as a newcomer runs it: `npm run dev` on a fresh copy of the repository (its tracked files, no
// local state), then every shell block of the tour pasted in order into one bash; each block must succeed and print
// the lines the README shows (`# →`). The call and the campaign must end completed with a conversation, offline, and
// the call's recording must hold the agent's greeting as speech (eSpeak NG through npm run dev's local speech server,
// not the tones of a Worker without it), its transcript the agent's lines along the graph.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTour, tourBlocks } from "../../scripts/lib/tour";
import { readWav } from "../../src/lib/audio/wav";
import { isVoiceLike, voiceMeasures } from "../agent/voice-like";

const ROOT = join(__dirname, "../..");
let dir = "";
let dev: ChildProcess | null = null;
let log = "";
let port = 0;

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const a = srv.address() as { port: number };
      srv.close(() => resolve(a.port));
    });
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgedial-tour-"));
  // A fresh clone's files: what git tracks, as this checkout has them; the installed packages shared.
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT }).toString().split("\0").filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  port = await freePort();
  dev = spawn("npm", ["run", "dev", "--", "--port", String(port)], { cwd: dir, detached: true, env: { ...process.env, CI: "" } });
  dev.stdout?.on("data", (d) => (log += d));
  dev.stderr?.on("data", (d) => (log += d));
  const until = Date.now() + 150_000;
  while (!log.includes("edgedial is ready on")) {
    if (Date.now() > until || dev.exitCode !== null) throw new Error(`npm run dev did not get ready:\n${log.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 180_000);

afterAll(() => {
  if (dev?.pid) {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the README's tour against npm run dev", () => {
  it("prints the key last, then every block runs as pasted and shows what the README shows", async () => {
    // The banner with the key is the last thing npm run dev prints on start (wrangler's own lines come before it).
    const banner = log.slice(log.indexOf("edgedial is ready on"));
    expect(banner).toMatch(/development API key: edk_/);
    expect(log.slice(log.indexOf("development API key"))).not.toMatch(/\[wrangler:info\] Ready on/);

    const readme = readFileSync(join(ROOT, "README.md"), "utf8").replaceAll("http://127.0.0.1:8787", `http://127.0.0.1:${port}`);
    const blocks = tourBlocks(readme);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    // One more block of our own, after the README's: the shell's names for the call, to fetch its recording.
    const ids = { script: 'echo "__ids__ $AGENT_ID $RUN"\n', expected: [] };
    const results = await runTour([...blocks, ids], { cwd: dir, timeoutMs: 120_000 });
    for (const r of results) expect(r.missing, `block ${r.block} printed:\n${r.output}\nstderr:\n${r.stderr.slice(-1000)}`).toEqual([]);
    // The call was a conversation: the callee's words recognized and answered.
    // (Found by its words, not its place: the README's blocks come and go.)
    expect(results.map((r) => r.output).join("\n")).toContain("callee: Sure, tell me more.");
    const [agentId, runId] = /__ids__ (\d+) (\d+)/.exec(results[results.length - 1].output)?.slice(1) ?? [];
    await expectSpokenGreeting(agentId, runId);
  }, 400_000);
});

type Run = { recording_url: string | null; transcript: Array<{ role: string; text: string }> };

/**
 * The tour's call: the agent's channel of its recording (right) opens with the greeting spoken as a voice (the pitch
 * moves, the energy spreads over the formants, the loudness follows the syllables; the tones of old failed all three),
 * and its transcript's agent lines follow the graph: the greeting, the ask node's question, the end node's goodbye.
 */
async function expectSpokenGreeting(agentId: string | undefined, runId: string | undefined) {
  expect(agentId && runId, "the tour's shell named its agent and run").toBeTruthy();
  const key = readFileSync(join(dir, ".dev-api-key"), "utf8").trim();
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/workflow/${agentId}/runs/${runId}`, { headers: { "X-API-Key": key } });
  const run = (await res.json()) as Run;
  const agentLines = run.transcript.filter((t) => t.role === "agent").map((t) => t.text);
  expect(agentLines[0]).toBe("Hi Alan, do you have a minute?");
  // The ask node's prompt ("Ask how many seats they need.") said to the caller: the simulated callee waits for the
  // agent's answer to its line before it says the next, however long a loaded machine takes to reply (it once said it
  // after 800 ms of the agent's quiet, and cut the question off before a word was heard). The goodbye may be the end
  // node's or the idle policy's.
  expect(agentLines.join(" | ")).toContain("Could you tell me how many seats you need?");
  expect(agentLines[agentLines.length - 1]).toMatch(/Goodbye!$/);
  expect(agentLines.join(" ")).not.toContain("You said");

  expect(run.recording_url).toBeTruthy();
  const wav = readWav(new Uint8Array(await (await fetch(run.recording_url as string)).arrayBuffer()));
  expect(wav.channels).toBe(2);
  const agent = Int16Array.from({ length: wav.samples.length / 2 }, (_, i) => wav.samples[2 * i + 1]);
  // The greeting: from the agent's first sound, its first 1.5 s (the sentence lasts about 2 s).
  let first = agent.findIndex((v) => Math.abs(v) > 500);
  expect(first, "the agent's channel has sound").toBeGreaterThanOrEqual(0);
  first = Math.max(0, first - wav.rate / 50);
  const greeting = agent.subarray(first, first + Math.round(1.5 * wav.rate));
  const m = voiceMeasures(greeting, wav.rate);
  expect(isVoiceLike(m), `the greeting's measures: ${JSON.stringify(m)}`).toBe(true);
}
