// bench/dispatch, in-process: the campaign object's own time per call. The object's methods are called directly
// inside its Durable Object (no RPC plumbing, no alarm scheduler), the carrier is instant and the organization's
// cap an in-memory double, so what is timed is the engine: its JS and its SQLite, per call dialed and finished.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import type { CampaignObject } from "../../src/campaigns/campaign-object";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { unwrap } from "../../src/campaigns/errors";
import { setLeaseClient } from "../../src/campaigns/engine/leases";
import type { CampaignCallStatus } from "../../src/calls/campaign/campaign-calls";
import type { LeaseRequest } from "../../src/organizations/leases";
import { DEFAULT_SETTINGS } from "../../src/campaigns/engine/settings";
import { clock } from "../../src/lib/clock";

const CONTACTS = 10_000;

it(`object time per call, ${CONTACTS.toLocaleString("en")} contacts`, async () => {
  clock.set(null);
  const leases = new Set<string>();
  const grant = (r: LeaseRequest) => (leases.add(r.leaseId), { granted: true, inUse: leases.size, cap: 1000 });
  setLeaseClient(() => ({
    acquire: async (r) => grant(r),
    acquireMany: async (rs, release) => {
      for (const id of release ?? []) leases.delete(id);
      return rs.map(grant);
    },
    release: async (id) => leases.delete(id),
    releaseMany: async (ids) => ids.filter((id) => leases.delete(id)).length,
  }));
  const finished: CampaignCallStatus[] = [];
  const dials: number[] = [];
  let runId = 0;
  setCallStarter(async (_env, req) => {
    dials.push(performance.now());
    finished.push({ runId: ++runId, contactId: req.contactId, attempt: req.attempt, status: "completed", at: new Date().toISOString() });
    return { ok: true, runId, providerCallId: null };
  });
  // The D1 rows a campaign has in production, which its object reads (the calling rules) and writes (its summary
  // mirror) as it runs. The schema is the migrations', applied by the pool's setup (test/setup.ts): without it every
  // such call failed and was retried, and the figure measured that instead (1,861 calls/s).
  const org = await env.DB.prepare("INSERT INTO organizations (name) VALUES ('bench') RETURNING id").first<{ id: number }>();
  const wf = await env.DB.prepare("INSERT INTO workflows (org_id, uuid, name) VALUES (?, ?, 'bench') RETURNING id")
    .bind(org!.id, crypto.randomUUID())
    .first<{ id: number }>();
  const row = await env.DB.prepare("INSERT INTO campaigns (org_id, name, workflow_id, source_id, settings) VALUES (?, 'bench', ?, 'bench', '{}') RETURNING id")
    .bind(org!.id, wf!.id)
    .first<{ id: number }>();
  const id = row!.id;
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
  await stub.initialize({
    campaignId: id,
    orgId: org!.id,
    name: "bench",
    workflowId: wf!.id,
    telephonyConfigurationId: 1,
    sourceId: "bench",
    settings: { ...DEFAULT_SETTINGS, max_concurrency: 100, rate_limit: 10_000 },
  });
  for (let i = 0; i < CONTACTS; i += 1000)
    await stub.importContacts(
      Array.from({ length: 1000 }, (_, k) => ({
        row: i + k + 2,
        phone_number: `+1202${5_000_000 + i + k}`,
        initial_context: { n: String(i + k) },
        greeting_override: null,
      })),
    );
  await stub.finishImport();

  const result = await runInDurableObject(stub, async (obj: CampaignObject, state) => {
    await obj.start();
    const delays: number[] = [];
    const lasts: number[] = [];
    let alarmMs = 0;
    let statusMs = 0;
    const t0 = performance.now();
    while (unwrap(await obj.snapshot()).state === "running") {
      const batch = finished.splice(0);
      if (!batch.length) {
        // Nothing out: the alarm dials what it may.
        await state.storage.deleteAlarm();
        const a0 = performance.now();
        await obj.alarm();
        alarmMs += performance.now() - a0;
        continue;
      }
      // Every call out ends at once; their final statuses arrive as one batch, which dials the slots it freed.
      const before = dials.length;
      const s0 = performance.now();
      await obj.onCallStatuses(batch);
      statusMs += performance.now() - s0;
      if (dials.length > before) {
        delays.push(dials[before] - s0);
        lasts.push(dials[dials.length - 1] - s0);
      }
    }
    const totalMs = performance.now() - t0;
    return { totalMs, alarmMs, statusMs, delays: delays.sort((x, y) => x - y), lasts: lasts.sort((x, y) => x - y), snap: unwrap(await obj.snapshot()) };
  });
  setCallStarter(null);
  setLeaseClient(null);
  const n = result.snap.counts.executed;
  expect(n).toBe(CONTACTS);
  expect(result.snap.state).toBe("completed");
  // The mirror reached D1 as in production (the object's summary written to the campaign's row).
  const mirrored = await env.DB.prepare("SELECT executed_count FROM campaigns WHERE id = ?").bind(id).first<{ executed_count: number }>();
  expect(mirrored!.executed_count).toBeGreaterThan(0);
  const pct = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor((q / 100) * xs.length))].toFixed(2);
  console.log(
    `\nin-process: ${n.toLocaleString("en")} calls dialed and finished in ${(result.totalMs / 1000).toFixed(2)} s ` +
      `(${Math.round(n / (result.totalMs / 1000))} calls/s)\n` +
      `  object time per call        ${(result.totalMs / n).toFixed(3)} ms (alarms ${(result.alarmMs / n).toFixed(3)} ms, final statuses ${(result.statusMs / n).toFixed(3)} ms)\n` +
      `  status batch → first dial   p50 ${pct(result.delays, 50)} ms, p99 ${pct(result.delays, 99)} ms (the object's part of "final status → next dial")\n` +
      `  status batch → last dial    p50 ${pct(result.lasts, 50)} ms, p99 ${pct(result.lasts, 99)} ms (every freed slot dialed again; ${result.lasts.length} batches)`,
  );
});
