#!/usr/bin/env node
// npm run check: the static checks, each run even when one before it failed, so one run lists every problem.
// The first step of .ci/run; run it before a commit.
import { spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";

const STEPS = [
  ["typecheck", "tsc --noEmit"],
  // Warnings fail too: the lint stays at zero warnings instead of drifting back up.
  ["Biome (format and lint)", "biome ci --error-on-warnings --max-diagnostics=none"],
  ["layers (direction, circles, file length)", "node scripts/layers.mjs"],
  ["paths named in ARCHITECTURE.md, CONTRIBUTING.md, AGENTS.md", "node scripts/doc-paths.mjs"],
  ["generated API client types are current", "node scripts/api-types.mjs --check"],
  ["generated binding types are current", "wrangler types --include-runtime=false --strict-vars=false --env-file .dev.vars.example --check"],
];

const env = { ...process.env, PATH: [join(process.cwd(), "node_modules", ".bin"), process.env.PATH].join(delimiter) };
const failed = [];
for (const [name, command] of STEPS) {
  console.log(`\n== ${name}: ${command}`);
  const started = Date.now();
  const { status } = spawnSync(command, { shell: true, stdio: "inherit", env });
  const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (status === 0) console.log(`-- ok (${took})`);
  else {
    console.log(`-- FAILED (exit ${status}, ${took})`);
    failed.push(name);
  }
}
console.log(failed.length ? `\ncheck: ${failed.length} of ${STEPS.length} failed: ${failed.join("; ")}` : `\ncheck: all ${STEPS.length} passed`);
process.exit(failed.length ? 1 : 0);
