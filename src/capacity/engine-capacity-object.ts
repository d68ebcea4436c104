// The deployment's engine capacity: one Durable Object for the whole deployment (engine quotas such as Workers AI's
// requests per minute are per account, shared by every organization), so admission can count what calls need.
// It grants call leases against the engine budgets (ledger.ts decides), and spends request tokens for work outside
// calls (post-call analysis) from what the held calls leave spare. Each RPC is one small transaction: every call
// start of the deployment passes here.
import { DurableObject } from "cloudflare:workers";
import { clock } from "../lib/clock";
import { DoSql, migrateOnStart, type Migration } from "../lib/do-sql";
import { log } from "../lib/log";
import { take, type BucketState } from "../lib/token-bucket";
import { budgetOf, callBudgetOf, EngineLimits, mergeLimits, parseEngineLimits, type EngineKey } from "./budgets";
import type { CapacityRequest, CapacityResult, CapacityUsage, TokenResult } from "./capacity-api";
import type { CallDemand } from "./demand";
import { blockingEngine, spareRpm, type Held } from "./ledger";

const MIGRATIONS: readonly Migration[] = [
  [
    `CREATE TABLE leases (lease_id TEXT PRIMARY KEY, org_id INTEGER NOT NULL, expires_at INTEGER NOT NULL, demand TEXT NOT NULL)`,
    `CREATE TABLE waiters (campaign_id INTEGER PRIMARY KEY, since INTEGER NOT NULL)`,
    // k = 'limits': the operator's stored EngineLimits (JSON), over ENGINE_LIMITS.
    `CREATE TABLE settings (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
  ],
];

/** A refused call asks again within this long at most: a freed lease usually wakes it sooner. */
const MAX_RETRY_SECONDS = 5;

/** The capacity object of the deployment (there is one). */
export function capacityStub(env: Pick<Env, "ENGINE_CAPACITY">): DurableObjectStub<EngineCapacityObject> {
  return env.ENGINE_CAPACITY.get(env.ENGINE_CAPACITY.idFromName("deployment"));
}

export class EngineCapacityObject extends DurableObject<Env> {
  private readonly db: DoSql;
  private readonly base: EngineLimits;
  private stored: EngineLimits | null = null;
  /** The held leases, read once and kept in step with every write (each request reads them all otherwise). */
  private held: Map<string, Held & { expiresAt: number }> | null = null;
  /** Analysis tokens per engine, in memory: an evicted object comes back with full buckets, as an idle spell gives. */
  private readonly buckets = new Map<EngineKey, BucketState>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    const parsed = parseEngineLimits(env.ENGINE_LIMITS);
    if (!parsed.ok) log("error", "engine_limits_invalid", { error: parsed.error });
    this.base = parsed.ok ? parsed.limits : {};
    void migrateOnStart(ctx, this.db, MIGRATIONS, () => {
      const v = this.db.value<string>`SELECT v FROM settings WHERE k = 'limits'`;
      this.stored = v ? (JSON.parse(v) as EngineLimits) : null;
    });
  }

  private limits(): EngineLimits {
    return mergeLimits(this.base, this.stored);
  }

  /** The held leases, expired ones removed. */
  private leases(now: number): Map<string, Held & { expiresAt: number }> {
    if (!this.held) {
      this.held = new Map();
      for (const r of this.db.all<{ lease_id: string; org_id: number; expires_at: number; demand: string }>`SELECT * FROM leases`)
        this.held.set(r.lease_id, { orgId: r.org_id, expiresAt: r.expires_at, demand: JSON.parse(r.demand) as CallDemand });
    }
    let expired = false;
    for (const [id, l] of this.held)
      if (l.expiresAt <= now) {
        this.held.delete(id);
        expired = true;
      }
    if (expired) this.db.run`DELETE FROM leases WHERE expires_at <= ${now}`;
    return this.held;
  }

  /**
   * Call leases, in order as one acquire() after another would grant them, after releasing `release` (leases final
   * statuses freed since the caller's last ask: one round trip for both). The same id again refreshes its expiry.
   */
  acquireMany(reqs: CapacityRequest[], release?: string[]): CapacityResult[] {
    try {
      return this.grant(reqs, release);
    } catch (err) {
      this.held = null; // the transaction rolled back: read the leases again
      throw err;
    }
  }

  private grant(reqs: CapacityRequest[], release?: string[]): CapacityResult[] {
    return this.db.tx(() => {
      if (release?.length) this.releaseMany(release);
      const now = clock.now();
      const held = this.leases(now);
      const limits = this.limits();
      return reqs.map((req): CapacityResult => {
        const expiresAt = now + Math.max(1, req.ttlSeconds) * 1000;
        const mine = held.get(req.leaseId);
        if (mine) {
          mine.expiresAt = expiresAt;
          this.db.run`UPDATE leases SET expires_at = ${expiresAt} WHERE lease_id = ${req.leaseId}`;
          return { granted: true };
        }
        const block = blockingEngine(limits, [...held.values()], req.orgId, req.demand);
        if (block) {
          if (req.waiter != null) this.db.run`INSERT OR IGNORE INTO waiters (campaign_id, since) VALUES (${req.waiter}, ${now})`;
          let soonest = Number.POSITIVE_INFINITY;
          for (const l of held.values()) soonest = Math.min(soonest, l.expiresAt);
          const retryAfterSeconds = Math.max(1, Math.min(MAX_RETRY_SECONDS, Math.ceil(((Number.isFinite(soonest) ? soonest : now) - now) / 1000)));
          return { granted: false, retryAfterSeconds, ...block };
        }
        held.set(req.leaseId, { orgId: req.orgId, demand: req.demand, expiresAt });
        this.db
          .run`INSERT INTO leases (lease_id, org_id, expires_at, demand) VALUES (${req.leaseId}, ${req.orgId}, ${expiresAt}, ${JSON.stringify(req.demand)})`;
        return { granted: true };
      });
    });
  }

  /** Frees leases (unknown or already released ids are fine) and wakes the campaigns that waited for room. */
  releaseMany(leaseIds: string[]): number {
    if (!leaseIds.length) return 0;
    const held = this.leases(clock.now());
    let freed = 0;
    for (const id of leaseIds) if (held.delete(id)) freed++;
    if (!freed) return 0;
    this.db.run`DELETE FROM leases WHERE lease_id IN (SELECT value FROM json_each(${JSON.stringify(leaseIds)}))`;
    this.wakeWaiters();
    return freed;
  }

  /**
   * A request outside any call (post-call analysis) to `engine`: a token from a bucket that refills at the rate the
   * held calls leave spare of the engine's whole budget, so such work waits rather than competes with live turns.
   */
  takeToken(engine: EngineKey): TokenResult {
    const budget = budgetOf(this.limits(), engine);
    const now = clock.now();
    const spare = spareRpm(budget.rpm, [...this.leases(now).values()], engine);
    if (spare == null) return { ok: true, retryAfterSeconds: 0 };
    if (spare < 1) return { ok: false, retryAfterSeconds: 30 };
    const limit = { rate: spare / 60, burst: Math.max(1, Math.min(10, Math.floor(spare / 6))) };
    const r = take(this.buckets.get(engine), limit, now);
    this.buckets.set(engine, r.state);
    return { ok: r.ok, retryAfterSeconds: r.ok ? 0 : r.retryAfterSeconds };
  }

  /** What is held now against which budgets (tests, diagnostics, the operator). */
  usage(): CapacityUsage {
    const held = [...this.leases(clock.now()).values()];
    const limits = this.limits();
    const out: CapacityUsage = { calls: held.length, byOrg: {}, engines: {} };
    for (const h of held) {
      out.byOrg[h.orgId] = (out.byOrg[h.orgId] ?? 0) + 1;
      for (const [key, d] of Object.entries(h.demand)) {
        const b = callBudgetOf(limits, key);
        const e = out.engines[key] ?? { rpm: 0, streams: 0, budgetRpm: b.rpm, budgetStreams: b.streams };
        out.engines[key] = e;
        e.rpm += d.rpm;
        e.streams += d.streams;
      }
    }
    return out;
  }

  /**
   * The operator's budgets and shares over ENGINE_LIMITS (the same shape; null clears them). Validated here, since
   * an RPC bypasses every route: a bad value is refused, never stored.
   */
  setLimits(limits: unknown): { ok: true } | { ok: false; error: string } {
    if (limits === null) {
      this.stored = null;
      this.db.run`DELETE FROM settings WHERE k = 'limits'`;
      return { ok: true };
    }
    const parsed = EngineLimits.safeParse(limits);
    if (!parsed.success) return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
    this.stored = parsed.data;
    this.buckets.clear();
    this.db.run`INSERT INTO settings (k, v) VALUES ('limits', ${JSON.stringify(parsed.data)}) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;
    this.wakeWaiters(); // more room, perhaps
    return { ok: true };
  }

  private wakeWaiters(): void {
    const ids = this.db.all<{ campaign_id: number }>`SELECT campaign_id FROM waiters ORDER BY since`;
    if (!ids.length) return;
    this.db.run`DELETE FROM waiters`;
    for (const { campaign_id } of ids) {
      const stub = this.env.CAMPAIGN.get(this.env.CAMPAIGN.idFromName(String(campaign_id)));
      // Best effort: a campaign that misses this wake-up asks again on its own timer.
      this.ctx.waitUntil(stub.wake().catch(() => undefined));
    }
  }
}
