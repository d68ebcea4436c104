// DELETE /campaign/{id}: a campaign that is not running goes with its contacts, its uploaded file (unless another
// campaign was made from it) and its calls' recordings; its runs stay. Running, paused, importing, or with calls
// still in progress: 409. Another organization's: 404.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { campaignStub, resetWorld, tick } from "./engine-harness";
import { createCampaign, goodCsv, upload, world } from "./support";

async function run(w: Awaited<ReturnType<typeof world>>, campaignId: number, status: string, recordingKey: string | null) {
  const row = await env.DB.prepare(
    `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, campaign_id, recording_key, recording_rate)
     VALUES (?, ?, ?, 'u', '+14155550000', ?, ?, ?, 8000) RETURNING id`,
  )
    .bind(w.id, `WR-D${crypto.randomUUID()}`, w.workflowId, status, campaignId, recordingKey)
    .first<{ id: number }>();
  if (recordingKey) await env.UPLOADS.put(recordingKey, new Uint8Array(640));
  return row!.id;
}

/** A fresh world's campaign made from an uploaded file of `rows` good rows. */
async function fromUpload(rows: number) {
  resetWorld();
  const w = await world();
  const key = await upload(w, goodCsv(rows));
  const created = await createCampaign(w, { source_url: key });
  expect(created.status, created.text).toBe(200);
  return { w, key, id: created.json.id as number };
}

describe("deleting a campaign", () => {
  it("a finished campaign: its contacts, file and recordings go, its runs stay; it is audited", async () => {
    const { w, key, id } = await fromUpload(3);
    const recording = `recordings/${w.id}/${crypto.randomUUID()}.pcm`;
    const runId = await run(w, id, "completed", recording);
    await call("POST", `/api/v1/campaign/${id}/cancel`, { key: w.key });

    const res = await call("DELETE", `/api/v1/campaign/${id}`, { key: w.key });
    expect(res.status, res.text).toBe(204);
    expect((await call("GET", `/api/v1/campaign/${id}`, { key: w.key })).status).toBe(404);
    expect(await env.UPLOADS.head(key)).toBeNull();
    expect(await env.UPLOADS.head(recording)).toBeNull();
    const kept = await env.DB.prepare("SELECT campaign_id, recording_key FROM workflow_runs WHERE id = ?").bind(runId).first();
    expect(kept).toEqual({ campaign_id: id, recording_key: null });
    // The object's contacts are gone with it.
    await expect(campaignStub(id).snapshot()).rejects.toThrow();
    const audit = await call("GET", "/api/v1/organizations/audit-log?limit=5", { key: w.key });
    expect(audit.json.items.find((e: any) => e.action === "delete" && e.resource_type === "campaign")?.resource_id).toBe(id);
    // Gone is gone: a second delete is a 404.
    expect((await call("DELETE", `/api/v1/campaign/${id}`, { key: w.key })).status).toBe(404);
  });

  it("refuses a running or paused campaign and one whose calls are still in progress (409); another organization's is a 404", async () => {
    const { w, key, id } = await fromUpload(2);
    await campaignStub(id).start();
    const running = await call("DELETE", `/api/v1/campaign/${id}`, { key: w.key });
    expect(running.status).toBe(409);
    expect(running.json.detail).toBe("Cannot delete a campaign that is running; cancel it first");
    await campaignStub(id).pause();
    expect((await call("DELETE", `/api/v1/campaign/${id}`, { key: w.key })).status).toBe(409);
    await campaignStub(id).cancel();
    await run(w, id, "in_progress", null);
    const live = await call("DELETE", `/api/v1/campaign/${id}`, { key: w.key });
    expect(live.status).toBe(409);
    expect(live.json.detail).toBe("Calls of this campaign are still in progress; delete it once they have ended");
    // Nothing went: the campaign and its file are there.
    expect((await call("GET", `/api/v1/campaign/${id}`, { key: w.key })).status).toBe(200);
    expect(await env.UPLOADS.head(key)).not.toBeNull();

    const other = await world();
    expect((await call("DELETE", `/api/v1/campaign/${id}`, { key: other.key })).status).toBe(404);
  });

  it("a draft goes too; a file another campaign was made from stays", async () => {
    const { w, key, id: a } = await fromUpload(2);
    const b = (await createCampaign(w, { source_url: key, name: "second" })).json.id;
    await tick(campaignStub(a));
    expect((await call("DELETE", `/api/v1/campaign/${a}`, { key: w.key })).status).toBe(204);
    expect(await env.UPLOADS.head(key)).not.toBeNull();
    expect((await call("GET", `/api/v1/campaign/${b}`, { key: w.key })).status).toBe(200);
    expect((await call("DELETE", `/api/v1/campaign/${b}`, { key: w.key })).status).toBe(204);
    expect(await env.UPLOADS.head(key)).toBeNull();
  });
});
