// bench/amd: answering-machine detection on the labelled set (issue 42). Builds the set offline (eSpeak NG's npm
// WebAssembly build, seeded tones and noise; bench/amd/set.ts), checks each answer against the SHA-256 kept in
// bench/amd/labels.json, and reports accuracy per class, the confusion matrix, the median time to decide and when the
// voicemail message starts after the beep: with words (a streaming speech engine's) and on the audio alone.
//
//   npm run bench:amd                 # build (or reuse) the set under bench/out/amd/set/, then score it
//   npm run bench:amd -- --relabel    # rewrite bench/amd/labels.json from this build (after changing the set)
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { startBench } from "../lib/bounds.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/out/amd`;
const SET = `${OUT}/set`;
const LABELS = `${ROOT}bench/amd/labels.json`;
const SEED = 42;
// Bound: synthesis takes ~0.3 s an answer (234 of them) on a quiet machine, scoring a few seconds.
const bench = startBench("bench:amd", { seconds: 900 });
const relabel = process.argv.includes("--relabel");

await bench.run(async () => {
  bench.phase("bundling");
  mkdirSync(SET, { recursive: true });
  await build({ entryPoints: [`${ROOT}bench/amd/score.ts`], bundle: true, format: "esm", platform: "node", outfile: `${OUT}/score.mjs`, logLevel: "warning" });
  const m = await import(pathToFileURL(`${OUT}/score.mjs`).href);
  const { default: ESpeakNg } = await import("espeak-ng");
  const { readWav } = m;
  const synth = async (text, voice, wpm) => {
    const es = await ESpeakNg({ arguments: ["-v", voice, "-s", String(wpm), "-w", "out.wav", text], print: () => {}, printErr: () => {} });
    const wav = readWav(es.FS.readFile("out.wav"));
    // eSpeak pads its speech with silence; the plan's pauses are the pauses, so the padding goes.
    const x = wav.samples;
    let a = 0;
    let b = x.length;
    while (a < b && Math.abs(x[a]) < 200) a++;
    while (b > a && Math.abs(x[b - 1]) < 200) b--;
    return m.to8k(x.subarray(Math.max(0, a - 440), Math.min(x.length, b + 440)), wav.rate);
  };
  const kept = existsSync(LABELS) ? JSON.parse(readFileSync(LABELS, "utf8")) : null;
  const plans = m.plan(SEED);
  const answers = [];
  let mismatched = 0;
  // A set already built that matches the labels' checksums is scored as it is (synthesis is the slow part).
  const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");
  const built =
    !relabel &&
    kept?.answers?.length === plans.length &&
    kept.answers.every((a) => existsSync(`${SET}/${a.id}.wav`) && sha(readFileSync(`${SET}/${a.id}.wav`)) === a.sha256);
  if (built) {
    console.log(`all ${plans.length} answers under bench/out/amd/set/ match bench/amd/labels.json's checksums`);
    for (const a of kept.answers) answers.push({ label: a, pcm: m.decode(readFileSync(`${SET}/${a.id}.wav`).subarray(58)), spans: a.spans });
  } else bench.phase(`building ${plans.length} answers`);
  for (const [i, p] of (built ? [] : plans).entries()) {
    const { label, ulaw, spans } = await m.render(p, synth, SEED * 1000 + i);
    const wav = m.ulawWav(ulaw);
    label.sha256 = createHash("sha256").update(wav).digest("hex");
    const was = kept?.answers?.find((a) => a.id === label.id);
    if (was && was.sha256 !== label.sha256) mismatched++;
    writeFileSync(`${SET}/${label.id}.wav`, wav);
    answers.push({ label, pcm: m.decode(ulaw), spans });
  }
  if (built) {
    // scored as kept
  } else if (relabel || !kept) {
    const labels = answers.map((a) => ({ ...a.label, spans: a.spans }));
    writeFileSync(LABELS, `${JSON.stringify({ seed: SEED, espeak: "espeak-ng (npm) 1.0.2", answers: labels }, null, 1)}\n`);
  } else if (mismatched) console.log(`WARNING: ${mismatched} answers differ from bench/amd/labels.json's checksums`);
  else console.log(`all ${answers.length} answers match bench/amd/labels.json's checksums`);

  bench.phase("scoring");
  const classes = ["human", "machine_greeting", "beep", "ivr_menu", "call_screening", "fax_tone", "silence"];
  const machine = (c) => c === "machine_greeting" || c === "beep";
  const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)} %` : "-");
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length / 2)] : null;
  };
  const lines = [`${answers.length} answers (${classes.map((c) => `${c} ${answers.filter((a) => a.label.cls === c).length}`).join(", ")})`];
  for (const words of [true, false]) {
    const results = answers.map((a) => ({ a, r: m.score(a.pcm, a.spans, words) }));
    lines.push("", `## ${words ? "With words (a streaming speech engine's, ~300 ms behind)" : "Audio alone"}`, "");
    lines.push(`| truth \\ decided | ${classes.join(" | ")} | correct | median decide ms |`, `|${"---|".repeat(classes.length + 3)}`);
    for (const c of classes) {
      const rows = results.filter((x) => x.a.label.cls === c);
      const counts = classes.map((d) => rows.filter((x) => x.r.decision.cls === d).length);
      const ok = rows.filter((x) => x.r.decision.cls === c).length;
      lines.push(`| ${c} | ${counts.join(" | ")} | ${pct(ok, rows.length)} | ${median(rows.map((x) => x.r.decision.decideMs))} |`);
    }
    const humans = results.filter((x) => x.a.label.cls === "human");
    const machines = results.filter((x) => machine(x.a.label.cls));
    lines.push(
      "",
      `- humans classified human: ${pct(humans.filter((x) => x.r.decision.cls === "human").length, humans.length)} (target ≥ 95 %)`,
      `- machines (greetings and bare beeps) classified machine: ${pct(machines.filter((x) => machine(x.r.decision.cls)).length, machines.length)} (target ≥ 90 %)`,
      `- median time to decide, all answers: ${median(results.map((x) => x.r.decision.decideMs))} ms`,
    );
    const beeps = results.filter((x) => x.a.label.beep && machine(x.a.label.cls));
    const deltas = beeps.map((x) => (x.r.messageAtMs === null ? null : x.r.messageAtMs - x.a.label.beep.endMs));
    const within = deltas.filter((d) => d !== null && d >= 0 && d <= 500).length;
    const ds = deltas.filter((d) => d !== null);
    lines.push(
      `- message start after the beep's end, ${beeps.length} beeps: within 0-500 ms ${pct(within, beeps.length)} (target ≥ 95 %); median ${median(ds)} ms, min ${Math.min(...ds)}, max ${Math.max(...ds)}; no message ${deltas.filter((d) => d === null).length}, before the beep ended ${ds.filter((d) => d < 0).length}`,
    );
    for (const [i, x] of beeps.entries())
      if (deltas[i] === null || deltas[i] < 0 || deltas[i] > 500)
        lines.push(
          `  - beep ${x.a.label.id} (${x.a.label.beep.hz} Hz, ${x.a.label.beep.onsetMs}-${x.a.label.beep.endMs} ms): message at ${x.r.messageAtMs} (decided ${x.r.decision.cls} at ${x.r.decision.decideMs}: ${x.r.decision.reason})`,
        );
    const wrong = results.filter((x) => x.r.decision.cls !== x.a.label.cls);
    for (const x of wrong.slice(0, 40))
      lines.push(
        `  - ${x.a.label.id} → ${x.r.decision.cls} at ${x.r.decision.decideMs} ms: ${x.r.decision.reason} (noise ${x.a.label.noiseDbfs}) "${x.a.label.text.slice(0, 60)}"`,
      );
  }
  const report = lines.join("\n");
  writeFileSync(`${OUT}/report.md`, `${report}\n`);
  console.log(report);
});
