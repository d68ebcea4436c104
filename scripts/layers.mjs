#!/usr/bin/env node
// The layer check (issue 29), run by `npm run check`: `node scripts/layers.mjs` from the project root.
// Fails (exit 1) on any of:
//   - an import between src/ folders against the direction of RANKS below,
//   - an import circle between files anywhere in src/ (type-only imports count: they tie the modules' designs),
//   - a file in src/ longer than MAX_LINES,
//   - a folder of src/ with no rank, or a relative import that resolves to nothing.
// Imports are read with the TypeScript parser (static, re-exports, dynamic `import()` and `import("…")` types),
// so multi-line imports and folder index files are seen as tsc sees them.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const MAX_LINES = 500;

// The direction, as ranks: a file may import a file of another folder only when that folder's rank is lower.
// Folders of equal rank are independent (neither imports the other), e.g. the carriers under
// telephony/providers/. Every folder of src/ needs a line here; a new folder fails the check until it has one.
// A key ending in "/**" ranks a folder with everything under it as one unit: inside it only circles are checked.
// A key naming a file ranks that file apart from its folder; keep these rare and say why.
//
// Moving a part means moving its line, at the same rank; each new subfolder gets its own line.
const RANKS = {
  // The Worker's entry: src/index.ts (exports the Durable Objects) and src/app.ts (mounts every router).
  "": 100,
  // The carrier simulator is a Worker of its own (src/dev/simulator/wrangler.toml; tests and `npm run demo` run it
  // beside edgedial). It ranks with the entry: it may use lib/ and the providers' shared types, and nothing in the
  // app may import it. Its inside is a test tool, one unit: circles are checked there, layers are not.
  dev: 100,
  "dev/simulator/**": 100,

  // Privacy: the data policy, the retention purge and erasure by phone number; erasure reaches campaign objects and
  // calls' records, so it sits above both.
  privacy: 95,

  // Campaigns: routes and the campaign object, over its imports (csv/), over its engine (engine/).
  campaigns: 90,
  "campaigns/csv": 86,
  "campaigns/engine": 83,

  // Agent tests (issue 40): an agent's test scenarios, their runs over the simulator's carriers, and the results;
  // above calls (a test is a call) and below campaigns (whose start asks whether a version passed).
  "agent-tests": 85,

  // Calls, one folder per capability (each file's header says what it is for). On top, src/calls/*.ts: the two
  // assemblies over every capability, the deployed call session class and the carrier callbacks' router.
  calls: 80,
  // A carrier's own live machinery (the ARI events object): its inbound, resume and transfer over the shared ones.
  "calls/ari": 78,
  // The ways a call comes in (a carrier's inbound URL, Exotel's stream) and a browser's web call: both start a call.
  "calls/inbound": 76,
  "calls/web": 76,
  // Starting a call, a carrier coming back to a live call, handing a call to a person, the work after a call:
  // independent of one another, each over run records and the carrier callbacks' proofs.
  "calls/start": 74,
  "calls/resume": 74,
  "calls/transfer": 74,
  "calls/after-call": 74,
  // What a carrier's requests carry and prove: per-run tokens and URLs, the stream token, the key presses reported.
  "calls/callbacks": 73,
  // Call records (runs): created, their status applied in one place, details, recordings, latency, the watchdog.
  "calls/runs": 72,
  // The seams below the records: the campaign engine's contract and port, and engine admission (src/capacity).
  "calls/campaign": 71,
  "calls/admission": 71,
  // The call session (one Durable Object per answered call), which reaches the voice agent only through the
  // VoiceAgent seam and the calls module only through its ports.
  "calls/session": 70,

  // Telephony: configurations, numbers, calling policy and rules; then the list of carriers (registry.ts), over
  // each carrier (one folder each, independent of one another), over the carriers' shared kit
  // (telephony/providers/*.ts: types, define, kit, media-kit, provision-kit, plivo-family).
  telephony: 60,
  "telephony/providers/sandbox": 56, // local development's carrier: Twilio's protocol to the simulator, built on twilio/
  "telephony/providers/registry.ts": 57, // the one file that imports every carrier ("one folder + one registry line")
  "telephony/providers/ari": 55,
  "telephony/providers/cloudonix": 55,
  "telephony/providers/exotel": 55,
  "telephony/providers/plivo": 55,
  "telephony/providers/telnyx": 55,
  "telephony/providers/twilio": 55,
  "telephony/providers/vobiz": 55,
  "telephony/providers/vonage": 55,
  "telephony/providers": 50,

  // The voice agent stands beside telephony (calls uses both) and may use neither: ranked with the carriers' kit,
  // below the carriers, so no telephony folder is open to it. It may use workflows/, uploads/ and lib/.
  agent: 50,
  // Answering-machine detection (issue 42): who answered, from the callee's audio and words; pure, under the agent.
  "agent/amd": 48,

  // The parts every feature builds on, independent of one another.
  organizations: 40,
  // The deployment's engine budgets (Workers AI's per-account limits): what admission counts before taking a call.
  capacity: 40,
  workflows: 40,
  uploads: 40,
  webhooks: 40,
  health: 40,

  // Shared code: audio (codecs, resampling, framing, pacing) may use lib's helpers; lib knows nothing of audio.
  "lib/audio": 25,
  lib: 20,

  // The D1 schema.
  db: 10,
};

const root = process.cwd();
const src = resolve(root, "src");
const rel = (path) => relative(root, path).split(sep).join("/");
const folderOf = (file) => {
  const dir = relative(src, dirname(file)).split(sep).join("/");
  return dir === "." ? "" : dir;
};

/** The rank entry that governs a file (its src-relative path) or a folder: its own line, its folder's, else the nearest "/**" line above. */
function rankOf(path, folder = path) {
  if (path in RANKS) return { key: path, rank: RANKS[path] };
  if (folder in RANKS) return { key: folder, rank: RANKS[folder] };
  for (let up = folder; up; up = up.includes("/") ? up.slice(0, up.lastIndexOf("/")) : "") {
    if (`${up}/**` in RANKS) return { key: `${up}/**`, rank: RANKS[`${up}/**`] };
  }
  return null;
}

const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const files = [];
const folders = [];
(function walk(dir) {
  folders.push(dir);
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    // Dot folders are tools' output, not code (wrangler's .wrangler/tmp bundle beside the simulator's wrangler.toml
    // while npm run dev or npm run demo runs it).
    if (name.startsWith(".")) continue;
    if (statSync(path).isDirectory()) walk(path);
    else if (CODE.test(name)) files.push(path);
  }
})(src);

/** Relative specifiers resolved as the bundler does: the file, with an extension, or a folder's index. */
function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [base, ...[".ts", ".mts", ".js", ".mjs", ".json"].map((ext) => base + ext), join(base, "index.ts"), join(base, "index.js")];
  if (/\.m?js$/.test(spec)) candidates.push(base.replace(/\.(m?)js$/, ".$1ts"));
  return candidates.find((path) => existsSync(path) && statSync(path).isFile()) ?? null;
}

/** Every module specifier a file names, with whether the import carries types only. */
function importsOf(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith("js") ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const found = [];
  const add = (node, typeOnly) => {
    if (node && ts.isStringLiteralLike(node))
      found.push({ spec: node.text, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes = named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, Boolean(clause && (clause.isTypeOnly || (!clause.name && allNamedTypes))));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const allTypes = clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, node.isTypeOnly || Boolean(allTypes));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const problems = { rank: [], direction: [], circle: [], length: [], unresolved: [] };

for (const dir of folders) {
  const folder = folderOf(join(dir, "x"));
  if (!rankOf(folder)) problems.rank.push(`src/${folder}/ has no rank: add a line for "${folder}" to RANKS in scripts/layers.mjs`);
}

const graph = new Map(files.map((file) => [file, []]));
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_LINES) problems.length.push(`${rel(file)}: ${lines} lines (at most ${MAX_LINES})`);

  for (const { spec, typeOnly, line } of importsOf(file, text)) {
    if (!spec.startsWith(".")) continue; // packages, node:, cloudflare:
    const target = resolveImport(file, spec);
    if (!target) {
      problems.unresolved.push(`${rel(file)}:${line} imports "${spec}", which resolves to no file`);
      continue;
    }
    if (!graph.has(target)) continue; // outside src/ (package.json) or not code
    graph.get(file).push({ target, typeOnly, line, spec });

    const from = rankOf(relative(src, file).split(sep).join("/"), folderOf(file));
    const to = rankOf(relative(src, target).split(sep).join("/"), folderOf(target));
    if (!from || !to || from.key === to.key) continue; // one folder, or one unit
    if (to.rank >= from.rank) {
      const a = from.key || "(entry)";
      const b = to.key || "(entry)";
      problems.direction.push(`${rel(file)}:${line} -> ${rel(target)}${typeOnly ? " (type only)" : ""}: ${a} (${from.rank}) may not import ${b} (${to.rank})`);
    }
  }
}

// Circles: the strongly connected components of the file graph (Tarjan's algorithm, iterative so a long chain
// cannot overflow the stack). A component of two or more files, or a file importing itself, is a circle.
{
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  for (const start of files) {
    if (index.has(start)) continue;
    const work = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node);
      if (frame.edge < edges.length) {
        const { target } = edges[frame.edge++];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const members = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        members.push(member);
      } while (member !== frame.node);
      const selfImport = graph.get(frame.node).some((e) => e.target === frame.node);
      if (members.length > 1 || selfImport) reportCircle(members);
    }
  }
}

/** A circle's files and the imports that tie them, so whoever breaks it sees which import to turn around. */
function reportCircle(members) {
  const inside = new Set(members);
  const sorted = [...members].sort();
  const ties = [];
  for (const file of sorted) {
    for (const { target, typeOnly, line } of graph.get(file)) {
      if (inside.has(target)) ties.push(`      ${rel(file)}:${line} -> ${rel(target)}${typeOnly ? " (type only)" : ""}`);
    }
  }
  problems.circle.push(`${members.length} file(s): ${sorted.map(rel).join(", ")}\n    imports inside it:\n${[...new Set(ties)].join("\n")}`);
}

const sections = [
  ["rank", "folders without a rank"],
  ["unresolved", "relative imports that resolve to no file"],
  ["direction", "imports against the direction (a folder imports only folders of lower rank)"],
  ["circle", "import circles between files"],
  ["length", `files over ${MAX_LINES} lines`],
];
let failed = 0;
for (const [key, title] of sections) {
  if (!problems[key].length) continue;
  failed += problems[key].length;
  console.log(`\n${problems[key].length} ${title}:`);
  for (const line of problems[key].sort()) console.log(`  ${line}`);
}
const absent = Object.keys(RANKS).filter((key) => !existsSync(join(src, key.replace(/\/\*\*$/, ""))));
if (absent.length) console.log(`\nnote: RANKS names folders that do not exist (remove or rename them): ${absent.join(", ")}`);
if (failed) {
  console.log(`\nlayers: ${failed} problem(s) in ${files.length} files under src/`);
  process.exit(1);
}
console.log(`layers: ${files.length} files under src/: every import runs with the direction, no circle, none over ${MAX_LINES} lines`);
