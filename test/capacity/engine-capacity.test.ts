// Engine capacity as a first-class limit (issue 38), in the Workers runtime: the capacity object's leases over RPC,
// a single call refused with its own 429 once the engines are fully used, and the check: a campaign of 60
// contacts at max_concurrency 60 on engines limited to 20 calls' worth never has more than 20 calls out, waits with
// the reason shown, and completes with no call lost.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { setEnginesLive } from "../../src/capacity/admission";
import { capacityStub } from "../../src/capacity/engine-capacity-object";
import { unwrap } from "../../src/campaigns/errors";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { CALLEE, campaignId, campaignObject, deliverAll, play, runApi, setup } from "../calls/support";

// The default agent's model (Workers AI's default chat model): 12 requests a minute per call (a turn every 5 s).
const LLM = "workers-ai:text-generation:@cf/meta/llama-3.3-70b-instruct-fp8-fast";
/** A budget of `calls` default-agent calls on the model (the scarcest engine of the default agent), all for calls. */
const limitTo = (calls: number) => capacityStub(env).setLimits({ engines: { [LLM]: { rpm: 12 * calls } }, call_share: 1 });

beforeAll(() => setEnginesLive(true));
afterAll(async () => {
  setEnginesLive(null);
  await capacityStub(env).setLimits(null);
});

describe("the capacity object", () => {
  it("grants leases up to the budget, refuses with the engine and a retry, refreshes and frees them, and refuses bad limits", async () => {
    expect(await limitTo(2)).toEqual({ ok: true });
    const stub = capacityStub(env);
    const demand = { [LLM]: { rpm: 12, streams: 0 } };
    const lease = (leaseId: string, orgId = 1) => ({ leaseId, orgId, ttlSeconds: 60, demand, waiter: undefined });
    const [a, b, c] = await stub.acquireMany([lease("t:a"), lease("t:b"), lease("t:c")]);
    expect(a).toEqual({ granted: true });
    expect(b).toEqual({ granted: true });
    expect(c).toMatchObject({ granted: false, engine: LLM, scope: "deployment", retryAfterSeconds: expect.any(Number) });
    // The same id again is a refresh, not a second lease.
    expect((await stub.acquireMany([lease("t:a")]))[0].granted).toBe(true);
    expect(await stub.usage()).toMatchObject({ calls: 2, engines: { [LLM]: { rpm: 24, budgetRpm: 24 } } });
    // Released with the next ask (one round trip), the room is there again.
    expect((await stub.acquireMany([lease("t:c")], ["t:a"]))[0].granted).toBe(true);
    expect(await stub.releaseMany(["t:b", "t:c", "unknown"])).toBe(2);
    expect((await stub.usage()).calls).toBe(0);
    // Analysis tokens come from what held calls leave spare of the whole budget: none when calls hold it all.
    await stub.acquireMany([lease("t:x"), lease("t:y")]);
    await limitTo(2);
    expect(await stub.takeToken(LLM)).toMatchObject({ ok: false });
    await stub.releaseMany(["t:x", "t:y"]);
    expect(await stub.takeToken(LLM)).toEqual({ ok: true, retryAfterSeconds: 0 });
    const bad = await stub.setLimits({ engines: { [LLM]: { rpm: -5 } } });
    expect(bad).toMatchObject({ ok: false, error: expect.stringContaining("rpm") });
  });
});

describe("admission of single calls", () => {
  it("answers 429 'Engine capacity reached' with Retry-After past the engines' budget, and admits again once a call ends", async () => {
    await limitTo(1);
    const s = await setup("twilio");
    const start = () =>
      call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } } });
    const first = await start();
    expect(first.status, first.text).toBe(200);
    const refused = await start();
    expect(refused.status).toBe(429);
    expect(refused.json.detail).toMatch(/^Engine capacity reached/);
    expect(refused.json.detail).not.toContain("Concurrent call limit");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    // The refused call holds nothing: the organization's slot was given back.
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(1);
    // The first call ends: its final status frees its engine lease with its organization lease.
    const shown = await runApi(s, first.json.workflow_run_id);
    await deliverAll(await play(shown.provider_call_id, "answered"));
    expect((await capacityStub(env).usage()).calls).toBe(0);
    const again = await start();
    expect(again.status, again.text).toBe(200);
    await deliverAll(await play((await runApi(s, again.json.workflow_run_id)).provider_call_id, "answered"));
    expect((await capacityStub(env).usage()).calls).toBe(0);
  });
});

describe("a campaign on engines limited to 20 calls", () => {
  it("60 contacts at max_concurrency 60: never more than 20 calls out, waits for engine capacity (shown in progress), completes, none lost", {
    timeout: 240_000,
  }, async () => {
    await limitTo(20);
    const s = await setup("twilio");
    // The organization's cap well above the engines' budget: the engines are what must hold the campaign back.
    await organizationStub(env, s.org.id).setCap(100);
    const id = campaignId();
    const contacts = Array.from({ length: 60 }, (_, i) => ({
      row: i + 2,
      phone_number: `+1415555${String(1000 + i)}`,
      initial_context: { first_name: "Ada" },
      greeting_override: null,
    }));
    const stub = await campaignObject(s, id, { enabled: false }, contacts, { max_concurrency: 60, rate_limit: 100 });
    await stub.start();
    const runsOf = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    let mostOut = 0;
    let sawWaiting = false;
    for (let round = 0; round < 200; round++) {
      await runDurableObjectAlarm(stub);
      const runs = await runsOf();
      const out = runs.filter((r) => r.status === "initiated" || r.status === "ringing" || r.status === "in-progress" || r.status === "queued");
      const usage = await capacityStub(env).usage();
      mostOut = Math.max(mostOut, out.length, usage.calls);
      expect(out.length).toBeLessThanOrEqual(20);
      expect(usage.calls).toBeLessThanOrEqual(20);
      const progress = unwrap(await stub.progress());
      if (progress.state === "completed") break;
      if (progress.waiting_for === "engine_capacity") sawWaiting = true;
      // Some of the calls out end (answered, spoken to, hung up): their room goes to the contacts waiting.
      for (const r of out.slice(0, 7)) {
        const shown = await runApi(s, r.id);
        if (shown.provider_call_id) await deliverAll(await play(shown.provider_call_id, "answered"));
      }
    }
    const progress = unwrap(await stub.progress());
    expect(progress).toMatchObject({ state: "completed", total: 60, completed: 60, failed: 0, waiting_for: null });
    expect(mostOut).toBe(20);
    expect(sawWaiting).toBe(true);
    const runs = await runsOf();
    expect(runs).toHaveLength(60);
    expect(runs.filter((r) => r.endReason === "provider_failure")).toEqual([]);
    expect((await capacityStub(env).usage()).calls).toBe(0);
    const logs = unwrap(await stub.logs(100, null));
    expect(logs.items.map((l) => l.event)).toContain("engine_capacity_reached");
  });
});
