#!/usr/bin/env node
// `npm run agent:test -- --agent <id|file> [--base-url URL] [--key KEY] [--repetitions N] [--protocol P] [--junit FILE]` (--help: the usage)
// Runs an agent's test suite against a local or deployed edgedial and exits non-zero unless it passed.
//   --agent 12              the suite stored under agent 12
//   --agent suite.json      a file like test/fixtures/seats-suite.json ({agent, scenarios}): the agent is created and
//                           its scenarios added (--protocol sets theirs), then the suite runs
// The key is --key or EDGEDIAL_API_KEY; the base URL --base-url or EDGEDIAL_BASE_URL (default http://127.0.0.1:8787).
// The JUnit XML report goes to --junit (default agent-test-results.xml). See docs/agent-tests.md.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { apiClient } from "./lib/api.mjs";
import { junitXml } from "./lib/junit.mjs";

const USAGE = "usage: npm run agent:test -- --agent <id|file> [--base-url URL] [--key KEY] [--repetitions N] [--protocol P] [--junit FILE]";
let o;
try {
  ({ values: o } = parseArgs({
    options: {
      agent: { type: "string" },
      "base-url": { type: "string" },
      key: { type: "string" },
      repetitions: { type: "string", default: "3" },
      protocol: { type: "string" },
      junit: { type: "string", default: "agent-test-results.xml" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (o.help) {
  console.log(USAGE);
  process.exit(0);
}
const base = o["base-url"] ?? process.env.EDGEDIAL_BASE_URL ?? "http://127.0.0.1:8787";
const key = o.key ?? process.env.EDGEDIAL_API_KEY;
if (!o.agent || !key) {
  console.error(USAGE);
  process.exit(2);
}

const api = apiClient(base, key);

let agentId = Number(o.agent);
if (!Number.isInteger(agentId) || agentId <= 0) {
  if (!existsSync(o.agent)) throw new Error(`--agent ${o.agent}: neither an agent id nor a file`);
  const file = JSON.parse(readFileSync(o.agent, "utf8"));
  agentId = (await api("POST", "/workflow/create", file.agent)).id;
  for (const s of file.scenarios ?? []) await api("POST", `/workflow/${agentId}/tests/scenarios`, { ...s, ...(o.protocol ? { protocol: o.protocol } : {}) });
  console.log(`created agent ${agentId} with ${file.scenarios?.length ?? 0} scenarios`);
}
// The POST answers at once (the run's own object carries the calls): the run is read until it ends.
let run = await api("POST", `/workflow/${agentId}/tests/runs`, { repetitions: Number(o.repetitions) });
console.log(`test run ${run.id} started (agent version ${run.version_number})`);
while (run.status === "running") {
  await new Promise((r) => setTimeout(r, 1000));
  run = await api("GET", `/workflow/${agentId}/tests/runs/${run.id}`);
}
if (run.status === "error") {
  console.error(`test run ${run.id} ended in error: ${run.error ?? "see its page"}`);
  process.exit(1);
}
writeFileSync(o.junit, junitXml(run));
for (const s of run.scenarios) {
  console.log(`${s.status === "passed" ? "✓" : "✗"} ${s.name} (${s.protocol}): ${s.passed}/${s.repetitions}${s.status === "flaky" ? " flaky" : ""}`);
  for (const r of s.runs) {
    if (r.error) console.log(`    #${r.repetition}: ${r.error}`);
    for (const v of r.verdicts.filter((x) => !x.passed)) console.log(`    #${r.repetition} ${v.expectation}: ${v.evidence}`);
  }
}
console.log(`suite ${run.status}: ${run.summary.passed}/${run.summary.scenarios} scenarios; JUnit report in ${o.junit}`);
process.exit(run.status === "passed" ? 0 : 1);
