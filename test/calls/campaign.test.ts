// The engine's entry point (startCampaignCall) and the status applier's campaign side: a real campaign
// object dials through the simulator, the carrier's callbacks reach the campaign, the engine's lease is
// recorded (never a second one) and freed; greeting overrides; refusals in the engine's terms.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import type { CampaignCallRequest, CampaignCallStatus } from "../../src/calls/campaign/campaign-calls";
import { organizationStub } from "../../src/organizations/organization-object";
import { hangupRun, startCampaignCall } from "../../src/calls/start/start";
import { applyStatus } from "../../src/calls/runs/status";
import { AUDIO_FALLBACK_NOTE } from "../../src/calls/start/greeting";
import { call } from "../helpers";
import type { ProviderName } from "../../src/telephony/providers/types";
import {
  CALLEE,
  campaignId,
  campaignObject,
  deliver,
  deliverAll,
  placedCampaignCall,
  play,
  runApi,
  runRow,
  setup,
  simFault,
  simRequests,
  type Setup,
} from "./support";
import { unwrap } from "../../src/campaigns/errors";

const request = (s: Setup, over: Partial<CampaignCallRequest> = {}): CampaignCallRequest => ({
  orgId: s.org.id,
  campaignId: campaignId(),
  contactId: 7,
  attempt: 1,
  workflowId: s.agent.id,
  telephonyConfigurationId: s.configId,
  phoneNumber: CALLEE,
  initialContext: { first_name: "Bo" },
  greetingOverride: null,
  ...over,
});

async function answerText(callId: string) {
  const cbs = await play(callId, "answered");
  const delivered = await deliverAll(cbs);
  return delivered.find((d) => d.cb.kind === "answer")!.text;
}

describe("a real campaign object dialling through the calls module", () => {
  it("starts the call with the engine's lease, and the carrier's final status completes the contact and frees the lease", async () => {
    const s = await setup("twilio");
    const id = campaignId();
    const stub = await campaignObject(s, id, { enabled: false }, [
      { row: 2, phone_number: CALLEE, initial_context: { first_name: "Cy" }, greeting_override: { type: "text", text: "Hi {{first_name}}, a quick question" } },
    ]);
    await stub.start();
    for (let i = 0; i < 5 && (await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path)).length === 0; i++) await runDurableObjectAlarm(stub);

    const runs = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    expect(runs).toHaveLength(1);
    const run = runs[0];
    // Recorded as placed when it was created; the carrier's acceptance wrote nothing (its call id is the campaign's).
    expect(run).toMatchObject({
      campaignId: id,
      attempt: 1,
      status: "initiated",
      phoneNumber: CALLEE,
      leaseId: expect.stringMatching(new RegExp(`^campaign:${id}:\\d+:1$`)),
      startedAt: expect.stringMatching(/^\d{4}-/),
      providerCallId: null,
    });
    // The engine's lease is the only one: the calls module did not take a second.
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(1);
    // The API shows the call id all the same: its campaign's object has it.
    const [placed] = (await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path));
    const shown = await runApi(s, run.id);
    expect(shown).toMatchObject({ status: "initiated", provider_call_id: expect.stringMatching(/^CA[0-9a-f]{32}$/) });
    expect(placed).toBeDefined();
    const listed = await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key });
    expect(listed.json.items).toEqual(expect.arrayContaining([expect.objectContaining({ id: run.id, provider_call_id: shown.provider_call_id })]));

    expect(await answerText(shown.provider_call_id)).toContain("<Say>Hi Cy, a quick question</Say>");
    expect(await runRow(run.id)).toMatchObject({ status: "completed", providerCallId: shown.provider_call_id });
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(0);
    const progress = unwrap(await stub.progress());
    expect(progress).toMatchObject({ completed: 1, processed: 1, pending: 0 });
    expect(progress.state).toBe("completed");
  });
});

describe("startCampaignCall", () => {
  it("records the campaign, contact, attempt and lease on the run; a text override is spoken with variables filled", async () => {
    const s = await setup("twilio");
    const req = request(s, { greetingOverride: { type: "text", text: "Hey {{ first_name }}!" }, leaseId: "campaign:1:7:1" });
    const r = await startCampaignCall(env, req);
    expect(r).toEqual({ ok: true, runId: expect.any(Number), providerCallId: expect.stringMatching(/^CA[0-9a-f]{32}$/) });
    if (!r.ok) return;
    expect(await runRow(r.runId)).toMatchObject({
      campaignId: req.campaignId,
      contactId: 7,
      attempt: 1,
      leaseId: "campaign:1:7:1",
      initialContext: { first_name: "Bo" },
    });
    expect(await answerText(r.providerCallId!)).toContain("<Say>Hey Bo!</Say>");
  });

  it("an audio override falls back to the Start greeting and the run records why", async () => {
    const s = await setup("twilio");
    const r = await startCampaignCall(env, request(s, { greetingOverride: { type: "audio", recordingId: "rec-1" } }));
    if (!r.ok) throw new Error(r.message);
    expect(await answerText(r.providerCallId!)).toContain("<Say>Hello Bo, this is Edgedial &amp; co.</Say>");
    expect((await runRow(r.runId)).notes).toBe(AUDIO_FALLBACK_NOTE);
  });

  it("answers refusals in the engine's terms", async () => {
    const s = await setup("twilio");
    expect(await startCampaignCall(env, request(s, { phoneNumber: "12345" }))).toMatchObject({ ok: false, runId: null, kind: "invalid_number" });
    expect(await startCampaignCall(env, request(s, { telephonyConfigurationId: 987654 }))).toMatchObject({
      ok: false,
      runId: null,
      kind: "config",
      message: "Telephony configuration not found",
    });
    await simFault(s.acct, "originate", 400, "Account suspended");
    const refused = await startCampaignCall(env, request(s));
    expect(refused).toMatchObject({ ok: false, kind: "carrier_refused", runId: expect.any(Number) });
    if (refused.ok || refused.runId == null) return;
    expect(refused.message).toContain("Account suspended");
    expect(await runRow(refused.runId)).toMatchObject({ status: "failed", error: refused.message });
  });
});

describe("the status applier's campaign side", () => {
  function recordingEnv() {
    const seen: Array<[string, CampaignCallStatus]> = [];
    const CAMPAIGN = {
      idFromName: (name: string) => name,
      get: (id: string) => ({
        onCallStatuses: async (batch: CampaignCallStatus[]) => batch.map((st) => (seen.push([id, st]), { applied: true })),
      }),
    };
    return { env: { ...env, CAMPAIGN } as unknown as Env, seen };
  }

  it("forwards every change once, ignores late progress, and re-forwards a repeated final status; ringing is forwarded, not written", async () => {
    const s = await setup("twilio");
    const r = await startCampaignCall(env, request(s));
    if (!r.ok) throw new Error(r.message);
    const { env: fake, seen } = recordingEnv();
    const apply = async (status: Parameters<typeof applyStatus>[2]["status"], extra = {}) =>
      (await applyStatus(fake, await runRow(r.runId), { status, ...extra })).applied;
    // Before the answer a campaign's run writes nothing to D1 (its campaign keeps the progress and the call id), not
    // even the call id the carrier's `initiated` or `ringing` names; `ringing` is forwarded each time.
    const before = await runRow(r.runId);
    expect(await apply("initiated", { providerCallId: r.providerCallId })).toBe(false);
    expect(await apply("ringing", { providerCallId: r.providerCallId })).toBe(false);
    expect(await runRow(r.runId)).toEqual(before);
    expect(before).toMatchObject({ status: "initiated", providerCallId: null, answeredAt: null });
    expect(await apply("ringing")).toBe(false);
    // The answer learns it, with the answer time, in the one write.
    expect(await apply("in_progress", { answeredBy: "machine_start", providerCallId: r.providerCallId, at: "2026-11-25T10:00:00.000Z" })).toBe(true);
    expect(await runRow(r.runId)).toMatchObject({ status: "in_progress", providerCallId: r.providerCallId, answeredAt: "2026-11-25T10:00:00.000Z" });
    expect(await apply("ringing")).toBe(false);
    expect(await apply("completed", { durationSeconds: 9, at: "2026-11-25T10:00:09.000Z" })).toBe(true); // AMD said machine earlier: voicemail
    expect(await apply("busy")).toBe(false);
    expect(await apply("voicemail")).toBe(false);
    const run = await runRow(r.runId);
    expect(run).toMatchObject({ status: "voicemail", answeredBy: "machine_start", durationSeconds: 9 });
    const campaign = String((await runRow(r.runId)).campaignId);
    expect(seen.map(([id, st]) => [id, st.status, st.contactId, st.attempt, st.runId])).toEqual([
      [campaign, "ringing", 7, 1, r.runId],
      [campaign, "ringing", 7, 1, r.runId],
      [campaign, "in_progress", 7, 1, r.runId],
      [campaign, "voicemail", 7, 1, r.runId],
      [campaign, "voicemail", 7, 1, r.runId],
    ]);
  });
});

describe("hanging up a campaign call whose answer is not recorded", () => {
  it("uses the call id its campaign's object holds", async () => {
    const s = await setup("twilio");
    const { run } = await placedCampaignCall(s);
    expect(run.providerCallId).toBeNull();
    const callId = (await runApi(s, run.id)).provider_call_id as string;
    await hangupRun(env, s.org.id, run.id);
    expect((await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`))).toHaveLength(1);
  });
});

describe("a campaign call's callbacks before its answer", () => {
  // Carriers that sign only the URL: the body must name the run's own call, which a campaign call's record does not
  // hold before the answer (its campaign's object does).
  const forgeries: Array<[ProviderName, (body: string) => string]> = [
    ["exotel", (b) => b.replace(/CallSid=[^&]+/, "CallSid=ffff")],
    ["vobiz", (b) => b.replace(/CallUUID=[^&]+/, `CallUUID=${crypto.randomUUID()}`).replace(/RequestUUID=[^&]+/, `RequestUUID=${crypto.randomUUID()}`)],
  ];
  for (const [provider, forge] of forgeries)
    it(`${provider}: a body naming another call is refused, changing nothing; the genuine one is applied`, async () => {
      const s = await setup(provider);
      const { run: before } = await placedCampaignCall(s);
      expect(before.providerCallId).toBeNull();
      const callId = (await runApi(s, before.id)).provider_call_id as string;
      const last = (await play(callId, "busy")).filter((c) => c.kind === "status").at(-1)!;
      const res = await deliver(last, { body: forge(last.body) });
      expect(res.status, res.text).toBe(403);
      expect(await runRow(before.id)).toEqual(before);
      expect((await deliver(last)).status).toBeLessThan(300);
      expect((await runRow(before.id)).status).toBe("busy");
    });
});
