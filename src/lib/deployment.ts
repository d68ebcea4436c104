// The running Worker's view of its required settings: what health lists as missing, the guard every
// operation that needs a setting calls first (503 naming it, never a bare 500), and the public base URL in effect.
import { ApiError } from "./errors";
import { parseKeySpec } from "./secret-box";
import {
  REQUIRED_SECRETS,
  isLocalDev,
  missingSecretProblem,
  normalizePublicBaseUrl,
  problemsDetail,
  publicBaseUrlProblem,
  invalidKeysProblem,
  type Problem,
  type Setting,
} from "./settings";

type SettingsEnv = Pick<Env, "PUBLIC_BASE_URL" | RequiredSecretName> & { LOCAL_DEV?: string };
type RequiredSecretName = (typeof REQUIRED_SECRETS)[number];

/** What a call needs: callback URLs (base and token secret) and the configuration's decrypted credentials. */
export const CALL_SETTINGS: Setting[] = ["PUBLIC_BASE_URL", "CALLBACK_SECRET", "ENCRYPTION_KEYS"];

export const localDev = (env: { LOCAL_DEV?: string }) => isLocalDev(env.LOCAL_DEV);

/**
 * `requestOrigin`: whether the operation has a request whose origin may stand in for an empty PUBLIC_BASE_URL (local
 * development only). A campaign's calls are placed by its Durable Object, with no request: they need the setting.
 */
type Opts = { requestOrigin?: boolean };

function problemOf(env: SettingsEnv, name: Setting, { requestOrigin = true }: Opts): Problem | null {
  if (name === "PUBLIC_BASE_URL") {
    if (requestOrigin && localDev(env) && !env.PUBLIC_BASE_URL?.trim()) return null;
    return publicBaseUrlProblem(env.PUBLIC_BASE_URL, localDev(env));
  }
  const value = env[name];
  if (typeof value !== "string" || !value.trim()) return missingSecretProblem(name);
  if (name === "ENCRYPTION_KEYS") {
    try {
      parseKeySpec(value);
    } catch (err) {
      return invalidKeysProblem((err as Error).message);
    }
  }
  return null;
}

const ALL: readonly Setting[] = ["PUBLIC_BASE_URL", ...REQUIRED_SECRETS];

/** Every required setting (or those named) that is missing or unusable; health lists their names. */
export function settingProblems(env: SettingsEnv, names: readonly Setting[] = ALL, opts: Opts = {}): Problem[] {
  return names.map((n) => problemOf(env, n, opts)).filter((p): p is Problem => p !== null);
}

/** The guard: throws (503 by default; a campaign start uses 409) naming each missing setting and how to set it. */
export function requireSettings(env: SettingsEnv, names: readonly Setting[], status: 503 | 409 = 503, opts: Opts = {}): void {
  const problems = settingProblems(env, names, opts);
  if (problems.length) throw new ApiError(status, problemsDetail(problems));
}

/**
 * The public origin carriers and clients are given: PUBLIC_BASE_URL normalized, or in local development with none
 * set, the request's origin. "" when there is none to use (a deployment missing it; the guards refuse first).
 */
export function publicBaseUrl(env: SettingsEnv, requestUrl?: string): string {
  const check = normalizePublicBaseUrl(env.PUBLIC_BASE_URL, localDev(env));
  if (check.ok) return check.url;
  if (check.missing && localDev(env) && requestUrl) return new URL(requestUrl).origin;
  return "";
}
