// D1 reads shared by the routes and resolve.ts. Every query is scoped by organization.
import { and, asc, desc, eq, getTableColumns, sql } from "drizzle-orm";
import { phoneNumbers, telephonyConfigs } from "../db/schema";
import { preparedOnce, type Db } from "../lib/db";
import { notFound } from "../lib/errors";
import type { ConfigRow } from "./view";

export const CONFIG_NOT_FOUND = "Telephony configuration";

export async function findConfig(db: Db, orgId: number, id: number): Promise<ConfigRow | undefined> {
  return db
    .select()
    .from(telephonyConfigs)
    .where(and(eq(telephonyConfigs.id, id), eq(telephonyConfigs.orgId, orgId)))
    .get();
}

export async function getConfig(db: Db, orgId: number, id: number): Promise<ConfigRow> {
  const row = await findConfig(db, orgId, id);
  if (!row) throw notFound(CONFIG_NOT_FOUND);
  return row;
}

/** The configuration and its active numbers in one statement; by id alone where the caller has no organization yet. */
function prepareWithNumbers(db: Db, scoped: boolean) {
  return db
    .select({
      ...getTableColumns(telephonyConfigs),
      // activeNumbersOf's order, as one JSON array (an aggregate's ORDER BY: SQLite 3.44+, as D1 runs). The outer
      // columns are named with their table: drizzle would render them bare, and bare `id` means p.id in here.
      numbers: sql<string>`(SELECT json_group_array(p.address ORDER BY p.is_default_caller_id DESC, p.id ASC) FROM phone_numbers p
        WHERE p.config_id = telephony_configs.id AND p.org_id = telephony_configs.org_id AND p.is_active = 1)`,
    })
    .from(telephonyConfigs)
    .where(
      scoped
        ? and(eq(telephonyConfigs.id, sql.placeholder("id")), eq(telephonyConfigs.orgId, sql.placeholder("orgId")))
        : eq(telephonyConfigs.id, sql.placeholder("id")),
    )
    .prepare();
}

function withNumbers(found: (ConfigRow & { numbers: string }) | undefined): { row: ConfigRow; numbers: string[] } | undefined {
  if (!found) return undefined;
  const { numbers, ...row } = found;
  return { row, numbers: JSON.parse(numbers) as string[] };
}

/**
 * A configuration with its active numbers (the default caller ID first, then oldest first), or undefined: one D1
 * round trip, one statement, and its SQL built once per drizzle instance rather than per request.
 */
export async function findConfigWithNumbers(db: Db, orgId: number, id: number): Promise<{ row: ConfigRow; numbers: string[] } | undefined> {
  return withNumbers(await preparedOnce(db, "config-with-numbers", (d) => prepareWithNumbers(d, true)).get({ id, orgId }));
}

/**
 * findConfigWithNumbers by id alone, for the paths whose request names no organization (a carrier's inbound URL, proven
 * by its token) or that keep only the id (ARI's events object). The caller checks what the row may be used for.
 */
export async function findConfigWithNumbersById(db: Db, id: number): Promise<{ row: ConfigRow; numbers: string[] } | undefined> {
  return withNumbers(await preparedOnce(db, "config-with-numbers-by-id", (d) => prepareWithNumbers(d, false)).get({ id }));
}

/** findConfigWithNumbers, or 404 `Telephony configuration not found` (as getConfig). */
export async function getConfigWithNumbers(db: Db, orgId: number, id: number): Promise<{ row: ConfigRow; numbers: string[] }> {
  const found = await findConfigWithNumbers(db, orgId, id);
  if (!found) throw notFound(CONFIG_NOT_FOUND);
  return found;
}

/** Active numbers per configuration, the default caller ID first, then oldest first. */
export async function activeNumbersOf(db: Db, configIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>(configIds.map((id) => [id, []]));
  if (configIds.length === 0) return out;
  const rows = await db
    .select({ configId: phoneNumbers.configId, address: phoneNumbers.address })
    .from(phoneNumbers)
    // The ids travel as one JSON parameter: D1 binds at most 100 parameters per statement, and a page holds 100.
    .where(and(sql`${phoneNumbers.configId} IN (SELECT value FROM json_each(${JSON.stringify(configIds)}))`, eq(phoneNumbers.isActive, true)))
    .orderBy(desc(phoneNumbers.isDefaultCallerId), asc(phoneNumbers.id))
    .all();
  for (const r of rows) out.get(r.configId)?.push(r.address);
  return out;
}
