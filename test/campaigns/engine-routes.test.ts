// The campaign operations over HTTP: organization isolation, the 409s of the transition table, start's
// preconditions, progress, logs paging, runs, and redial.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import { type FakeCarrier, advance, campaignStub, resetWorld, tick } from "./engine-harness";
import { draftCampaign, setupOrg } from "./support";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

/** A finished five-contact campaign whose contacts ended completed, busy, no_answer, voicemail and failed. */
async function completedWithOneOfEachOutcome() {
  const o = await setupOrg();
  const { id, stub } = await draftCampaign(o, 5);
  await stub.updateSettings({ retry_config: { enabled: false } });
  await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key });
  await tick(stub);
  const outcomes = ["completed", "busy", "no_answer", "voicemail", "failed"] as const;
  for (const [i, s] of carrier.open(id).entries()) await carrier.report(s, outcomes[i]);
  expect(unwrap(await stub.snapshot()).state).toBe("completed");
  return { o, id, stub };
}

describe("campaign operations over HTTP", () => {
  it("refuses what the table does not allow, naming the state, and hides other organizations' campaigns", async () => {
    const o = await setupOrg();
    const { id } = await draftCampaign(o);
    const bad = await call("POST", `/api/v1/campaign/${id}/pause`, { key: o.org.key });
    expect(bad.status).toBe(409);
    expect(bad.json).toEqual({ detail: "Cannot pause a campaign in state 'draft'" });
    expect((await call("POST", `/api/v1/campaign/${id}/resume`, { key: o.org.key })).json).toEqual({ detail: "Cannot resume a campaign in state 'draft'" });
    const redial = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(redial.status).toBe(409);
    expect(redial.json.detail).toBe("Cannot redial a campaign in state 'draft'");

    const other = await createOrg();
    for (const [m, p] of [
      ["POST", "start"],
      ["POST", "pause"],
      ["POST", "cancel"],
      ["GET", "progress"],
      ["GET", "logs"],
      ["GET", "runs"],
      ["POST", "redial"],
    ]) {
      const res = await call(m, `/api/v1/campaign/${id}/${p}`, { key: other.key });
      expect([p, res.status, res.json]).toEqual([p, 404, { detail: "Campaign not found" }]);
    }
    expect((await call("GET", `/api/v1/campaign/999999999/progress`, { key: o.org.key })).status).toBe(404);
    expect((await call("GET", `/api/v1/campaign/abc/progress`, { key: o.org.key })).status).toBe(404);
  });

  it("start → pause → resume → cancel, each answered with the campaign object and logged", async () => {
    const o = await setupOrg();
    const { id, stub } = await draftCampaign(o);
    const started = await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key });
    expect(started.status, started.text).toBe(200);
    expect(started.json).toMatchObject({ id, state: "running", total_rows: 3, workflow_id: o.workflowId, telephony_configuration_id: o.configId });
    expect(started.json.started_at).toMatch(/Z$/);
    expect((await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key })).json).toEqual({ detail: "Cannot start a campaign in state 'running'" });
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(3);
    expect((await call("POST", `/api/v1/campaign/${id}/pause`, { key: o.org.key })).json.state).toBe("paused");
    expect((await call("POST", `/api/v1/campaign/${id}/resume`, { key: o.org.key })).json.state).toBe("running");
    const cancelled = await call("POST", `/api/v1/campaign/${id}/cancel`, { key: o.org.key });
    expect(cancelled.json.state).toBe("cancelled");
    expect(cancelled.json.logs.map((l: { event: string }) => l.event).slice(0, 4)).toEqual([
      "campaign_cancelled",
      "campaign_resumed",
      "campaign_paused",
      "campaign_started",
    ]);
    expect((await call("POST", `/api/v1/campaign/${id}/cancel`, { key: o.org.key })).json).toEqual({ detail: "Cannot cancel a campaign in state 'cancelled'" });
    // The D1 summary row follows the transitions.
    const row = await env.DB.prepare("SELECT state, started_at FROM campaigns WHERE id = ?").bind(id).first<{ state: string; started_at: string }>();
    expect(row).toMatchObject({ state: "cancelled" });
    expect(row!.started_at).toBe(started.json.started_at);
  });

  it("start needs an active agent and a ready configuration (409)", async () => {
    const o = await setupOrg();
    const { id } = await draftCampaign(o);
    await call("PUT", `/api/v1/workflow/${o.workflowId}/status`, { key: o.org.key, body: { status: "archived" } });
    const res = await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key });
    expect(res.status).toBe(409);
    expect(res.json.detail).toMatch(/archived/);
    await call("PUT", `/api/v1/workflow/${o.workflowId}/status`, { key: o.org.key, body: { status: "active" } });
    await env.DB.prepare("UPDATE telephony_configs SET inactive = 1, inactive_reason = 'test' WHERE id = ?").bind(o.configId).run();
    const notReady = await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key });
    expect(notReady.status).toBe(409);
    expect(notReady.json.detail).toMatch(/not ready/);
    expect(carrier.started).toHaveLength(0);
  });

  it("progress carries both field sets; logs page newest first; runs list the campaign's calls", async () => {
    const o = await setupOrg();
    const { id, stub } = await draftCampaign(o, 4);
    await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key });
    await tick(stub);
    const [a, b] = carrier.open(id);
    await carrier.report(a, "completed");
    await carrier.report(b, "busy");
    const p = await call("GET", `/api/v1/campaign/${id}/progress`, { key: o.org.key });
    expect(p.status).toBe(200);
    expect(p.json).toEqual({
      campaign_id: id,
      state: "running",
      total_rows: 4,
      imported_rows: 4,
      processed_rows: 4,
      failed_calls: 1,
      progress_percentage: 100,
      source_sync: { status: "completed", last_synced_at: expect.any(String), error: null },
      rate_limit: 50,
      started_at: expect.any(String),
      completed_at: null,
      total: 4,
      processed: 4,
      completed: 1,
      answered_no_conversation: 0,
      failed: 0,
      pending: 0,
      // The busy contact waits for its retry: every contact is counted somewhere (4 = 0 + 1 + 2 + 1 + 0).
      retry_waiting: 1,
      in_progress: 2,
      completion_percentage: 100,
      next_window_at: null,
      dispositions: {},
      // One call answered (the busy one was not), none by a machine.
      answering_machines: { answered: 1, machines: 0, rate: 0, amd_classes: {} },
      calling_rules: { held_local_hours: 0, skipped: {}, attempt_cap_wait: { contacts: 0, next_at: null } },
      waiting_for: null,
    });

    const first = await call("GET", `/api/v1/campaign/${id}/logs?limit=2`, { key: o.org.key });
    expect(first.json.items.map((l: { event: string }) => l.event)).toEqual(["campaign_started", "source_sync_completed"]);
    const second = await call("GET", `/api/v1/campaign/${id}/logs?limit=2&cursor=${first.json.next_cursor}`, { key: o.org.key });
    expect(second.json).toEqual({ items: [expect.objectContaining({ event: "campaign_created", level: "info" })], next_cursor: null });
    expect((await call("GET", `/api/v1/campaign/${id}/logs?cursor=nope`, { key: o.org.key })).status).toBe(422);

    for (const n of [1, 2])
      await env.DB.prepare(
        "INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, campaign_id, contact_id, attempt, phone_number, status) VALUES (?, ?, ?, 'u', ?, ?, 1, ?, 'completed')",
      )
        .bind(o.org.id, `WR-T${id}-${n}`, o.workflowId, id, n, `+1415555000${n}`)
        .run();
    const runs = await call("GET", `/api/v1/campaign/${id}/runs?limit=1`, { key: o.org.key });
    expect(runs.status).toBe(200);
    expect(runs.json.items).toHaveLength(1);
    expect(runs.json.items[0]).toMatchObject({ campaign_id: id, name: `WR-T${id}-2` });
    expect(runs.json.next_cursor).toBeTruthy();
  });

  it("redial makes a new draft with the chosen outcomes' contacts, linked both ways, and can be repeated", async () => {
    const { o, id } = await completedWithOneOfEachOutcome();

    const bad = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, body: { outcomes: ["ringing"] } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "outcomes", 0]);

    const child = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(child.status, child.text).toBe(200);
    expect(child.json).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 3 });
    expect(await runPhones(child.json.id)).toEqual(["+14155550001", "+14155550002", "+14155550003"]);
    const parent = await call("GET", `/api/v1/campaign/${id}/progress`, { key: o.org.key });
    expect(parent.json.state).toBe("completed");
    const parentRow = await env.DB.prepare("SELECT redialed_campaign_id FROM campaigns WHERE id = ?").bind(id).first<{ redialed_campaign_id: number }>();
    expect(parentRow!.redialed_campaign_id).toBe(child.json.id);

    const again = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, body: { outcomes: ["failed", "completed"] } });
    expect(again.json).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 2 });
    expect(await runPhones(again.json.id)).toEqual(["+14155550000", "+14155550004"]);
    const latest = await env.DB.prepare("SELECT redialed_campaign_id FROM campaigns WHERE id = ?").bind(id).first<{ redialed_campaign_id: number }>();
    expect(latest!.redialed_campaign_id).toBe(again.json.id);
    // The child dials like any campaign.
    const go = await call("POST", `/api/v1/campaign/${again.json.id}/start`, { key: o.org.key });
    expect(go.json.state).toBe("running");
    await advance(1000, campaignStub(again.json.id));
    expect(
      carrier
        .open(again.json.id)
        .map((s) => s.req.phoneNumber)
        .sort(),
    ).toEqual(["+14155550000", "+14155550004"]);
  });

  it("redial with Content-Type: application/json and an empty body uses the default outcomes; malformed JSON is still 422", async () => {
    const { o, id, stub } = await completedWithOneOfEachOutcome();

    // Malformed (non-empty) JSON is refused before anything is made.
    for (const raw of ['{"outcomes": ["busy"', "not json"]) {
      const bad = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, raw });
      expect(bad.status, bad.text).toBe(422);
      expect(bad.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    }
    expect(unwrap(await stub.snapshot()).redialed_campaign_id).toBeNull();

    // `call` sends Content-Type: application/json with any raw body, the empty one included.
    for (const raw of ["", " \r\n"]) {
      const child = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, raw });
      expect(child.status, child.text).toBe(200);
      expect(child.json).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 3 });
      expect(await runPhones(child.json.id)).toEqual(["+14155550001", "+14155550002", "+14155550003"]);
    }
  });
});

async function runPhones(campaignId: number): Promise<string[]> {
  const { runInDurableObject } = await import("cloudflare:test");
  return runInDurableObject(campaignStub(campaignId), (_i, state) =>
    state.storage.sql
      .exec<{ phone_number: string }>("SELECT phone_number FROM contacts ORDER BY id")
      .toArray()
      .map((r) => r.phone_number),
  );
}
