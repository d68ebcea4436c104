#!/usr/bin/env node
// The map must not drift from the territory: every repository path the contributor documents name in backticks
// (`src/calls/start/start.ts`, `src/telephony/providers/*/media.ts`, `src/campaigns/engine/`) must exist, and a bare
// module name (`media-loop.ts`) must name a file somewhere in the repository. Run by `npm run check`.
// Usage: node scripts/doc-paths.mjs [file.md ...]   (default: the documents below). Exit 1 when a path is missing.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const DOCS = process.argv.slice(2).length ? process.argv.slice(2) : ["ARCHITECTURE.md", "CONTRIBUTING.md", "AGENTS.md"];
const root = process.cwd();
const topLevel = new Set(readdirSync(root));
const CODE_FILE = /^[\w.-]+\.(ts|mts|mjs|js)$/;
const SKIP_DIRS = new Set(["node_modules", ".git", ".wrangler"]);

/** Every file name in the repository (bare names are looked up here). */
const names = new Set();
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else names.add(name);
  }
})(root);

/** A path whose segments may be `*`, `<name>` or `{name}` (any one entry): true when some entry matches. */
function exists(path) {
  const segments = path.replace(/\/$/, "").split("/");
  const wild = (s) => s === "*" || /^<[^>]+>$/.test(s) || /^\{[^}]+\}$/.test(s);
  const step = (dir, i) => {
    if (i === segments.length) return true;
    const seg = segments[i];
    if (!wild(seg)) return existsSync(join(dir, seg)) && step(join(dir, seg), i + 1);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
    return readdirSync(dir).some((entry) => step(join(dir, entry), i + 1));
  };
  return step(root, 0);
}

const missing = [];
let checked = 0;
for (const doc of DOCS) {
  if (!existsSync(doc)) {
    missing.push(`${doc}: the document itself is missing`);
    continue;
  }
  const lines = readFileSync(doc, "utf8").split("\n");
  lines.forEach((text, i) => {
    for (const m of text.matchAll(/`([^`\s]+)`|\]\(([^)\s#]+)\)/g)) {
      // `file.ts:120` and `file.ts#L120` name the file; a trailing `()` or punctuation is not part of the path.
      const token = (m[1] ?? m[2])
        .replace(/[:#]L?\d+(-\d+)?$/, "")
        .replace(/\(\)$/, "")
        .replace(/[.,;]$/, "");
      if (/^[a-z]+:/.test(token) || token.startsWith("/")) continue; // URLs, node:…, API paths
      const first = token.split("/")[0];
      const isPath = token.includes("/") && topLevel.has(first);
      const isBareFile = !token.includes("/") && (CODE_FILE.test(token) || topLevel.has(token));
      if (!isPath && !isBareFile) continue;
      checked++;
      const ok = isPath ? exists(token) : topLevel.has(token) || names.has(token);
      if (!ok) missing.push(`${doc}:${i + 1}: ${token}`);
    }
  });
}
if (missing.length) {
  console.log(`${missing.length} path(s) named in the documents do not exist (moved? update the document):`);
  for (const line of missing) console.log(`  ${line}`);
  process.exit(1);
}
console.log(`doc-paths: ${checked} paths named in ${DOCS.join(", ")} exist`);
