// npm run deploy [-- --check] [-- wrangler deploy flags]: refuses to upload a Worker that would fail closed in
// production (src/lib/settings.ts), then applies the remote D1 migrations and runs `wrangler deploy`.
//
// Checked: wrangler.jsonc's D1 database_id is not the placeholder; PUBLIC_BASE_URL (wrangler.jsonc vars, or the
// environment, which then overrides it) is an https:// origin; LOCAL_DEV is not set; ENCRYPTION_KEYS,
// CALLBACK_SECRET and UPLOAD_SIGNING_SECRET are stored secrets of the Worker (`wrangler secret list`) or given in
// the environment (CI), in which case they are uploaded with this version (`--secrets-file`).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { isMissingWorker, planDeploy, problemsReport, secretNamesOf } from "./lib/deploy-plan.ts";
import { WRANGLER, wrangler } from "./lib/wrangler.mjs";

const args = process.argv.slice(2);
const checkOnly = args.includes("--check");
const passThrough = args.filter((a) => a !== "--check");

/** The Worker's stored secret names: none for a first deploy, null when they cannot be listed (not logged in). */
function storedSecretNames() {
  const res = spawnSync(process.execPath, [WRANGLER, "secret", "list", "--format", "json"], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  const out = `${res.stdout ?? ""}\n${res.stderr ?? ""}`;
  if (res.status === 0) return secretNamesOf(res.stdout);
  if (isMissingWorker(out)) return [];
  process.stderr.write(out);
  return null;
}

const config = parse(readFileSync("wrangler.jsonc", "utf8"));
const plan = planDeploy(config, process.env, storedSecretNames());
if (plan.problems.length) {
  console.error(problemsReport(plan.problems));
  process.exit(1);
}
console.log("deploy check passed: database id, PUBLIC_BASE_URL and the required secrets are in place");
if (checkOnly) process.exit(0);

wrangler(["d1", "migrations", "apply", "DB", "--remote"]);
const deployArgs = ["deploy", ...plan.deployArgs, ...passThrough];
let dir;
try {
  if (Object.keys(plan.secretsFromEnv).length) {
    dir = mkdtempSync(join(tmpdir(), "edgedial-deploy-"));
    const file = join(dir, "secrets.json");
    writeFileSync(file, JSON.stringify(plan.secretsFromEnv), { mode: 0o600 });
    deployArgs.push("--secrets-file", file);
    console.log(`uploading ${Object.keys(plan.secretsFromEnv).join(", ")} from the environment with this version`);
  }
  wrangler(deployArgs);
} finally {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
