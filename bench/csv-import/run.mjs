// bench/csv-import: a 1,000,000-row contacts CSV imported through the real code path (presigned upload, then
// POST /campaign/create) in the local runtime (`wrangler dev`: workerd with disk-backed D1, R2 and Durable Objects),
// against papaparse alone on the same file in Node. Prints rows/s, wall time, the runtime's peak memory, and
// the same for 100,000 rows to show memory stays flat.
//
//   npm run bench:csv-import                 # 100k and 1M rows
//   npm run bench:csv-import -- 200000       # other sizes, comma-separated
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import Papa from "papaparse";
import { unstable_startWorker } from "wrangler";
import { createOrganization, wrangler } from "../../scripts/lib/wrangler.mjs";
import { benchWorkerOptions, cpuOf, descendants } from "../lib/shared.mjs";
import { generateCsv } from "./generate.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/csv-import`;
const args = process.argv.slice(2);
/** --pbx: an ari configuration and extension numbers, which isolates the cost of carrier number validation. */
const PBX = args.includes("--pbx");
const sizes = (args.find((a) => /^\d/.test(a)) ?? "100000,1000000").split(",").map(Number);
mkdirSync(OUT, { recursive: true });

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
    ...benchWorkerOptions(state),
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
    });
    if (put.status !== 200) throw new Error(`upload failed: ${put.status} ${await put.text()}`);
    const uploadMs = performance.now() - uploadStart;

    const before = memOf(pids);
    const cpuBefore = cpuOf(pids);
    let sampledPeak = before.rss;
    const sampler = setInterval(() => {
      sampledPeak = Math.max(sampledPeak, memOf(pids).rss);
    }, 50);
    const t0 = performance.now();
    const created = await api("POST", "/api/v1/campaign/create", { name: "bench", workflow_id: wf.body.id, source_url: presign.body.file_key });
    const wallMs = performance.now() - t0;
    clearInterval(sampler);
    if (process.env.BENCH_DEBUG)
      for (const p of pids)
        console.log(
          "  pid",
          p,
          JSON.stringify(memOf([p])),
          descendants(process.pid)
            .find((d) => d.pid === p)
            ?.args.slice(0, 200),
        );
    const after = memOf(pids);
    const cpuS = cpuOf(pids) - cpuBefore;
    if (created.status !== 200) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
    if (created.body.total_rows !== rows) throw new Error(`imported ${created.body.total_rows} of ${rows} rows`);
    return { rows, size, uploadMs, wallMs, cpuS, rssBefore: before.rss, rssPeak: Math.max(sampledPeak, after.rss), vmHwm: after.peak };
  } finally {
    await worker.dispose();
    rmSync(state, { recursive: true, force: true });
  }
}

/** papaparse alone in Node: stream the same file, count rows (its fastest streaming use, chunk callbacks). */
async function papaparseAlone(file) {
  const t0 = performance.now();
  let rows = 0;
  await new Promise((resolve, reject) => {
    Papa.parse(createReadStream(file, { encoding: "utf8" }), {
      chunk: (r) => {
        rows += r.data.length;
      },
      complete: resolve,
      error: reject,
    });
  });
  return { ms: performance.now() - t0, rows };
}

/** papaparse plus the phone validation every row must pass (normalizeNumber), in Node: the floor of the import. */
async function papaparseAndNumbers(file) {
  const out = await build({
    entryPoints: [`${ROOT}src/telephony/numbers.ts`],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "error",
  });
  const { normalizeNumber } = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
  const t0 = performance.now();
  let bad = 0;
  await new Promise((resolve, reject) => {
    Papa.parse(createReadStream(file, { encoding: "utf8" }), {
      chunk: (r) => {
        for (const row of r.data) if (!normalizeNumber(row[0] ?? "", PBX).ok) bad++;
      },
      complete: resolve,
      error: reject,
    });
  });
  return { ms: performance.now() - t0, bad };
}

const script = bundleWorker();
const results = [];
for (const rows of sizes) {
  const file = `${OUT}/contacts-${rows}${PBX ? "-pbx" : ""}.csv`;
  if (!existsSync(file)) {
    process.stdout.write(`generating ${file} ... `);
    await generateCsv(file, rows, { pbx: PBX });
    console.log(mb(statSync(file).size));
  }
  const worker = await importThroughWorker(script, file, rows);
  const papa = await papaparseAlone(file);
  const floor = await papaparseAndNumbers(file);
  results.push({ ...worker, papaMs: papa.ms, floorMs: floor.ms });
  console.log(
    `\n${rows.toLocaleString("en")} rows, ${mb(worker.size)}:\n` +
      `  upload (PUT to the signed URL)       ${(worker.uploadMs / 1000).toFixed(2)} s\n` +
      `  import (POST /campaign/create)       ${(worker.wallMs / 1000).toFixed(2)} s wall, ${Math.round(rows / (worker.wallMs / 1000)).toLocaleString("en")} rows/s\n` +
      `  workerd CPU during the import        ${worker.cpuS.toFixed(2)} s (wall time also counts waiting for a CPU: other work shares it)\n` +
      `  workerd memory                       ${mb(worker.rssBefore)} before, ${mb(worker.rssPeak)} peak during import (VmHWM ${mb(worker.vmHwm)})\n` +
      `  papaparse alone (Node, streamed)     ${(papa.ms / 1000).toFixed(2)} s  -> import / papaparse = ${(worker.wallMs / papa.ms).toFixed(2)}x\n` +
      `  papaparse + normalizeNumber (Node)   ${(floor.ms / 1000).toFixed(2)} s  -> import / (papaparse + numbers) = ${(worker.wallMs / floor.ms).toFixed(2)}x`,
  );
}
if (results.length > 1) {
  const [a, b] = [results[0], results[results.length - 1]];
  console.log(
    `\nmemory growth: ${a.rows.toLocaleString("en")} rows peak ${mb(a.rssPeak - a.rssBefore)} above baseline, ` +
      `${b.rows.toLocaleString("en")} rows peak ${mb(b.rssPeak - b.rssBefore)} above baseline`,
  );
}
