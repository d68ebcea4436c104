// A background import with `on_invalid: "skip"` (issue 39): the rows that pass make the campaign, the others are
// kept with it and served as GET /campaign/{id}/refused.csv, the very CSV a synchronous create answers for the same
// file, whatever the slices and a slice lost midway; a file with no good row still fails.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importSlices } from "../../src/campaigns/csv/background";
import { clock } from "../../src/lib/clock";
import { call } from "../helpers";
import { T0, campaignStub, drain, sqlOf } from "./engine-harness";
import { CAMPAIGNS, createCampaign, phone, upload, world, type World } from "./support";

const defaults = { ...importSlices };
beforeEach(() => {
  clock.set(T0);
  // Small slices and chunks, so the file takes several alarms and checkpoints.
  Object.assign(importSlices, { rows: 4, chunkRows: 2, pieceChars: 40 });
});
afterEach(() => {
  Object.assign(importSlices, defaults);
  clock.set(null);
});

const get = (w: World, id: number) => call("GET", `${CAMPAIGNS}/${id}`, { key: w.key });
const refused = (w: World, id: number) => call("GET", `${CAMPAIGNS}/${id}/refused.csv`, { key: w.key });
const rowsOf = async (id: number) => (await sqlOf<{ row: number }>(campaignStub(id), "SELECT row FROM contacts ORDER BY row")).map((r) => r.row);

// Good rows, with bad ones spread over the slices: a blank template value, a bad number, a duplicate, one more blank.
const FILE = [
  "phone_number,first_name,company",
  ...Array.from({ length: 5 }, (_, i) => `${phone(i)},N${i},Acme`),
  `${phone(20)},,Blank Inc`,
  "not-a-number,Bo,Broken",
  ...Array.from({ length: 5 }, (_, i) => `${phone(i + 5)},N${i + 5},Acme`),
  `${phone(2)},Cy,Again`,
  `${phone(21)},  ,Spaces`,
  `${phone(10)},N10,Acme`,
].join("\n");
const GOOD_ROWS = [2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 16];

describe("a background import with on_invalid: skip", () => {
  it("takes the rows that pass and keeps the others as the synchronous create's refused CSV", async () => {
    const w = await world();
    const key = await upload(w, FILE);
    const sync = await createCampaign(w, { source_url: key, on_invalid: "skip" });
    expect(sync.status, sync.text).toBe(200);
    expect(sync.json.refused).toMatchObject({ rows: 4, truncated: false });

    const res = await createCampaign(w, { source_url: key, on_invalid: "skip", import: "background" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ state: "importing" });
    const id = res.json.id as number;
    // Nothing to download while it imports.
    expect((await refused(w, id)).status).toBe(404);
    expect(await drain(id)).toBeGreaterThan(3);

    const c = (await get(w, id)).json;
    expect(c).toMatchObject({ state: "draft", total_rows: GOOD_ROWS.length, import_error: null, import_refused: { rows: 4, truncated: false } });
    expect(await rowsOf(id)).toEqual(GOOD_ROWS);
    const done = c.logs.find((l: { event: string }) => l.event === "source_sync_completed");
    expect(done).toMatchObject({ message: `${GOOD_ROWS.length} contacts imported; 4 rows with problems left out (GET /campaign/{id}/refused.csv)` });

    const csv = await refused(w, id);
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("Content-Disposition")).toBe(`attachment; filename="campaign-${id}-refused.csv"`);
    expect(csv.text).toBe(`${sync.json.refused.csv}\r\n`);
    const lines = csv.text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("phone_number,first_name,company,row,reason");
    expect(lines.slice(1).map((l) => l.split(",")[3])).toEqual(["7", "8", "14", "15"]);
    expect(lines[2]).toMatch(/^not-a-number,Bo,Broken,8,/);

    // An erasure of a number takes its refused row too (the file wrote it in E.164 here).
    expect(await campaignStub(id).eraseNumber(phone(20))).toMatchObject({ erased: true });
    const after = (await refused(w, id)).text.trimEnd().split("\r\n");
    expect(after.map((l) => l.split(",")[3])).toEqual(["row", "8", "14", "15"]);

    // Another organization sees no such campaign.
    const other = await world();
    expect((await refused(other, id)).status).toBe(404);
  });

  it("a slice lost past its checkpoint: its refused rows are noted again, once", async () => {
    const w = await world();
    const key = await upload(w, FILE);
    const sync = await createCampaign(w, { source_url: key, on_invalid: "skip" });
    const res = await createCampaign(w, { source_url: key, on_invalid: "skip", import: "background" });
    const id = res.json.id as number;
    const stub = campaignStub(id);
    // Slices until the first refused row is noted, then a lost slice's leftovers past the checkpoint.
    for (let i = 0; i < 20 && !(await sqlOf(stub, "SELECT row FROM refused_rows")).length; i++) await runDurableObjectAlarm(stub);
    expect((await get(w, id)).json.state).toBe("importing");
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec(`INSERT INTO refused_rows (row, fields, reasons) VALUES (13, '["x"]', '["a lost slice noted this"]')`);
    });
    await drain(id);
    expect((await get(w, id)).json).toMatchObject({ state: "draft", import_refused: { rows: 4 } });
    expect((await refused(w, id)).text).toBe(`${sync.json.refused.csv}\r\n`);
  });

  it("no row passes: failed as without skip, nothing to download; an import without skip has no refused rows", async () => {
    const w = await world();
    const res = await createCampaign(w, {
      source_url: await upload(w, "phone_number,first_name\nnope,Ada\n+14155550100,\n"),
      on_invalid: "skip",
      import: "background",
    });
    expect(res.status, res.text).toBe(200);
    await drain(res.json.id);
    const c = (await get(w, res.json.id)).json;
    expect(c).toMatchObject({ state: "failed", total_rows: 0, import_refused: null });
    expect(c.import_error.errors.map((e: { type: string }) => e.type)).toEqual(["phone_number_invalid", "template_value_empty"]);
    expect((await refused(w, res.json.id)).status).toBe(404);

    const plain = await createCampaign(w, { source_url: await upload(w, FILE), import: "background" });
    await drain(plain.json.id);
    expect((await get(w, plain.json.id)).json).toMatchObject({ state: "failed", import_refused: null });
    expect((await refused(w, plain.json.id)).status).toBe(404);
  });
});
