// The cron's watchdog over call records: a run older than max_call_seconds is hung up through its carrier; one
// still open past the grace ends `unknown` and frees its organization lease; young and finished runs are untouched.
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../../src/calls/campaign/call-length";
import { SWEEP_NOTE, sweepOverdueRuns } from "../../src/calls/runs/run-sweep";
import { organizationStub } from "../../src/organizations/organization-object";
import { sqlOf } from "../campaigns/engine-harness";
import { CONTEXT, placedCampaignCall, runRow, setup, simRequests, startCall } from "./support";

const LIMITS = { maxCallSeconds: MAX_CALL_SECONDS, graceSeconds: TIMEOUT_GRACE_SECONDS };

/** Makes run `id` look `ageSeconds` old. */
const age = (id: number, ageSeconds: number) =>
  env.DB.prepare("UPDATE workflow_runs SET created_at = ? WHERE id = ?")
    .bind(new Date(Date.now() - ageSeconds * 1000).toISOString(), id)
    .run();

const hangups = async (s: Awaited<ReturnType<typeof setup>>, callId: string) =>
  (await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`)).length;

describe("watchdog over open runs (the cron)", () => {
  it("hangs up a run past max_call_seconds, ends it unknown past the grace and frees its lease; young runs untouched", async () => {
    const s = await setup("twilio");
    const org = organizationStub(env, s.org.id);
    const overdue = await startCall(s, { initial_context: CONTEXT });
    const abandoned = await startCall(s, { initial_context: CONTEXT });
    const young = await startCall(s, { initial_context: CONTEXT });
    expect((await org.usage()).inUse).toBe(3);
    await age(overdue, MAX_CALL_SECONDS + 60);
    await age(abandoned, MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 60);

    const result = await sweepOverdueRuns(env, Date.now(), LIMITS);

    expect(result.failed).toEqual([]);
    expect(result.hungUp.sort()).toEqual([overdue, abandoned].sort());
    expect(result.ended).toEqual([abandoned]);
    // The carrier was asked to end both old calls, and only those.
    expect(await hangups(s, (await runRow(overdue)).providerCallId!)).toBeGreaterThan(0);
    expect(await hangups(s, (await runRow(abandoned)).providerCallId!)).toBeGreaterThan(0);
    expect(await hangups(s, (await runRow(young)).providerCallId!)).toBe(0);

    const ended = await runRow(abandoned);
    expect(ended.status).toBe("unknown");
    expect(ended.error).toBe(SWEEP_NOTE);
    expect((await runRow(overdue)).status).toBe("initiated");
    expect((await runRow(young)).status).toBe("initiated");
    expect((await org.usage()).inUse).toBe(2);

    // A second pass changes nothing more for the ended run.
    const again = await sweepOverdueRuns(env, Date.now(), LIMITS);
    expect(again.ended).toEqual([]);
  });

  it("hangs up a campaign call never answered with the call id its campaign holds, and the ended record keeps it", async () => {
    const s = await setup("twilio");
    const { stub, run } = await placedCampaignCall(s);
    // The carrier accepted it, but no callback came: the record has no call id, its campaign's attempt has.
    expect(run.providerCallId).toBeNull();
    const [held] = await sqlOf<{ provider_call_id: string }>(stub, "SELECT provider_call_id FROM attempts");
    expect(held.provider_call_id).toMatch(/^CA[0-9a-f]{32}$/);
    await age(run.id, MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 60);

    const result = await sweepOverdueRuns(env, Date.now(), LIMITS);

    expect(result.failed).toEqual([]);
    expect(result.hungUp).toContain(run.id);
    expect(result.ended).toContain(run.id);
    expect(await hangups(s, held.provider_call_id)).toBeGreaterThan(0);
    expect(await runRow(run.id)).toMatchObject({ status: "unknown", providerCallId: held.provider_call_id, error: SWEEP_NOTE });
  });

  it("runs from the Worker's cron", async () => {
    const s = await setup("twilio");
    const id = await startCall(s, { initial_context: CONTEXT });
    await age(id, MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 1);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/15 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await runRow(id)).status).toBe("unknown");
  });
});
