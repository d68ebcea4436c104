// bench/csv-import's Node side, run by run.mjs in a process of its own (a fresh heap: the parent holds wrangler's dev
// server, whose heap would slow garbage collection here): papaparse alone on the file, papaparse with every number
// checked (normalizeNumber), and the import's own reading and checking without storing (`importCsv` from src: strict
// UTF-8 decode, papaparse, the row rules, every number through libphonenumber-js, the destination policy the bench's
// organization sets; a sink that only counts), alternating over three rounds. Prints the medians as JSON.
//
//   node bench/csv-import/parse.mjs FILE [--pbx]
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import Papa from "papaparse";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const [file] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const PBX = process.argv.includes("--pbx");
const ROUNDS = 3;

/** src modules bundled for Node (once, before any timing). */
async function load(contents) {
  const out = await build({
    stdin: { contents, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "error",
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
}
const { importCsv, rulesOf, DEFAULT_BLOCKED_TYPES, normalizeNumber } = await load(
  [
    'export { importCsv } from "./src/campaigns/csv/import.ts";',
    'export { rulesOf } from "./src/campaigns/csv/rules.ts";',
    'export { DEFAULT_BLOCKED_TYPES } from "./src/telephony/destination-policy.ts";',
    'export { normalizeNumber } from "./src/telephony/numbers.ts";',
  ].join("\n"),
);

/** papaparse streaming the file (its fastest streaming use, chunk callbacks); `each` sees every row. */
function papaparse(each) {
  return new Promise((resolve, reject) => {
    Papa.parse(createReadStream(file, { encoding: "utf8" }), { chunk: (r) => each(r.data), complete: resolve, error: reject });
  });
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

const alone = () => papaparse(() => {});
const withNumbers = () =>
  papaparse((rows) => {
    for (const row of rows) normalizeNumber(row[0] ?? "", PBX);
  });
const rules = rulesOf({
  key: file,
  pbx: PBX,
  numbers: {},
  policy: { allowedCountries: ["US", "GB", "DE"], countriesSource: "policy", blockedTypes: [...DEFAULT_BLOCKED_TYPES], allowedNumbers: [] },
  recordings: [],
  requiredVariables: [],
});
async function checked() {
  let stored = 0;
  const sink = {
    importContacts: async (chunk) => {
      stored += chunk.length;
      return { inserted: chunk.length, duplicates: [] };
    },
  };
  const outcome = await importCsv(Readable.toWeb(createReadStream(file)), { ...rules, sink });
  if (!outcome.ok) throw new Error(`the bench's file did not pass the import's checks: ${JSON.stringify(outcome.items.slice(0, 3))}`);
  return stored;
}

const runs = { papa: [], floor: [], checked: [] };
let checkedRows = 0;
for (let r = 0; r < ROUNDS; r++) {
  runs.papa.push((await timed(alone)).ms);
  runs.floor.push((await timed(withNumbers)).ms);
  const c = await timed(checked);
  runs.checked.push(c.ms);
  checkedRows = c.value;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(JSON.stringify({ papaMs: median(runs.papa), floorMs: median(runs.floor), checkedMs: median(runs.checked), checkedRows, runs }));
