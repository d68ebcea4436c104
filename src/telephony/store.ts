// D1 reads shared by the routes and resolve.ts. Every query is scoped by organization.
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { phoneNumbers, telephonyConfigs } from "../db/schema";
import type { Db } from "../lib/db";
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
