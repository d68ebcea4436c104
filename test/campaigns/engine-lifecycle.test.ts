// The records-facing RPCs of the campaign object: initialize, importContacts, finishImport, snapshot, updateSettings, discard.
import { env } from "cloudflare:workers";
import { errorOf, uniqueId } from "./engine-harness";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/campaigns/engine/settings";
import { unwrap } from "../../src/campaigns/errors";

const stubFor = (id: number) => env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
const meta = (id: number) => ({
  campaignId: id,
  orgId: 1,
  name: `c${id}`,
  workflowId: 1,
  telephonyConfigurationId: 1,
  sourceId: "k",
  settings: DEFAULT_SETTINGS,
});
const contact = (row: number, phone: string) => ({ row, phone_number: phone, initial_context: { name: `n${row}` }, greeting_override: null });

describe("campaign object: creation RPCs", () => {
  it("imports chunks, reports duplicates with their first row, and counts the total", async () => {
    const id = uniqueId();
    const stub = stubFor(id);
    await stub.initialize(meta(id));
    const a = unwrap(await stub.importContacts([contact(2, "+14155550100"), contact(3, "+14155550101"), contact(4, "+14155550100")]));
    expect(a).toEqual({ inserted: 2, duplicates: [{ row: 4, phone_number: "+14155550100", first_row: 2 }] });
    const b = unwrap(await stub.importContacts([contact(5, "+14155550101"), contact(6, "+14155550102")]));
    expect(b).toEqual({ inserted: 1, duplicates: [{ row: 5, phone_number: "+14155550101", first_row: 3 }] });
    expect(unwrap(await stub.finishImport())).toEqual({ total: 3 });
    const snap = unwrap(await stub.snapshot());
    expect(snap).toMatchObject({ id, state: "draft", counts: { total: 3, pending: 3, processed: 0, executed: 0, queued: 3 } });
    expect(snap.settings).toEqual(DEFAULT_SETTINGS);
    expect(snap.logs.map((l) => l.event)).toEqual(["source_sync_completed", "campaign_created"]);
    expect(await errorOf(stub.importContacts([contact(7, "+14155550103")]))).toMatch(/^\[409\]/);
  });

  it("a large chunk: text stored exactly, duplicates across the object's internal statements, counts exact", async () => {
    const id = uniqueId();
    const stub = stubFor(id);
    await stub.initialize(meta(id));
    const odd = 'q"uo\\te \n\t\u0001 é 漢字 😀 \u2028 {{x}} ,;';
    const wide = "w".repeat(60_000); // a few rows this wide fill the object's 128K-character statements
    const num = (i: number) => `+1415${String(5_000_000 + i)}`;
    const chunk = Array.from({ length: 3_000 }, (_, i) => ({
      row: i + 2,
      // Rows 1,000 on repeat an earlier number once every 100 rows: some in the same statement, some in an earlier one.
      phone_number: i >= 1_000 && i % 100 === 0 ? num(i - 997) : num(i),
      initial_context: { name: `${odd}${i}`, note: i % 500 === 1 ? wide : "" },
      greeting_override: i % 3 === 0 ? { type: "text" as const, text: `Hi ${odd}` } : i % 3 === 1 ? null : { type: "audio" as const, recordingId: "rec-1" },
    }));
    const res = unwrap(await stub.importContacts(chunk));
    const expected = chunk.filter((_c, i) => i >= 1_000 && i % 100 === 0).map((c) => ({ row: c.row, phone_number: c.phone_number, first_row: c.row - 997 }));
    expect(res).toEqual({ inserted: 3_000 - expected.length, duplicates: expected });
    // A second chunk: repeats of the first chunk's numbers and of its own.
    const again = unwrap(await stub.importContacts([contact(5_000, num(0)), contact(5_001, "+14155550199"), contact(5_002, "+14155550199")]));
    expect(again).toEqual({
      inserted: 1,
      duplicates: [
        { row: 5_000, phone_number: num(0), first_row: 2 },
        { row: 5_002, phone_number: "+14155550199", first_row: 5_001 },
      ],
    });
    const { recount, readCounts } = await import("../../src/campaigns/engine/counts");
    const { DoSql } = await import("../../src/lib/do-sql");
    await runInDurableObject(stub, async (_i, state) => {
      const stored = state.storage.sql
        .exec<{ row: number; phone_number: string; initial_context: string; greeting_override: string | null }>(
          "SELECT row, phone_number, initial_context, greeting_override FROM contacts WHERE row < 5000 ORDER BY row",
        )
        .toArray();
      const kept = chunk.filter((c) => !expected.some((d) => d.row === c.row));
      expect(stored.map((r) => r.row)).toEqual(kept.map((c) => c.row));
      for (const [k, c] of kept.entries()) {
        expect(stored[k].phone_number).toBe(c.phone_number);
        expect(stored[k].initial_context).toBe(JSON.stringify(c.initial_context));
        expect(stored[k].greeting_override).toBe(c.greeting_override ? JSON.stringify(c.greeting_override) : null);
      }
      const db = new DoSql(state.storage);
      expect(readCounts(db)).toEqual(recount(db));
      expect(readCounts(db)).toMatchObject({ total: kept.length + 1, pending: kept.length + 1, queued: kept.length + 1 });
    });
    expect(unwrap(await stub.finishImport())).toEqual({ total: 3_000 - expected.length + 1 });
  });

  it("initialize is idempotent for the same campaign and refuses another", async () => {
    const id = uniqueId();
    const stub = stubFor(id);
    await stub.initialize(meta(id));
    await stub.initialize(meta(id));
    expect(await errorOf(stub.initialize(meta(id + 1)))).toMatch("[409]");
    expect(unwrap(await stub.snapshot()).logs).toHaveLength(1);
  });

  it("snapshot of an object never initialized is a 404", async () => {
    expect(await errorOf(stubFor(uniqueId()).snapshot())).toMatch("[404] Campaign not found");
  });

  it("updateSettings merges, validates, and is refused once finished", async () => {
    const id = uniqueId();
    const stub = stubFor(id);
    await stub.initialize(meta(id));
    await stub.finishImport();
    const s = unwrap(await stub.updateSettings({ max_concurrency: 3, retry_config: { max_retries: 5 } }));
    expect(s.settings.max_concurrency).toBe(3);
    expect(s.settings.retry_config).toEqual({ ...DEFAULT_SETTINGS.retry_config, max_retries: 5 });
    expect(await errorOf(stub.updateSettings({ rate_limit: 51 }))).toMatch("[422]");
    await stub.cancel();
    expect(await errorOf(stub.updateSettings({ max_concurrency: 4 }))).toMatch("[409] Cannot update a campaign in state 'cancelled'");
  });

  it("discard wipes everything and leaves a blank, reusable object", async () => {
    const id = uniqueId();
    const stub = stubFor(id);
    await stub.initialize(meta(id));
    await stub.importContacts([contact(2, "+14155550100")]);
    await stub.discard();
    expect(await errorOf(stub.snapshot())).toMatch("[404]");
    const rows = await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM contacts").one().n);
    expect(rows).toBe(0);
    await stub.initialize(meta(id));
    expect(unwrap(await stub.snapshot()).counts.total).toBe(0);
  });
});

describe("campaign object: storage schema", () => {
  it("migrates a v1 database to the newest version, counters filled from the rows already there", async () => {
    const { CampaignObject } = await import("../../src/campaigns/campaign-object");
    const { MIGRATIONS, SCHEMA_VERSION } = await import("../../src/campaigns/engine/schema");
    const { recount, readCounts } = await import("../../src/campaigns/engine/counts");
    const { DoSql } = await import("../../src/lib/do-sql");
    const stub = stubFor(uniqueId());
    await runInDurableObject(stub, async (_i, state) => {
      const sql = state.storage.sql;
      // Back to an empty database at v1 with some history in it.
      // Every table the migrations made (later versions add their own), not the runtime's.
      const tables = sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'")
        .toArray();
      for (const { name } of tables) sql.exec(`DROP TABLE IF EXISTS "${name}"`);
      sql.exec(`CREATE TABLE schema_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
      for (const stmt of MIGRATIONS[0]) sql.exec(stmt);
      sql.exec(`INSERT INTO schema_meta VALUES ('version', 1)`);
      sql.exec(`INSERT INTO contacts (row, phone_number, initial_context, status, attempts, queue_key, outcome) VALUES
        (2, '+1', '{}', 'done', 1, 0, 'completed'), (3, '+2', '{}', 'waiting', 1, 0, 'busy'), (4, '+3', '{}', 'queued', 0, 9e15, NULL)`);
      sql.exec(`INSERT INTO attempts (contact_id, attempt, status, dialed_at) VALUES (1, 1, 'completed', 0), (2, 1, 'busy', 0)`);
      const fresh = new CampaignObject(state as DurableObjectState, env);
      await fresh.ready;
      const db = new DoSql(state.storage);
      expect(sql.exec("SELECT v FROM schema_meta").one().v).toBe(SCHEMA_VERSION);
      expect(readCounts(db)).toEqual(recount(db));
      expect(readCounts(db)).toMatchObject({
        total: 3,
        processed: 2,
        completed: 1,
        failed: 0,
        pending: 1,
        awaiting_retry: 1,
        executed: 2,
        queued: 4,
        failed_calls: 1,
      });
      // From here on the triggers keep them: a new attempt and a finished one move the counts.
      sql.exec(`INSERT INTO attempts (contact_id, attempt, status, dialed_at) VALUES (3, 1, 'dialing', 0)`);
      sql.exec(`UPDATE contacts SET status = 'active', attempts = 1 WHERE id = 3`);
      expect(readCounts(db)).toMatchObject({ pending: 0, processed: 3, in_progress: 1, executed: 3 });
      expect(readCounts(db)).toEqual(recount(db));
    });
  });
});
