// Create with `import: "background"`: the answer comes at once as `importing`, the campaign's object imports the
// file slice by slice on its alarm (run here with runDurableObjectAlarm, the clock pinned so nothing fires on its
// own), reads show imported_rows counting up, and the end is `draft`, or `failed` with no contacts and the problems
// a synchronous create would have answered with.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CampaignObject } from "../../src/campaigns/campaign-object";
import { importSlices } from "../../src/campaigns/csv/background";
import { CsvImport } from "../../src/campaigns/csv/import";
import { SUMMARY_INTERVAL_MS } from "../../src/campaigns/engine/summary";
import { clock } from "../../src/lib/clock";
import { call } from "../helpers";
import { T0, alarmAt, campaignStub, drain, sqlOf } from "./engine-harness";
import { CAMPAIGNS, createCampaign, goodCsv, phone, upload, world, type World } from "./support";

const defaults = { ...importSlices };

beforeEach(() => {
  clock.set(T0);
  // Small slices and chunks, so a few rows take several alarms.
  Object.assign(importSlices, { rows: 4, chunkRows: 2, pieceChars: 40 });
});
afterEach(() => {
  Object.assign(importSlices, defaults);
  vi.restoreAllMocks();
  clock.set(null);
});

const get = (w: World, id: number) => call("GET", `${CAMPAIGNS}/${id}`, { key: w.key });
const progress = (w: World, id: number) => call("GET", `${CAMPAIGNS}/${id}/progress`, { key: w.key });
const contacts = (id: number) =>
  sqlOf<{ row: number; phone_number: string; initial_context: string }>(
    campaignStub(id),
    "SELECT row, phone_number, initial_context FROM contacts ORDER BY row",
  );

describe("background import", () => {
  it("answers at once as importing; imported_rows count up alarm by alarm; ends as draft with every contact", async () => {
    const w = await world();
    const n = 23;
    const key = await upload(w, goodCsv(n));
    const res = await createCampaign(w, { source_url: key, import: "background" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ state: "importing", imported_rows: 0, total_rows: 0, import_error: null });
    const id = res.json.id;

    // Visible at once: read, listed (also by its state), refused a start, open to settings changes.
    expect((await get(w, id)).json.state).toBe("importing");
    const listed = await call("GET", `${CAMPAIGNS}/?state=importing`, { key: w.key });
    expect(listed.json.items.map((c: { id: number }) => c.id)).toEqual([id]);
    expect(listed.json.items[0]).toMatchObject({ state: "importing", import_error: null });
    const start = await call("POST", `${CAMPAIGNS}/${id}/start`, { key: w.key });
    expect(start.status).toBe(409);
    expect(start.json.detail).toBe("Cannot start a campaign in state 'importing'");
    expect((await call("PATCH", `${CAMPAIGNS}/${id}`, { key: w.key, body: { rate_limit: 5 } })).json.rate_limit).toBe(5);

    const seen: number[] = [];
    for (let i = 0; i < 50; i++) {
      const at = await alarmAt(campaignStub(id));
      if (at == null) break;
      clock.advance(SUMMARY_INTERVAL_MS);
      await runDurableObjectAlarm(campaignStub(id));
      const p = (await progress(w, id)).json;
      const c = (await get(w, id)).json;
      expect(c.imported_rows).toBe(p.imported_rows);
      seen.push(p.imported_rows);
      // Listings (from D1) follow too, at most every SUMMARY_INTERVAL_MS (which passes between these alarms).
      expect((await env.DB.prepare("SELECT total_rows FROM campaigns WHERE id = ?").bind(id).first())?.total_rows).toBe(p.imported_rows);
      if (c.state !== "importing") break;
      expect(p).toMatchObject({ state: "importing", source_sync: { status: "pending", error: null } });
    }
    // Rows counted up over several alarms, never down, to all of them.
    expect(seen.length).toBeGreaterThan(4);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen.at(-1)).toBe(n);
    expect(new Set(seen).size).toBeGreaterThan(3);

    const done = (await get(w, id)).json;
    expect(done).toMatchObject({ state: "draft", total_rows: n, imported_rows: n, total_queued_count: n, rate_limit: 5, import_error: null });
    expect(done.logs.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(["campaign_created", "source_sync_completed"]));
    expect((await progress(w, id)).json.source_sync.status).toBe("completed");
    expect(await contacts(id)).toEqual(
      Array.from({ length: n }, (_, i) => ({ row: i + 2, phone_number: phone(i), initial_context: JSON.stringify({ first_name: `Name${i}` }) })),
    );
    // The D1 summary followed (listings read it), and the import's timer is gone.
    const row = await env.DB.prepare("SELECT state, total_rows FROM campaigns WHERE id = ?").bind(id).first();
    expect(row).toEqual({ state: "draft", total_rows: n });
    expect(await sqlOf(campaignStub(id), "SELECT kind FROM timers WHERE kind = 'import'")).toEqual([]);
    // A draft like any other: its start is judged on the configuration now (this one has no caller ID), not its state.
    expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: w.key })).json.detail).toMatch(/caller_id/);
  });

  it("a file that does not pass: failed, no contacts, the reason, and the problems a synchronous create answers", async () => {
    const w = await world();
    const csv = [
      "phone_number,first_name",
      ...Array.from({ length: 9 }, (_, i) => `${phone(i)},N${i}`),
      "+1 555 0100,Spaces",
      `${phone(3)},Dup`,
      "12,Short",
      `+${"9".repeat(300)},Long`, // echoed cut short, as a 422 does
    ].join("\n");
    const key = await upload(w, csv);
    const sync = await createCampaign(w, { source_url: key });
    expect(sync.status).toBe(422);

    const res = await createCampaign(w, { source_url: key, import: "background" });
    expect(res.json.state).toBe("importing");
    const id = res.json.id;
    await drain(id);

    const c = (await get(w, id)).json;
    expect(c).toMatchObject({ state: "failed", total_rows: 0, imported_rows: 0 });
    expect(c.import_error.errors).toEqual(sync.json.detail);
    expect(c.import_error.errors.map((i: { loc: unknown[]; type: string }) => [i.loc, i.type])).toEqual([
      [["body", "source_url", 11, "phone_number"], "phone_number_invalid"],
      [["body", "source_url", 12, "phone_number"], "phone_number_duplicate"],
      [["body", "source_url", 13, "phone_number"], "phone_number_invalid"],
      [["body", "source_url", 14, "phone_number"], "phone_number_invalid"],
    ]);
    expect(c.import_error.errors[3].input).toMatch(/truncated; 301 characters/);
    expect(c.import_error.message).toMatch(/^The file has 4 problems, so nothing was imported; the first is at row 11, column phone_number: /);
    expect(c.logs.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(["source_sync_failed", "campaign_failed"]));
    const p = (await progress(w, id)).json;
    expect(p).toMatchObject({ state: "failed", imported_rows: 0, source_sync: { status: "failed", error: c.import_error.message } });
    expect(await contacts(id)).toEqual([]);
    // Listings (from D1) say so too.
    const listed = await call("GET", `${CAMPAIGNS}/?state=failed`, { key: w.key });
    expect(listed.json.items.map((i: { id: number; import_error: unknown }) => [i.id, i.import_error])).toEqual([[id, c.import_error]]);
    expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: w.key })).status).toBe(409);
  });

  it("a missing template variable, a file deleted before it is read, and a file replaced fail with their reasons", async () => {
    const w = await world();
    const noName = await createCampaign(w, { source_url: await upload(w, "phone_number,name\n+14155550100,Ada\n"), import: "background" });
    await drain(noName.json.id);
    const a = (await get(w, noName.json.id)).json;
    expect(a.state).toBe("failed");
    expect(a.import_error.errors).toEqual([expect.objectContaining({ loc: ["body", "source_url", 1, "first_name"], type: "missing_template_variable" })]);

    const key = await upload(w, goodCsv(5));
    const gone = await createCampaign(w, { source_url: key, import: "background" });
    await env.UPLOADS.delete(key);
    await drain(gone.json.id);
    const b = (await get(w, gone.json.id)).json;
    expect(b).toMatchObject({ state: "failed", import_error: { message: expect.stringMatching(/file is gone/), errors: [] } });

    // Replaced through its still valid upload URL after the create: not imported as something else.
    const again = await upload(w, goodCsv(5));
    const replaced = await createCampaign(w, { source_url: again, import: "background" });
    await env.UPLOADS.put(again, goodCsv(6, 100));
    await drain(replaced.json.id);
    expect((await get(w, replaced.json.id)).json).toMatchObject({ state: "failed", import_error: { message: expect.stringMatching(/replaced/) } });
  });

  it("a slice that throws is retried after a backoff; a slice lost midway is read again without duplicates", async () => {
    const w = await world();
    const n = 12;
    const res = await createCampaign(w, { source_url: await upload(w, goodCsv(n)), import: "background" });
    const id = res.json.id;
    const stub = campaignStub(id);

    await runDurableObjectAlarm(stub); // a first slice: a checkpoint with some contacts
    const after = (await contacts(id)).length;
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(n);
    // As if a slice stored more contacts and died before its checkpoint.
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec(
        "INSERT INTO contacts (row, phone_number, initial_context, queue_key) VALUES (?, ?, '{}', 0), (?, ?, '{}', 0)",
        after + 2,
        phone(after),
        after + 3,
        phone(after + 1),
      );
    });

    const feed = vi.spyOn(CsvImport.prototype, "feed").mockRejectedValueOnce(new Error("storage hiccup"));
    await runDurableObjectAlarm(stub);
    expect(feed).toHaveBeenCalled();
    expect((await get(w, id)).json.state).toBe("importing");
    expect(await alarmAt(stub)).toBe(clock.now() + 1000); // retried after a second
    clock.advance(1000);
    await drain(id);
    const c = (await get(w, id)).json;
    expect(c).toMatchObject({ state: "draft", total_rows: n });
    expect((await contacts(id)).map((r) => r.row)).toEqual(Array.from({ length: n }, (_, i) => i + 2));
  });

  it("cancelled while importing: the import stops where it was", async () => {
    const w = await world();
    const res = await createCampaign(w, { source_url: await upload(w, goodCsv(20)), import: "background" });
    const id = res.json.id;
    await runDurableObjectAlarm(campaignStub(id));
    const cancel = await call("POST", `${CAMPAIGNS}/${id}/cancel`, { key: w.key });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json.state).toBe("cancelled");
    const stored = (await contacts(id)).length;
    await drain(id);
    expect((await contacts(id)).length).toBe(stored);
    expect((await get(w, id)).json.state).toBe("cancelled");
    expect(await alarmAt(campaignStub(id))).toBeNull();
  });

  it("a create whose object cannot start the import leaves nothing behind", async () => {
    const w = await world();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    vi.spyOn(CampaignObject.prototype, "beginImport").mockRejectedValue(new Error("object unavailable"));
    const res = await createCampaign(w, { source_url: await upload(w, goodCsv(3)), import: "background" });
    expect(res.status).toBe(500);
    const rows = await env.DB.prepare("SELECT id FROM campaigns WHERE org_id = ?").bind(w.id).all();
    expect(rows.results).toEqual([]);
  });

  it("a synchronous create still answers a file's problems with a 422 and leaves nothing", async () => {
    const w = await world();
    const res = await createCampaign(w, { source_url: await upload(w, "phone_number\nnope\n"), import: "sync" });
    expect(res.status).toBe(422);
    const rows = await env.DB.prepare("SELECT id FROM campaigns WHERE org_id = ?").bind(w.id).all();
    expect(rows.results).toEqual([]);
    const bad = await createCampaign(w, { source_url: "x", import: "later" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "import"]);
  });
});
