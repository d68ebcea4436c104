// One Durable Object per organization: leases on the organization's concurrent-call cap, shared by its
// campaigns and its single calls. A lease expires after its TTL so a lost final status cannot hold a slot forever.
// It also holds the organization's rate-limit buckets (rate-limits.ts).
import { DurableObject } from "cloudflare:workers";
import type { LeaseRequest, LeaseResult } from "./leases";
import { clock } from "../lib/clock";
import { DoSql, migrateOnStart } from "../lib/do-sql";
import { refill, take, takeAll, type BucketLimit, type BucketState } from "../lib/token-bucket";
import { ORGANIZATION_MIGRATIONS, type RateLimitOverrideRow, type SuppressionRow, type WaiterRow } from "./organization-schema";
import { DEFAULT_RATE_LIMITS, maxRequestBatch, rateLimitsOf, type RateLimits, type RequestDecision } from "./rate-limits";

export const DEFAULT_ORG_MAX_CONCURRENT_CALLS = 20;
/** Dials are remembered this long: the longest attempt-cap window an organization may set (30 days). */
const MAX_CAP_WINDOW_MS = 720 * 3_600_000;

/** The organization's coordinator, addressed by its id. */
export function organizationStub(env: Env, orgId: number): DurableObjectStub<OrganizationObject> {
  return env.ORGANIZATION.get(env.ORGANIZATION.idFromName(String(orgId)));
}

export function orgCapOf(env: Pick<Env, "ORG_MAX_CONCURRENT_CALLS">): number {
  const n = Number(env.ORG_MAX_CONCURRENT_CALLS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORG_MAX_CONCURRENT_CALLS;
}

/**
 * Why a dial to `dial.number` may not start now (suppression list, attempt cap), or null. `dialedAt`: the number's
 * dials not older than its cap's window or longer, oldest first.
 */
function ruleRefusal(
  dial: NonNullable<LeaseRequest["dial"]>,
  now: number,
  inUse: number,
  cap: number,
  suppressed: boolean,
  dialedAt: number[],
): LeaseResult | null {
  if (suppressed) return { granted: false, inUse, cap, skip: "suppressed" };
  if (!dial.cap) return null;
  const since = now - dial.cap.windowMs;
  const within = dialedAt.filter((at) => at > since);
  if (within.length < dial.cap.max) return null;
  return { granted: false, inUse, cap, skip: "attempt_cap", retryAt: within[0] + dial.cap.windowMs + 1 };
}

export class OrganizationObject extends DurableObject<Env> {
  private readonly db: DoSql;
  private capOverride: number | null = null;
  private readonly baseLimits: RateLimits;
  private limitOverrides: Partial<RateLimits> = {};
  /**
   * Rate-limit buckets, in memory only: a write per request would cost more than the limit is worth, and an object
   * evicted for idleness comes back with full buckets, which an idle spell (seconds at these rates) gives anyway.
   */
  private readonly buckets = new Map<string, BucketState>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    this.baseLimits = rateLimitsOf(env);
    void migrateOnStart(ctx, this.db, ORGANIZATION_MIGRATIONS, () => {
      this.capOverride = this.db.value<number>`SELECT v FROM settings WHERE k = 'cap'`;
      for (const r of this.db.all<RateLimitOverrideRow>`SELECT name, rate, burst FROM rate_limit_overrides`) {
        this.limitOverrides[r.name as keyof RateLimits] = { rate: r.rate, burst: r.burst };
      }
    });
  }

  private limits(): RateLimits {
    return { ...this.baseLimits, ...this.limitOverrides };
  }

  private keep(name: string, state: BucketState): void {
    // Bounded by the organization's keys; past that, forgetting buckets only makes them full again.
    if (this.buckets.size >= 10_000 && !this.buckets.has(name)) this.buckets.clear();
    this.buckets.set(name, state);
  }

  /**
   * An authenticated API request by `keyId`: a token from the key's request bucket (request-limit.ts), plus up to
   * `want - 1` more for the asking isolate to hold (at most maxRequestBatch, and only what the bucket has). `giveBack`
   * returns tokens an earlier batch left unspent (capped at the burst, as if never taken).
   */
  takeRequest(keyId: number, want = 1, giveBack = 0): RequestDecision {
    const limit = this.limits().requestsPerKey;
    const name = `req:${keyId}`;
    const now = clock.now();
    const batch = maxRequestBatch(limit);
    let state = this.buckets.get(name);
    const back = Math.min(batch - 1, Math.max(0, Math.floor(giveBack) || 0));
    if (back > 0) {
      const filled = refill(state, limit, now);
      state = { tokens: Math.min(limit.burst, filled.tokens + back), at: filled.at };
    }
    const r = take(state, limit, now);
    if (!r.ok) {
      this.keep(name, r.state);
      return { ok: false, granted: 0, retryAfterSeconds: r.retryAfterSeconds, state: r.state, limit };
    }
    const extra = Math.max(0, Math.min((Math.floor(want) || 1) - 1, batch - 1, Math.floor(r.state.tokens)));
    const after = { tokens: r.state.tokens - extra, at: r.state.at };
    this.keep(name, after);
    return { ok: true, granted: 1 + extra, retryAfterSeconds: 0, state: after, limit };
  }

  /** A call start's tokens from the organization's and the key's buckets, both or neither; spent on `commit()`. */
  private takeCallStart(keyId: number | null, now: number) {
    const limits = this.limits();
    const wanted: [string, BucketLimit][] = [["call:org", limits.callStartsPerOrg]];
    if (keyId != null) wanted.push([`call:key:${keyId}`, limits.callStartsPerKey]);
    const results = takeAll(
      wanted.map(([name, limit]) => ({ state: this.buckets.get(name), limit })),
      now,
    );
    return {
      ok: results[0].ok,
      retryAfterSeconds: results[0].retryAfterSeconds,
      commit: () => {
        for (const [i, [name]] of wanted.entries()) this.keep(name, results[i].state);
      },
    };
  }

  /**
   * Overrides this organization's rate limits (tests, or an organization allowed more); null clears every override,
   * a limit set to null clears that one. Effective at once for every ask from then on; request tokens an isolate
   * already holds (less than a batch, request-limit.ts) are still spent within the second.
   */
  setRateLimits(overrides: { [K in keyof RateLimits]?: BucketLimit | null } | null): void {
    for (const name of Object.keys(DEFAULT_RATE_LIMITS) as (keyof RateLimits)[]) {
      if (overrides !== null && !(name in overrides)) continue;
      const limit = overrides?.[name] ?? null;
      if (limit === null) {
        delete this.limitOverrides[name];
        this.db.run`DELETE FROM rate_limit_overrides WHERE name = ${name}`;
      } else {
        this.limitOverrides[name] = { rate: limit.rate, burst: limit.burst };
        this.db.run`INSERT INTO rate_limit_overrides (name, rate, burst) VALUES (${name}, ${limit.rate}, ${limit.burst})
          ON CONFLICT (name) DO UPDATE SET rate = excluded.rate, burst = excluded.burst`;
      }
    }
    this.buckets.clear();
  }

  private cap(): number {
    return this.capOverride ?? orgCapOf(this.env);
  }

  private sweep(now: number): void {
    this.db.run`DELETE FROM leases WHERE expires_at <= ${now}`;
    this.db.run`DELETE FROM dials WHERE at < ${now - MAX_CAP_WINDOW_MS}`;
  }

  private inUse(): number {
    return this.db.value<number>`SELECT count(*) FROM leases` ?? 0;
  }

  /**
   * Takes (or refreshes: the same id is idempotent) one slot of the cap. A single call (`callStart`) is first
   * checked against the call-start buckets, whose tokens are spent only when the slot is granted.
   */
  acquire(req: LeaseRequest): LeaseResult {
    return this.acquireMany([req])[0];
  }

  /**
   * Several acquire() in one call (a dispatch round asks for its slots together), after releasing `release` (the
   * leases final statuses freed since the campaign's last call: one round trip for both). One transaction and a
   * fixed number of statements whatever the batch's size: the held leases, the suppressed numbers and the numbers'
   * recent dials are read for the whole batch, the grants are decided in order as one acquire() after another would,
   * and the new leases and dials are written together.
   */
  acquireMany(reqs: LeaseRequest[], release?: string[]): LeaseResult[] {
    return this.db.tx(() => {
      if (release?.length) this.releaseMany(release);
      const now = clock.now();
      this.sweep(now);
      const cap = this.cap();
      let inUse = this.inUse();
      const expiry = (r: LeaseRequest) => now + Math.max(1, r.ttlSeconds) * 1000;
      const held = new Set(
        this.db.all<{ lease_id: string }>`UPDATE leases SET expires_at = j.value ->> 1
            FROM json_each(${JSON.stringify(reqs.map((r) => [r.leaseId, expiry(r)]))}) AS j
            WHERE leases.lease_id = j.value ->> 0 RETURNING lease_id`.map((r) => r.lease_id),
      );
      const dials = reqs.filter((r) => r.dial && !held.has(r.leaseId)).map((r) => r.dial!);
      const suppressed = new Set<string>();
      /** Each number's dials within the batch's longest cap window, oldest first (grants below are added). */
      const recent = new Map<string, number[]>();
      if (dials.length) {
        const numbers = JSON.stringify([...new Set(dials.map((d) => d.number))]);
        for (const r of this.db.all<{ number: string }>`SELECT number FROM suppressions WHERE number IN (SELECT value FROM json_each(${numbers}))`)
          suppressed.add(r.number);
        // One window per batch in practice (a round's rules); the longest covers every request's.
        const windowMs = Math.max(0, ...dials.map((d) => d.cap?.windowMs ?? 0));
        if (windowMs > 0)
          for (const r of this.db.all<{ number: string; at: number }>`SELECT number, at FROM dials
            WHERE number IN (SELECT value FROM json_each(${numbers})) AND at > ${now - windowMs} ORDER BY at`)
            recent.get(r.number)?.push(r.at) ?? recent.set(r.number, [r.at]);
      }
      const granted: [string, number][] = [];
      const dialed: [string, string][] = [];
      /** The earliest expiry among the leases stored before this batch (read once, when a refusal needs it). */
      let storedSoonest: number | undefined;
      const results = reqs.map((req): LeaseResult => {
        if (held.has(req.leaseId)) return { granted: true, inUse, cap };
        const refusal = req.dial ? ruleRefusal(req.dial, now, inUse, cap, suppressed.has(req.dial.number), recent.get(req.dial.number) ?? []) : null;
        if (refusal) return refusal;
        const start = req.callStart ? this.takeCallStart(req.callStart.keyId, now) : null;
        if (start && !start.ok) return { granted: false, inUse, cap, retryAfterSeconds: start.retryAfterSeconds, rateLimited: true };
        if (inUse >= cap) {
          if (req.waiter != null) this.db.run`INSERT OR IGNORE INTO waiters (campaign_id, since) VALUES (${req.waiter}, ${now})`;
          storedSoonest ??= this.db.value<number>`SELECT min(expires_at) FROM leases` ?? Number.POSITIVE_INFINITY;
          // The leases granted earlier in this batch count too, as they would one acquire() after another.
          const soonest = Math.min(storedSoonest, ...granted.map((g) => g[1]));
          // A final status usually frees a slot long before the soonest expiry; ask again within a few seconds.
          const retryAfterSeconds = Math.max(1, Math.min(5, Math.ceil(((Number.isFinite(soonest) ? soonest : now) - now) / 1000)));
          return { granted: false, inUse, cap, retryAfterSeconds };
        }
        granted.push([req.leaseId, expiry(req)]);
        held.add(req.leaseId); // the same id again in this batch is a refresh
        if (req.dial && req.dial.count !== false) {
          dialed.push([req.leaseId, req.dial.number]);
          recent.set(req.dial.number, [...(recent.get(req.dial.number) ?? []), now]);
        }
        start?.commit();
        return { granted: true, inUse: ++inUse, cap };
      });
      if (granted.length) this.db.run`INSERT INTO leases (lease_id, expires_at) SELECT value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(granted)})`;
      if (dialed.length)
        this.db.run`INSERT OR REPLACE INTO dials (lease_id, number, at) SELECT value ->> 0, value ->> 1, ${now} FROM json_each(${JSON.stringify(dialed)})`;
      return results;
    });
  }

  /**
   * Frees a slot; unknown or already released ids are fine. Wakes campaigns that were waiting for one. `undial`: the
   * call never reached a carrier, so it does not count towards the number's attempt cap either.
   */
  release(leaseId: string, undial = false): boolean {
    return this.releaseMany([leaseId], undial) > 0;
  }

  /** Several release() in one call: a campaign frees the slots of a batch of final statuses together. */
  releaseMany(leaseIds: string[], undial = false): number {
    if (!leaseIds.length) return 0;
    const ids = JSON.stringify(leaseIds);
    if (undial) this.db.run`DELETE FROM dials WHERE lease_id IN (SELECT value FROM json_each(${ids}))`;
    const freed = this.db.changes`DELETE FROM leases WHERE lease_id IN (SELECT value FROM json_each(${ids}))`;
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
    if (cap == null) this.db.run`DELETE FROM settings WHERE k = 'cap'`;
    else this.db.run`INSERT INTO settings (k, v) VALUES ('cap', ${cap}) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;
  }

  // The suppression list (do-not-call): numbers as the calls module normalizes them (E.164, or as dialed).

  /** Adds numbers; those already listed keep their first reason. */
  suppress(entries: { number: string; reason: string | null }[], source: string): { added: number; existing: number } {
    const at = new Date(clock.now()).toISOString();
    let added = 0;
    this.db.tx(() => {
      for (const e of entries)
        added += this.db.changes`INSERT INTO suppressions (number, reason, source, created_at) VALUES (${e.number}, ${e.reason}, ${source}, ${at})
        ON CONFLICT (number) DO NOTHING`;
    });
    return { added, existing: entries.length - added };
  }

  unsuppress(number: string): boolean {
    return this.db.run`DELETE FROM suppressions WHERE number = ${number}` > 0;
  }

  suppression(number: string): SuppressionRow | null {
    return this.db.one<SuppressionRow>`SELECT * FROM suppressions WHERE number = ${number}`;
  }

  /** A page in number order after `after`, and the list's size. */
  suppressions(after: string | null, limit: number): { items: SuppressionRow[]; total: number } {
    const items = this.db.all<SuppressionRow>`SELECT * FROM suppressions WHERE number > ${after ?? ""} ORDER BY number LIMIT ${limit}`;
    return { items, total: this.db.value<number>`SELECT count(*) FROM suppressions` ?? 0 };
  }

  private wakeWaiters(): void {
    const ids = this.db.all<Pick<WaiterRow, "campaign_id">>`SELECT campaign_id FROM waiters ORDER BY since`;
    if (!ids.length) return;
    this.db.run`DELETE FROM waiters`;
    for (const { campaign_id } of ids) {
      const stub = this.env.CAMPAIGN.get(this.env.CAMPAIGN.idFromName(String(campaign_id)));
      // Best effort: a campaign that misses this wake-up asks again on its own timer.
      this.ctx.waitUntil(stub.wake().catch(() => undefined));
    }
  }
}
