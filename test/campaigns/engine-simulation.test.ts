// A seeded, reproducible randomized simulation of the campaign engine: more than 10,000 calls with random outcomes,
// latencies, carrier refusals, lost statuses (timeouts), duplicate and out-of-order statuses, pauses, PATCHes,
// evictions and crashes in the middle of dispatch, while single calls compete for the organization's cap.
// Invariants are asserted at every step. The object runs in-process (methods called directly inside the Durable
// Object, evictions as fresh instances on the same storage) so the run stays fast; time moves only by the clock.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { CampaignObject } from "../../src/campaigns/campaign-object";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { recount } from "../../src/campaigns/engine/counts";
import { setLeaseClient } from "../../src/campaigns/engine/leases";
import { DoSql } from "../../src/lib/do-sql";
import type { CallStartResult, CampaignCallRequest } from "../../src/calls/campaign/campaign-calls";
import type { ScheduleConfig } from "../../src/campaigns/engine/settings";
import { clock } from "../../src/lib/clock";
import type { CallStatus } from "../../src/telephony/providers/types";
import { T0, makeCampaign } from "./engine-harness";
import { prng } from "./prng";

const SEED = 0x5eed2030;
const ORG_CAP = 12;
const MAX_RETRIES = 3;

const OUTCOMES: [CallStatus, number][] = [
  ["completed", 0.36],
  ["busy", 0.18],
  ["no_answer", 0.18],
  ["voicemail", 0.1],
  ["declined", 0.06],
  ["failed", 0.06],
  ["canceled", 0.06],
];

const SCHEDULES: (ScheduleConfig | null)[] = [
  null,
  { enabled: true, timezone: "UTC", slots: Array.from({ length: 7 }, (_, d) => ({ day_of_week: d, start_time: "00:00", end_time: "24:00" })) },
  { enabled: true, timezone: "UTC", slots: Array.from({ length: 7 }, (_, d) => ({ day_of_week: d, start_time: "08:00", end_time: "20:00" })) },
  { enabled: true, timezone: "UTC", slots: [0, 2, 4, 6].map((d) => ({ day_of_week: d, start_time: "06:30", end_time: "23:15" })) },
];

/** The window oracle: a direct reading of UTC slots, independent of the engine's schedule code. */
function openAt(s: ScheduleConfig | null, ms: number): boolean {
  if (!s?.enabled) return true;
  const d = new Date(ms);
  const dow = (d.getUTCDay() + 6) % 7;
  const hhmm = `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  return s.slots.some((x) => x.day_of_week === dow && x.start_time <= hhmm && hhmm < x.end_time);
}

type Call = { req: CampaignCallRequest; at: number; runId: number; end: number | null; outcome: CallStatus; reported: boolean };

afterEach(() => {
  setCallStarter(null);
  setLeaseClient(null);
});

async function runOne(
  seed: number,
  contacts: number,
): Promise<{ calls: number; steps: number; evictions: number; crashes: number; pauses: number; patches: number }> {
  const r = prng(seed);
  clock.set(T0 + (seed % 7) * 3_600_000);
  let schedule: ScheduleConfig | null = SCHEDULES[2];
  let maxConcurrency = 6;
  let rateLimit = 3;
  const { stub } = await makeCampaign({
    contacts,
    settings: {
      max_concurrency: maxConcurrency,
      rate_limit: rateLimit,
      schedule_config: schedule,
      retry_config: {
        enabled: true,
        max_retries: MAX_RETRIES,
        retry_delay_seconds: 60,
        retry_on_busy: true,
        retry_on_no_answer: true,
        retry_on_voicemail: true,
      },
      circuit_breaker: { enabled: true, failure_threshold: 0.45, window_seconds: 60, min_calls_in_window: 8 },
    },
  });

  // The organization's cap, shared with single calls that come and go.
  const leases = new Map<string, number>();
  const sweep = () => {
    for (const [k, exp] of leases) if (exp <= clock.now()) leases.delete(k);
  };
  setLeaseClient(() => ({
    async acquire(req) {
      sweep();
      if (leases.has(req.leaseId) || leases.size < ORG_CAP) {
        leases.set(req.leaseId, clock.now() + req.ttlSeconds * 1000);
        expect(leases.size).toBeLessThanOrEqual(ORG_CAP);
        return { granted: true, inUse: leases.size, cap: ORG_CAP };
      }
      return { granted: false, inUse: leases.size, cap: ORG_CAP, retryAfterSeconds: 2 };
    },
    async acquireMany(reqs, release) {
      for (const id of release ?? []) leases.delete(id);
      const out = [];
      for (const req of reqs) out.push(await this.acquire(req));
      return out;
    },
    async release(leaseId) {
      return leases.delete(leaseId);
    },
    async releaseMany(leaseIds) {
      return leaseIds.filter((id) => leases.delete(id)).length;
    },
  }));

  const calls: Call[] = [];
  const byKey = new Map<string, Call>();
  const perContact = new Map<number, number>();
  const unreported = new Set<Call>();
  const finals = new Map<string, string>(); // attempt key → the final outcome the object accepted
  const starts: number[] = [];
  let gen = 0;
  let crashedGen = -1;
  let crashed: () => void = () => undefined;
  let crashes = 0;
  let sql: SqlStorage;

  setCallStarter(async (_env, req): Promise<CallStartResult> => {
    const g = gen;
    const now = clock.now();
    const key = `${req.contactId}:${req.attempt}`;
    // Invariants at the moment of dialing.
    expect(byKey.has(key), `attempt ${key} dialed twice`).toBe(false);
    const prev = perContact.get(req.contactId) ?? 0;
    expect(req.attempt).toBe(prev + 1);
    perContact.set(req.contactId, prev + 1);
    expect(req.attempt).toBeLessThanOrEqual(1 + MAX_RETRIES);
    expect(sql.exec<{ state: string }>("SELECT state FROM campaign").one().state).toBe("running");
    expect(openAt(schedule, now), `dialed outside the window at ${new Date(now).toISOString()}`).toBe(true);
    const open = sql.exec<{ n: number }>("SELECT count(*) AS n FROM attempts WHERE status IN ('dialing', 'in_flight')").one().n;
    expect(open).toBeLessThanOrEqual(maxConcurrency);
    expect(leases.has(req.leaseId!)).toBe(true);
    starts.push(now);
    if (starts.length > 64) starts.shift();
    expect(starts.filter((t) => t > now - 1000).length).toBeLessThanOrEqual(rateLimit);

    const runId = calls.length + 1;
    const roll = r.next();
    const outcome = (() => {
      let x = r.next();
      for (const [o, p] of OUTCOMES) {
        x -= p;
        if (x < 0) return o;
      }
      return "completed" as CallStatus;
    })();
    const call: Call = { req, at: now, runId, end: r.chance(0.003) ? null : now + r.int(500, 90_000), outcome, reported: false };
    calls.push(call);
    byKey.set(key, call);
    if (call.end != null) unreported.add(call);
    await Promise.resolve();
    if (roll < 0.004 && crashedGen !== g) {
      // The object dies while the carrier has the call: everything this instance awaits never comes back.
      crashedGen = g;
      crashes++;
      crashed();
    }
    if (crashedGen === g) return new Promise<CallStartResult>(() => undefined);
    if (roll < 0.03) {
      call.end = null;
      unreported.delete(call);
      call.outcome = "failed";
      finals.set(key, "failed");
      return { ok: false, runId, kind: "carrier_refused", message: "503 from carrier" };
    }
    return { ok: true, runId, providerCallId: `p-${runId}` };
  });

  let steps = 0;
  let evictions = 0;
  let pauses = 0;
  let patches = 0;
  let nextOp = clock.now() + r.int(1000, 60_000);

  // D1 as the object sees it: the summary row is recorded (and checked), the run lookups find nothing.
  const summaries: { state: string; executed: number }[] = [];
  const simEnv = {
    ...env,
    DB: {
      prepare: (q: string) => ({
        bind: (...b: unknown[]) => ({
          run: async () => {
            // The summary row's UPDATE (drizzle's SQL): its values by column name.
            const set = /^update\s+"?campaigns"?\s+set\s+(.*)\s+where/is.exec(q.trim())?.[1];
            if (set) {
              const cols = [...set.matchAll(/"?(\w+)"?\s*=\s*\?/g)].map((m) => m[1]);
              const v = (col: string) => b[cols.indexOf(col)];
              summaries.push({ state: v("state") as string, executed: v("executed_count") as number });
            }
            return { success: true, meta: {}, results: [] };
          },
          first: async () => null,
          raw: async () => [],
          all: async () => ({ results: [] }),
        }),
      }),
      // The summary's write goes in a batch beside a read of the row's state (webhook events).
      batch: async (statements: { run: () => Promise<unknown> }[]) => Promise.all(statements.map((st) => st.run())),
    } as unknown as D1Database,
  } as Env;

  await runInDurableObject(stub, async (first: CampaignObject, state) => {
    sql = state.storage.sql;
    let inst = first;
    const stateNow = () => sql.exec<{ state: string }>("SELECT state FROM campaign").one().state;
    const evict = async () => {
      gen++;
      inst = new CampaignObject(state as DurableObjectState, simEnv);
      await inst.ready;
      evictions++;
    };
    const runAlarm = async () => {
      await state.storage.deleteAlarm();
      // A crash makes the alarm hang forever: the instance is then replaced, as the runtime would.
      const crash = new Promise<false>((res) => (crashed = () => res(false)));
      if (!(await Promise.race([inst.alarm().then(() => true), crash]))) await evict();
    };
    const check = async () => {
      steps++;
      const k = inst.counts();
      // The trigger-kept counters always equal a full recount.
      expect(k).toEqual(recount(new DoSql(state.storage)));
      const snap = { state: stateNow() };
      // Nobody lost, nobody dialed twice: every call the carrier saw is exactly one attempt of the object.
      expect(k.total).toBe(contacts);
      expect(k.executed).toBe(calls.length);
      expect(k.processed + k.pending).toBe(k.total);
      expect(
        k.completed +
          k.answered_no_conversation +
          k.failed +
          k.awaiting_retry +
          sql.exec<{ n: number }>("SELECT count(*) AS n FROM contacts WHERE status = 'active'").one().n,
      ).toBe(k.processed);
      expect(k.queued).toBe(k.executed + k.pending + k.awaiting_retry);
      expect(leases.size).toBeLessThanOrEqual(ORG_CAP);
      // Completion at once: running with nothing pending, in flight or awaiting retry is a bug.
      if (snap.state === "running") expect(k.pending + k.awaiting_retry + k.in_progress).toBeGreaterThan(0);
      if (snap.state === "completed") expect(k.pending + k.awaiting_retry + k.in_progress).toBe(0);
    };

    await evict(); // from here on the in-process instance uses the recording D1
    evictions = 0;
    await inst.start();
    expect(summaries.at(-1)?.state).toBe("running");
    await check();
    for (let guard = 0; guard < 400_000; guard++) {
      const st = stateNow();
      const alarm = await state.storage.getAlarm();
      const pending = [...unreported];
      const nextEnd = pending.reduce((m, c) => Math.min(m, c.end!), Infinity);
      if (st === "completed" && !pending.length) break;
      const t = Math.min(alarm ?? Infinity, nextEnd, nextOp);
      clock.set(Math.max(clock.now(), t));
      const now = clock.now();

      // Calls that end now: the carrier reports, sometimes twice, sometimes with a stale status afterwards.
      for (const c of pending) {
        if (c.end! > now) continue;
        c.reported = true;
        unreported.delete(c);
        const key = `${c.req.contactId}:${c.req.attempt}`;
        // A final status dials into the slot it freed before it answers (not awaiting the carrier): a crash there (a
        // start that never comes back) replaces the instance too, as one in the alarm does.
        const report = async (status: CallStatus) => {
          const g0 = gen;
          const out = await inst.onCallStatus({ runId: c.runId, contactId: c.req.contactId, attempt: c.req.attempt, status, at: new Date(now).toISOString() });
          if (crashedGen === g0) await evict();
          return out;
        };
        if (r.chance(0.1)) await report("ringing");
        const res = await report(c.outcome);
        if (res.applied) finals.set(key, c.outcome);
        if (r.chance(0.15)) expect((await report(c.outcome)).applied).toBe(false);
        if (r.chance(0.1)) expect((await report(r.pick(["ringing", "in_progress", "busy", "completed"] as CallStatus[]))).applied).toBe(false);
        // A final status, once accepted, is never overwritten.
        const row = sql.exec<{ status: string }>("SELECT status FROM attempts WHERE contact_id = ? AND attempt = ?", c.req.contactId, c.req.attempt).one();
        if (finals.has(key)) expect(row.status).toBe(finals.get(key));
        await check();
      }

      if (alarm != null && alarm <= now) {
        await runAlarm();
        // Attempts the object gave up on (timeouts, crashes) are final as `unknown` from then on.
        for (const row of sql.exec<{ contact_id: number; attempt: number; status: string }>(
          "SELECT contact_id, attempt, status FROM attempts WHERE status = 'unknown'",
        )) {
          const key = `${row.contact_id}:${row.attempt}`;
          if (!finals.has(key)) finals.set(key, "unknown");
          expect(finals.get(key)).toBe("unknown");
        }
        await check();
      }

      if (nextOp <= now) {
        nextOp = now + r.int(1000, 90_000);
        const cur = stateNow();
        const roll = r.next();
        if (roll < 0.15) {
          await evict();
        } else if (roll < 0.25 && cur === "running") {
          await inst.pause();
          pauses++;
        } else if (roll < 0.6 && cur === "paused") {
          await inst.resume();
        } else if (roll < 0.8 && cur !== "completed") {
          maxConcurrency = r.int(1, 10);
          rateLimit = r.int(1, 5);
          if (r.chance(0.3)) schedule = r.pick(SCHEDULES);
          await inst.updateSettings({ max_concurrency: maxConcurrency, rate_limit: rateLimit, schedule_config: schedule });
          patches++;
        } else if (roll < 0.9) {
          // A single call takes one of the organization's slots for a while.
          sweep();
          if (leases.size < ORG_CAP) leases.set(`single:${now}`, now + r.int(1000, 120_000));
        }
        await check();
      }
    }
    expect(stateNow()).toBe("completed");
    // The D1 summary row followed: its last write is the completed state with every attempt counted.
    expect(summaries.at(-1)).toEqual({ state: "completed", executed: calls.length });
    // Nobody lost: every contact ended with an outcome after its attempts; every attempt's final status is the one accepted.
    const undone = sql.exec<{ n: number }>("SELECT count(*) AS n FROM contacts WHERE status <> 'done' OR outcome IS NULL").one().n;
    expect(undone).toBe(0);
    for (const row of sql.exec<{ contact_id: number; attempt: number; status: string }>("SELECT contact_id, attempt, status FROM attempts"))
      expect(row.status).toBe(finals.get(`${row.contact_id}:${row.attempt}`));
    expect(leases.size).toBe([...leases.keys()].filter((k) => k.startsWith("single:")).length);
  });
  return { calls: calls.length, steps, evictions, crashes, pauses, patches };
}

/** Calls to simulate: 10,000 under `npm run test:slow`, fewer in `npm test` (vitest.config.ts). */
const TARGET_CALLS = Number((env as unknown as { SIMULATION_CALLS?: string }).SIMULATION_CALLS ?? 10_000);

describe("randomized simulation (seeded)", () => {
  it(`${TARGET_CALLS.toLocaleString("en-US")}+ calls with every invariant held at every step`, { timeout: 900_000 }, async () => {
    const totals = { calls: 0, steps: 0, evictions: 0, crashes: 0, pauses: 0, patches: 0 };
    for (let round = 0; totals.calls < TARGET_CALLS; round++) {
      const t = Date.now();
      const res = await runOne(SEED + round, 600);
      console.log(`round ${round}: ${JSON.stringify(res)} in ${Date.now() - t} ms`);
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += res[k];
    }
    console.log(`simulation seed ${SEED}: ${JSON.stringify(totals)}`);
    // The faults really happened, in proportion to the length (more than 10 of each per 10,000 calls).
    const atLeast = Math.floor((10 * TARGET_CALLS) / 10_000);
    expect(totals.calls).toBeGreaterThanOrEqual(TARGET_CALLS);
    expect(totals.evictions).toBeGreaterThan(atLeast);
    expect(totals.crashes).toBeGreaterThan(0);
    expect(totals.pauses).toBeGreaterThan(atLeast);
    expect(totals.patches).toBeGreaterThan(atLeast);
  });
});
