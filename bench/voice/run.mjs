// bench/voice: the time edgedial adds between the end of the callee's turn and the agent's first audio, with the
// speech-to-text, model and text-to-speech stubbed at fixed latencies (so the figure is edgedial's own), p50/p99,
// for 1 call at a time and for 50 concurrent calls in one process (one isolate's worth of sessions).
//
//   npm run bench:voice
//   npm run bench:voice -- --e2e [1,50,200]   # whole calls through the runtime (e2e.mjs; bench/voice/README.md)
import { mkdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { startBench } from "../lib/bounds.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
if (process.argv.includes("--e2e")) {
  const levels = (process.argv.find((a) => /^\d+(,\d+)*$/.test(a)) ?? "1,50").split(",").map(Number);
  // Bound: 5 minutes for the Worker's build and start, and 3 for each level's calls (a call lasts under 40 s).
  const bench = startBench("bench:voice --e2e", { seconds: 300 + 180 * levels.length });
  // The carriers' side of their media streams (carrier.ts), for the Node client.
  mkdirSync(`${ROOT}bench/out/voice-e2e`, { recursive: true });
  await build({
    entryPoints: [`${ROOT}bench/voice/carrier.ts`],
    bundle: true,
    format: "esm",
    platform: "node",
    outfile: `${ROOT}bench/out/voice-e2e/carrier.mjs`,
    logLevel: "warning",
  });
  const { e2e } = await import("./e2e.mjs");
  await bench.run(() => e2e(ROOT, levels, bench));
}
// Bound: the agent's turns in Node take seconds; 5 minutes is a bench that is stuck.
const bench = startBench("bench:voice", { seconds: 300 });
bench.phase("bundling the agent");
const OUT = `${ROOT}bench/out/voice`;
mkdirSync(OUT, { recursive: true });
await build({ entryPoints: [`${ROOT}bench/voice/turn.ts`], bundle: true, format: "esm", platform: "node", outfile: `${OUT}/turn.mjs`, logLevel: "warning" });
const { oneTurn } = await import(pathToFileURL(`${OUT}/turn.mjs`).href);

const L = { sttMs: 100, firstTokenMs: 300, ttsMs: 80 };
const STUBS = L.sttMs + L.firstTokenMs + L.ttsMs;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

// Quiet the agent's own log lines (one per call would drown the figures).
console.info = () => {};
const log = console.log;
console.log = (...a) => (typeof a[0] === "string" && a[0].startsWith("{") ? undefined : log(...a));

async function run(concurrent, rounds) {
  const added = [];
  for (let r = 0; r < rounds; r++) {
    const turns = await Promise.all(Array.from({ length: concurrent }, () => oneTurn(L)));
    for (const t of turns) added.push(t - STUBS);
  }
  return added;
}

await bench.run(async () => {
  bench.phase("warm-up");
  await run(5, 2);
  const lines = [];
  for (const [concurrent, rounds] of [
    [1, 100],
    [50, 10],
  ]) {
    bench.phase(`${concurrent} concurrent`);
    const added = await run(concurrent, rounds);
    if (added.length !== concurrent * rounds || !added.every(Number.isFinite))
      throw new Error(`${concurrent} concurrent: ${added.length} turns timed of ${concurrent * rounds}`);
    lines.push(
      `${concurrent} ${concurrent === 1 ? "call" : "concurrent calls"}: ${added.length} turns; added by edgedial (end of turn → first audio, minus ${STUBS} ms of stubbed ` +
        `speech-to-text ${L.sttMs} + first token ${L.firstTokenMs} + text-to-speech ${L.ttsMs}): p50 ${pct(added, 50).toFixed(2)} ms, p99 ${pct(added, 99).toFixed(2)} ms`,
    );
  }
  // Printed once both levels ran: a bench that failed part-way reports nothing.
  for (const line of lines) log(line);
});
