// bench/csv-import: a 1,000,000-row contacts CSV imported through the real code path (presigned upload, then
// POST /campaign/create, synchronous and then with import: "background" polled until draft) in the local runtime
// (`wrangler dev`: workerd with disk-backed D1, R2 and Durable Objects), against papaparse alone on the same file in
// Node. Prints wall time, rows/s, CPU, the runtime's peak memory and the ratio to papaparse, and the same for
// 100,000 rows to show memory stays flat.
//
//   npm run bench:csv-import                 # 100k and 1M rows
//   npm run bench:csv-import -- 200000       # other sizes, comma-separated
//
// Bounds (bench/lib/bounds.mjs): 5 minutes plus 5 per million rows of every size (BENCH_TIMEOUT_S overrides it);
// each request within 10 minutes; a background import whose imported_rows does not move for 2 minutes stops it.
// Figures are printed once every size has been imported and checked (else exit 1, nothing reported).
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { unstable_startWorker } from "wrangler";
import { createOrganization, wrangler } from "../../scripts/lib/wrangler.mjs";
import { benchWorkerOptions, cpuOf, descendants } from "../lib/shared.mjs";
import { generateCsv } from "./generate.mjs";
import { BenchStopped, startBench } from "../lib/bounds.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/csv-import`;
const args = process.argv.slice(2);
/** --pbx: an ari configuration and extension numbers, which isolates the cost of carrier number validation. */
const PBX = args.includes("--pbx");
const sizes = (args.find((a) => /^\d/.test(a)) ?? "100000,1000000").split(",").map(Number);
mkdirSync(OUT, { recursive: true });
const bench = startBench("bench:csv-import", { seconds: 300 + sizes.reduce((n, rows) => n + Math.ceil(rows / 1e6) * 300, 0) });
/** The figures, printed once every size has run. */
const report = [];

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Current and peak resident memory of a process, from /proc. */
function memOf(pids) {
  let rss = 0;
  let peak = 0;
  for (const pid of pids) {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0) * 1024;
    rss += kb("VmRSS");
    peak += kb("VmHWM");
  }
  return { rss, peak };
}

async function json(res) {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const wranglerSync = (args) => wrangler(args, { quiet: true });

/** The Worker bundled once, as wrangler deploys it: a fixed file, so edits elsewhere in the tree don't reload it. */
function bundleWorker() {
  const dir = `${OUT}/dist`;
  rmSync(dir, { recursive: true, force: true });
  wranglerSync(["deploy", "--dry-run", "--outdir", dir]);
  return `${dir}/index.js`;
}

async function importThroughWorker(script, file, rows) {
  // Storage on disk as in production (tmpfs only with BENCH_STATE_DIR=/dev/shm/..., to tell disk from CPU).
  const state = `${process.env.BENCH_STATE_DIR ?? OUT}/state-${rows}`;
  rmSync(state, { recursive: true, force: true });
  wranglerSync(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const { key } = createOrganization("bench", { persistTo: state });
  // wrangler's dev server without its inspector (an attached inspector slows the isolate several times over).
  const worker = await unstable_startWorker({
    config: process.env.BENCH_CONFIG ?? `${ROOT}wrangler.jsonc`,
    entrypoint: script,
    // Progress is polled every 100 ms to see the import end: answers shared for a second would time the cache.
    ...benchWorkerOptions(state, { READ_CACHE_MS: "0" }),
  });
  try {
    await worker.ready;
    const base = String(await worker.url).replace(/\/$/, "");
    const pids = descendants(process.pid)
      .filter((p) => /workerd/.test(p.args))
      .map((p) => p.pid);
    if (!pids.length) throw new Error("workerd process not found");
    const api = async (method, path, body) => {
      const res = await fetch(`${base}${path}`, {
        signal: AbortSignal.timeout(10 * 60_000),
        method,
        headers: { "X-API-Key": key, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await json(res) };
    };
    const wf = await api("POST", "/api/v1/workflow/create", {
      name: "bench",
      workflow_definition: {
        nodes: [
          { id: "s", type: "startCall", data: { prompt: "Talk to {{first_name}} {{last_name}} of {{company}}", greeting: "Hello {{first_name}}" } },
          { id: "e", type: "endCall", data: { prompt: "Bye" } },
        ],
        edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
      },
    });
    const cfg = await api("POST", "/api/v1/organizations/telephony-configs", {
      name: "bench",
      is_default_outbound: true,
      config: PBX
        ? { provider: "ari", ari_endpoint: "http://127.0.0.1:9/ari", app_name: "bench", app_password: "bench" }
        : { provider: "twilio", account_sid: "AC00000000000000000000000000000001", auth_token: "bench-token" },
    });
    // The file's numbers are in three countries; an organization without caller IDs there must allow them.
    const policy = await api("PUT", "/api/v1/organizations/calling-policy", { allowed_countries: ["US", "GB", "DE"] });
    if (wf.status !== 200 || cfg.status !== 200 || policy.status !== 200) throw new Error(`setup failed: ${JSON.stringify([wf, cfg, policy])}`);

    const size = statSync(file).size;
    const presign = await api("POST", "/api/v1/s3/presigned-upload-url", { file_name: "contacts.csv", file_size: size, content_type: "text/csv" });
    const uploadStart = performance.now();
    const put = await fetch(presign.body.upload_url, {
      method: "PUT",
      headers: { "Content-Type": "text/csv", "Content-Length": String(size) },
      body: Readable.toWeb(createReadStream(file)),
      duplex: "half",
      signal: AbortSignal.timeout(10 * 60_000),
    });
    if (put.status !== 200) throw new Error(`upload failed: ${put.status} ${await put.text()}`);
    const uploadMs = performance.now() - uploadStart;

    /** Runs `work` while sampling workerd's memory and CPU. */
    const measured = async (work) => {
      const before = memOf(pids);
      const cpuBefore = cpuOf(pids);
      let sampledPeak = before.rss;
      const sampler = setInterval(() => {
        sampledPeak = Math.max(sampledPeak, memOf(pids).rss);
      }, 50);
      try {
        const out = await work();
        const after = memOf(pids);
        return { ...out, cpuS: cpuOf(pids) - cpuBefore, rssBefore: before.rss, rssPeak: Math.max(sampledPeak, after.rss), vmHwm: after.peak };
      } finally {
        clearInterval(sampler);
      }
    };
    const create = (name, extra = {}) => api("POST", "/api/v1/campaign/create", { name, workflow_id: wf.body.id, source_url: presign.body.file_key, ...extra });

    // Synchronous: the create answers once every row is stored.
    const sync = await measured(async () => {
      const t0 = performance.now();
      const created = await create("bench sync");
      const wallMs = performance.now() - t0;
      if (created.status !== 200) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
      if (created.body.total_rows !== rows) throw new Error(`imported ${created.body.total_rows} of ${rows} rows`);
      return { wallMs };
    });

    // In the background: the create answers at once; progress is polled until the campaign is a draft.
    const background = await measured(async () => {
      const t0 = performance.now();
      const created = await create("bench background", { import: "background" });
      const answerMs = performance.now() - t0;
      if (created.status !== 200 || created.body.state !== "importing")
        throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
      const samples = [];
      let moved = [-1, performance.now()];
      for (;;) {
        const p = await api("GET", `/api/v1/campaign/${created.body.id}/progress`);
        if (p.status !== 200) throw new Error(`progress: ${p.status} ${JSON.stringify(p.body).slice(0, 300)}`);
        samples.push([performance.now() - t0, p.body.imported_rows]);
        if (p.body.imported_rows !== moved[0]) moved = [p.body.imported_rows, performance.now()];
        else if (performance.now() - moved[1] > 120_000)
          throw new BenchStopped(`the background import stood at ${p.body.imported_rows} of ${rows} rows for 2 minutes (state ${p.body.state})`);
        if (p.body.state !== "importing") {
          if (p.body.state !== "draft" || p.body.total_rows !== rows) throw new Error(`background import ended ${JSON.stringify(p.body).slice(0, 500)}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return { answerMs, wallMs: performance.now() - t0, samples };
    });
    return { rows, size, uploadMs, sync, background };
  } finally {
    await worker.dispose();
    rmSync(state, { recursive: true, force: true });
  }
}

/**
 * The Node side, in a child process with a fresh heap (this one holds wrangler's dev server): papaparse alone,
 * papaparse with every number checked, and the import's own read and check, alternating over three rounds.
 */
function parseSide(file) {
  const out = execFileSync(process.execPath, [`${ROOT}bench/csv-import/parse.mjs`, file, ...(PBX ? ["--pbx"] : [])], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop());
}

await bench.run(async () => {
  bench.phase("bundling the Worker");
  const script = bundleWorker();
  const results = [];
  for (const rows of sizes) {
    bench.phase(`${rows.toLocaleString("en")} rows`);
    const file = `${OUT}/contacts-${rows}${PBX ? "-pbx" : ""}.csv`;
    if (!existsSync(file)) {
      process.stdout.write(`generating ${file} ... `);
      await generateCsv(file, rows, { pbx: PBX });
      console.log(mb(statSync(file).size));
    }
    const worker = await importThroughWorker(script, file, rows);
    const side = parseSide(file);
    if (side.checkedRows !== rows) throw new Error(`the import's check passed ${side.checkedRows} of ${rows} rows`);
    const papa = { ms: side.papaMs };
    const floor = { ms: side.floorMs };
    const checked = { ms: side.checkedMs };
    results.push({ ...worker, papaMs: papa.ms, floorMs: floor.ms, checkedMs: checked.ms });
    const { sync, background: bg } = worker;
    const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;
    const rate = (ms) => `${Math.round(rows / (ms / 1000)).toLocaleString("en")} rows/s`;
    const ratio = (ms) => `${(ms / papa.ms).toFixed(1)}x papaparse alone`;
    const mem = (m) => `memory ${mb(m.rssBefore)} before, peak +${mb(m.rssPeak - m.rssBefore)}`;
    // A few of the progress reads, to show rows counting up.
    const step = Math.max(1, Math.floor(bg.samples.length / 6));
    const seen = bg.samples
      .filter((_, i) => i % step === 0 || i === bg.samples.length - 1)
      .map(([ms, n]) => `${n.toLocaleString("en")} at ${secs(ms)}`)
      .join(", ");
    report.push(
      `\n${rows.toLocaleString("en")} rows, ${mb(worker.size)}:\n` +
        `  upload (PUT to the signed URL)        ${secs(worker.uploadMs)}\n` +
        `  papaparse alone (Node, streamed)      ${secs(papa.ms)} (Node figures: the median of 3 alternating rounds, a fresh process)\n` +
        `  papaparse + normalizeNumber (Node)    ${secs(floor.ms)}\n` +
        `  the import's read and check (Node)    ${secs(checked.ms)}, ${ratio(checked.ms)} (importCsv from src, a sink that only counts)\n` +
        `  create, import "sync": answer         ${secs(sync.wallMs)} wall, ${rate(sync.wallMs)}, ${ratio(sync.wallMs)}; workerd CPU ${sync.cpuS.toFixed(2)} s; ${mem(sync)}\n` +
        `  create, import "background": answer   ${secs(bg.answerMs)}\n` +
        `                               to draft ${secs(bg.wallMs)} wall, ${rate(bg.wallMs)}, ${ratio(bg.wallMs)}; workerd CPU ${bg.cpuS.toFixed(2)} s; ${mem(bg)}\n` +
        `  imported_rows seen by progress reads  ${seen}\n` +
        "  (wall time on a shared machine also counts waiting for a CPU: compare CPU seconds too)",
    );
  }
  if (results.length > 1) {
    const [a, b] = [results[0], results[results.length - 1]];
    const growth = (k) =>
      `${a.rows.toLocaleString("en")} rows +${mb(a[k].rssPeak - a[k].rssBefore)}, ${b.rows.toLocaleString("en")} rows +${mb(b[k].rssPeak - b[k].rssBefore)}`;
    report.push(`\nmemory peak above baseline: sync ${growth("sync")}; background ${growth("background")}`);
  }
  console.log(report.join("\n"));
});
