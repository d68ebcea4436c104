// bench/media: what one call session sustains, and the latency edgedial adds per 20 ms frame.
//   1. The frame path alone (decode, frame, resample, encode, pace, Twilio JSON), timed per frame in Node.
//   2. Whole sessions in the local runtime (wrangler's dev server: workerd, SQLite Durable Objects, real sockets):
//      one session fed as fast as it takes frames (frames per second), then 50 concurrent calls each sending real-time
//      speech (a frame every 20 ms) and timing every echoed frame, from the send to the echo's arrival.
//
//   npm run bench:media                 # 50 concurrent calls for 10 s
//   npm run bench:media -- 20           # another number of calls
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { unstable_startWorker } from "wrangler";
import { wrangler } from "../../scripts/lib/wrangler.mjs";
import { benchWorkerOptions, descendants } from "../lib/shared.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/media`;
const CALLS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 50);
const SECONDS = 10;
mkdirSync(OUT, { recursive: true });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

// 1. The path alone.
await build({ entryPoints: [`${ROOT}bench/media/path.ts`], bundle: true, format: "esm", platform: "neutral", outfile: `${OUT}/path.mjs`, logLevel: "warning" });
const path = await import(pathToFileURL(`${OUT}/path.mjs`).href);
const messages = path.tone(100_000);
path.timePath(messages.slice(0, 5_000)); // warm-up
const times = path.timePath(messages);
const total = times.reduce((a, b) => a + b, 0) / 1e6;
console.log(
  `frame path alone (Node ${process.version}): ${times.length.toLocaleString("en")} frames in ${total.toFixed(2)} s = ${Math.round(times.length / total).toLocaleString("en")} frames/s; ` +
    `per frame p50 ${fmt(pct(times, 50))} µs, p99 ${fmt(pct(times, 99))} µs`,
);

// 2. Whole sessions.
const config = readFileSync(`${ROOT}wrangler.jsonc`, "utf8")
  .replace(/^(\s*)"main": .*$/m, `$1"main": "${ROOT}bench/media/worker.ts",`)
  .replace(/^(\s*)"migrations_dir": .*$/m, `$1"migrations_dir": "${ROOT}migrations"`)
  .replace(/"directory": "\.\/public"/, `"directory": "${ROOT}public"`)
  .replace(/^(\s*)"\$schema": .*$/m, "")
  .replace(/"observability": \{ "enabled": true \}/, `"observability": { "enabled": ${process.env.BENCH_OBSERVABILITY === "1"} }`);
writeFileSync(`${OUT}/wrangler.jsonc`, config);
const dist = `${OUT}/dist`;
rmSync(dist, { recursive: true, force: true });
wrangler(["deploy", "--dry-run", "--outdir", dist, "--config", `${OUT}/wrangler.jsonc`], { quiet: true });
const state = `${OUT}/state`;
rmSync(state, { recursive: true, force: true });
const worker = await unstable_startWorker({ config: `${OUT}/wrangler.jsonc`, entrypoint: `${dist}/worker.js`, ...benchWorkerOptions(state) });

const start = (streamSid) =>
  JSON.stringify({
    event: "start",
    streamSid,
    start: { streamSid, callSid: "CAbench", mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } },
  });

/** workerd's resident memory, in MiB (every workerd process under this one). */
function workerdRss() {
  let kb = 0;
  for (const p of descendants(process.pid).filter((x) => /workerd/.test(x.args))) {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/status`, "utf8"));
    if (m) kb += Number(m[1]);
  }
  return kb / 1024;
}

/** Opens session `n`; resolves with the socket once it is open. */
function open(base, n, onMedia, query = "") {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/bench/session/${n}${query}`);
    ws.addEventListener("open", () => {
      ws.send(start(`MZ${n}`));
      resolve(ws);
    });
    ws.addEventListener("message", (e) => {
      if (typeof e.data === "string" && e.data.includes('"media"')) onMedia();
    });
    ws.addEventListener("error", () => reject(new Error(`session ${n}: socket error`)));
  });
}

try {
  await worker.ready;
  const base = String(await worker.url).replace(/\/$/, "");
  const frames = path.tone(50 * SECONDS);

  // One session, fed as fast as it echoes: frames per second it sustains.
  {
    const N = 5_000;
    let got = 0;
    let done;
    const finished = new Promise((r) => (done = r));
    const ws = await open(base, 1, () => ++got === N && done());
    const t0 = performance.now();
    for (let i = 0; i < N; i++) ws.send(frames[i % frames.length]);
    await finished;
    const s = (performance.now() - t0) / 1000;
    console.log(
      `one session, as fast as it goes: ${N} frames echoed in ${s.toFixed(2)} s = ${Math.round(N / s).toLocaleString("en")} frames/s (${Math.round(N / s / 50)}× real time)`,
    );
    ws.close();
  }

  // A 30-minute call, recorded, through one session as fast as it goes: workerd's memory as the call goes on.
  {
    const N = 90_000;
    const marks = [];
    let got = 0;
    let waiter = null;
    const until = (n) => (got >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve })));
    const ws = await open(
      base,
      2,
      () => {
        got++;
        if (waiter && got >= waiter.n) {
          const w = waiter;
          waiter = null;
          w.resolve();
        }
      },
      process.env.BENCH_RECORD === "0" ? "" : "?record=1",
    );
    marks.push(["0 min", workerdRss()]);
    const t0 = performance.now();
    // Batches with at most 1,500 frames in flight, so the socket's buffers do not stand in for the session's memory.
    for (let i = 0; i < N; i += 1000) {
      for (let k = i; k < i + 1000; k++) ws.send(frames[k % frames.length]);
      await until(i + 500);
      if ((i + 1000) % 30_000 === 0) marks.push([`${(i + 1000) / 3000} min`, workerdRss()]);
    }
    await until(N);
    const s = (performance.now() - t0) / 1000;
    ws.close();
    console.log(
      `a 30-minute recorded call (${N.toLocaleString("en")} frames echoed in ${s.toFixed(1)} s): workerd RSS ${marks.map(([t, mb]) => `${t} ${mb.toFixed(0)} MiB`).join(", ")}`,
    );
  }

  // CALLS concurrent real-time calls: every echoed frame timed from its send.
  const latencies = [];
  await Promise.all(
    Array.from({ length: CALLS }, async (_, c) => {
      const sentAt = [];
      let got = 0;
      const ws = await open(base, 1000 + c, () => {
        latencies.push(performance.now() - sentAt[got++]);
      });
      // Calls start out of step, as real ones do.
      await new Promise((r) => setTimeout(r, (c * 20) / CALLS));
      const t0 = performance.now();
      for (let i = 0; i < frames.length; i++) {
        const due = t0 + i * 20;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        sentAt.push(performance.now());
        ws.send(frames[i]);
      }
      await new Promise((r) => setTimeout(r, 500));
      ws.close();
    }),
  );
  console.log(
    `${CALLS} concurrent calls, ${SECONDS} s of real-time speech each: ${latencies.length.toLocaleString("en")} frames echoed; ` +
      `send → echo p50 ${fmt(pct(latencies, 50))} ms, p99 ${fmt(pct(latencies, 99))} ms, max ${fmt(Math.max(...latencies))} ms ` +
      `(the pacer's lead is 3 frames, so an echo is sent as soon as it is made)`,
  );
} finally {
  await worker.dispose();
  rmSync(state, { recursive: true, force: true });
}
