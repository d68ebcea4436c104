// bench/dispatch: a 10,000-contact campaign against a simulated carrier (instant, or ending 100 calls at once) in
// the local runtime (wrangler's dev server: workerd, SQLite Durable Objects, real alarms, the real organization
// object). Prints calls per second, the runtime's CPU time per call, and the delay from a final status to the next
// dial (p50/p99).
//
//   npm run bench:dispatch                 # 10,000 contacts
//   npm run bench:dispatch -- 2000         # another size (the in-process half always runs 10,000)
//
// Bounds (bench/lib/bounds.mjs, bench/README.md): the whole bench ends within 20 minutes (BENCH_TIMEOUT_S); a run
// stops when no call is dialed or ended for 60 s (BENCH_STALL_S), or after 10 failed requests in a row to the carrier
// or back from it; figures are printed only once every run has completed every call (else exit 1, nothing reported).
// BENCH_CARRIER_URL=http://127.0.0.1:9 sends the call starts to an address nobody serves: the bench stops on it.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { unstable_startWorker } from "wrangler";
import { wrangler } from "../../scripts/lib/wrangler.mjs";
import { benchWorkerOptions, cpuOf, descendants } from "../lib/shared.mjs";
import { cpuProfiler, profileSummary } from "../lib/profile.mjs";
import { gcEvents, gcSummary, traceGc } from "../lib/gc.mjs";
import { startCarrier } from "./carrier.mjs";
import { BenchStopped, consecutiveFailures, startBench } from "../lib/bounds.mjs";

const bench = startBench("bench:dispatch", { seconds: 20 * 60 });
/** No call dialed or ended for this long: the run cannot end (a call lost on its way to the carrier never does). */
const STALL_MS = Number(process.env.BENCH_STALL_S ?? 60) * 1000;
/** Failed requests in a row, to the carrier or from it, that stop the run. */
const FAILURES_IN_ROW = 10;
/** The figures, printed once every run has completed (a bench whose setup or run failed reports nothing). */
const report = [];
const progress = (line) => console.error(line);
/** A request of the runner's own, bounded: a runtime that stopped answering must not hold the bench. */
const request = (url, init = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/dispatch`;
const CONTACTS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000);
/** `--engine-only`: the engine-bound and burst runs alone (no one-slot, API-limit or in-process runs). */
const ENGINE_ONLY = process.argv.includes("--engine-only") || process.argv.includes("--bursts-only");
/** `--bursts-only`: the burst run alone (the issue's case), in a runtime that ran nothing before it. */
const BURSTS_ONLY = process.argv.includes("--bursts-only");
mkdirSync(OUT, { recursive: true });

const wranglerSync = (args) => wrangler(args, { quiet: true });

/** The project's wrangler.jsonc with the bench Worker as its entry point. */
function benchConfig() {
  const config = readFileSync(`${ROOT}wrangler.jsonc`, "utf8")
    .replace(/^(\s*)"main": .*$/m, `$1"main": "${ROOT}bench/dispatch/worker.ts",`)
    .replace(/^(\s*)"migrations_dir": .*$/m, `$1"migrations_dir": "${ROOT}migrations"`)
    // The config is written elsewhere: its paths into src/ (the bundle's aliases) must not be relative to it.
    .replaceAll('"./src/', `"${ROOT}src/`)
    .replace(/"directory": "\.\/public"/, `"directory": "${ROOT}public"`)
    .replace(/^(\s*)"\$schema": .*$/m, "")
    // Observability off, as bench/api and bench/media: its tail sessions log every fire-and-forget call of the carrier.
    .replace(/"observability": \{ "enabled": true \}/, `"observability": { "enabled": false }`);
  const path = `${OUT}/wrangler.jsonc`;
  writeFileSync(path, config);
  return path;
}

/** `BENCH_PROFILE=1`: a CPU profile of the isolate during the burst run (bench/out/dispatch/bursts.cpuprofile), summarized. */
const PROFILE = Boolean(process.env.BENCH_PROFILE);
/** `BENCH_GC=1`: V8's collections in every isolate of the runtime, summed per run, and those that met the slowest bursts. */
const GC_LOG = process.env.BENCH_GC ? `${OUT}/gc.log` : null;
if (GC_LOG) traceGc(GC_LOG);
let carrier;
let worker;
let profiler = null;
const state = process.env.BENCH_STATE ?? `${OUT}/state`;

/** workerd's CPU use while idle (its event loop, timers), per second, to tell apart from the work measured. */
async function idleCpuPerSecond() {
  const pids = descendants(process.pid)
    .filter((p) => /workerd/.test(p.args))
    .map((p) => p.pid);
  const c0 = cpuOf(pids);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 5000));
  return (cpuOf(pids) - c0) / ((performance.now() - t0) / 1000);
}

let idle = 0;

/**
 * The machine's speed at the time, to set runs of different hours side by side: a fixed piece of work (integer
 * arithmetic and 2 million small objects) timed in this Node process. The same VM has been seen to take twice as long
 * at some hours (its neighbours), and every latency here scales with it.
 */
function speedProbe() {
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < 3e8; i++) x = (x * 31 + i) | 0;
  const objects = [];
  for (let i = 0; i < 2e6; i++) objects.push({ i, s: String(i) });
  // The checksum keeps the work observable (a loop whose result went unused could be dropped).
  return { ms: Math.round(performance.now() - t0), checksum: x ^ objects.length };
}

async function run(label, o) {
  const base = String(await worker.url).replace(/\/$/, "");
  const pids = descendants(process.pid)
    .filter((p) => /workerd/.test(p.args))
    .map((p) => p.pid);
  const cpu0 = cpuOf(pids);
  const t0 = performance.now();
  if (profiler && o.burst) await profiler.start();
  carrier.campaign(o.campaignId, o);
  bench.phase(`${label}: creating the campaign`);
  progress(`${label}: ${o.contacts.toLocaleString("en")} contacts ...`);
  // The import of a large campaign takes its time on a busy machine: this request alone has 5 minutes.
  const started = await fetch(`${base}/bench/start`, { method: "POST", body: JSON.stringify(o), signal: AbortSignal.timeout(5 * 60_000) });
  if (!started.ok) throw new Error(`start failed: ${started.status} ${await started.text()}`);
  await waitForCompletion(base, label, o);
  const wall = (performance.now() - t0) / 1000;
  const span = [Date.now() - wall * 1000, Date.now()];
  const cpuRun = cpuOf(pids);
  if (profiler && o.burst) {
    profileSummary(await profiler.stop(), `${OUT}/bursts.cpuprofile`);
    console.log(`  heap after the run        ${JSON.stringify(await profiler.heap())}`);
    const live = await profiler.snapshot();
    console.log(`  live objects              ${live.totalMB.toFixed(1)} MB; the largest kinds:`);
    for (const [kind, { count, size }] of live.largest) console.log(`    ${(size / 1e6).toFixed(2).padStart(7)} MB  ${String(count).padStart(8)}  ${kind}`);
  }
  if (carrier.failures.length) throw new Error(`callbacks failed: ${carrier.failures.slice(0, 3).join("; ")}`);
  bench.phase(`${label}: the figures`);
  const s = await (
    await request(`${base}/bench/stats?id=${o.campaignId}`, { method: "POST", body: JSON.stringify(Object.fromEntries(carrier.received)) })
  ).json();
  // Figures only for a run whose every call was dialed and ended as the carrier said.
  if (s.counts.completed !== o.contacts || s.dials !== o.contacts)
    throw new BenchStopped(`${label}: ${s.counts.completed} of ${o.contacts} contacts completed, ${s.dials} dials: not a run to report`);
  const cpu = Math.max(0, cpuRun - cpu0 - idle * wall);
  const dialSpan = (s.lastDial - s.firstDial) / 1000;
  report.push(
    `\n${label}: ${o.contacts.toLocaleString("en")} contacts, max_concurrency ${o.maxConcurrency}, rate_limit ${o.rateLimit}/s\n` +
      `  completed: ${s.counts.completed} of ${s.counts.total} (${s.counts.failed} not), ${s.dials} dials, ${s.finals} final statuses seen by this instance; log: ${JSON.stringify(s.events)}\n` +
      `  calls per second          ${(s.dials / dialSpan).toFixed(0)} (first to last dial ${dialSpan.toFixed(2)} s; ${wall.toFixed(2)} s wall incl. import)\n` +
      `  runtime CPU per call      ${((cpu * 1000) / s.dials).toFixed(2)} ms (workerd CPU ${cpu.toFixed(2)} s above idle, incl. the import, the organization object and the callbacks)\n` +
      `  final status → next dial  p50 ${s.delay.p50} ms, p99 ${s.delay.p99} ms, max ${s.delay.max} ms (n = ${s.delay.n}: the first dial after it)\n` +
      `  final status → its slot   p50 ${s.refill.p50} ms, p99 ${s.refill.p99} ms, max ${s.refill.max} ms (n = ${s.refill.n}: each dial fills the oldest freed slot)\n` +
      `  final status → carrier   p50 ${s.reached.p50} ms, p99 ${s.reached.p99} ms, max ${s.reached.max} ms (n = ${s.reached.n}: its slot's next call, as its request reached the carrier)\n` +
      `  slowest groups of 100     ${s.refill.slowest.map((b) => `#${b.burst} ${b.max} ms`).join(", ")} (a burst's refills, in order)\n` +
      (process.env.BENCH_TRACE
        ? s.refill.slowest.map((b) => `    #${b.burst} (at ${b.from}): refills at ${b.stamps} ms; ${b.during.join("; ")} [${b.kinds}]\n`).join("")
        : "") +
      (GC_LOG ? gcLines(span, s.refill.slowest) : "") +
      `  rows written per attempt  D1 ${(s.rows.d1 / s.dials).toFixed(3)} (${s.rows.d1} in all: this path's summary mirror; a real attempt through the calls module: test/campaigns/status-batch.test.ts), ` +
      `Durable Objects ${((s.rows.campaign + s.rows.organization) / s.dials).toFixed(2)} (campaign ${(s.rows.campaign / s.dials).toFixed(2)}, organization ${(s.rows.organization / s.dials).toFixed(2)}; SQLite rows incl. index and trigger writes)\n` +
      `  SQL statements per attempt campaign ${(s.statements.campaign / s.dials).toFixed(2)}, organization ${(s.statements.organization / s.dials).toFixed(2)}`,
  );
  return s;
}

/** The run's collections per isolate, and the major ones that came during one of the slowest bursts. */
function gcLines([from, to], slowest) {
  const events = gcEvents(GC_LOG, from, to);
  const hits = slowest.map((b) => {
    const during = events.filter((e) => e.kind === "major" && e.at - e.pause <= b.from + b.max && e.at >= b.from);
    return `#${b.burst} ${during.length ? during.map((e) => `${e.isolate.slice(-6)} ${e.pause.toFixed(0)} ms`).join(" + ") : "none"}`;
  });
  return `  garbage collections       ${gcSummary(events).join("\n                            ")}\n  major ones in the slowest  ${hits.join(", ")}\n`;
}

/**
 * Polls the campaign's state until it completes. Only the state is polled: the figures are computed once the run is
 * over, so that computing them (in the campaign's own object) does not hold up the run they measure. Stops the bench
 * when the run cannot end: no dial or final status for STALL_MS, or FAILURES_IN_ROW failures toward the carrier, from
 * it, or reading the state.
 */
async function waitForCompletion(base, label, o) {
  bench.phase(`${label}: waiting for the campaign to complete`);
  const reads = consecutiveFailures(FAILURES_IN_ROW, "reads of the campaign's state");
  let moved = -1;
  let movedAt = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    let s;
    try {
      const res = await request(`${base}/bench/state?id=${o.campaignId}`);
      if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
      s = await res.json();
      reads.ok();
    } catch (err) {
      reads.fail(err);
      continue;
    }
    if (s.state === "completed") return;
    const errors = s.carrierErrors;
    if (errors.inRow >= FAILURES_IN_ROW)
      throw new BenchStopped(`${errors.inRow} call starts failed in a row on their way to the carrier (${errors.total} in all); the last: ${errors.last}`);
    if (carrier.callbacks.inRow >= FAILURES_IN_ROW)
      throw new BenchStopped(`${carrier.callbacks.inRow} of the carrier's callbacks failed in a row; the last: ${carrier.failures.slice(-3).join("; ")}`);
    if (s.dials + s.finals !== moved) {
      moved = s.dials + s.finals;
      movedAt = performance.now();
    } else if (performance.now() - movedAt > STALL_MS)
      throw new BenchStopped(
        `no call dialed or ended for ${STALL_MS / 1000} s (campaign ${s.state}; ${s.dials} dials, ${s.finals} final statuses of ${o.contacts}; ` +
          `${errors.total} call starts failed toward the carrier${errors.last ? `, the last: ${errors.last}` : ""}; ${carrier.failures.length} callbacks failed)`,
      );
  }
}

async function main() {
  bench.phase("building the Worker");
  const config = benchConfig();
  const dist = `${OUT}/dist`;
  rmSync(dist, { recursive: true, force: true });
  wranglerSync(["deploy", "--dry-run", "--outdir", dist, "--config", config]);
  bench.phase("applying the D1 migrations");
  rmSync(state, { recursive: true, force: true });
  bench.cleanup(closeRuntime);
  wranglerSync(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state, "--config", config]);
  bench.phase("starting the carrier and the Worker");
  carrier = await startCarrier();
  const options = benchWorkerOptions(state, { ORG_MAX_CONCURRENT_CALLS: "1000", BENCH_CARRIER_URL: process.env.BENCH_CARRIER_URL ?? carrier.url });
  if (PROFILE) options.dev.inspector = { port: 9341 };
  worker = await unstable_startWorker({ config, entrypoint: `${dist}/worker.js`, ...options });
  profiler = PROFILE ? await cpuProfiler(await worker.inspectorUrl, "edgedial") : null;
  await worker.ready;
  carrier.worker(await worker.url);
  const probe = speedProbe();
  report.push(`machine speed probe: ${probe.ms} ms (a fixed workload in Node, checksum ${probe.checksum}; lower is faster)`);
  idle = await idleCpuPerSecond();
  report.push(`workerd idle CPU: ${(idle * 1000).toFixed(1)} ms per second (subtracted below)`);
  // The engine as the bottleneck: the pacer lifted above the API's 50/s, the organization's cap above 100.
  if (!BURSTS_ONLY) await run("engine-bound", { campaignId: 1, orgId: 1, contacts: CONTACTS, maxConcurrency: 100, rateLimit: 10_000 });
  // 100 calls finishing at once: the carrier holds the final statuses until every slot is busy, then sends them together.
  await run("bursts of 100", { campaignId: 4, orgId: 4, contacts: CONTACTS, maxConcurrency: 100, rateLimit: 10_000, burst: true });
  // One call at a time: the delay from a final status to the next dial without any queue in front of it.
  if (!ENGINE_ONLY) await run("one slot", { campaignId: 2, orgId: 2, contacts: Math.min(CONTACTS, 1000), maxConcurrency: 1, rateLimit: 10_000 });
  // At the API's limits the pacer sets the pace (no more than rate_limit starts in any second).
  if (!ENGINE_ONLY) await run("at the API's limits", { campaignId: 3, orgId: 3, contacts: Math.min(CONTACTS, 1000), maxConcurrency: 100, rateLimit: 50 });
  await closeRuntime();
  // The object's own time per call, without the runtime's plumbing: the in-process half, in the Workers test pool.
  if (!ENGINE_ONLY) report.push(inProcess());
}

/** The runtime, the carrier and the state, once (after the runs, or on the way out of a failed one). */
let closing = null;
function closeRuntime() {
  closing ??= (async () => {
    profiler?.close();
    await worker?.dispose();
    await carrier?.close();
    rmSync(state, { recursive: true, force: true });
  })();
  return closing;
}

/**
 * The in-process half: only its own file (bench/dispatch/object.bench.test.ts) in the project's Workers pool, whose
 * setup applies the D1 migrations first, under the suites' bounded runner; its figures, or a refusal.
 */
function inProcess() {
  bench.phase("the in-process half (the campaign object alone)");
  progress("in-process (the campaign object alone) ...");
  const res = spawnSync(process.execPath, [`${ROOT}scripts/vitest-bounded.mjs`, "--config", "bench/dispatch/vitest.config.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: "true", VITEST_STALL_S: "300", NO_COLOR: "1" },
    maxBuffer: 64 * 1024 * 1024,
    timeout: bench.remainingMs(),
  });
  const out = `${res.stdout ?? ""}${res.stderr ?? ""}`;
  const files = /Test Files\s+(.*)/.exec(out)?.[1] ?? "";
  const at = out.indexOf("in-process:");
  if (res.status !== 0 || at < 0 || !/^1 passed \(1\)/.test(files.trim())) {
    console.error(out.split("\n").slice(-40).join("\n"));
    throw new BenchStopped(
      `the in-process half did not pass on its own (exit ${res.status}${res.error ? `, ${res.error.message}` : ""}; test files: ${files || "none"})`,
    );
  }
  return `\n${out.slice(at).split("\n").slice(0, 4).join("\n")}`;
}

await bench.run(async () => {
  await main();
  console.log(report.join("\n"));
});
