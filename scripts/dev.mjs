// npm run dev: local secrets, local D1 migrations, a development organization and key, then `wrangler dev`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createOrganization, d1, keyHash, sqlString, wrangler, wranglerLive } from "./lib/wrangler.mjs";
import { DEV_SWEEP_SECONDS, planDev } from "./lib/dev-args.ts";
import { freshSecrets } from "./lib/deploy-plan.ts";

const DEV_VARS = ".dev.vars";
const DEV_KEY_FILE = ".dev-api-key";

function ensureDevVars() {
  if (existsSync(DEV_VARS)) return addNewNames();
  const fresh = freshSecrets();
  const lines = readFileSync(".dev.vars.example", "utf8")
    .split("\n")
    .map((line) => {
      const name = line.split("=")[0];
      return name in fresh ? `${name}=${fresh[name]}` : line;
    });
  writeFileSync(DEV_VARS, lines.join("\n"), { mode: 0o600 });
  console.log("created .dev.vars with fresh random secrets");
}

/** An older .dev.vars gains the settings the example has added since (as the example sets them), its own values kept. */
function addNewNames() {
  const nameOf = (line) => /^([A-Z][A-Z0-9_]*)=/.exec(line.trim())?.[1];
  const current = readFileSync(DEV_VARS, "utf8");
  const have = new Set(current.split("\n").map(nameOf).filter(Boolean));
  const missing = readFileSync(".dev.vars.example", "utf8")
    .split("\n")
    .filter((line) => nameOf(line) && !have.has(nameOf(line)));
  if (!missing.length) return;
  writeFileSync(DEV_VARS, `${current.replace(/\n?$/, "\n")}${missing.join("\n")}\n`, { mode: 0o600 });
  console.log(`.dev.vars: added ${missing.map(nameOf).join(", ")} from .dev.vars.example`);
}

/** Reuses the saved development key while it is still valid in local D1; otherwise creates org + key. */
function ensureDevKey() {
  if (existsSync(DEV_KEY_FILE)) {
    const key = readFileSync(DEV_KEY_FILE, "utf8").trim();
    const rows = d1(`SELECT id FROM api_keys WHERE key_hash = ${sqlString(keyHash(key))} AND revoked_at IS NULL`);
    if (rows.length > 0) return key;
  }
  const { key } = createOrganization("Development");
  writeFileSync(DEV_KEY_FILE, key + "\n", { mode: 0o600 });
  return key;
}

let plan;
try {
  plan = planDev(process.argv.slice(2), process.env);
} catch (err) {
  console.error(`npm run dev: ${err.message}`);
  process.exit(2);
}
ensureDevVars();
wrangler(["d1", "migrations", "apply", "DB", "--local"], { quiet: true });
console.log("local D1 migrations applied");
const key = ensureDevKey();
console.log(`
  edgedial is starting on ${plan.url}
  development API key: ${key}
  dashboard: ${plan.url}/dashboard/   API reference: ${plan.url}/api/v1/docs

  curl ${plan.url}/api/v1/health
  curl -H "X-API-Key: ${key}" ${plan.url}/api/v1/organizations/api-keys

  answered calls: ${plan.workersAi ? "the voice agent on Workers AI (your Cloudflare account)" : "the carrier speaks the greeting (npm run dev -- --workers-ai for the voice agent on Workers AI)"}
`);
const child = wranglerLive(plan.wranglerArgs);
child.on("exit", (code) => process.exit(code ?? 0));
// wrangler dev runs no cron triggers: the run watchdog and the import sweep run here every minute instead, so a call
// the service could not end itself is still ended in local development.
const sweep = setInterval(() => fetch(plan.sweepUrl).catch(() => {}), DEV_SWEEP_SECONDS * 1000);
sweep.unref();
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
