// What the calls and campaigns modules use to pick a configuration, open its
// secrets when dialing, and choose a caller ID.
import { asc, desc, eq } from "drizzle-orm";
import { telephonyConfigs } from "../db/schema";
import { getDb } from "../lib/db";
import { conflict } from "../lib/errors";
import { SecretBox } from "../lib/secret-box";
import { readiness } from "./providers/checklist";
import { allowsPrivatePbx } from "./calling-policy";
import { getPath, setPath, clone } from "./merge";
import { isObject, type Obj } from "../lib/helpers";
import { PBX_URL_PATHS } from "./pbx-urls";
import { getProvider } from "./providers/registry";
import type { ConfigContext, Provider } from "./providers/types";
import { openSecrets, storedSecrets } from "./secrets";
import { activeNumbersOf, getConfigWithNumbers } from "./store";
import { readContext, type ConfigRow } from "./view";

export type ResolvedConfig = {
  id: number;
  name: string;
  provider: Provider;
  ready: boolean;
  /** Why it is not ready: the first incomplete blocking step, or inactivity; null when ready. */
  blockedReason: string | null;
  row: ConfigRow;
  /** Its active numbers (the default caller ID first), read with it: callers pass them on rather than read again. */
  numbers: string[];
};

export const NO_DEFAULT = "No telephony configuration is set as default";

/**
 * The explicit id (404 `Telephony configuration not found` when unknown or another organization's), else
 * the organization's default, else its only configuration; otherwise 409. Readiness is reported, not enforced:
 * callers decide (a draft campaign may use a configuration that is not ready yet).
 */
export async function resolveTelephonyConfig(env: { DB: D1Database }, orgId: number, explicitId?: number | null): Promise<ResolvedConfig> {
  const db = getDb(env);
  let row: ConfigRow | undefined;
  let numbers: string[];
  if (explicitId !== undefined && explicitId !== null) {
    // The configuration and its numbers in one statement: every call start and carrier command comes this way.
    ({ row, numbers } = await getConfigWithNumbers(db, orgId, explicitId));
  } else {
    const rows = await db
      .select()
      .from(telephonyConfigs)
      .where(eq(telephonyConfigs.orgId, orgId))
      .orderBy(desc(telephonyConfigs.isDefaultOutbound), asc(telephonyConfigs.id))
      .limit(2)
      .all();
    if (rows[0]?.isDefaultOutbound) row = rows[0];
    else if (rows.length === 1) row = rows[0];
    else throw conflict(NO_DEFAULT);
    numbers = (await activeNumbersOf(db, [row.id])).get(row.id) ?? [];
  }
  const provider = getProvider(row.provider);
  const r = readiness(provider.steps(readContext(provider, row, numbers)), { inactive: row.inactive, reason: row.inactiveReason });
  return { id: row.id, name: row.name, provider, ready: r.ready, blockedReason: r.blockedReason, row, numbers };
}

/**
 * The full configuration with secrets decrypted, for a provider call that dials or provisions. Never log it. `numbers`:
 * its active numbers when the caller already read them with the row (resolveTelephonyConfig, findConfigWithNumbers).
 */
export async function loadConfigContext(env: { DB: D1Database; ENCRYPTION_KEYS: string }, row: ConfigRow, numbers?: string[]): Promise<ConfigContext> {
  const provider = getProvider(row.provider);
  const config: Obj = { provider: provider.name, ...(isObject(row.config) ? clone(row.config) : {}) };
  const plain = await openSecrets(SecretBox.fromEnv(env), row.orgId, storedSecrets(row.secrets));
  for (const [path, value] of Object.entries(plain)) setPath(config, path, value);
  const activeNumbers = numbers ?? (await activeNumbersOf(getDb(env), [row.id])).get(row.id) ?? [];
  // Only a configuration with PBX URLs needs the organization's SSRF allowance (one more read, ARI only).
  const allowPrivatePbx = PBX_URL_PATHS.some((p) => getPath(config, p) !== undefined) ? await allowsPrivatePbx(getDb(env), row.orgId) : false;
  return { id: row.id, orgId: row.orgId, config, state: isObject(row.state) ? clone(row.state) : {}, activeNumbers, allowPrivatePbx };
}

/** The caller ID to present: the configuration's default caller-ID number if active, else its first active number. */
export function callerIdOf(cfg: Pick<ResolvedConfig, "numbers">): string | null {
  return cfg.numbers[0] ?? null;
}
