// What every bench shares to end, and to end honestly: a wall-clock bound on the whole run, a bound on consecutive
// failures toward its target, a deadline for each wait, and a refusal to print figures once anything in its setup or
// its run failed. Why: under load a bench whose carrier kept dropping connections waited for a completion that could
// not come (30 minutes), and a bench whose setup failed printed figures for work that never ran.
//
//   const bench = startBench("bench:dispatch", { seconds: 1200 });
//   bench.phase("migrations");                 // named in every message from here on
//   bench.cleanup(() => worker.dispose());     // run on the way out, whatever the outcome (each bounded)
//   await bench.run(async () => { ... });      // an error: "refusing to report", exit 1; the bound: exit 1
import { spawn } from "node:child_process";
import { descendants } from "./shared.mjs";

/** A bench's run stopped: `message` says why (printed as the bench's last line, after which it exits 1). */
export class BenchStopped extends Error {}

/**
 * `limit` failures in a row (a success resets the count) stop the run: `fail` throws BenchStopped naming the last
 * few. Failures that come now and then on a busy machine pass; a target that is gone stops the bench at once.
 */
export function consecutiveFailures(limit, what) {
  let inRow = 0;
  let total = 0;
  const last = [];
  return {
    ok() {
      inRow = 0;
    },
    fail(err) {
      inRow++;
      total++;
      last.push(String(err?.message ?? err));
      if (last.length > 3) last.shift();
      if (inRow >= limit) throw new BenchStopped(`${inRow} ${what} failed in a row (${total} in all); the last: ${last.join("; ")}`);
    },
    get inRow() {
      return inRow;
    },
    get total() {
      return total;
    },
  };
}

/** Resolves as `promise` does, or rejects with BenchStopped once `ms` have passed (`what` names the wait). */
export function within(promise, ms, what, { setTimer = setTimeout, clearTimer = clearTimeout } = {}) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimer(() => reject(new BenchStopped(`${what}: no answer within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimer(timer));
}

/**
 * The whole bench under one bound. `seconds`: the wall-clock bound (BENCH_TIMEOUT_S overrides it); `exit`, `log`,
 * the timers and `killChildren` are injectable for the unit test. The process always exits through `stop`.
 */
export function startBench(
  name,
  {
    seconds,
    exit = (code) => process.exit(code),
    log = (line) => console.error(line),
    setTimer = setTimeout,
    clearTimer = clearTimeout,
    killChildren = killDescendants,
    cleanupMs = 20_000,
    now = () => performance.now(),
    outsideGuard = startOutsideGuard,
  },
) {
  const bound = Number(process.env.BENCH_TIMEOUT_S ?? seconds);
  const startedAt = now();
  let current = "start";
  const cleanups = [];
  let stopping = null;

  const stop = (code, message) => {
    if (stopping) return stopping;
    stopping = (async () => {
      clearTimer(watchdog);
      // Each cleanup bounded: a runtime that does not close must not hold the exit.
      for (const fn of cleanups.reverse()) {
        try {
          await within(Promise.resolve().then(fn), cleanupMs, "cleanup", { setTimer, clearTimer });
        } catch (err) {
          log(`${name}: cleanup failed: ${String(err?.message ?? err)}`);
        }
      }
      // Whatever this process started and did not end (a workerd a stuck dispose left), by process id.
      killChildren();
      if (message) log(`${name}: ${message}`);
      exit(code);
    })();
    return stopping;
  };

  const watchdog = setTimer(() => {
    void stop(1, `did not finish within its bound of ${bound} s (at: ${current}); stopped, nothing reported.`);
  }, bound * 1000);
  // The bound must not by itself keep a finished bench's process alive.
  watchdog?.unref?.();
  // The timer cannot fire while this process waits synchronously (wrangler's build, the D1 migrations): a process of
  // its own ends the bench a minute past the bound if the orderly stop above has not.
  outsideGuard(name, bound + 60);

  return {
    bound,
    phase(label) {
      current = label;
    },
    get current() {
      return current;
    },
    cleanup(fn) {
      cleanups.push(fn);
    },
    /** What is left of the bound, in ms: the timeout for a synchronous child (the watchdog cannot fire during one). */
    remainingMs() {
      return Math.max(1000, Math.floor(bound * 1000 - (now() - startedAt)));
    },
    /** Runs the bench: its errors are a refusal (exit 1, no figures from here on), its end an exit 0. */
    async run(main) {
      try {
        await main();
      } catch (err) {
        const why = err instanceof BenchStopped ? err.message : String(err?.stack ?? err);
        return stop(1, `refusing to report: failed at ${current}: ${why}`);
      }
      return stop(0, null);
    },
    stop,
  };
}

/** SIGKILL to every process under this one (wrangler's workerd, a spawned vitest), by id: only what the bench started. */
function killDescendants() {
  let rows = [];
  try {
    rows = descendants(process.pid);
  } catch {
    return;
  }
  for (const { pid } of rows.reverse()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/**
 * The bound's backstop, outside this process's event loop: a small Node process that, `seconds` from now, prints why
 * and SIGKILLs this process's children and then this process, unless this process has exited first (it checks each
 * second and then exits itself).
 */
export function startOutsideGuard(name, seconds) {
  const script = `
    const [pid, s, name] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3]];
    const { execFileSync } = require("node:child_process");
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const t0 = Date.now();
    const tick = setInterval(() => {
      if (!alive()) process.exit(0);
      if (Date.now() - t0 < s * 1000) return;
      clearInterval(tick);
      process.stderr.write(name + ": did not finish within its bound (held in a synchronous step); killed, nothing reported.\\n");
      const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" }).trim().split("\\n").map((l) => l.trim().split(/\\s+/).map(Number));
      const under = (root) => rows.filter(([, pp]) => pp === root).flatMap(([p]) => (p === process.pid ? [] : [p, ...under(p)]));
      for (const p of [...under(pid).reverse(), pid]) { try { process.kill(p, "SIGKILL"); } catch {} }
      process.exit(0);
    }, 1000);
  `;
  const guard = spawn(process.execPath, ["-e", script, String(process.pid), String(seconds), name], { stdio: ["ignore", "ignore", "inherit"] });
  guard.unref();
}
