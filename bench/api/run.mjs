// bench/api: edgedial's API throughput against a bare Hono Worker, side by side in one wrangler dev server (one
// workerd: wrangler's multi-worker dev harness, requests routed by host). autocannon drives each target in turn, in
// alternating rounds, so both see the same machine; every figure is a ratio to bare Hono measured in the same run.
//
//   npm run bench:api                           # 10 connections, 2 rounds of 8 s per target
//   npm run bench:api -- --seconds 5 --rounds 1
//   npm run bench:api -- --rev HEAD~3           # edgedial as committed at a revision (before/after a change, or
//                                               # to leave out others' unfinished edits in a shared working tree)
//   npm run bench:api -- --tree /tmp/exp        # edgedial from another checkout's src/ and migrations/ (experiments)
//   npm run bench:api -- --read-cache-ms 0      # edgedial with its read cache off (every read makes its hop)
//
// Bound (bench/lib/bounds.mjs): 5 minutes for the setup plus each round's time (BENCH_TIMEOUT_S overrides it); a
// request of the setup answers within 30 s; any non-2xx answer, error or timeout under load stops it, nothing reported.
import { execSync } from "node:child_process";
import { request } from "node:http";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { createTestHarness, unstable_splitSqlQuery } from "wrangler";
import { localBindings } from "../../scripts/lib/local-bindings.ts";
import { cpuOf, descendants } from "../lib/shared.mjs";
import { newApiKey } from "../../scripts/lib/wrangler.mjs";
import { startBench } from "../lib/bounds.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/api`;
const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    rounds: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    rev: { type: "string" },
    tree: { type: "string" },
    // READ_CACHE_MS for edgedial; unset = as wrangler.jsonc deploys it.
    "read-cache-ms": { type: "string" },
  },
});
mkdirSync(OUT, { recursive: true });
// Five routes, each warmed 2 s and then driven `seconds` per round.
const bench = startBench("bench:api", { seconds: 300 + 5 * (2 + Number(opts.rounds) * (Number(opts.seconds) + 2)) });
bench.phase("preparing the Worker's config");

/** The tree to run (src/ and migrations/): the working tree, or a revision's extracted under bench/out/api/tree. */
function sourceTree() {
  if (opts.tree) return `${opts.tree.replace(/\/$/, "")}/`;
  if (!opts.rev) return ROOT;
  const tree = `${OUT}/tree`;
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree);
  execSync(`git archive ${JSON.stringify(opts.rev)} src migrations package.json wrangler.jsonc | tar -x -C ${JSON.stringify(tree)}`, { cwd: ROOT });
  symlinkSync(`${ROOT}node_modules`, `${tree}/node_modules`);
  return `${tree}/`;
}
const TREE = sourceTree();

// edgedial's own wrangler.jsonc (the revision's or the tree's when it has one: how requests reach the Worker is part
// of what is measured), paths made absolute, observability off (as bench/media: it logs every request).
const config = readFileSync(existsSync(`${TREE}wrangler.jsonc`) ? `${TREE}wrangler.jsonc` : `${ROOT}wrangler.jsonc`, "utf8")
  .replace(/^(\s*)"main": .*$/m, `$1"main": "${TREE}src/index.ts",`)
  .replace(/^(\s*)"migrations_dir": .*$/m, `$1"migrations_dir": "${TREE}migrations"`)
  // The config is written elsewhere: its paths into src/ (the bundle's aliases) must not be relative to it.
  .replaceAll('"./src/', `"${TREE}src/`)
  .replace(/"directory": "\.\/public"/, `"directory": "${ROOT}public"`)
  .replace(/^(\s*)"\$schema": .*$/m, "")
  // No remote bindings in the harness: Workers AI has no local simulation (nothing here calls it).
  .replace(/^\s*"ai": .*\n/m, "")
  .replace(/"observability": \{ "enabled": true \}/, `"observability": { "enabled": false }`);
writeFileSync(`${OUT}/wrangler.jsonc`, config);

// The same bare Worker deployed as edgedial is: the same static assets in front, with the same paths sent to the
// Worker first (edgedial's own "assets" entry). It sizes what the assets' router costs any Worker locally, so the
// app's own overhead can be told apart from it.
const assetsEntry = config.match(/^\s*"assets": (\{.*\}),?\s*$/m)?.[1];
if (!assetsEntry) throw new Error("edgedial's wrangler.jsonc has no one-line assets entry");
writeFileSync(
  `${OUT}/bare-assets.jsonc`,
  JSON.stringify({
    name: "bench-api-bare-assets",
    main: `${ROOT}bench/api/bare/worker.ts`,
    compatibility_date: "2026-10-01",
    compatibility_flags: ["nodejs_compat"],
    routes: [{ pattern: "bare-assets.bench/*", zone_name: "bare-assets.bench" }],
    assets: JSON.parse(assetsEntry),
  }),
);

const server = createTestHarness({
  workers: [
    {
      configPath: `${OUT}/wrangler.jsonc`,
      secrets: localBindings("b1"),
      // The per-key request limit (20/s by default) would measure the limiter's 429s, not the API.
      vars: { RATE_LIMIT_REQUESTS_PER_KEY: "1000000,1000000", ...(opts["read-cache-ms"] === undefined ? {} : { READ_CACHE_MS: opts["read-cache-ms"] }) },
    },
    { configPath: `${ROOT}bench/api/bare/wrangler.jsonc` },
    { configPath: `${OUT}/bare-assets.jsonc` },
  ],
});

/** One request over a real socket; `host` picks the Worker (bare.bench is the bare one). */
function get(url, { host, method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(host ? { host } : {}) } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          text,
          json: text && /json/.test(res.headers["content-type"] ?? "") ? JSON.parse(text) : undefined,
        }),
      );
    });
    req.on("error", reject);
    // A setup request that hangs (a runtime that stopped answering) fails the bench instead.
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url}: no answer within 30 s`)));
    req.end(body);
  });
}

async function api(base, key, method, path, body) {
  const headers = { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) };
  const res = await get(`${base}/api/v1${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.json;
}

/** The schema, an organization with its key, a telephony configuration, an agent and a campaign. */
async function seed(base) {
  const env = await server.getWorker().getEnv();
  for (const file of readdirSync(`${TREE}migrations`)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    const statements = unstable_splitSqlQuery(readFileSync(`${TREE}migrations/${file}`, "utf8"));
    await env.DB.batch(statements.map((s) => env.DB.prepare(s)));
  }
  const { key, hash, last4 } = newApiKey();
  const org = await env.DB.prepare("INSERT INTO organizations (name) VALUES ('bench') RETURNING id").first();
  await env.DB.prepare("INSERT INTO api_keys (org_id, name, key_hash, key_last4) VALUES (?, 'bench', ?, ?)").bind(org.id, hash, last4).run();
  await api(base, key, "PUT", "/organizations/calling-policy", { allowed_countries: ["US"] });
  const cfg = await api(base, key, "POST", "/organizations/telephony-configs", {
    name: "twilio-main",
    is_default_outbound: true,
    config: { provider: "twilio", account_sid: "AC0123456789abcdef0123456789abcdef", auth_token: "bench-token" },
  });
  const nodes = [
    { id: "s", type: "startCall", data: { prompt: "Say hi", greeting: "Hi {{first_name}}" } },
    { id: "e", type: "endCall", data: { prompt: "Say bye" } },
  ];
  const edges = [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }];
  const agent = await api(base, key, "POST", "/workflow/create", { name: "bench", workflow_definition: { nodes, edges } });
  const csv = "phone_number,first_name\n+14155550101,Ada\n+14155550102,Grace\n";
  const up = await api(base, key, "POST", "/s3/presigned-upload-url", { file_name: "c.csv", file_size: csv.length, content_type: "text/csv" });
  const put = await get(up.upload_url, { method: "PUT", headers: { "Content-Type": "text/csv" }, body: csv });
  if (put.status !== 200) throw new Error(`upload: ${put.status} ${put.text}`);
  const campaign = await api(base, key, "POST", "/campaign/create", { name: "bench", workflow_id: agent.id, source_url: up.file_key });
  return { key, configId: cfg.id, campaignId: campaign.id };
}

function cannon(url, host, headers, seconds) {
  return autocannon({ url, connections: Number(opts.connections), duration: seconds, headers: { ...headers, ...(host ? { host } : {}) } });
}

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

bench.cleanup(() => server.close());
await bench.run(async () => {
  bench.phase("starting the Workers");
  const { url } = await server.listen();
  const base = url.origin;
  bench.phase("seeding");
  const { key, configId, campaignId } = await seed(base);
  const targets = [
    { name: "bare Hono  GET /api/v1/health", path: "/api/v1/health", host: "bare.bench" },
    { name: "bare Hono with edgedial's assets  GET /api/v1/health", path: "/api/v1/health", host: "bare-assets.bench" },
    { name: "edgedial   GET /api/v1/health", path: "/api/v1/health" },
    { name: "edgedial   GET /api/v1/campaign/{id}/progress", path: `/api/v1/campaign/${campaignId}/progress`, key },
    { name: "edgedial   GET /api/v1/organizations/telephony-configs/{id}", path: `/api/v1/organizations/telephony-configs/${configId}`, key },
  ];
  for (const t of targets) {
    const res = await get(`${base}${t.path}`, { host: t.host, headers: t.key ? { "X-API-Key": t.key } : {} });
    // The bare Worker sets no X-Request-Id; edgedial sets one on every response: proof each host reached its Worker.
    if (res.status !== 200 || Boolean(res.headers["x-request-id"]) === Boolean(t.host)) throw new Error(`${t.name}: ${res.status} ${res.text}`);
    await cannon(`${base}${t.path}`, t.host, t.key ? { "X-API-Key": t.key } : {}, 2); // warm-up
  }
  const seconds = Number(opts.seconds);
  bench.phase("the rounds");
  for (let r = 0; r < Number(opts.rounds); r++) {
    for (const t of targets) {
      // workerd's CPU per request (the wrangler proxy and the runtime): steadier than req/s when others share the cores.
      const pids = descendants(process.pid)
        .filter((p) => /workerd/.test(p.args))
        .map((p) => p.pid);
      const cpu0 = cpuOf(pids);
      const res = await cannon(`${base}${t.path}`, t.host, t.key ? { "X-API-Key": t.key } : {}, seconds);
      const cpuMs = ((cpuOf(pids) - cpu0) * 1000) / res.requests.total;
      if (res.non2xx || res.errors || res.timeouts) throw new Error(`${t.name}: ${res.non2xx} non-2xx, ${res.errors} errors, ${res.timeouts} timeouts`);
      t.runs = [...(t.runs ?? []), { rps: res.requests.average, p99: res.latency.p99, cpuMs }];
    }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bare = mean(targets[0].runs.map((x) => x.rps));
  const bareCpu = mean(targets[0].runs.map((x) => x.cpuMs));
  const bareAssets = mean(targets[1].runs.map((x) => x.rps));
  const bareAssetsCpu = mean(targets[1].runs.map((x) => x.cpuMs));
  console.log(
    `\n${cpus().length} × ${cpus()[0].model}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ` +
      `${opts.connections} connections, ${opts.rounds} rounds × ${seconds} s per route, edgedial's READ_CACHE_MS ` +
      `${opts["read-cache-ms"] ?? config.match(/"READ_CACHE_MS": "(\d*)"/)?.[1] ?? "unset"} (mean of rounds; p99 the worst round; ` +
      `CPU: workerd's user+system time per request, "bare/this" the throughput it allows relative to bare Hono; ` +
      `"+assets": the same ratios to bare Hono deployed with edgedial's static assets)\n`,
  );
  console.log(
    `${pad("route", 62)}${lpad("req/s", 8)}${lpad("p99 ms", 8)}${lpad("vs bare", 9)}${lpad("CPU ms/req", 12)}${lpad("bare/this", 11)}` +
      `${lpad("vs +assets", 12)}${lpad("+assets/this", 14)}`,
  );
  for (const t of targets) {
    const rps = mean(t.runs.map((x) => x.rps));
    const p99 = Math.max(...t.runs.map((x) => x.p99));
    const cpu = mean(t.runs.map((x) => x.cpuMs));
    console.log(
      `${pad(t.name, 62)}${lpad(rps.toFixed(0), 8)}${lpad(p99, 8)}${lpad(`${((rps / bare) * 100).toFixed(0)} %`, 9)}` +
        `${lpad(cpu.toFixed(2), 12)}${lpad(`${((bareCpu / cpu) * 100).toFixed(0)} %`, 11)}` +
        `${lpad(`${((rps / bareAssets) * 100).toFixed(0)} %`, 12)}${lpad(`${((bareAssetsCpu / cpu) * 100).toFixed(0)} %`, 14)}`,
    );
  }
});
