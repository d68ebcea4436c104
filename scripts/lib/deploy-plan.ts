// The pure half of `npm run deploy` and `npm run secrets:generate` (scripts/deploy.mjs, scripts/secrets-generate.mjs):
// from wrangler.jsonc, the deploy's environment and the Worker's stored secret names, what to upload and what to fix
// first. Runs in Node through type stripping and in the test pool, so it touches no I/O.
import { REQUIRED_SECRETS, deployProblems, type Problem } from "../../src/lib/settings.ts";

export type WranglerConfig = { vars?: Record<string, unknown>; d1_databases?: Array<{ binding?: string; database_id?: string }> };

export type DeployPlan = {
  problems: Problem[];
  /** Extra `wrangler deploy` arguments: PUBLIC_BASE_URL from the environment overrides wrangler.jsonc's. */
  deployArgs: string[];
  /** Required secrets given in the deploy's environment (CI), uploaded with the version (`--secrets-file`). */
  secretsFromEnv: Record<string, string>;
};

/**
 * `storedSecretNames`: the Worker's secrets as `wrangler secret list` names them, or null when they could not be
 * listed (not logged in): then that is the problem to fix, rather than three secrets reported missing.
 */
export function planDeploy(config: WranglerConfig, env: Record<string, string | undefined>, storedSecretNames: string[] | null): DeployPlan {
  const vars = { ...(config.vars ?? {}) };
  const deployArgs: string[] = [];
  const base = env.PUBLIC_BASE_URL?.trim();
  if (base) {
    vars.PUBLIC_BASE_URL = base;
    deployArgs.push("--var", `PUBLIC_BASE_URL:${base}`);
  }
  const secretsFromEnv: Record<string, string> = {};
  for (const name of REQUIRED_SECRETS) {
    const value = env[name];
    if (value?.trim()) secretsFromEnv[name] = value;
  }
  const db = (config.d1_databases ?? []).find((d) => d.binding === "DB");
  const problems = deployProblems({
    vars,
    secretNames: storedSecretNames === null ? [...REQUIRED_SECRETS] : [...storedSecretNames, ...Object.keys(secretsFromEnv)],
    databaseId: db?.database_id,
  });
  if (storedSecretNames === null) {
    problems.push({
      name: "wrangler login",
      message:
        "could not list the Worker's secrets (`wrangler secret list` failed, output above): run `npx wrangler login`, or set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID for a token-based deploy",
    });
  }
  return { problems, deployArgs, secretsFromEnv };
}

/** The names in `wrangler secret list --format json` output ([{"name": ..., "type": "secret_text"}]). */
export function secretNamesOf(stdout: string): string[] {
  const start = stdout.indexOf("[");
  if (start < 0) throw new Error("wrangler secret list printed no JSON list");
  const list = JSON.parse(stdout.slice(start)) as Array<{ name?: unknown }>;
  return list.map((s) => s.name).filter((n): n is string => typeof n === "string");
}

/** A first deploy: the Worker does not exist yet, so it has no secrets (Cloudflare API error 10007). */
export function isMissingWorker(output: string): boolean {
  return /\b10007\b|worker does not exist|workers\.api\.error\.script_not_found/i.test(output);
}

export function problemsReport(problems: Problem[]): string {
  const lines = problems.map((p) => `  - ${p.name}: ${p.message}`);
  return [`Not deploying: ${problems.length} thing${problems.length === 1 ? "" : "s"} to fix first.`, ...lines].join("\n");
}

function base64(bytes: Uint8Array, url = false): string {
  const b64 = btoa(String.fromCharCode(...bytes));
  return url ? b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : b64;
}

const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

/** Fresh values for the three required secrets, in the formats the Worker expects. */
export function freshSecrets(keyId = "k1"): Record<(typeof REQUIRED_SECRETS)[number], string> {
  return {
    ENCRYPTION_KEYS: `${keyId}:${base64(random(32))}`,
    CALLBACK_SECRET: base64(random(32), true),
    UPLOAD_SIGNING_SECRET: base64(random(32), true),
  };
}
