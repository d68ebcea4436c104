// One Durable Object per organization: leases on the organization's concurrent-call cap (contract 6), shared by its
// campaigns and its single calls. A lease expires after its TTL so a lost final status cannot hold a slot forever.
import { DurableObject } from "cloudflare:workers";
import type { LeaseRequest, LeaseResult } from "../campaigns/object-api";
import { clock } from "../lib/clock";

export const DEFAULT_ORG_MAX_CONCURRENT_CALLS = 20;

/** The organization's coordinator, addressed by its id. */
export function organizationStub(env: Env, orgId: number): DurableObjectStub<OrganizationObject> {
  return env.ORGANIZATION.get(env.ORGANIZATION.idFromName(String(orgId)));
}

export function orgCapOf(env: Pick<Env, "ORG_MAX_CONCURRENT_CALLS">): number {
  const n = Number(env.ORG_MAX_CONCURRENT_CALLS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORG_MAX_CONCURRENT_CALLS;
}

export class OrganizationObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private capOverride: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS leases (lease_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS waiters (campaign_id INTEGER PRIMARY KEY, since INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS settings (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
    const row = this.sql.exec<{ v: number }>(`SELECT v FROM settings WHERE k = 'cap'`).toArray()[0];
    this.capOverride = row ? row.v : null;
  }

  private cap(): number {
    return this.capOverride ?? orgCapOf(this.env);
  }

  private sweep(now: number): void {
    this.sql.exec(`DELETE FROM leases WHERE expires_at <= ?`, now);
  }

  private inUse(): number {
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM leases`).one().n;
  }

  /** Takes (or refreshes: the same id is idempotent) one slot of the cap. */
  acquire(req: LeaseRequest): LeaseResult {
    const now = clock.now();
    this.sweep(now);
    const cap = this.cap();
    const expires = now + Math.max(1, req.ttlSeconds) * 1000;
    const held = this.sql.exec(`UPDATE leases SET expires_at = ? WHERE lease_id = ?`, expires, req.leaseId).rowsWritten;
    if (held) return { granted: true, inUse: this.inUse(), cap };
    const inUse = this.inUse();
    if (inUse >= cap) {
      if (req.waiter != null) this.sql.exec(`INSERT OR IGNORE INTO waiters (campaign_id, since) VALUES (?, ?)`, req.waiter, now);
      const soonest = this.sql.exec<{ e: number }>(`SELECT min(expires_at) AS e FROM leases`).one().e;
      // A final status usually frees a slot long before the soonest expiry; ask again within a few seconds.
      const retryAfterSeconds = Math.max(1, Math.min(5, Math.ceil((soonest - now) / 1000)));
      return { granted: false, inUse, cap, retryAfterSeconds };
    }
    this.sql.exec(`INSERT INTO leases (lease_id, expires_at) VALUES (?, ?)`, req.leaseId, expires);
    return { granted: true, inUse: inUse + 1, cap };
  }

  /** Several acquire() in one call (a dispatch round asks for its slots together). */
  acquireMany(reqs: LeaseRequest[]): LeaseResult[] {
    return reqs.map((r) => this.acquire(r));
  }

  /** Frees a slot; unknown or already released ids are fine. Wakes campaigns that were waiting for one. */
  release(leaseId: string): boolean {
    const freed = this.sql.exec(`DELETE FROM leases WHERE lease_id = ?`, leaseId).rowsWritten > 0;
    if (freed) this.wakeWaiters();
    return freed;
  }

  /** Current use of the cap (for tests, the demo and diagnostics). */
  usage(): { inUse: number; cap: number } {
    this.sweep(clock.now());
    return { inUse: this.inUse(), cap: this.cap() };
  }

  /** Overrides the organization's cap (null: back to ORG_MAX_CONCURRENT_CALLS). */
  setCap(cap: number | null): void {
    this.capOverride = cap;
    if (cap == null) this.sql.exec(`DELETE FROM settings WHERE k = 'cap'`);
    else this.sql.exec(`INSERT INTO settings (k, v) VALUES ('cap', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, cap);
  }

  private wakeWaiters(): void {
    const ids = this.sql.exec<{ campaign_id: number }>(`SELECT campaign_id FROM waiters ORDER BY since`).toArray();
    if (!ids.length) return;
    this.sql.exec(`DELETE FROM waiters`);
    for (const { campaign_id } of ids) {
      const stub = this.env.CAMPAIGN.get(this.env.CAMPAIGN.idFromName(String(campaign_id)));
      // Best effort: a campaign that misses this wake-up asks again on its own timer.
      this.ctx.waitUntil(stub.wake().catch(() => undefined));
    }
  }
}
