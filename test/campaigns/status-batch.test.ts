// Final statuses in batches: the campaign object's onCallStatuses (duplicates, reordering, unknown attempts, each
// status's own answer), the calls module's forwarder (one RPC per campaign, a failed batch fails only its callers),
// and what a real attempt writes to D1, driven through the carrier simulator.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import type { CampaignCallStatus } from "../../src/calls/campaign/campaign-calls";
import { forwardCampaignStatus } from "../../src/calls/runs/status";
import { withCampaignCallIds } from "../../src/calls/runs/campaign-call-ids";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { setLeaseClient } from "../../src/campaigns/engine/leases";
import { organizationStub } from "../../src/organizations/organization-object";
import { clock } from "../../src/lib/clock";
import { DEFAULT_SETTINGS } from "../../src/campaigns/engine/settings";
import type { Outcome } from "../../src/dev/simulator/types";
import { campaignObject, deliverAll, play, setup, type Setup } from "../calls/support";
import { type FakeCarrier, makeCampaign, resetWorld, sqlOf, tick } from "./engine-harness";
import { countD1Writes, d1Tally } from "./rows-written";
import { unwrap } from "../../src/campaigns/errors";

const at = () => new Date().toISOString();

describe("onCallStatuses", () => {
  let carrier: FakeCarrier;
  beforeEach(() => {
    carrier = resetWorld();
  });
  afterEach(() => {
    // The real calls module and clock again (the D1 tests below dial through the simulator).
    setCallStarter(null);
    clock.set(null);
  });

  it("applies each status once, whatever the order and repeats in the batch; unknown attempts are ignored and logged", async () => {
    const { id, stub } = await makeCampaign({ contacts: 5, settings: { max_concurrency: 3, rate_limit: 50 }, start: true });
    await tick(stub);
    const [a, b, c] = carrier.open(id);
    const st = (s: (typeof carrier.started)[number], status: CampaignCallStatus["status"], runId = s.runId): CampaignCallStatus => ({
      runId,
      contactId: s.req.contactId,
      attempt: s.req.attempt,
      status,
      at: at(),
    });
    const results = await stub.onCallStatuses([
      st(a, "completed"),
      st(a, "ringing"), // late progress after the final
      st(b, "in_progress"),
      st(a, "busy"), // another final for a finished attempt: never overwrites
      st(b, "completed"),
      st(b, "completed"), // a repeat in the same batch
      { runId: 99_999, contactId: 424_242, attempt: 1, status: "completed", at: at() }, // not this campaign's
      st(c, "completed", c.runId + 1000), // another run for a known attempt
    ]);
    expect(results.map((r) => r.applied)).toEqual([true, false, true, false, true, false, false, false]);
    const rows = unwrap(await stub.contacts(0, 10));
    const outcome = (x: typeof a) => rows.items.find((i) => i.id === x.req.contactId)?.outcome;
    expect([outcome(a), outcome(b), outcome(c)]).toEqual(["completed", "completed", null]);
    const ignored = unwrap(await stub.logs(50)).items.filter((l) => l.event === "call_status_ignored");
    expect(ignored).toHaveLength(2);
    // The two freed slots were dialed within the batch's call, before it answered (no alarm ran).
    expect(carrier.started).toHaveLength(5);
    const k = unwrap(await stub.snapshot()).counts;
    expect(k).toMatchObject({ completed: 2, in_progress: 3 });
  });

  it("a batch asks for its slots before it writes its statuses, and its freed leases go back in that same call", async () => {
    const calls: { kind: string; leases: number; release: string[]; outcomesWhenAsked?: (string | null)[] }[] = [];
    let watch: { id: number; contactIds: number[] } | null = null;
    setLeaseClient((e, orgId) => {
      const org = organizationStub(e, orgId);
      return {
        acquire: (r) => org.acquire(r),
        acquireMany: async (rs, release) => {
          // What the campaign's object has written when the request leaves (read through its own RPC meanwhile).
          const w = watch;
          const seen = w ? unwrap(await e.CAMPAIGN.get(e.CAMPAIGN.idFromName(String(w.id))).contacts(0, 10)) : null;
          const outcomesWhenAsked = w && seen ? w.contactIds.map((cid) => seen.items.find((i) => i.id === cid)?.outcome ?? null) : undefined;
          calls.push({ kind: "acquireMany", leases: rs.length, release: release ?? [], outcomesWhenAsked });
          return org.acquireMany(rs, release);
        },
        release: (id, undial) => org.release(id, undial),
        releaseMany: (ids, undial) => {
          calls.push({ kind: "releaseMany", leases: 0, release: ids });
          return org.releaseMany(ids, undial);
        },
      };
    });
    try {
      const { id, stub } = await makeCampaign({ contacts: 6, settings: { max_concurrency: 3, rate_limit: 50 }, start: true });
      await tick(stub);
      const open = carrier.open(id);
      expect(open).toHaveLength(3);
      calls.length = 0;
      watch = { id, contactIds: [open[0].req.contactId, open[1].req.contactId] };
      const st = (s: (typeof open)[number]): CampaignCallStatus => ({
        runId: s.runId,
        contactId: s.req.contactId,
        attempt: s.req.attempt,
        status: "completed",
        at: at(),
      });
      await stub.onCallStatuses([st(open[0]), st(open[1]), st(open[0])]);
      // One call: the two leases the statuses freed released first, two new slots taken, and the statuses written
      // only after it (a request that leaves after writes waits until they are stored).
      expect(calls).toEqual([{ kind: "acquireMany", leases: 2, release: [open[0].req.leaseId, open[1].req.leaseId], outcomesWhenAsked: [null, null] }]);
      expect(carrier.started).toHaveLength(5); // the two freed slots dialed again
      expect(unwrap(await stub.snapshot()).counts).toMatchObject({ completed: 2, in_progress: 3 });
    } finally {
      setLeaseClient(null);
    }
  });

  it("a batch leaves attempts, contacts and timers exactly as the same statuses one batch each (retries, failures, repeats)", async () => {
    const settings = { max_concurrency: 5, rate_limit: 50, circuit_breaker: { enabled: false } };
    const one = await makeCampaign({ contacts: 4, settings, start: true });
    const each = await makeCampaign({ contacts: 4, settings, start: true });
    await tick(one.stub);
    await tick(each.stub);
    expect([carrier.open(one.id).length, carrier.open(each.id).length]).toEqual([4, 4]);
    clock.set(clock.now()); // one instant for both: the retries fall due at the same times
    // The same statuses for both: by each call's position among its campaign's open calls.
    const plan: [number, CampaignCallStatus["status"]][] = [
      [0, "ringing"],
      [0, "in_progress"],
      [1, "busy"], // retried (retry_on_busy): waits with a retry timer
      [0, "completed"],
      [2, "failed"], // not retried
      [3, "no_answer"], // retried
      [1, "busy"], // a repeat after its final
      [0, "ringing"], // late progress after its final
    ];
    const statusesOf = (id: number) => {
      const open = carrier.open(id);
      const sent = new Date(clock.now() - 1000).toISOString();
      return plan.map(
        ([i, status]): CampaignCallStatus => ({ runId: open[i].runId, contactId: open[i].req.contactId, attempt: open[i].req.attempt, status, at: sent }),
      );
    };
    const batched = await one.stub.onCallStatuses(statusesOf(one.id));
    const single: boolean[] = [];
    for (const st of statusesOf(each.id)) single.push((await each.stub.onCallStatuses([st]))[0].applied);
    expect(batched.map((r) => r.applied)).toEqual(single);
    expect(single).toEqual([true, true, true, true, true, true, false, false]);
    // Contacts and attempts by position in the file (ids differ between the campaigns), timers by kind and due.
    const state = async (stub: typeof one.stub) => ({
      contacts: await sqlOf(stub, "SELECT row, status, attempts, outcome FROM contacts ORDER BY row"),
      attempts: await sqlOf(
        stub,
        "SELECT c.row, a.attempt, a.status, a.last_status, a.failure, a.ended_at IS NOT NULL AS ended FROM attempts a JOIN contacts c ON c.id = a.contact_id ORDER BY c.row, a.attempt",
      ),
      timers: await sqlOf(stub, "SELECT t.kind, t.due FROM timers t WHERE t.kind IN ('retry', 'timeout') ORDER BY t.kind, t.due"),
      counts: unwrap(await stub.snapshot()).counts,
    });
    const [a, b] = [await state(one.stub), await state(each.stub)];
    expect(a).toEqual(b);
    expect(a.timers.filter((t) => t.kind === "retry")).toHaveLength(2);
  });

  it("a batch for a campaign that does not exist changes nothing", async () => {
    const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName("987654321"));
    expect(await stub.onCallStatuses([{ runId: 1, contactId: 1, attempt: 1, status: "completed", at: at() }])).toEqual([{ applied: false }]);
  });
});

describe("forwardCampaignStatus", () => {
  /** A campaign namespace that records each onCallStatuses call; campaign 2's object fails. */
  function recordingEnv() {
    const calls: { campaign: string; batch: CampaignCallStatus[] }[] = [];
    const CAMPAIGN = {
      idFromName: (name: string) => name,
      get: (name: string) => ({
        onCallStatuses: async (batch: CampaignCallStatus[]) => {
          calls.push({ campaign: name, batch });
          if (name === "2") throw new Error("campaign object unreachable");
          return batch.map((s) => ({ applied: s.status === "completed" }));
        },
      }),
    };
    return { env: { ...env, CAMPAIGN } as unknown as Env, calls };
  }
  const status = (runId: number, s: CampaignCallStatus["status"] = "completed"): CampaignCallStatus => ({
    runId,
    contactId: runId,
    attempt: 1,
    status: s,
    at: at(),
  });

  it("sends statuses arriving together in one RPC per campaign; each caller gets its own answer, a failed batch fails only its own", async () => {
    const { env: fake, calls } = recordingEnv();
    const settled = await Promise.allSettled([
      forwardCampaignStatus(fake, 1, status(1)),
      forwardCampaignStatus(fake, 3, status(2, "busy")),
      forwardCampaignStatus(fake, 1, status(3, "ringing")),
      forwardCampaignStatus(fake, 2, status(4)),
      forwardCampaignStatus(fake, 1, status(5)),
    ]);
    expect(calls.map((c) => [c.campaign, c.batch.map((s) => s.runId)]).sort()).toEqual([
      ["1", [1, 3, 5]],
      ["2", [4]],
      ["3", [2]],
    ]);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value.applied : "rejected"))).toEqual([true, false, false, "rejected", true]);
    // Later statuses go in a new batch.
    expect(await forwardCampaignStatus(fake, 1, status(6))).toEqual({ applied: true });
    expect(calls).toHaveLength(4);
  });
});

describe("D1 rows a campaign attempt writes", () => {
  const report: string[] = [];
  afterAll(() => console.log(`D1 writes per campaign attempt (through the carrier simulator)\n${report.join("\n")}`));

  /** A campaign of `n` contacts whose calls all end as `outcome`; D1 writes counted from its start to its completion. */
  async function run(s: Setup, outcome: Outcome, n: number, first: number) {
    const row = await env.DB.prepare(
      "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings) VALUES (?, ?, ?, ?, 'draft', 'campaigns/x.csv', ?) RETURNING id",
    )
      .bind(s.org.id, `rows ${outcome}`, s.agent.id, s.configId, JSON.stringify(DEFAULT_SETTINGS))
      .first<{ id: number }>();
    const id = row!.id;
    const contacts = Array.from({ length: n }, (_, i) => ({
      row: i + 2,
      phone_number: `+1415555${String(1000 + first + i)}`, // numbers of their own: the attempt cap counts across campaigns
      initial_context: { first_name: `C${i}` },
      greeting_override: null,
    }));
    const stub = await campaignObject(s, id, { enabled: false }, contacts);
    await stub.updateSettings({ rate_limit: 50, max_concurrency: 2 }); // the pacer's 1 s would only slow the test
    countD1Writes(env.DB);
    const from = { writes: d1Tally.writeLog.length };
    await stub.start();
    const played = new Set<number>();
    for (let guard = 0; guard < 300 && unwrap(await stub.snapshot()).state !== "completed"; guard++) {
      // Placed calls have their carrier's call id in the campaign's object until they are answered.
      const runs = await withCampaignCallIds(
        env,
        await getDb(env)
          .select()
          .from(workflowRuns)
          .where(and(eq(workflowRuns.campaignId, id), inArray(workflowRuns.status, ["initiated", "ringing", "in_progress"])))
          .all(),
      );
      const fresh = runs.filter((r) => !played.has(r.id) && r.providerCallId);
      if (!fresh.length) {
        // The next dials start in the background of the final status that freed their slots: give them a moment.
        await new Promise((r) => setTimeout(r, 20));
        await runDurableObjectAlarm(stub);
      }
      for (const r of fresh) {
        played.add(r.id);
        await deliverAll(await play(r.providerCallId!, outcome));
      }
    }
    const runs = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    const seen = runs.map((r) => `${r.id}:${r.status}:${r.providerCallId ? "id" : "no id"}:${played.has(r.id) ? "played" : "not played"}`).join(", ");
    expect(unwrap(await stub.snapshot()).counts, `runs ${seen}`).toMatchObject({ total: n, processed: n, in_progress: 0 });
    // The runtime is shared with earlier files, whose background work (an after-call message writing a run's
    // latency) may land meanwhile: a run record's write that names none of this campaign's runs is not its own.
    const ids = new Set<unknown>([id, ...runs.map((r) => r.id)]);
    const log = d1Tally.writeLog.slice(from.writes).filter((w) => !/workflow_runs/.test(w.sql) || w.params.some((p) => ids.has(p)));
    const writes = log.map((w) => `${w.written} ${w.sql.slice(0, 100)}`);
    const runWrites = log.filter((w) => /workflow_runs/.test(w.sql));
    expect(runWrites.length, "each attempt's run record was counted").toBeGreaterThanOrEqual(n);
    const perAttempt = (x: number) => x / n;
    const sum = (ws: typeof log, k: "written" | "changes") => ws.reduce((t, w) => t + w[k], 0);
    return {
      runStatements: perAttempt(runWrites.length),
      runRowsWritten: perAttempt(sum(runWrites, "written")),
      allRowsWritten: perAttempt(sum(log, "written")),
      allChanges: perAttempt(sum(log, "changes")),
      writes,
    };
  }

  it("the run record is written twice for an unanswered call and 3 times for an answered one; the rest is the campaign's summary", async () => {
    const s = await setup("twilio");
    for (const [k, [outcome, bound]] of [
      ["busy", 2],
      ["no_answer", 2],
      ["answered", 3],
    ].entries() as IterableIterator<[number, [Outcome, number]]>) {
      const n = 6;
      const r = await run(s, outcome, n, k * 100);
      report.push(
        `  ${outcome}: run record ${r.runStatements.toFixed(2)} writes (${r.runRowsWritten.toFixed(2)} rows_written incl. index entries); ` +
          `all D1 ${r.allChanges.toFixed(2)} rows changed, ${r.allRowsWritten.toFixed(2)} rows_written per attempt (${n} attempts, the summary's transitions included)`,
      );
      expect(r.runStatements, r.writes.join("\n")).toBeLessThanOrEqual(bound);
      // Besides the run record, only the summary row: at the start and the completion (forced), and at most every 5 s.
      expect(r.allChanges - r.runStatements, r.writes.join("\n")).toBeLessThanOrEqual(3 / n);
    }
  });
});
