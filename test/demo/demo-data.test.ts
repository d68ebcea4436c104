// `npm run demo` end to end in Node (`npm run test:demo`): a whole demo campaign on a storage of its own (--keep), then
// the data checked over every run as the dashboard shows it: no conversation marked voicemail, no end before its
// answer, durations that agree with the recordings, counters that add up, logs that number rows as the file does; and
// the agent's starter test suite, run before the campaign, passed.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { logProblems, progressProblems, runProblems, wavSeconds, type RunDetail } from "./invariants";

const ROOT = join(__dirname, "../..");
const CONTACTS = 12;
const dir = mkdtempSync(`${tmpdir()}/edgedial-demo-test-`);
let demo: ChildProcess | null = null;

afterAll(async () => {
  if (demo && demo.exitCode === null) {
    demo.kill("SIGINT");
    await new Promise((r) => demo!.once("exit", r));
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the demo and waits for its closing lines; returns what it printed. */
function runDemo(): Promise<string> {
  return new Promise((resolve, reject) => {
    demo = spawn(process.execPath, ["scripts/demo.mjs", "--keep", dir, String(CONTACTS)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    demo.stdout!.on("data", (c) => {
      out += c;
      if (out.includes("until Ctrl-C")) resolve(out);
    });
    demo.stderr!.on("data", (c) => (out += c));
    demo.once("exit", (code) => reject(new Error(`the demo exited (${code}) before its summary:\n${out.slice(-3000)}`)));
  });
}

describe("npm run demo's data", () => {
  it("tells the truth over a whole campaign, and the servers stay up with working recording links", async () => {
    const out = await runDemo();
    const [, base, key] = /edgedial {2}(http:\/\/\S+) {3}\(API key (\S+)\)/.exec(out)!;
    const campaignId = /#\/campaigns\/(\d+)/.exec(out)![1];
    const agentId = /#\/agents\/(\d+)/.exec(out)![1];
    expect(out).toContain(`${base}/dashboard/`);
    expect(out).toMatch(/a call's page {2}\S+#\/runs\/\d+\/\d+/);
    const api = async (path: string) => {
      const res = await fetch(`${base}/api/v1${path}`, { headers: { "X-API-Key": key } });
      expect(res.status, path).toBe(200);
      return res.json() as Promise<any>;
    };

    // The starter suite ran before the campaign and passed; its run is the agent's, with a test call per scenario.
    expect(out).toMatch(/test suite passed \(test run \d+/);
    const testRunId = /#\/agents\/\d+\/tests\/runs\/(\d+)/.exec(out)![1];
    const testRun = await api(`/workflow/${agentId}/tests/runs/${testRunId}`);
    expect(testRun).toMatchObject({ status: "passed", summary: { scenarios: 2, passed: 2 } });
    expect(testRun.scenarios.map((s: any) => s.protocol)).toEqual(["twilio", "vonage"]);

    const progress = await api(`/campaign/${campaignId}/progress`);
    expect(progress.state).toBe("completed");
    const runs = (await api(`/campaign/${campaignId}/runs?limit=100`)).items;
    const problems = progressProblems(progress, runs.length);
    let conversations = 0;
    for (const r of runs) {
      const run: RunDetail & { recording_url?: string } = await api(`/workflow/${agentId}/runs/${r.workflow_run_id ?? r.id}`);
      let seconds: number | null = null;
      if (run.recording_url) {
        // The link printed and shown works while the demo's servers are up.
        const res = await fetch(run.recording_url);
        expect(res.status, run.name).toBe(200);
        seconds = wavSeconds(new Uint8Array(await res.arrayBuffer()));
      }
      if (run.transcript?.some((t) => t.role === "callee")) conversations++;
      problems.push(...runProblems(run, seconds));
    }
    // Every log entry, a page at a time.
    const logs = [];
    for (let cursor = ""; ; ) {
      const page = await api(`/campaign/${campaignId}/logs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      logs.push(...page.items);
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    problems.push(...logProblems(logs, CONTACTS));
    expect(problems).toEqual([]);
    expect(conversations).toBeGreaterThan(0);
  });
});
