// Auto-provisioning on save: when a provider can create its carrier application, it runs
// after the configuration is stored. A carrier that cannot be reached leaves the configuration saved,
// the `application` step incomplete with the carrier's message, and the next update retries.
import { and, eq } from "drizzle-orm";
import { telephonyConfigs } from "../db/schema";
import { getDb } from "../lib/db";
import { publicBaseUrl as publicBaseUrlOf, requireSettings } from "../lib/deployment";
import { isObject, type Obj } from "../lib/helpers";
import { getProvider } from "./providers/registry";
import type { ProviderEnv, ProviderName } from "./providers/types";
import { loadConfigContext } from "./resolve";
import type { ConfigRow } from "./view";

/**
 * Carrier hosts and our public origin for provider calls. `CARRIER_BASE_URLS` (optional JSON object,
 * e.g. {"twilio":"http://127.0.0.1:9000"}) points carriers at a simulator; the real hosts are the defaults.
 * `CARRIER_TIMEOUT_MS` (optional) replaces the 10 s carrier request timeout; `CARRIER_RETRY_ATTEMPTS` and
 * `CARRIER_RETRY_MAX_WAIT_MS` (optional) bound originate retries (default 3 requests, 5 s of waiting).
 * `publicBaseUrl` is PUBLIC_BASE_URL normalized (lib/deployment), or "" when a deployment lacks a usable one.
 */
export function providerEnvOf(env: Env, requestUrl?: string): ProviderEnv {
  let baseUrls: Partial<Record<ProviderName, string>> = {};
  const raw = (env as unknown as { CARRIER_BASE_URLS?: string }).CARRIER_BASE_URLS;
  if (raw) {
    try {
      const parsed = JSON.parse(raw);
      if (isObject(parsed)) baseUrls = parsed as typeof baseUrls;
    } catch {
      // a malformed override is ignored: the real hosts apply
    }
  }
  const publicBaseUrl = publicBaseUrlOf(env, requestUrl);
  // Optional, in ms: lets the test pool prove the timeout path without a 10 s wait. Junk means the default.
  const vars = env as unknown as { CARRIER_TIMEOUT_MS?: string; CARRIER_RETRY_ATTEMPTS?: string; CARRIER_RETRY_MAX_WAIT_MS?: string };
  const timeout = Number(vars.CARRIER_TIMEOUT_MS);
  return { baseUrls, publicBaseUrl, ...(Number.isInteger(timeout) && timeout > 0 ? { carrierTimeoutMs: timeout } : {}), ...originateRetryOf(vars) };
}

/** Originate retry overrides (attempts 1-5, total wait 0-30 s); junk or absence leaves the defaults (calls/kit). */
function originateRetryOf(vars: { CARRIER_RETRY_ATTEMPTS?: string; CARRIER_RETRY_MAX_WAIT_MS?: string }): Pick<ProviderEnv, "originateRetry"> {
  const attempts = Number(vars.CARRIER_RETRY_ATTEMPTS || NaN);
  const maxWaitMs = Number(vars.CARRIER_RETRY_MAX_WAIT_MS || NaN);
  const retry: NonNullable<ProviderEnv["originateRetry"]> = {};
  if (Number.isInteger(attempts) && attempts >= 1 && attempts <= 5) retry.attempts = attempts;
  if (Number.isInteger(maxWaitMs) && maxWaitMs >= 0 && maxWaitMs <= 30_000) retry.maxWaitMs = maxWaitMs;
  return Object.keys(retry).length ? { originateRetry: retry } : {};
}

const MAX_ERROR = 500;

/** Saving seals secrets, and provisioning hands the carrier our URL: 503 before anything is written without them. */
export function requireSaveSettings(env: Env, providerName: string): void {
  requireSettings(env, getProvider(providerName).provision ? ["ENCRYPTION_KEYS", "PUBLIC_BASE_URL"] : ["ENCRYPTION_KEYS"]);
}

export async function provisionOnSave(env: Env, requestUrl: string, row: ConfigRow): Promise<ConfigRow> {
  const provider = getProvider(row.provider);
  if (!provider.provision) return row;
  const state: Obj = isObject(row.state) ? { ...row.state } : {};
  let config: Obj = isObject(row.config) ? { ...row.config } : {};
  try {
    const out = await provider.provision(await loadConfigContext(env, row), providerEnvOf(env, requestUrl));
    delete state.application_error;
    Object.assign(state, out.state);
    // Provisioning may fill ids (e.g. application_id), never secrets: those only come from the user.
    const ids = Object.entries(out.config ?? {}).filter(([k]) => !provider.sensitive.includes(k) && k !== "provider");
    config = { ...config, ...Object.fromEntries(ids) };
  } catch (err) {
    state.application_error = String((err as Error)?.message ?? err).slice(0, MAX_ERROR);
  }
  const saved = await getDb(env)
    .update(telephonyConfigs)
    .set({ state, config })
    .where(and(eq(telephonyConfigs.id, row.id), eq(telephonyConfigs.orgId, row.orgId), eq(telephonyConfigs.updatedAt, row.updatedAt)))
    .returning()
    .get();
  // Another write landed meanwhile: it carries its own provisioning; show the newest row.
  return saved ?? row;
}
