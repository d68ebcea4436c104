// bench/dispatch: the edgedial Worker with a simulated carrier behind the engine's call-starter seam. The carrier is an
// HTTP service outside the runtime (carrier.mjs, in the runner): each call start is one request to it, as a carrier's
// originate is, and its final statuses come back as callback requests, forwarded by the calls module's forwarder.
// Bench-only routes create and observe a campaign; everything else is the app.
// Rows written are counted where they happen: D1 at the binding, each Durable Object's SQLite at its cursors.
import production from "../../src/index";
import { CampaignObject as EngineCampaignObject } from "../../src/campaigns/campaign-object";
import { OrganizationObject as EngineOrganizationObject } from "../../src/organizations/organization-object";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { unwrap } from "../../src/campaigns/errors";
import { type LeaseClient, setLeaseClient } from "../../src/campaigns/engine/leases";
import { organizationStub } from "../../src/organizations/organization-object";
import type { CampaignCallStatus } from "../../src/calls/campaign/campaign-calls";
import { forwardCampaignStatus } from "../../src/calls/runs/status";
import { DEFAULT_SETTINGS } from "../../src/campaigns/engine/settings";
import { SqlRowTally, countD1Writes, d1Tally } from "../../test/campaigns/rows-written";

// Every Durable Object class of the Worker (this module's own classes take precedence over the star export).
export * from "../../src/index";

/**
 * Per campaign, in the isolate rather than the object instance, so a restarted instance loses nothing: dial times,
 * the times its final statuses arrived (the carrier's callback, before any queue or batching), both in the order
 * they happened (`order`: a final's index, or ~index for a dial: Date.now() has millisecond steps), and where the
 * rows counters stood when it started.
 */
type Stats = {
  dials: number[];
  /** The run id of each dial (the carrier reports when each reached it, by run id). */
  runs: number[];
  finals: number[];
  order: number[];
  d1At: number;
  orgAt: number;
  campaignAt: number;
  orgStatementsAt: number;
  campaignStatementsAt: number;
};
const byCampaign = new Map<number, Stats>();
const statsOf = (id: number) =>
  byCampaign.get(id) ??
  (byCampaign
    .set(id, { dials: [], runs: [], finals: [], order: [], d1At: 0, orgAt: 0, campaignAt: 0, orgStatementsAt: 0, campaignStatementsAt: 0 })
    .get(id) as Stats);
const campaignRows = new Map<string, SqlRowTally>();
const organizationRows = new SqlRowTally();
const tallyOf = (id: string) => campaignRows.get(id) ?? (campaignRows.set(id, new SqlRowTally()).get(id) as SqlRowTally);
let runSeq = 0;
/**
 * Requests to the carrier that failed (a connection lost under load, the carrier gone): in a row and in all, with the
 * last error. A call whose start never reached the carrier never ends, so the runner stops on these rather than wait.
 */
const carrierErrors = { inRow: 0, total: 0, last: "" };
setCallStarter(async (env, req) => {
  const stats = statsOf(req.campaignId);
  stats.dials.push(Date.now());
  stats.order.push(~(stats.dials.length - 1));
  const runId = ++runSeq;
  stats.runs.push(runId);
  const status: CampaignCallStatus = { runId, contactId: req.contactId, attempt: req.attempt, status: "completed", at: new Date().toISOString() };
  // Not awaited: the carrier accepts every call (its answer would only say so), as an instant carrier would.
  void fetch(`${(env as unknown as { BENCH_CARRIER_URL: string }).BENCH_CARRIER_URL}/dial`, {
    method: "POST",
    body: JSON.stringify({ campaignId: req.campaignId, status }),
  })
    .then(async (r) => {
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`carrier answered ${r.status}`);
      carrierErrors.inRow = 0;
    })
    .catch((err: unknown) => {
      carrierErrors.inRow++;
      carrierErrors.total++;
      carrierErrors.last = String(err);
    });
  return { ok: true, runId, providerCallId: `bench-${runId}` };
});

// The organization object as the engine reaches it, with each acquireMany's round trip traced (BENCH_TRACE).
// The organization's own part of each is traced too (`org.acquireMany`): the rest of the round trip is the RPC both
// ways (its answer leaves once its writes are stored).
const leaseTrace: { t0: number; t1: number; n: number; org?: boolean }[] = [];
setLeaseClient((env, orgId) => {
  const org = organizationStub(env, orgId) as unknown as LeaseClient;
  return {
    acquire: (r) => org.acquire(r),
    acquireMany: async (rs, release) => {
      const t0 = Date.now();
      try {
        return await org.acquireMany(rs, release);
      } finally {
        leaseTrace.push({ t0, t1: Date.now(), n: rs.length });
      }
    },
    release: (id, undial) => org.release(id, undial),
    releaseMany: (ids, undial) => org.releaseMany(ids, undial),
  };
});

/** Points an object's SQL helper (its DoSql, `db`) at counted storage. */
const countRows = (o: object, rows: SqlRowTally, ctx: DurableObjectState) => {
  (o as unknown as { db: { storage: DurableObjectStorage } }).db.storage = rows.wrap(ctx.storage);
};

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : null);

/** The organization object with its SQLite rows counted (leases, dials). */
export class OrganizationObject extends EngineOrganizationObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    countRows(this, organizationRows, ctx);
  }

  override acquireMany(reqs: Parameters<EngineOrganizationObject["acquireMany"]>[0], release?: string[]) {
    const t0 = Date.now();
    try {
      return super.acquireMany(reqs, release);
    } finally {
      leaseTrace.push({ t0, t1: Date.now(), n: reqs.length, org: true });
    }
  }
}

/** The engine's object with its SQLite rows counted, plus a bench probe: the figures at the end. */
export class CampaignObject extends EngineCampaignObject {
  private readonly rows: SqlRowTally;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // BENCH_TRACE: which of the object's steps ran, and when (synchronous steps take no time on the runtime's clock).
    // The engine's parts (src/campaigns/engine/core.ts), its dial step and its own moves, reached past TypeScript's privacy.
    type Patchable = Record<string, (...a: unknown[]) => unknown>;
    const engine = this as unknown as { core: Record<string, Patchable>; dispatch: { dial: Patchable; moves: Patchable } };
    const self = engine.core;
    const steps: [string, string][] = [
      ["hours", "assign"],
      ["hours", "assignAhead"],
      ["summary", "flush"],
      ["timers", "rearm"],
      ["events", "publish"],
      ["window", "refresh"],
    ];
    for (const [part, method] of steps) {
      const target = self[part];
      const real = target[method].bind(target);
      target[method] = (...a: unknown[]) => {
        const t0 = Date.now();
        const out = real(...a);
        const n = typeof out === "number" ? out : 0;
        if (out instanceof Promise) return out.finally(() => this.trace.push({ kind: `${part}.${method}`, t0, t1: Date.now(), n }));
        if (method !== "refresh") this.trace.push({ kind: `${part}.${method}`, t0, t1: Date.now(), n });
        return out;
      };
    }
    // The rounds' dials and what held some back (BENCH_TRACE): how many each round recorded, and the lease refusals.
    const { dial, moves } = engine.dispatch;
    const record = dial.record.bind(dial);
    dial.record = (chosen: unknown, now: unknown, unused: unknown) => {
      const out = record(chosen, now, unused) as unknown[];
      this.trace.push({ kind: `recordDialing(unused ${(unused as unknown[]).length})`, t0: Date.now(), t1: Date.now(), n: out.length });
      return out;
    };
    const blocked = moves.noteBlocked.bind(moves);
    moves.noteBlocked = (reason: unknown, lease: unknown) => {
      if (reason) this.trace.push({ kind: `blocked ${JSON.stringify(lease)}`, t0: Date.now(), t1: Date.now(), n: 0 });
      return blocked(reason, lease);
    };
    this.rows = tallyOf(ctx.id.toString());
    countRows(engine.core, this.rows, ctx);
    countD1Writes(env.DB);
  }

  // What the object was doing, to explain slow bursts: each status batch and alarm, with its start and end.
  private readonly trace: { kind: string; t0: number; t1: number; n: number }[] = [];

  override async onCallStatuses(batch: CampaignCallStatus[]) {
    const t0 = Date.now();
    try {
      return await super.onCallStatuses(batch);
    } finally {
      this.trace.push({ kind: "statuses", t0, t1: Date.now(), n: batch.length });
    }
  }

  override async alarm() {
    const t0 = Date.now();
    try {
      return await super.alarm();
    } finally {
      this.trace.push({ kind: "alarm", t0, t1: Date.now(), n: 0 });
    }
  }

  /** The campaign's state alone: what the runner polls while the run goes on (the figures are computed once, after). */
  async benchState(): Promise<string | null> {
    const [row] = this.ctx.storage.sql.exec<{ state: string }>("SELECT state FROM campaign WHERE id = 1").toArray();
    return row?.state ?? null;
  }

  /** `received`: when each call's request reached the carrier, by run id (the carrier's own record). */
  async benchStats(received: Record<number, number>) {
    const snap = unwrap(await this.snapshot());
    const stats = statsOf(snap.id);
    // For each final status, the wait until the first dial after it (while contacts were left to dial); and until
    // its slot is dialed again: each dial fills the slot of the oldest final status not yet followed by a dial.
    const delays: number[] = [];
    const refills: number[] = [];
    const waiting: number[] = [];
    const unfilled: number[] = [];
    // The same, until the carrier had the next call's request (the object's writes stored, the request sent).
    const reached: number[] = [];
    for (const e of stats.order) {
      if (e >= 0) {
        waiting.push(stats.finals[e]);
        unfilled.push(stats.finals[e]);
      } else {
        for (const f of waiting.splice(0)) delays.push(stats.dials[~e] - f);
        const f = unfilled.shift();
        if (f !== undefined) refills.push(stats.dials[~e] - f);
        const got = received[stats.runs[~e]];
        if (f !== undefined && got !== undefined) reached.push(got - f);
      }
    }
    const dials = stats.dials;
    // Each burst's slowest refill, in order: whether the tail is a few bursts (and which) or all of them.
    const slowest = Array.from({ length: Math.ceil(refills.length / 100) }, (_, i) => {
      const own = refills.slice(i * 100, i * 100 + 100);
      // When its refills happened: one time for a round that dialed them all at once, several for rounds after it.
      const at = [...new Set(own)].sort((a, b) => a - b);
      return { burst: i, max: Math.max(...own), stamps: at.map((t) => `${t}×${own.filter((x) => x === t).length}`).join(" ") };
    })
      .sort((a, b) => b.max - a.max)
      .slice(0, 5)
      .map((b) => {
        // The burst's window: its first final status to its last refill (finals are in burst order too).
        const from = stats.finals[b.burst * 100] ?? 0;
        const to = from + b.max;
        const during = [...this.trace, ...leaseTrace.map((e) => ({ ...e, kind: e.org ? "org.acquireMany" : "acquireMany" }))]
          .filter((e) => e.t1 >= from - 50 && e.t0 <= to)
          .map((e) => `${e.kind}(${e.n}) ${e.t0 - from}..${e.t1 - from}`);
        const near = this.trace.filter((e) => e.kind !== "statuses" && Math.abs(e.t0 - from) < 400).map((e) => `${e.kind} ${e.t0 - from}..${e.t1 - from}`);
        return { ...b, from, during, kinds: near.slice(0, 12).join(", ") };
      });
    delays.sort((a, b) => a - b);
    reached.sort((a, b) => a - b);
    refills.sort((a, b) => a - b);
    const events: Record<string, number> = {};
    for (let before: number | null = null; ; ) {
      const page = unwrap(await this.logs(100, before));
      for (const l of page.items) events[l.event] = (events[l.event] ?? 0) + 1;
      if (page.next_before == null) break;
      before = page.next_before;
    }
    return {
      events,
      state: snap.state,
      counts: snap.counts,
      dials: stats.dials.length,
      finals: stats.finals.length,
      firstDial: dials[0] ?? null,
      lastDial: dials[dials.length - 1] ?? null,
      delay: { n: delays.length, p50: pct(delays, 50), p99: pct(delays, 99), max: delays[delays.length - 1] ?? null },
      reached: { n: reached.length, p50: pct(reached, 50), p99: pct(reached, 99), max: reached[reached.length - 1] ?? null },
      refill: { n: refills.length, p50: pct(refills, 50), p99: pct(refills, 99), max: refills[refills.length - 1] ?? null, slowest },
      // From the start on: the import's rows (each contact written once, before any dial) are not counted.
      rows: { d1: d1Tally.rowsWritten - stats.d1At, campaign: this.rows.total() - stats.campaignAt, organization: organizationRows.total() - stats.orgAt },
      statements: { campaign: this.rows.statements - stats.campaignStatementsAt, organization: organizationRows.statements - stats.orgStatementsAt },
    };
  }
}

// The production Worker's handlers (its queue consumer, its cron), with the bench's routes in front of its fetch.
export default {
  ...production,
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/bench/start" && request.method === "POST") {
      const o = (await request.json()) as {
        campaignId: number;
        orgId: number;
        contacts: number;
        maxConcurrency: number;
        rateLimit: number;
      };
      // The D1 rows a campaign has in production (the object's summary mirror writes its row; the calling rules are
      // read from its organization's), before the tally starts.
      await env.DB.batch([
        env.DB.prepare("INSERT OR IGNORE INTO organizations (id, name) VALUES (?, 'bench')").bind(o.orgId),
        env.DB.prepare("INSERT OR IGNORE INTO workflows (id, org_id, uuid, name) VALUES (?, ?, ?, 'bench')").bind(o.campaignId, o.orgId, crypto.randomUUID()),
        env.DB.prepare("INSERT OR IGNORE INTO campaigns (id, org_id, name, workflow_id, source_id, settings) VALUES (?, ?, 'bench', ?, 'bench', '{}')").bind(
          o.campaignId,
          o.orgId,
          o.campaignId,
        ),
      ]);
      countD1Writes(env.DB);
      Object.assign(statsOf(o.campaignId), { d1At: d1Tally.rowsWritten, orgAt: organizationRows.total(), orgStatementsAt: organizationRows.statements });
      const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(o.campaignId)));
      await stub.initialize({
        campaignId: o.campaignId,
        orgId: o.orgId,
        name: "bench",
        workflowId: o.campaignId,
        telephonyConfigurationId: 1,
        sourceId: "bench",
        // rate_limit may be set above the API's 50/s here, so the engine rather than the pacer is what is measured.
        settings: { ...DEFAULT_SETTINGS, max_concurrency: o.maxConcurrency, rate_limit: o.rateLimit },
      });
      for (let i = 0; i < o.contacts; i += 1000) {
        const chunk = Array.from({ length: Math.min(1000, o.contacts - i) }, (_, k) => ({
          row: i + k + 2,
          phone_number: `+1202${String(5_000_000 + i + k).padStart(7, "0")}`,
          initial_context: { first_name: `Contact ${i + k}` },
          greeting_override: null,
        }));
        await stub.importContacts(chunk);
      }
      await stub.finishImport();
      const tally = tallyOf(env.CAMPAIGN.idFromName(String(o.campaignId)).toString());
      Object.assign(statsOf(o.campaignId), { campaignAt: tally.total(), campaignStatementsAt: tally.statements });
      await stub.start();
      return Response.json({ ok: true });
    }
    if (url.pathname === "/bench/state") {
      const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(url.searchParams.get("id")!));
      // With what the runner needs to tell a run that moves from one that cannot end (this isolate's own counts).
      const stats = statsOf(Number(url.searchParams.get("id")));
      return Response.json({ state: await stub.benchState(), dials: stats.dials.length, finals: stats.finals.length, carrierErrors });
    }
    if (url.pathname === "/bench/stats" && request.method === "POST") {
      const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(url.searchParams.get("id")!));
      return Response.json(await stub.benchStats(await request.json()));
    }
    if (url.pathname === "/bench/finals" && request.method === "POST") {
      // The carrier's callback: final statuses, timed as they reach the Worker, forwarded as callbacks' statuses are
      // (the statuses of one request go to the campaign's object in one RPC).
      const { campaignId, statuses } = (await request.json()) as { campaignId: number; statuses: CampaignCallStatus[] };
      const stats = statsOf(campaignId);
      const at = Date.now();
      const sent = statuses.map((s) => {
        stats.finals.push(at);
        stats.order.push(stats.finals.length - 1);
        return forwardCampaignStatus(env, campaignId, { ...s, at: new Date(at).toISOString() });
      });
      const failed = (await Promise.allSettled(sent)).filter((r) => r.status === "rejected");
      return failed.length ? new Response(`status failed: ${String(failed[0].reason)}`, { status: 500 }) : Response.json({ ok: true });
    }
    return production.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
