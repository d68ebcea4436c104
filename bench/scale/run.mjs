// bench/scale: what one call costs at Cloudflare's metered boundaries and what a deployment carries.
//
//   npm run bench:scale                       # 40 calls, 4 at a time
//   BENCH_CALLS=100 BENCH_PARALLEL=8 npm run bench:scale
//
// Runs scale.bench.test.ts in the project's Workers test pool (bounded: scripts/vitest-bounded.mjs), takes its
// SCALE_RESULT line, and prints per call what was measured, the reference call (3 minutes) scaled from it, and the
// projections at 1,000 concurrent calls and a million calls a day (model.ts), as the tables of docs/scale.md.
// Nothing is printed from a run whose calls did not complete: the bench fails, and so does this.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LIMITS, projections, REFERENCE } from "./model.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/scale`;
mkdirSync(OUT, { recursive: true });

// `--from FILE`: print the tables again from a saved result.json (the model changed, not the measurement).
const fromIndex = process.argv.indexOf("--from");
const saved = fromIndex > 0 ? JSON.parse(readFileSync(process.argv[fromIndex + 1], "utf8")).measured : null;
const env = { ...process.env, BENCH_CALLS: process.env.BENCH_CALLS ?? "40", BENCH_PARALLEL: process.env.BENCH_PARALLEL ?? "4" };
const run = saved
  ? { status: 0, stdout: `SCALE_RESULT ${JSON.stringify(saved)}\n`, stderr: "" }
  : spawnSync(process.execPath, [`${ROOT}scripts/vitest-bounded.mjs`, "--config", "bench/scale/vitest.config.ts"], {
      cwd: ROOT,
      env,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      // The bench's calls take seconds each; a run that takes longer than this is broken.
      timeout: 30 * 60_000,
    });
// Without the terminal's colour codes (ESC [ ... m).
const out = `${run.stdout ?? ""}${run.stderr ?? ""}`.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
writeFileSync(`${OUT}/vitest.log`, out);
const line = out.split("\n").find((l) => l.includes("SCALE_RESULT "));
if (run.status !== 0 || !line) {
  console.error(out.split("\n").slice(-40).join("\n"));
  console.error(
    `bench:scale: the bench did not complete (exit ${run.status}${run.error ? `, ${run.error.message}` : ""}); nothing to report. Log: ${OUT}/vitest.log`,
  );
  process.exit(1);
}
const measured = JSON.parse(line.slice(line.indexOf("SCALE_RESULT ") + "SCALE_RESULT ".length));
const p = projections(measured);
writeFileSync(`${OUT}/result.json`, JSON.stringify({ measured, projections: p }, null, 2));

const c = p.reference;
const f = (n, d = 1) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: d }) : String(n));
const $ = (n) => `$${n < 0.01 ? n.toFixed(6) : n.toFixed(4)}`;
const table = (head, rows) => [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

console.log(`\n## Measured: ${measured.calls} answered calls (${f(measured.turns_per_call)} turns, ${f(c.audioSeconds)} s of audio each)\n`);
console.log(
  table(
    ["per call", "measured", "reference call (3 min, 36 replies)"],
    [
      ["D1 statements (reads and writes)", f(c.d1.statements), f(c.d1.statements)],
      ["D1 write statements", f(c.d1.writeStatements), f(c.d1.writeStatements)],
      ["D1 rows written (with index entries)", f(c.d1.rowsWritten), f(c.d1.rowsWritten)],
      ["D1 bytes: the run's row", f(c.d1.rowBytes, 0), f(c.d1RowBytes, 0)],
      ["D1 bytes: the database's growth (pages, indexes, other tables)", f(c.d1.growthBytes, 0), "–"],
      ...Object.entries(measured.d1Tables)
        .filter(([, t]) => t.rows || t.bytes)
        .map(([name, t]) => [`  D1 table ${name}: rows / value bytes added`, `${f(t.rows / measured.calls, 2)} / ${f(t.bytes / measured.calls, 0)}`, "–"]),
      [
        "Durable Object requests (stubs' calls)",
        f(Object.values(c.doRequests).reduce((a, b) => a + b, 0)),
        `${f(Object.values(c.doRequests).reduce((a, b) => a + b, 0))} + ${REFERENCE.seconds} heartbeat alarms + ${c.wsMessages} media messages (${f(c.wsMessages / 20)} billed)`,
      ],
      ["  of them the organization's object", f(c.doRequests.ORGANIZATION ?? 0), f(c.doRequests.ORGANIZATION ?? 0)],
      ["  of them the engine-capacity object", f(c.doRequests.ENGINE_CAPACITY ?? 0), f(c.doRequests.ENGINE_CAPACITY ?? 0)],
      ["Queue messages", f(c.queueMessages), f(c.queueMessages)],
      ["subrequests (the Worker's fetches: the carrier's API)", f(c.fetches), f(c.fetches)],
      ["Worker requests (API start, carrier callbacks, media upgrade)", f(c.workerRequests), f(c.workerRequests)],
      ["R2 class A / class B operations", `${f(c.r2.classA)} / ${f(c.r2.classB)}`, `${f(c.r2.classA)} / ${f(c.r2.classB)}`],
      ["R2 bytes: recording", f(c.r2.recordingBytesPerSecond * c.audioSeconds, 0), f(c.recordingBytes, 0)],
      ["R2 bytes: details object", f(c.r2.detailsBytesPerTurn * measured.turns_per_call, 0), f(c.detailsBytes, 0)],
      [
        "engine requests: model / voice / transcription / turn model",
        Object.values(measured.engineRequests).length
          ? `${f(c.engine.llmPerReply * c.replies + 1)} / ${f(c.engine.ttsPerReply * c.replies)} / ${f(c.engine.sttPerCalleeTurn * c.calleeTurns)} / ${f(c.engine.turnPerCalleeTurn * c.calleeTurns)}`
          : "–",
        `${f(c.requests.llmRequests)} / ${f(c.requests.ttsRequests)} / ${f(c.requests.sttRequests)} / ${f(c.requests.turnRequests)}`,
      ],
    ],
  ),
);

const a = p.atConcurrent;
console.log(`\n## At ${f(a.concurrent)} concurrent calls (${f(a.callsPerSecond, 2)} calls start and end a second)\n`);
console.log(
  table(
    ["what", "needed", "documented limit", "share"],
    [
      ...Object.entries(a.engineRpm).map(([task, rpm]) => [
        `Workers AI ${task}, requests/min`,
        f(rpm, 0),
        f(LIMITS.workersAiRpm[task]),
        `${f((rpm / LIMITS.workersAiRpm[task]) * 100, 0)} % (fits ${f(a.callsWithinEngineLimits[task], 0)} calls)`,
      ]),
      ["D1 queries/s (one database)", f(a.d1QueriesPerSecond, 0), `~${f(LIMITS.d1QueriesPerSecond)} at 1 ms a query`, `${f(a.d1QueryShare * 100, 0)} %`],
      ["D1 write statements/s", f(a.d1WritesPerSecond, 0), "(in the queries above)", ""],
      [
        "one organization's object, requests/s",
        f(a.organizationObjectRequestsPerSecond, 1),
        f(LIMITS.durableObjectRequestsPerSecond),
        `${f((a.organizationObjectRequestsPerSecond / LIMITS.durableObjectRequestsPerSecond) * 100, 1)} %`,
      ],
      [
        "the engine-capacity object, requests/s",
        f(a.capacityObjectRequestsPerSecond, 1),
        f(LIMITS.durableObjectRequestsPerSecond),
        `${f((a.capacityObjectRequestsPerSecond / LIMITS.durableObjectRequestsPerSecond) * 100, 1)} %`,
      ],
      [
        "Queue messages/s",
        f(a.queueMessagesPerSecond, 1),
        f(LIMITS.queueMessagesPerSecond),
        `${f((a.queueMessagesPerSecond / LIMITS.queueMessagesPerSecond) * 100, 2)} %`,
      ],
    ],
  ),
);

const d = p.perDay;
console.log(`\n## At ${f(d.calls)} calls a day (each the reference call)\n`);
console.log(
  table(
    ["what", "per day", "so"],
    [
      [
        "D1 bytes added",
        `${f(d.d1BytesPerDay / 1e9, 2)} GB`,
        `one database (10 GB) full in ${f(d.daysUntilD1Full, 1)} days without retention; runs_days ≤ ${f(d.d1RetentionDaysThatFit, 0)} keeps it under`,
      ],
      ["D1 rows written", f(d.d1RowsWrittenPerDay, 0), `$${f((d.d1RowsWrittenPerDay / 1e6) * 1.0, 0)} a day`],
      ["R2 bytes added (recordings, details)", `${f(d.r2BytesPerDay / 1e12, 2)} TB`, `${f((d.r2BytesPerDay * 30) / 1e12, 0)} TB kept at recordings_days 30`],
      ["Workers AI neurons", f(d.neuronsPerDay, 0), `the free 10,000 a day is ${f((LIMITS.workersAiFreeNeuronsPerDay / d.neuronsPerDay) * d.calls, 1)} calls`],
    ],
  ),
);

console.log(`\n## The bill for 1,000 call-minutes (${f(1000 / (REFERENCE.seconds / 60), 0)} reference calls)\n`);
console.log(
  table(
    ["line", "per 1,000 call-minutes"],
    [...Object.entries(p.cost.lines).map(([k, v]) => [k, $((v * 1000) / (REFERENCE.seconds / 60))]), ["total", $(p.cost.per1000Minutes)]],
  ),
);
console.log(`\nFull result: ${OUT}/result.json`);
