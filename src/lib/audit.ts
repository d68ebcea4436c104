// The audit trail: which API key changed what (GET /organizations/audit-log). Feature routes record each change of
// configuration, numbers, agents, campaigns and keys, in the change's own D1 batch where the change is a D1 write.
import type { Context } from "hono";
import { is, sql, SQL } from "drizzle-orm";
import { auditLog } from "../db/schema";
import { isoNow } from "./clock";
import type { Db } from "./db";
import type { AppEnv } from "./types";

/** What an entry says was done: the one list (the audit log's API document names them from here). */
export const AUDIT_ACTIONS = [
  "create",
  "update",
  "delete",
  "revoke",
  "set_status",
  "start",
  "pause",
  "resume",
  "cancel",
  "redial",
  "add_contacts",
  "purge",
  "erase",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
/** What an entry's change was made to. */
export const AUDIT_RESOURCES = [
  "api_key",
  "telephony_config",
  "phone_number",
  "workflow",
  "campaign",
  "calling_policy",
  "greeting_recording",
  "webhook_endpoint",
  "suppression_list",
  "data_policy",
  "run_data",
] as const;
export type AuditResource = (typeof AUDIT_RESOURCES)[number];

/** Who acts: the organization, and the API key authentication found (null outside a request, e.g. a script). */
export type Actor = { orgId: number; apiKeyId: number | null };

export const actorOf = (c: Context<AppEnv>): Actor => ({ orgId: c.get("orgId"), apiKeyId: c.get("apiKeyId") ?? null });

export type AuditEntry = {
  action: AuditAction;
  resourceType: AuditResource;
  /** The id, or an expression that finds it in the same batch (e.g. a row inserted by the statement before). */
  resourceId: number | SQL;
  /** Small and never secret: names, changed field names, a few scalar values. An expression may read the row. */
  summary?: Record<string, unknown> | SQL;
};

/**
 * The entry as a statement for the change's own D1 batch, so the two commit or fail together. By default it is
 * written only if the statement just before it changed a row (SQLite's `changes()`), so a guarded write that matched
 * nothing (an unknown id, a lost race) records nothing; `when` replaces that condition, e.g. for an entry placed
 * before a delete so that it can still read the row.
 */
export function auditStatement(db: Db, actor: Actor, entry: AuditEntry, when: SQL = sql`changes() > 0`) {
  const summary = is(entry.summary, SQL) ? sql`coalesce(${entry.summary}, '{}')` : JSON.stringify(entry.summary ?? {});
  // In the table's column order (id, org_id, api_key_id, action, resource_type, resource_id, summary, created_at);
  // a null id is assigned by SQLite.
  return db
    .insert(auditLog)
    .select(
      sql`SELECT NULL, ${actor.orgId}, ${actor.apiKeyId}, ${entry.action}, ${entry.resourceType}, ${entry.resourceId}, ${summary}, ${isoNow()} WHERE ${when}`,
    );
}

/** Records a change on its own: for changes D1 does not hold (a campaign's state lives in its Durable Object). */
export async function audit(c: Context<AppEnv>, db: Db, entry: AuditEntry): Promise<void> {
  await auditStatement(db, actorOf(c), entry, sql`1`);
}
