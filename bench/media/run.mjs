// bench/media: what one call session sustains, and the latency edgedial adds per 20 ms frame.
//   1. The frame path alone (decode, frame, resample, encode, pace, Twilio JSON), timed per frame in Node.
//   2. Whole sessions in the local runtime (wrangler's dev server: workerd, SQLite Durable Objects, real sockets):
//      one session fed as fast as it takes frames (frames per second), then 50 concurrent calls each sending real-time
//      speech (a frame every 20 ms) and timing every echoed frame, from the send to the echo's arrival.
//
//   npm run bench:media                 # 50 concurrent calls for 10 s
//   npm run bench:media -- 20           # another number of calls
//
// Bounds (bench/lib/bounds.mjs): the whole bench within 15 minutes (BENCH_TIMEOUT_S); each socket opens within 30 s
// and each wait for echoes has its deadline; figures are printed only once every part ran (else exit 1).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { unstable_startWorker } from "wrangler";
import { wrangler } from "../../scripts/lib/wrangler.mjs";
import { benchWorkerOptions, descendants } from "../lib/shared.mjs";
import { BenchStopped, startBench, within } from "../lib/bounds.mjs";

const bench = startBench("bench:media", { seconds: 15 * 60 });
/** The figures, printed once every part has run. */
const report = [];

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
bench.phase("the frame path alone");
await build({ entryPoints: [`${ROOT}bench/media/path.ts`], bundle: true, format: "esm", platform: "neutral", outfile: `${OUT}/path.mjs`, logLevel: "warning" });
const path = await import(pathToFileURL(`${OUT}/path.mjs`).href);
const messages = path.tone(100_000);
path.timePath(messages.slice(0, 5_000)); // warm-up
const times = path.timePath(messages);
const total = times.reduce((a, b) => a + b, 0) / 1e6;
report.push(
  `frame path alone (Node ${process.version}): ${times.length.toLocaleString("en")} frames in ${total.toFixed(2)} s = ${Math.round(times.length / total).toLocaleString("en")} frames/s; ` +
    `per frame p50 ${fmt(pct(times, 50))} µs, p99 ${fmt(pct(times, 99))} µs`,
);

// 2. Whole sessions.
bench.phase("building and starting the Worker");
const config = readFileSync(`${ROOT}wrangler.jsonc`, "utf8")
  .replace(/^(\s*)"main": .*$/m, `$1"main": "${ROOT}bench/media/worker.ts",`)
  .replace(/^(\s*)"migrations_dir": .*$/m, `$1"migrations_dir": "${ROOT}migrations"`)
  // The config is written elsewhere: its paths into src/ (the bundle's aliases) must not be relative to it.
  .replaceAll('"./src/', `"${ROOT}src/`)
  .replace(/"directory": "\.\/public"/, `"directory": "${ROOT}public"`)
  .replace(/^(\s*)"\$schema": .*$/m, "")
  .replace(/"observability": \{ "enabled": true \}/, `"observability": { "enabled": ${process.env.BENCH_OBSERVABILITY === "1"} }`);
writeFileSync(`${OUT}/wrangler.jsonc`, config);
const dist = `${OUT}/dist`;
rmSync(dist, { recursive: true, force: true });
wrangler(["deploy", "--dry-run", "--outdir", dist, "--config", `${OUT}/wrangler.jsonc`], { quiet: true });
const state = `${OUT}/state`;
rmSync(state, { recursive: true, force: true });
// The D1 schema as production has it (a session's end and its recording reach D1).
wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state, "--config", `${OUT}/wrangler.jsonc`], { quiet: true });
const worker = await unstable_startWorker({ config: `${OUT}/wrangler.jsonc`, entrypoint: `${dist}/worker.js`, ...benchWorkerOptions(state) });
bench.cleanup(() => rmSync(state, { recursive: true, force: true }));
bench.cleanup(() => worker.dispose());

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

/**
 * The session's input limits (src/calls/session/media-sockets.ts, input-guard.ts): 50 messages waiting at most, 1,000
 * a second; beyond them a message is dropped and a socket that keeps flooding is closed. Feeding 5,000 frames at once
 * (as this bench did) was a flood: nothing came back.
 */
const WINDOW = 40;
const MAX_RATE = 900;

/**
 * Sends `n` frames through `ws` as fast as the session echoes them, within its input limits; `echoed()` counts the
 * echoes, `onEcho` sees the count as it grows. Stops the bench when no echo comes for 30 s.
 */
async function feed(ws, frames, n, echoed, what, onEcho = () => {}) {
  const t0 = performance.now();
  let sent = 0;
  let seen = 0;
  let movedAt = t0;
  while (echoed() < n) {
    const allowed = Math.min(n, echoed() + WINDOW, Math.floor(((performance.now() - t0) / 1000) * MAX_RATE) + WINDOW);
    while (sent < allowed) ws.send(frames[sent++ % frames.length]);
    await new Promise((r) => setTimeout(r, 1));
    if (echoed() !== seen) {
      seen = echoed();
      movedAt = performance.now();
      onEcho(seen);
    } else if (performance.now() - movedAt > 30_000) throw new BenchStopped(`${what}: ${seen} of ${n} frames echoed, none for 30 s (${sent} sent)`);
  }
}

/** Opens session `n`; resolves with the socket once it is open. */
function open(base, n, onMedia, query = "") {
  const opening = new Promise((resolve, reject) => {
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
  return within(opening, 30_000, `session ${n}: opening its socket`);
}

await bench.run(async () => {
  await worker.ready;
  const base = String(await worker.url).replace(/\/$/, "");
  const frames = path.tone(50 * SECONDS);

  // One session, fed as fast as it echoes: frames per second it sustains.
  {
    bench.phase("one session, as fast as it goes");
    console.error("one session, as fast as it goes ...");
    const N = 5_000;
    let got = 0;
    const ws = await open(base, 1, () => got++);
    const t0 = performance.now();
    await feed(ws, frames, N, () => got, "one session");
    const s = (performance.now() - t0) / 1000;
    report.push(
      `one session, as fast as it goes (at most ${WINDOW} frames unechoed, ${MAX_RATE} a second: the session's input limits): ${N} frames echoed in ${s.toFixed(2)} s = ${Math.round(N / s).toLocaleString("en")} frames/s (${Math.round(N / s / 50)}× real time)`,
    );
    ws.close();
  }

  // A 30-minute call, recorded, through one session as fast as it goes: workerd's memory as the call goes on.
  {
    bench.phase("a 30-minute recorded call");
    console.error("a 30-minute recorded call ...");
    const N = 90_000;
    const marks = [];
    let got = 0;
    const ws = await open(base, 2, () => got++, process.env.BENCH_RECORD === "0" ? "" : "?record=1");
    marks.push(["0 min", workerdRss()]);
    const t0 = performance.now();
    // The memory every 10 minutes of the call (30,000 frames echoed).
    await feed(
      ws,
      frames,
      N,
      () => got,
      "the 30-minute call",
      (echoed) => {
        if (echoed >= marks.length * 30_000) marks.push([`${marks.length * 10} min`, workerdRss()]);
      },
    );
    const s = (performance.now() - t0) / 1000;
    ws.close();
    report.push(
      `a 30-minute recorded call (${N.toLocaleString("en")} frames echoed in ${s.toFixed(1)} s): workerd RSS ${marks.map(([t, mb]) => `${t} ${mb.toFixed(0)} MiB`).join(", ")}`,
    );
  }

  // CALLS concurrent real-time calls: every echoed frame timed from its send.
  bench.phase(`${CALLS} concurrent calls`);
  console.error(`${CALLS} concurrent calls ...`);
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
  // Frames that never came back would be left out of the percentiles: fewer than 99 % echoed is a broken run.
  if (latencies.length < CALLS * frames.length * 0.99)
    throw new Error(`${CALLS} concurrent calls: ${latencies.length} of ${CALLS * frames.length} frames echoed`);
  report.push(
    `${CALLS} concurrent calls, ${SECONDS} s of real-time speech each: ${latencies.length.toLocaleString("en")} frames echoed; ` +
      `send → echo p50 ${fmt(pct(latencies, 50))} ms, p99 ${fmt(pct(latencies, 99))} ms, max ${fmt(Math.max(...latencies))} ms ` +
      `(the pacer's lead is 3 frames, so an echo is sent as soon as it is made)`,
  );
  console.log(report.join("\n"));
});
