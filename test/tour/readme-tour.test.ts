// The README's tour, as a newcomer runs it: `npm run dev` on a fresh copy of the repository (its tracked files, no
// local state), then every shell block of the tour pasted in order into one bash; each block must succeed and print
// the lines the README shows (`# →`). The call and the campaign must end completed with a conversation, offline.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTour, tourBlocks } from "../../scripts/lib/tour";

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
    const results = await runTour(blocks, { cwd: dir, timeoutMs: 120_000 });
    for (const r of results) expect(r.missing, `block ${r.block} printed:\n${r.output}\nstderr:\n${r.stderr.slice(-1000)}`).toEqual([]);
    // The call was a conversation: the callee's words recognized and answered.
    expect(results[3].output).toContain("callee: Sure, tell me more.");
  }, 400_000);
});
