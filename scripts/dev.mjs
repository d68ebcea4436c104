// npm run dev: local secrets, local D1 migrations, a development organization and key, then `wrangler dev`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createOrganization, d1, keyHash, sqlString, wrangler, wranglerLive } from "./lib/wrangler.mjs";
import { DEV_SWEEP_SECONDS, planDev } from "./lib/dev-args.ts";
import { DEV_VARS, ensureDevVars } from "./lib/dev-vars.mjs";
import { CALLEE_CLIPS, clip, startSandboxSimulator } from "./lib/sandbox-sim.mjs";
import { startLocalSpeech } from "./lib/local-speech.mjs";

const DEV_KEY_FILE = ".dev-api-key";

// Each local Worker would fetch a sample `Request.cf` object from workers.cloudflare.com and, offline, print the
// failed lookup's stack trace. The service reads no `request.cf`, so wrangler's placeholder is all it needs.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

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
if (plan.workersAi)
  console.log("--workers-ai: the Worker's AI binding reaches Cloudflare, so wrangler asks you to log in (npx wrangler login) if you have not");
// The sandbox carrier's far end: the carrier simulator, a Worker of its own beside edgedial.
const sim = await startSandboxSimulator({ persist: ".wrangler/state/sandbox-sim" });
// The offline agent's voice: eSpeak NG in this process (scripts/lib/local-speech.mjs), which the Worker asks over HTTP.
const speech = plan.workersAi ? null : await startLocalSpeech();
const child = wranglerLive([
  ...plan.wranglerArgs,
  "--var",
  `CARRIER_BASE_URLS:${carrierBaseUrls(sim.origin)}`,
  ...(speech ? ["--var", `LOCAL_SPEECH_URL:${speech.url}`] : []),
]);
child.on("exit", async (code) => {
  await speech?.close();
  await sim.worker.dispose().catch(() => {});
  process.exit(code ?? 0);
});
// wrangler dev runs no cron triggers: the run watchdog and the import sweep run here every minute instead, so a call
// the service could not end itself is still ended in local development.
const sweep = setInterval(() => fetch(plan.sweepUrl).catch(() => {}), DEV_SWEEP_SECONDS * 1000);
sweep.unref();
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
// The key last, once the service answers, so wrangler's own banner does not scroll it away.
await until(() => fetch(`${plan.url}/api/v1/health`).then((r) => r.ok), 120_000);
await storeCalleeLines().catch((err) => console.warn(`the sandbox callee's lines were not stored: ${err.message}`));
console.log(`
  edgedial is ready on ${plan.url}
  development API key: ${key}   (also in ${DEV_KEY_FILE})
  dashboard: ${plan.url}/dashboard/   API reference: ${plan.url}/api/v1/docs

  calls: a telephony configuration with "provider": "sandbox" dials the carrier simulator (${sim.origin}), whose callee
  answers and talks back; answered calls get ${
    plan.workersAi
      ? "the voice agent on Workers AI (your Cloudflare account)"
      : `the voice agent on local deterministic engines, speaking with eSpeak NG
  (${speech?.url}; npm run dev -- --workers-ai for Workers AI)`
  }

  KEY=$(cat ${DEV_KEY_FILE}); curl -H "X-API-Key: $KEY" ${plan.url}/api/v1/organizations/api-keys
`);

/**
 * CARRIER_BASE_URLS as the user set it (their own `--var CARRIER_BASE_URLS:…`, else .dev.vars), with the sandbox
 * pointed at the simulator's Twilio unless they named a `sandbox` themselves.
 */
function carrierBaseUrls(simOrigin) {
  const line = readFileSync(DEV_VARS, "utf8")
    .split("\n")
    .find((l) => l.startsWith("CARRIER_BASE_URLS="));
  const [where, text] =
    plan.carrierBaseUrls !== undefined
      ? ["--var CARRIER_BASE_URLS", plan.carrierBaseUrls]
      : [".dev.vars' CARRIER_BASE_URLS", line?.slice("CARRIER_BASE_URLS=".length)];
  let urls = {};
  try {
    urls = JSON.parse(text?.trim() || "{}");
  } catch {
    console.warn(`${where} is not JSON: only the sandbox is pointed at the simulator`);
  }
  return JSON.stringify({ sandbox: `${simOrigin}/twilio`, ...urls });
}

/**
 * The offline speech-to-text recognizes the organization's stored recordings by their sound: the sandbox callee's
 * lines are stored once, named by their words, so what the callee says is heard as those words.
 */
async function storeCalleeLines() {
  const api = `${plan.url}/api/v1/greeting-recordings`;
  const listed = await (await fetch(`${api}?limit=100`, { headers: { "X-API-Key": key } })).json();
  const have = new Set((listed.items ?? []).map((r) => r.name));
  for (const c of CALLEE_CLIPS) {
    if (have.has(c.text)) continue;
    const res = await fetch(`${api}?name=${encodeURIComponent(c.text)}`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "audio/wav" },
      body: clip(c.file),
    });
    if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  }
}

async function until(ok, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.warn(`edgedial did not answer ${plan.url}/api/v1/health within ${ms / 1000} s`);
}
