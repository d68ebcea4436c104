// bench:startup: how long a cold isolate of the Worker takes to start, beside a bare Hono Worker started the same way.
// Both are built as deployed (`wrangler deploy --dry-run`), then started N times each, alternating, in workerd (the
// runtime wrangler and the tests use): the time from starting workerd to the Worker's first answer (a 404 for a path
// nobody serves, which touches no binding). workerd listens before it loads the module, and the first request waits
// for the module's parse, compile and top-level evaluation, so the difference between the two is the Worker's own
// global-scope work and the bare figure is the runtime's start.
// The configs embed the modules by paths relative to themselves (workerd looks absolute ones up in its import path).
// Usage: npm run bench:startup [-- --rounds 15] [--prebuilt before=/tmp/before]
// Bound (bench/lib/bounds.mjs): 5 minutes plus 30 s a round (BENCH_TIMEOUT_S); one start that has not answered in
// 30 s stops the bench, nothing reported.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { BenchStopped, startBench } from "../lib/bounds.mjs";

const root = resolve(import.meta.dirname, "../..");
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const rounds = Number(arg("rounds", 15));
const bench = startBench("bench:startup", { seconds: 300 + 30 * rounds });
bench.cleanup(() => rmSync(work, { recursive: true, force: true }));
const workerd = join(root, "node_modules/.bin/workerd");
const work = mkdtempSync(join(tmpdir(), "bench-startup-"));

/** Builds a Worker as `wrangler deploy` would; a failed build ends the bench with wrangler's output. */
function build(name, config) {
  const outdir = join(work, name);
  try {
    execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, ...(config ? ["-c", config] : [])], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    console.error(`bench:startup: building ${name} failed\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    process.exit(1);
  }
  return outdir;
}

/** A workerd config serving the built bundle's modules on `port` (no bindings: the global scope needs none). */
function configFor(outdir, main, port) {
  const modules = readdirSync(outdir)
    .filter((f) => !f.endsWith(".map") && f !== "README.md")
    .sort((a, b) => (a === main ? -1 : b === main ? 1 : a.localeCompare(b)))
    .map((f) => {
      const kind = f.endsWith(".js") || f.endsWith(".mjs") ? "esModule" : f.endsWith(".wasm") ? "wasm" : "data";
      return `(name = "${f}", ${kind} = embed "${basename(outdir)}/${f}")`;
    });
  const file = join(outdir, "..", `${main}.${port}.capnp`);
  writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = (modules = [${modules.join(", ")}], compatibilityDate = "2026-10-01", compatibilityFlags = ["nodejs_compat"]))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
`,
  );
  return file;
}

const freePort = () =>
  new Promise((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });

/** Whether the Worker answered a request (any status): false while workerd is not listening yet. */
const answers = (port) =>
  fetch(`http://127.0.0.1:${port}/__startup`).then(
    async (res) => {
      await res.arrayBuffer();
      return true;
    },
    () => false,
  );

/** CPU time (ms) used so far by every thread of process `pid` (the first field of schedstat: nanoseconds on a CPU). */
function cpuMsOf(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1e6;
}

/** One cold start: wall ms from spawning workerd to the Worker's first answer, and the CPU ms workerd used by then. */
async function startOnce(config, port) {
  const t0 = performance.now();
  const child = spawn(workerd, ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  try {
    for (;;) {
      if (exited) throw new Error(`workerd exited before listening:\n${stderr}`);
      if (performance.now() - t0 > 30_000) throw new BenchStopped(`workerd did not answer within 30 s of its start:\n${stderr}`);
      if (await answers(port)) return { wall: performance.now() - t0, cpu: cpuMsOf(child.pid) };
      await new Promise((r) => setTimeout(r, 1));
    }
  } finally {
    child.kill("SIGKILL");
    await new Promise((r) => (exited ? r() : child.once("exit", r)));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

await bench.run(async () => {
  bench.phase("building");
  const app = build("edgedial");
  const bare = build("bare", "bench/api/bare/wrangler.jsonc");
  const size = (dir) =>
    readdirSync(dir)
      .filter((f) => !f.endsWith(".map"))
      .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  const workers = [
    { name: "bare Hono", dir: bare, main: "worker.js", times: [] },
    { name: "edgedial", dir: app, main: "index.js", times: [] },
  ];
  // `--prebuilt name=dir` (repeatable): a bundle built earlier (`wrangler deploy --dry-run --outdir dir`, e.g. at another
  // commit) measured in the same rounds, for before-and-after figures.
  process.argv.forEach((a, i) => {
    if (a !== "--prebuilt") return;
    const [name, dir] = process.argv[i + 1].split("=");
    workers.push({ name, dir: resolve(dir), main: "index.js", times: [] });
  });
  for (const w of workers) {
    w.port = await freePort();
    w.config = configFor(w.dir, w.main, w.port);
    await startOnce(w.config, w.port); // warms the page cache and fails loudly on a bundle workerd refuses
  }
  bench.phase("the rounds");
  for (let i = 0; i < rounds; i++) for (const w of workers) w.times.push(await startOnce(w.config, w.port));

  const ms = (x) => x.toFixed(0);
  const wall = (w) => w.times.map((t) => t.wall);
  const cpu = (w) => w.times.map((t) => t.cpu);
  const bareWall = median(wall(workers[0]));
  const bareCpu = median(cpu(workers[0]));
  console.log(`cold starts in workerd, ${rounds} each, alternating: spawning workerd to the Worker's first answer`);
  console.log("| Worker | bundle (KiB, no source maps) | CPU median (min–max) ms | CPU minus bare Hono | wall median (min–max) ms | wall minus bare Hono |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const w of workers) {
    const [c, t] = [cpu(w), wall(w)];
    console.log(
      `| ${w.name} | ${Math.round(size(w.dir) / 1024)} | ${ms(median(c))} (${ms(Math.min(...c))}–${ms(Math.max(...c))}) | ${ms(median(c) - bareCpu)} | ` +
        `${ms(median(t))} (${ms(Math.min(...t))}–${ms(Math.max(...t))}) | ${ms(median(t) - bareWall)} |`,
    );
  }
  console.log(`load average at the end: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
  rmSync(work, { recursive: true, force: true });
});
