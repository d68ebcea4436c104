// `vitest run` with a bound, for every suite (npm test and the test:* scripts): a run always ends, with a message.
// Why: the Workers pool can keep the process alive after a file's tests have all finished (its workerd is never
// disposed; seen with no route out of the machine, cloudflare/workers-sdk#15498). The reporter in
// lib/vitest-progress.mjs logs each file's start and end and the run's end; this runner
//  - after the run has ended (or every file it announced has ended), gives vitest EXIT_GRACE_S to exit, then kills it
//    and exits with the run's own result (a failed file or an unhandled error: 1);
//  - when no test file starts or ends for STALL_S, kills the run and names the files still open (exit 1).
// Arguments are passed to `vitest run` as they are.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const EXIT_GRACE_S = Number(process.env.VITEST_EXIT_GRACE_S ?? 30);
const STALL_S = Number(process.env.VITEST_STALL_S ?? 600);

const dir = mkdtempSync(join(tmpdir(), "vitest-bounded-"));
const progress = join(dir, "progress");
const reporter = fileURLToPath(new URL("./lib/vitest-progress.mjs", import.meta.url));
const args = ["run", ...process.argv.slice(2), "--reporter=default", `--reporter=${reporter}`];
// Its own process group, so the pool's workerd processes go with it when it is killed.
const local = join(process.cwd(), "node_modules/.bin/vitest");
const child = spawn(existsSync(local) ? local : "vitest", args, { stdio: "inherit", detached: true, env: { ...process.env, VITEST_PROGRESS_FILE: progress } });

let seen = 0;
let files = Number.POSITIVE_INFINITY;
const ended = new Map();
let lastProgress = Date.now();
let runEnd = null;
let endedAt = 0;
const open = new Set();

function read() {
  let lines;
  try {
    lines = readFileSync(progress, "utf8").split("\n").filter(Boolean);
  } catch {
    return;
  }
  for (const line of lines.slice(seen)) {
    const [kind, file, state] = line.split(" ");
    if (kind === "start") open.add(file);
    if (kind === "files") files = Number(file);
    if (kind === "end") {
      open.delete(file);
      ended.set(file, state);
      if (ended.size >= files && !endedAt) endedAt = Date.now();
    }
    if (kind === "run") {
      runEnd = { reason: file, unhandled: Number(state) };
      endedAt = Date.now();
    }
  }
  if (lines.length > seen) lastProgress = Date.now();
  seen = lines.length;
}

function stop(code, message) {
  console.error(`\nvitest-bounded: ${message}`);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}

const timer = setInterval(() => {
  read();
  if (endedAt && Date.now() - endedAt > EXIT_GRACE_S * 1000) {
    const failed = [...ended].filter(([, state]) => state === "failed").map(([file]) => file);
    const ok = runEnd ? runEnd.reason === "passed" && !runEnd.unhandled : failed.length === 0;
    const result = runEnd
      ? `the run ended (${runEnd.reason})`
      : `all ${ended.size} test files ended (${failed.length ? `failed: ${failed.join(", ")}` : "none failed"})`;
    stop(ok ? 0 : 1, `${result} but vitest had not exited ${EXIT_GRACE_S} s later (the Workers pool's teardown); stopped it.`);
  }
  if (!endedAt && Date.now() - lastProgress > STALL_S * 1000) {
    const names = open.size ? [...open].join(", ") : "none open (stalled between files)";
    stop(1, `no test file started or ended for ${STALL_S} s; stopped the run. Files that did not finish: ${names}`);
  }
}, 1000);

child.on("exit", (code, signal) => {
  clearInterval(timer);
  read();
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    try {
      process.kill(-child.pid, sig);
    } catch {}
  });
}
