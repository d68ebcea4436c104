// bench/voice --e2e: whole calls through the runtime. wrangler's dev server runs e2e-worker.ts (the product's
// CallSession and conversation agent on stand-in engines at published latencies); this client is the carrier and the
// caller: per call a carrier's media socket (BENCH_CARRIER, Twilio's Media Streams by default: connected, start, 8 kHz
// mu-law media every 20 ms in real time, marks echoed once the audio before them has played). The caller speaks 1.2 s,
// then stays quiet; per reply we take the caller's last word (the send of their last voiced frame) -> the reply's
// first audio heard (Playback: 1x playout), and the longest gap heard inside the reply.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { unstable_startWorker } from "wrangler";
import { wrangler } from "../../scripts/lib/wrangler.mjs";
import { cpuProfiler, profileSummary } from "../lib/profile.mjs";
import { benchWorkerOptions, cpuOf, descendants } from "../lib/shared.mjs";
import { Playback, percentile } from "./heard.ts";
import { within } from "../lib/bounds.mjs";

// The stubs' own time on a reply's path (e2e-ai.ts): the model is asked at EagerEndOfTurn (110 ms), its first token
// ("Sure, ", a whole first clause) comes 300 ms later and the voice's audio 150 ms after that; EndOfTurn (260 ms)
// comes sooner, so it does not hold the reply back. What the caller waits beyond this is edgedial's own.
// BENCH_STT=smart-turn (Deepgram's Nova with the agent's key): at a short pause the model is asked ahead on Nova's
// interim words (REPLY_AHEAD_PAUSE_MS, 60 ms), and the first clause's voice is asked at its first token; at 200 ms
// smart-turn (its verdict in 100 ms, then Nova's final result 50 ms after Finalize: the turn ends at 350 ms, before
// the voice's audio, 60 + 300 + 150 = 510 ms). The short pause is edgedial's own wait, counted here with the stubs.
/**
 * `BENCH_STT`: how the agent hears (e2e-worker.ts): workers-ai-flux (default: Flux at the AI binding), deepgram-flux
 * (Flux on Deepgram's own API with the agent's key), smart-turn (Deepgram's Nova with the key, smart-turn at a pause).
 */
const STT = process.env.BENCH_STT ?? "workers-ai-flux";
/** src/agent/turn-ends.ts REPLY_AHEAD_PAUSE_MS (100 until 2026-11-29 09:20 UTC). */
const REPLY_AHEAD_PAUSE_MS = 60;
const STUBS_MS = STT === "smart-turn" ? Math.max(200 + 100 + 50, REPLY_AHEAD_PAUSE_MS + 300 + 150) : Math.max(260, 110 + 300 + 150);
const SPEAK_FRAMES = 60;
const REPLIES = Number(process.env.BENCH_REPLIES ?? 3);
/** `BENCH_STALL_MS=300`: every 1.5 s of the calls, the isolate is kept busy that long (the fault), and gaps are counted. */
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 0);
/** `BENCH_PROFILE=1`: a CPU profile of the isolate over each level's calls (bench/out/voice-e2e/calls-N.cpuprofile), summarized. */
const PROFILE = process.env.BENCH_PROFILE === "1";
/**
 * `BENCH_HEARD=1`: the calls are recorded and each recording measured as the after-call work does (docs/turn-timing.md):
 * the gap heard on the recording (end of the caller's voice → start of the agent's) beside the bench's own figure.
 */
const HEARD = process.env.BENCH_HEARD === "1";
/**
 * `BENCH_CARRIER`: whose media stream the client speaks (twilio by default; telnyx, plivo, vonage, ... as
 * src/agent-tests/callee.ts speaks them: Vonage's is binary 16 kHz linear audio, the rest 8 kHz mu-law in JSON).
 */
const CARRIER = process.env.BENCH_CARRIER ?? "twilio";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The caller's voice: a 220 Hz tone, 20 ms at `rate`; and 20 ms of silence. */
const toneFrame = (rate) => Int16Array.from({ length: rate / 50 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 220 * i) / rate)));
const quietFrame = (rate) => new Int16Array(rate / 50);
/** Whether 20 ms of the agent's audio carries its voice (the stubbed voice's level is far above this). */
const voiced = (samples) => {
  let sum = 0;
  for (const x of samples) sum += x * x;
  return Math.sqrt(sum / samples.length) >= 500;
};

async function startWorker(root, out) {
  const config = readFileSync(`${root}wrangler.jsonc`, "utf8")
    .replace(/^(\s*)"main": .*$/m, `$1"main": "${root}bench/voice/e2e-worker.ts",`)
    .replace(/^(\s*)"migrations_dir": .*$/m, `$1"migrations_dir": "${root}migrations"`)
    // The config is written elsewhere: its paths into src/ (the bundle's aliases) must not be relative to it.
    .replaceAll('"./src/', `"${root}src/`)
    .replace(/"directory": "\.\/public"/, `"directory": "${root}public"`)
    .replace(/^(\s*)"\$schema": .*$/m, "")
    .replace(/"observability": \{ "enabled": true \}/, `"observability": { "enabled": false }`);
  writeFileSync(`${out}/wrangler.jsonc`, config);
  rmSync(`${out}/dist`, { recursive: true, force: true });
  wrangler(["deploy", "--dry-run", "--outdir", `${out}/dist`, "--config", `${out}/wrangler.jsonc`], { quiet: true });
  rmSync(`${out}/state`, { recursive: true, force: true });
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", `${out}/state`, "--config", `${out}/wrangler.jsonc`], { quiet: true });
  const options = benchWorkerOptions(`${out}/state`);
  if (PROFILE) options.dev.inspector = { port: 9342 };
  const worker = await unstable_startWorker({ config: `${out}/wrangler.jsonc`, entrypoint: `${out}/dist/e2e-worker.js`, ...options });
  await worker.ready;
  return worker;
}

/**
 * One call: greeting heard, then REPLIES turns. Resolves with each reply's figures. `carrier`: the carrier's side of
 * its media stream (carrier.ts): its opening messages, its framing of the caller's audio, and how it reads the agent's
 * audio, marks and clears.
 */
async function call(base, orgId, runId, t0, carrier) {
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}/bench/call/${runId}?org=${orgId}&provider=${CARRIER}${HEARD ? "&record=1" : ""}`);
  ws.binaryType = "arraybuffer";
  // A call that cannot connect fails the bench (its figures would leave it out): within 30 s, with the reason.
  await within(
    new Promise((res, rej) => {
      ws.addEventListener("open", res);
      ws.addEventListener("error", () => rej(new Error(`call ${runId}: socket error`)));
    }),
    30_000,
    `call ${runId}: opening its media socket`,
  );
  const { protocol, toWire, fromWire } = carrier;
  const rate = protocol.format.rate;
  const sid = `MZ${runId}`;
  const play = new Playback();
  let lastAudioArrival = 0;
  ws.addEventListener("message", (e) => {
    const m = protocol.read(e.data);
    const now = performance.now();
    if (m?.kind === "audio") {
      // The carrier plays it 20 ms at a time.
      const samples = fromWire(protocol.format, m.payload);
      for (let i = 0; i + rate / 50 <= samples.length; i += rate / 50) {
        const v = voiced(samples.subarray(i, i + rate / 50));
        if (v) lastAudioArrival = now;
        play.frame(now, v);
      }
    } else if (m?.kind === "mark") {
      // The carrier echoes a mark once the audio sent before it has played (at once when none is queued).
      const echo = protocol.markPlayed?.(m.name, sid, m.payload);
      if (echo) setTimeout(() => ws.readyState === 1 && ws.send(echo), Math.max(0, play.playingUntil - now));
    } else if (m?.kind === "clear") {
      lastAudioArrival = 0;
      const ack = protocol.cleared?.(sid);
      if (ack && ws.readyState === 1) ws.send(ack);
    }
  });
  for (const msg of protocol.opening(`CA${runId}`, sid)) ws.send(msg);
  const tone = toWire(protocol.format, toneFrame(rate));
  const quiet = toWire(protocol.format, quietFrame(rate));
  // The caller's line: a frame every 20 ms on a schedule of its own (late timers catch up, as a jitter buffer would).
  let speaking = 0;
  let lastWordAt = 0;
  let n = 0;
  let open = true;
  const pump = (async () => {
    while (open) {
      const due = t0 + n * 20;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      n++;
      if (!open || ws.readyState !== 1) break;
      const v = speaking > 0;
      ws.send(protocol.audio(v ? tone : quiet, sid, n - 1));
      if (v && --speaking === 0) lastWordAt = performance.now();
    }
  })();
  // The reply is over once its audio has played and none came for 800 ms.
  const settled = async (limitMs) => {
    const until = performance.now() + limitMs;
    while (performance.now() < until) {
      await sleep(50);
      const now = performance.now();
      if (lastAudioArrival && now > play.playingUntil && now - lastAudioArrival > 800) return true;
    }
    return false;
  };
  const replies = [];
  await settled(5000);
  play.take(); // the greeting
  for (let r = 0; r < REPLIES; r++) {
    lastAudioArrival = 0;
    speaking = SPEAK_FRAMES;
    await sleep(SPEAK_FRAMES * 20 + 100);
    const done = await settled(8000);
    const h = play.take();
    replies.push({ delay: h.firstAudioAt === null ? null : h.firstAudioAt - lastWordAt, gap: h.longestGapMs, gapAfter: h.longestGapAfterMs, done });
    await sleep(300);
  }
  open = false;
  await pump;
  const stop = protocol.stop(sid);
  if (stop) ws.send(stop);
  ws.close();
  return replies;
}

const f = (x) => (Number.isFinite(x) ? x.toFixed(0) : "–");

/**
 * Stalls the isolate for about `ms` every `everyMs` until stopped: the loop count is calibrated (after a warm-up) by
 * timing a stall's round trip, and corrected after each stall. Resolves (on stop) with each stall's measured length.
 */
function stallEvery(base, ms, everyMs) {
  let on = true;
  const took = [];
  const spin = async (loops) => {
    const t = performance.now();
    await fetch(`${base}/bench/stall?loops=${loops}`);
    return performance.now() - t;
  };
  const done = (async () => {
    let loops = 5_000_000;
    await spin(loops); // compiled first: the loop runs far faster once optimized
    loops = Math.round((loops * ms) / (await spin(loops)));
    while (on) {
      await sleep(everyMs);
      if (!on) break;
      const t = await spin(loops);
      took.push(t);
      // The loop's speed drifts as the engine optimizes it: each stall corrects the next one's length.
      loops = Math.round(loops * Math.min(2, Math.max(0.5, ms / t)));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await done;
      return took;
    },
  };
}

/** A bench request of the runner's own: bounded, and an error unless it answers 2xx. */
async function benchJson(url, init = {}) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${new URL(url).pathname}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return res.json();
}

/** `bench`: the run's bounds (bench/lib/bounds.mjs): its phases named in a failure, the runtime closed on the way out. */
export async function e2e(root, levels, bench) {
  const out = `${root}bench/out/voice-e2e`;
  mkdirSync(out, { recursive: true });
  // Bundled by run.mjs (carrier.ts).
  const { CALLEE_PROTOCOLS, toWire, fromWire } = await import(pathToFileURL(`${out}/carrier.mjs`).href);
  if (!CALLEE_PROTOCOLS[CARRIER]) throw new Error(`no such BENCH_CARRIER: ${CARRIER} (${Object.keys(CALLEE_PROTOCOLS).join(", ")})`);
  const carrier = { protocol: CALLEE_PROTOCOLS[CARRIER], toWire, fromWire };
  bench.phase("building and starting the Worker");
  const worker = await startWorker(root, out);
  bench.cleanup(() => rmSync(`${out}/state`, { recursive: true, force: true }));
  bench.cleanup(() => worker.dispose());
  {
    const base = String(await worker.url).replace(/\/$/, "");
    const profiler = PROFILE ? await cpuProfiler(await worker.inspectorUrl, "edgedial") : null;
    for (const calls of levels) {
      bench.phase(`${calls} calls: seeding`);
      const { orgId, runIds } = await benchJson(`${base}/bench/seed?calls=${calls}&stt=${STT}`, { method: "POST" });
      console.log(`speech-to-text: ${STT}, carrier: ${CARRIER}`);
      if (runIds?.length !== calls) throw new Error(`seeded ${runIds?.length} runs of ${calls}`);
      bench.phase(`${calls} calls: calling`);
      await profiler?.start();
      // The runtime's CPU over the level's calls (workerd's processes under this one): what the sessions cost, read
      // beside the latency, since on a shared machine the latency alone moves with the neighbours' load.
      const runtime = descendants(process.pid)
        .filter((p) => /workerd/.test(p.args))
        .map((p) => p.pid);
      const cpu0 = cpuOf(runtime);
      const cpu0Each = runtime.map((pid) => cpuOf([pid]));
      const client0 = process.cpuUsage();
      const t0 = performance.now();
      const stalls = STALL_MS ? stallEvery(base, STALL_MS, 1500) : null;
      // Calls start spread over 2 s, out of step with each other as real ones are.
      const results = await Promise.all(
        runIds.map(async (id, i) => (await sleep((i * 2000) / calls), call(base, orgId, id, t0 + (i * 2000) / calls + (i % 20), carrier))),
      );
      const heardGaps = results.flat().filter((r) => r.gap > 60);
      if (heardGaps.length)
        console.log(
          `  gaps over 60 ms (length after ms of the reply heard): ${heardGaps.map((r) => `${r.gap.toFixed(0)} after ${r.gapAfter.toFixed(0)}`).join(", ")}`,
        );
      const cpuS = cpuOf(runtime) - cpu0;
      const each = runtime.map((pid, i) => (cpuOf([pid]) - cpu0Each[i]).toFixed(1)).join(" + ");
      const client = process.cpuUsage(client0);
      console.log(
        `  CPU over the calls: the runtime ${cpuS.toFixed(1)} s (${each}: its workerd processes), this client (the carriers and callers) ` +
          `${((client.user + client.system) / 1e6).toFixed(1)} s, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      if (stalls) console.log(`  the isolate was stalled ${(await stalls.stop()).map((ms) => ms.toFixed(0)).join(", ")} ms (measured round trips)`);
      if (profiler) profileSummary(await profiler.stop(), `${out}/calls-${calls}.cpuprofile`);
      const all = results.flat();
      const delays = all.map((r) => r.delay).filter((d) => d !== null);
      // Nothing heard is a broken run (the engines' stand-ins, the session), not a latency to report.
      if (!delays.length) throw new Error(`${calls} calls: none of the ${all.length} replies was heard`);
      const gaps = all.map((r) => r.gap);
      const own = delays.map((d) => d - STUBS_MS);
      console.log(
        `${calls} concurrent call${calls > 1 ? "s" : ""}, ${all.length} replies (${all.length - delays.length} unheard, ${all.filter((r) => !r.done).length} not settled): ` +
          `last word -> first audio heard p50 ${f(percentile(delays, 50))}, p95 ${f(percentile(delays, 95))}, p99 ${f(percentile(delays, 99))}, max ${f(Math.max(...delays))} ms; ` +
          `edgedial's own (minus ${STUBS_MS} ms of stubs) p50 ${f(percentile(own, 50))}, p99 ${f(percentile(own, 99))} ms; ` +
          `longest gap inside a reply: p99 ${f(percentile(gaps, 99))}, max ${f(Math.max(...gaps))} ms (${gaps.filter((g) => g > 60).length} replies with a gap over 60 ms)`,
      );
      // Where the time went, from the session's own per-reply timing (ms after the caller's last word).
      await sleep(1500);
      const {
        stages,
        replies: stored,
        stubLateMs,
        pathLateMs,
        heardGaps: recordedGaps,
      } = await benchJson(`${base}/bench/timings?org=${orgId}${HEARD ? "&heard=1" : ""}`);
      if (HEARD) {
        // Reply by reply (the runs' timed replies in order, the bench's replies in order): the recording's gap less the
        // bench's last word -> first audio heard.
        const pairs = results.flatMap((replies, i) =>
          replies.flatMap((r, j) => {
            const g = recordedGaps[runIds[i]]?.[j];
            return r.delay === null || g == null ? [] : [[g, g - r.delay]];
          }),
        );
        const on = pairs.map(([g]) => g);
        const diff = pairs.map(([, d]) => d);
        const abs = diff.map(Math.abs);
        console.log(
          `  heard on the recordings (${pairs.length} of ${all.length} replies): p50 ${f(percentile(on, 50))}, p95 ${f(percentile(on, 95))} ms; ` +
            `less the bench's own figure, reply by reply: p50 ${f(percentile(diff, 50))}, |p95| ${f(percentile(abs, 95))}, |max| ${f(Math.max(...abs))} ms`,
        );
      }
      console.log(
        `  stored timing of ${stored.length} replies, p50 / p99: ` +
          stages
            .map(
              (s) =>
                `${s.replace(/_ms$/, "")} ${f(percentile(stored.map((t) => t[s]).filter(Number.isFinite), 50))} / ${f(percentile(stored.map((t) => t[s]).filter(Number.isFinite), 99))}`,
            )
            .join(", "),
      );
      // Three stub waits lie on a reply's path (EagerEndOfTurn, the first token, the voice): how late they fired is the
      // runtime's, and is counted above in edgedial's own share.
      console.log(
        `  the stubs' waits fired late by p50 ${f(percentile(stubLateMs, 50))}, p99 ${f(percentile(stubLateMs, 99))}, max ${f(Math.max(...stubLateMs))} ms (${stubLateMs.length} waits)`,
      );
      // Each reply's own share less the lateness of the stub waits on its own path: what edgedial's code and the
      // sockets added, with the runtime's lateness in firing the stand-ins' timers taken out.
      const net = results.flatMap((replies, i) =>
        replies.flatMap((r, j) => {
          const late = pathLateMs[runIds[i]]?.[j];
          return r.delay === null || late === undefined ? [] : [r.delay - STUBS_MS - late];
        }),
      );
      console.log(
        `  edgedial's own less its path's stub lateness (${net.length} replies): p50 ${f(percentile(net, 50))}, p95 ${f(percentile(net, 95))}, p99 ${f(percentile(net, 99))}, max ${f(Math.max(...net))} ms`,
      );
    }
  }
}
