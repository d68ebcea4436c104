// The deployment's required settings and their rules, shared by the Worker (health, the 503 guards, callback URLs)
// and by `npm run deploy` (scripts/deploy.mjs imports this file through Node's type stripping, so it imports
// nothing and uses only erasable TypeScript).

/** Worker secrets without which the service cannot run (`wrangler secret put NAME`). */
export const REQUIRED_SECRETS = ["ENCRYPTION_KEYS", "CALLBACK_SECRET", "UPLOAD_SIGNING_SECRET"] as const;
export type RequiredSecret = (typeof REQUIRED_SECRETS)[number];
export type Setting = RequiredSecret | "PUBLIC_BASE_URL";

/** The database id wrangler.jsonc ships with; a real one comes from `wrangler d1 create edgedial`. */
export const PLACEHOLDER_D1_ID = "00000000-0000-4000-8000-000000000000";

/** One thing to fix: the setting's name (safe to show anyone) and how to fix it (never its value). */
export type Problem = { name: string; message: string };

/**
 * `LOCAL_DEV` marks local development (npm run dev, the demo, the test pool): it allows an http:// PUBLIC_BASE_URL
 * and, when that is empty, the request's origin. A deployed Worker never sets it.
 */
export function isLocalDev(value: string | undefined): boolean {
  return /^(1|true|yes)$/i.test((value ?? "").trim());
}

export type BaseUrlCheck = { ok: true; url: string } | { ok: false; missing: boolean; reason: string };

/**
 * PUBLIC_BASE_URL normalized once: the origin alone (scheme, host, port; trailing slashes dropped). Outside local
 * development it must be an absolute https:// origin; a path, query, fragment or credentials are refused rather than
 * silently dropped, since carriers would be handed URLs the operator did not mean.
 */
export function normalizePublicBaseUrl(raw: string | undefined, localDev: boolean): BaseUrlCheck {
  const value = (raw ?? "").trim();
  if (!value) return { ok: false, missing: true, reason: "is not set" };
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return { ok: false, missing: false, reason: "is not an absolute URL" };
  }
  const schemes = localDev ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(u.protocol))
    return { ok: false, missing: false, reason: localDev ? "must start with https:// or http://" : "must start with https://" };
  if (u.username || u.password) return { ok: false, missing: false, reason: "must not carry credentials" };
  if (u.pathname.replace(/\/+$/, "") !== "" || u.search || u.hash)
    return { ok: false, missing: false, reason: "must be an origin only (no path, query or fragment)" };
  return { ok: true, url: u.origin };
}

/** An absolute URL under the public base: the one join callback URLs and signature checks both use. */
export function publicUrl(base: string, pathAndQuery: string): string {
  return base.replace(/\/+$/, "") + (pathAndQuery.startsWith("/") ? pathAndQuery : `/${pathAndQuery}`);
}

/** How to set each setting, for the 503 details, health's operators and the deploy check. */
export function howToSet(name: string): string {
  if (name === "PUBLIC_BASE_URL") {
    return "set it to this Worker's public https:// origin (e.g. https://edgedial.example.com) in wrangler.jsonc vars or as PUBLIC_BASE_URL in the environment of `npm run deploy`, then deploy again";
  }
  if (name === "ENCRYPTION_KEYS")
    return "set it with `wrangler secret put ENCRYPTION_KEYS` (`npm run secrets:generate` prints a fresh value: id:base64 of 32 random bytes)";
  return `set it with \`wrangler secret put ${name}\` (\`npm run secrets:generate\` prints a fresh value)`;
}

export function publicBaseUrlProblem(raw: string | undefined, localDev: boolean): Problem | null {
  const check = normalizePublicBaseUrl(raw, localDev);
  if (check.ok) return null;
  return { name: "PUBLIC_BASE_URL", message: `PUBLIC_BASE_URL ${check.reason}: ${howToSet("PUBLIC_BASE_URL")}` };
}

export function missingSecretProblem(name: string): Problem {
  return { name, message: `${name} is not set: ${howToSet(name)}` };
}

/** ENCRYPTION_KEYS set but unparsable; `reason` is the parser's message (key ids at most, never key material). */
export function invalidKeysProblem(reason: string): Problem {
  return { name: "ENCRYPTION_KEYS", message: `ENCRYPTION_KEYS is invalid (${reason.replace(/^ENCRYPTION_KEYS:?\s*/, "")}): ${howToSet("ENCRYPTION_KEYS")}` };
}

/** The text of a 503 (or a campaign's 409): every problem, each naming its setting and how to set it. */
export function problemsDetail(problems: Problem[]): string {
  return `The server is missing required configuration. ${problems.map((p) => p.message).join("; ")}.`;
}

export type DeployInputs = {
  /** wrangler.jsonc vars, with PUBLIC_BASE_URL as it will be deployed. */
  vars: Record<string, unknown>;
  /** The Worker's secrets, by name: those already stored plus those uploaded with this deploy. */
  secretNames: string[];
  /** [[d1_databases]] database_id of the DB binding. */
  databaseId: string | undefined;
};

/** What `npm run deploy` must refuse to upload, in the order an operator would fix it. */
export function deployProblems({ vars, secretNames, databaseId }: DeployInputs): Problem[] {
  const problems: Problem[] = [];
  const id = (databaseId ?? "").trim();
  if (!id || id === PLACEHOLDER_D1_ID) {
    problems.push({
      name: "database_id",
      message: "wrangler.jsonc d1_databases database_id is the placeholder: run `wrangler d1 create edgedial` and put the printed database_id there",
    });
  }
  const base = typeof vars.PUBLIC_BASE_URL === "string" ? vars.PUBLIC_BASE_URL : undefined;
  const baseProblem = publicBaseUrlProblem(base, false);
  if (baseProblem) problems.push(baseProblem);
  if (isLocalDev(typeof vars.LOCAL_DEV === "string" ? vars.LOCAL_DEV : undefined)) {
    problems.push({ name: "LOCAL_DEV", message: "LOCAL_DEV is set in wrangler.jsonc vars: remove it, it is for local development only" });
  }
  const have = new Set(secretNames);
  for (const name of REQUIRED_SECRETS) if (!have.has(name)) problems.push(missingSecretProblem(name));
  return problems;
}
