// bench/dispatch, in-process: the campaign object's own time per call. The object's methods are called directly
// inside its Durable Object (no RPC plumbing, no alarm scheduler), the carrier is instant and the organization's
// cap an in-memory double, so what is timed is the engine: its JS and its SQLite, per call dialed and finished.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import type { CampaignObject } from "../../src/campaigns/campaign-object";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { setLeaseClient } from "../../src/campaigns/engine/leases";
import type { CampaignCallStatus } from "../../src/calls/campaign-calls";
import type { LeaseRequest } from "../../src/organizations/leases";
import { DEFAULT_SETTINGS } from "../../src/campaigns/settings";
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
  const id = 990_000 + Math.floor(Math.random() * 1000);
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
  await stub.initialize({
    campaignId: id,
    orgId: id,
    name: "bench",
    workflowId: 1,
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
    let alarmMs = 0;
    let statusMs = 0;
    const t0 = performance.now();
    while ((await obj.snapshot()).state === "running") {
      // The alarm dials what it may; then every call ends at once and its final status arrives.
      await state.storage.deleteAlarm();
      const a0 = performance.now();
      await obj.alarm();
      alarmMs += performance.now() - a0;
      const batch = finished.splice(0);
      const s0 = performance.now();
      for (const s of batch) await obj.onCallStatus(s);
      statusMs += performance.now() - s0;
      // Each final status waits for the next alarm (in production the runtime fires it at once: not timed here).
      const d0 = performance.now();
      const before = dials.length;
      await state.storage.deleteAlarm();
      await obj.alarm();
      alarmMs += performance.now() - d0;
      if (dials.length > before) delays.push(dials[before] - d0);
      const rest = finished.splice(0);
      for (const s of rest) await obj.onCallStatus(s);
    }
    const totalMs = performance.now() - t0;
    return { totalMs, alarmMs, statusMs, delays: delays.sort((x, y) => x - y), snap: await obj.snapshot() };
  });
  setCallStarter(null);
  setLeaseClient(null);
  const n = result.snap.counts.executed;
  expect(n).toBe(CONTACTS);
  expect(result.snap.state).toBe("completed");
  const p = (q: number) => result.delays[Math.min(result.delays.length - 1, Math.floor((q / 100) * result.delays.length))].toFixed(2);
  console.log(
    `\nin-process: ${n.toLocaleString("en")} calls dialed and finished in ${(result.totalMs / 1000).toFixed(2)} s ` +
      `(${Math.round(n / (result.totalMs / 1000))} calls/s)\n` +
      `  object time per call        ${(result.totalMs / n).toFixed(3)} ms (alarms ${(result.alarmMs / n).toFixed(3)} ms, final statuses ${(result.statusMs / n).toFixed(3)} ms)\n` +
      `  alarm start → first dial    p50 ${p(50)} ms, p99 ${p(99)} ms (the object's part of "final status → next dial")`,
  );
});
