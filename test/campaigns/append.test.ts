// POST /campaign/{id}/contacts over HTTP: a second CSV added to a campaign, checked as create checks it, staged in
// the campaign's object and committed all at once. New contacts of a running campaign are dialed; numbers already
// there are skipped and reported; a file that fails anywhere adds nothing; a batch left behind by a dead request is
// never dialed and is dropped.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendLimits } from "../../src/campaigns/engine/staged";
import { packContacts } from "../../src/campaigns/engine/packed";
import { nextState, refusal } from "../../src/campaigns/engine/transitions";
import { clock } from "../../src/lib/clock";
import { call, createOrg } from "../helpers";
import { type FakeCarrier, advance, campaignStub, errorOf, resetWorld, sqlOf, tick } from "./engine-harness";
import { CAMPAIGNS, createWorkflow, definition, goodCsv, phone, setupOrg, upload } from "./support";
import { unwrap } from "../../src/campaigns/errors";

const limits = { ...appendLimits };
let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});
afterEach(() => {
  Object.assign(appendLimits, limits);
  clock.set(null);
});

type W = Awaited<ReturnType<typeof setupOrg>> & { key: string; agent: number };

/** An organization with a ready (ari) configuration, its policy allowing US numbers, and an agent using {{first_name}}. */
async function setup(): Promise<W> {
  const o = await setupOrg();
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: o.org.key, body: { allowed_countries: ["US"] } });
  expect(policy.status, policy.text).toBe(200);
  return { ...o, key: o.org.key, agent: await createWorkflow(o.org, definition()) };
}

/** A campaign created over HTTP from `csv` (retries off, so each contact is dialed once). */
async function create(w: W, csv: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await call("POST", `${CAMPAIGNS}/create`, {
    key: w.key,
    body: {
      name: "append test",
      workflow_id: w.agent,
      source_url: await upload(w.org, csv),
      max_concurrency: 10,
      rate_limit: 50,
      retry_config: { enabled: false },
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.id;
}

/** Starts the campaign over HTTP. */
async function start(w: W, id: number) {
  expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: w.key })).status).toBe(200);
}

/** A new organization's campaign of `rows` contacts, started, its first round dispatched. */
async function running(rows: number) {
  const w = await setup();
  const id = await create(w, goodCsv(rows));
  await start(w, id);
  const stub = campaignStub(id);
  await tick(stub);
  return { w, id, stub };
}

const append = async (w: W, id: number, csv: string, headers: Record<string, string> = {}) =>
  call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: { source_url: await upload(w.org, csv) }, headers });

async function progress(w: W, id: number) {
  const res = await call("GET", `${CAMPAIGNS}/${id}/progress`, { key: w.key });
  expect(res.status, res.text).toBe(200);
  const p = res.json;
  // The counts add up at every moment.
  expect(p.pending + p.retry_waiting + p.in_progress + p.completed + p.answered_no_conversation + p.failed, JSON.stringify(p)).toBe(p.total);
  return p;
}

const staged = (id: number) => sqlOf<{ n: number }>(campaignStub(id), "SELECT count(*) AS n FROM staged_contacts").then((r) => r[0].n);
const logEvents = async (w: W, id: number) =>
  (await call("GET", `${CAMPAIGNS}/${id}/logs?limit=100`, { key: w.key })).json.items as { event: string; details: Record<string, unknown> }[];

describe("appending contacts to a campaign", () => {
  it("adds a second file to a running campaign: new numbers are dialed to completion, known ones skipped and reported", async () => {
    const { w, id, stub } = await running(3);
    const first = carrier.open(id);
    expect(first).toHaveLength(3);
    await carrier.report(first[0], "completed");
    await tick(stub); // the dispatch that status asked for has run: only the append can wake it now

    // Rows 2 and 4 repeat numbers of the first file; rows 3, 5 and 6 are new.
    const csv = ["phone_number,first_name", `${phone(1)},Again`, `${phone(10)},Ten`, `${phone(2)},Again`, `${phone(11)},Eleven`, `${phone(12)},Twelve`].join(
      "\n",
    );
    const res = await append(w, id, csv);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({
      campaign_id: id,
      state: "running",
      added: 3,
      skipped_existing: 2,
      skipped_examples: [
        { row: 2, phone_number: phone(1) },
        { row: 4, phone_number: phone(2) },
      ],
      file_rows: 5,
      total_rows: 6,
    });
    expect(await progress(w, id)).toMatchObject({ total: 6, pending: 3, in_progress: 2, completed: 1 });

    // The running campaign dials them without being told, under its own settings.
    await tick(stub);
    const second = carrier.open(id).filter((s) => !first.some((f) => f.runId === s.runId));
    expect(second.map((s) => s.req.phoneNumber).sort()).toEqual([phone(10), phone(11), phone(12)]);
    expect(second.find((s) => s.req.phoneNumber === phone(11))!.req.initialContext).toEqual({ first_name: "Eleven" });
    expect(await progress(w, id)).toMatchObject({ total: 6, pending: 0, in_progress: 5, completed: 1 });
    for (const s of carrier.open(id)) {
      await carrier.report(s, "completed");
      await progress(w, id);
    }
    const done = await progress(w, id);
    expect(done).toMatchObject({ state: "completed", total: 6, completed: 6, processed: 6, pending: 0 });
    // Each number once: the skipped rows never made a second contact or a second call.
    for (const i of [0, 1, 2, 10, 11, 12]) expect(carrier.dialsOf(id, phone(i)), phone(i)).toHaveLength(1);

    const log = (await logEvents(w, id)).find((l) => l.event === "contacts_appended");
    expect(log?.details).toMatchObject({ added: 3, skipped_existing: 2, total: 6 });
    const campaign = await call("GET", `${CAMPAIGNS}/${id}`, { key: w.key });
    expect(campaign.json).toMatchObject({ state: "completed", total_rows: 6 });
    const audit = await call("GET", "/api/v1/organizations/audit-log", { key: w.key });
    expect(audit.json.items[0]).toMatchObject({
      action: "add_contacts",
      resource_type: "campaign",
      resource_id: id,
      summary: { added: 3, skipped_existing: 2 },
    });

    // A completed campaign takes no more contacts.
    const late = await append(w, id, goodCsv(1, 50));
    expect(late.status).toBe(409);
    expect(late.json).toEqual({ detail: "Cannot add contacts to a campaign in state 'completed'" });
  });

  it("a bad row anywhere in the file is a located 422 and adds nothing, even after earlier chunks were staged", async () => {
    const { w, id, stub } = await running(2);
    const before = await progress(w, id);

    // 30,000 rows: the first 25,000 reach the object as a chunk before the bad row is read.
    const rows = goodCsv(30_000, 100).trimEnd().split("\n");
    const bad = 29_001;
    rows[bad - 1] = "not-a-number,Bad";
    const res = await append(w, id, rows.join("\n"));
    expect(res.status, res.text.slice(0, 500)).toBe(422);
    expect(res.json.detail).toHaveLength(1);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "source_url", bad, "phone_number"], type: "phone_number_invalid", input: "not-a-number" });
    expect(await progress(w, id)).toEqual(before);
    expect(await staged(id)).toBe(0);
    await tick(stub);
    expect(carrier.started.filter((s) => s.req.campaignId === id)).toHaveLength(2);

    // A number twice in the new file is a duplicate, as at create; nothing is added either.
    const dup = await append(w, id, ["phone_number,first_name", `${phone(200)},A`, `${phone(201)},B`, `${phone(200)},C`].join("\n"));
    expect(dup.status).toBe(422);
    expect(dup.json.detail).toEqual([
      expect.objectContaining({ loc: ["body", "source_url", 4, "phone_number"], type: "phone_number_duplicate", ctx: { first_row: 2, total_errors: 1 } }),
    ]);
    expect((await progress(w, id)).total).toBe(2);
    expect(await staged(id)).toBe(0);
  });

  it("checks the agent's template variables, the file's owner and the body like create", async () => {
    const w = await setup();
    const id = await create(w, goodCsv(2));
    const missing = await append(w, id, `phone_number,last_name\n${phone(5)},Lovelace\n`);
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([expect.objectContaining({ loc: ["body", "source_url", 1, "first_name"], type: "missing_template_variable" })]);

    const other = await createOrg();
    const theirs = await upload(other, goodCsv(1, 7));
    const foreign = await call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: { source_url: theirs } });
    expect(foreign.status).toBe(422);
    expect(foreign.json.detail[0]).toMatchObject({ loc: ["body", "source_url"], type: "file_not_found" });

    const none = await call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: {} });
    expect(none.status).toBe(422);
    expect(none.json.detail[0]).toMatchObject({ loc: ["body", "source_url"], type: "missing" });
    const extra = await call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: { source_url: "x", nope: 1 } });
    expect(extra.status).toBe(422);
    expect(extra.json.detail[0]).toMatchObject({ loc: ["body", "nope"], type: "extra_forbidden" });

    // `source_id` is accepted as the alias; the campaign (a draft) now has the new contact.
    const alias = await call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: { source_id: await upload(w.org, goodCsv(1, 9)) } });
    expect(alias.status, alias.text).toBe(200);
    expect(alias.json).toMatchObject({ state: "draft", added: 1, total_rows: 3 });
    expect((await progress(w, id)).total).toBe(3);
  });

  it("refuses other organizations (404) and the states that take no contacts (409)", async () => {
    const w = await setup();
    const id = await create(w, goodCsv(2));
    const stranger = await createOrg();
    const theirs = await call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: stranger.key, body: { source_url: await upload(stranger, goodCsv(1, 5)) } });
    expect([theirs.status, theirs.json]).toEqual([404, { detail: "Campaign not found" }]);
    const unknown = await call("POST", `${CAMPAIGNS}/999999999/contacts`, { key: w.key, body: { source_url: await upload(w.org, goodCsv(1, 5)) } });
    expect(unknown.status).toBe(404);

    // The table: draft, running and paused take contacts; nothing else does.
    for (const s of ["importing", "completed", "cancelled", "failed"] as const) {
      expect(nextState(s, "append")).toBeNull();
      expect(refusal(s, "append")).toBe(`Cannot add contacts to a campaign in state '${s}'`);
    }
    for (const s of ["draft", "running", "paused"] as const) expect(nextState(s, "append")).toBe(s);

    expect((await call("POST", `${CAMPAIGNS}/${id}/cancel`, { key: w.key })).status).toBe(200);
    const cancelled = await append(w, id, goodCsv(1, 5));
    expect([cancelled.status, cancelled.json]).toEqual([409, { detail: "Cannot add contacts to a campaign in state 'cancelled'" }]);

    // While a background import is still running (the clock is pinned: its alarm waits for the test).
    const bg = await create(w, goodCsv(5, 20), { import: "background" });
    expect((await call("GET", `${CAMPAIGNS}/${bg}`, { key: w.key })).json.state).toBe("importing");
    const importing = await append(w, bg, goodCsv(1, 5));
    expect([importing.status, importing.json]).toEqual([409, { detail: "Cannot add contacts to a campaign in state 'importing'" }]);
    // And the object itself refuses, whatever the route saw.
    expect(await errorOf(campaignStub(bg).beginAppend(w.org.id))).toBe("[409] Cannot add contacts to a campaign in state 'importing'");
    expect(await errorOf(campaignStub(id).beginAppend(stranger.id))).toBe("[404] Campaign not found");
  });

  it("a paused campaign keeps new contacts until it resumes; Idempotency-Key replays the first answer", async () => {
    const { w, id, stub } = await running(1);
    expect((await call("POST", `${CAMPAIGNS}/${id}/pause`, { key: w.key })).status).toBe(200);

    const key = await upload(w.org, goodCsv(2, 30));
    const send = () => call("POST", `${CAMPAIGNS}/${id}/contacts`, { key: w.key, body: { source_url: key }, headers: { "Idempotency-Key": "append-1" } });
    const first = await send();
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({ state: "paused", added: 2, skipped_existing: 0, total_rows: 3 });
    const again = await send();
    expect(again.json).toEqual(first.json); // replayed, not appended a second time (that would answer added: 0)
    expect(await progress(w, id)).toMatchObject({ total: 3, pending: 2, in_progress: 1 });
    // Listings read the D1 summary row: it follows the new total at once.
    const row = await env.DB.prepare("SELECT state, total_rows FROM campaigns WHERE id = ?").bind(id).first();
    expect(row).toEqual({ state: "paused", total_rows: 3 });

    await tick(stub);
    expect(carrier.dialsOf(id, phone(30))).toHaveLength(0);
    expect((await call("POST", `${CAMPAIGNS}/${id}/resume`, { key: w.key })).status).toBe(200);
    await tick(stub);
    expect(carrier.dialsOf(id, phone(30))).toHaveLength(1);
    expect(carrier.dialsOf(id, phone(31))).toHaveLength(1);
  });

  it("a running campaign whose last call ends during an append waits for it instead of completing under it", async () => {
    const { w, id, stub } = await running(1);
    const chunk = [{ row: 2, phone_number: phone(70), initial_context: { first_name: "Late" }, greeting_override: null }];

    // The file is being read (opened and partly staged) when the campaign's only call ends.
    const { token } = unwrap(await stub.beginAppend(w.org.id)) as { token: string };
    await stub.stageAppend(token, packContacts(chunk));
    await carrier.report(carrier.open(id)[0], "completed");
    await tick(stub);
    expect(await progress(w, id)).toMatchObject({ state: "running", total: 1, completed: 1 });
    // The commit adds the contact, and the campaign dials it and then completes.
    expect(unwrap(await stub.commitAppend(token, "second.csv"))).toMatchObject({ added: 1, state: "running", total_rows: 2 });
    await tick(stub);
    expect(carrier.dialsOf(id, phone(70))).toHaveLength(1);
    await carrier.report(carrier.open(id)[0], "completed");
    expect(await progress(w, id)).toMatchObject({ state: "completed", total: 2, completed: 2 });

    // A discarded append lets a held completion happen at once.
    const id2 = await create(w, goodCsv(1, 80));
    const stub2 = campaignStub(id2);
    await start(w, id2);
    await tick(stub2);
    const second = unwrap(await stub2.beginAppend(w.org.id)) as { token: string };
    await carrier.report(carrier.open(id2)[0], "completed");
    expect((await progress(w, id2)).state).toBe("running");
    expect(await stub2.discardAppend(second.token)).toEqual({ discarded: true });
    expect((await progress(w, id2)).state).toBe("completed");

    // So does an abandoned one, when its timer drops it.
    const id3 = await create(w, goodCsv(1, 90));
    const stub3 = campaignStub(id3);
    await start(w, id3);
    await tick(stub3);
    await stub3.beginAppend(w.org.id);
    await carrier.report(carrier.open(id3)[0], "completed");
    expect((await progress(w, id3)).state).toBe("running");
    await advance(appendLimits.staleMs, stub3);
    expect(await progress(w, id3)).toMatchObject({ state: "completed", total: 1 });
  });

  it("stops at the campaign's row limit, counting only new numbers", async () => {
    appendLimits.maxRows = 5;
    const w = await setup();
    const id = await create(w, goodCsv(3));
    // One known number and three new ones: the third new one (row 5) would be contact 6.
    const over = await append(w, id, goodCsv(4, 2));
    expect(over.status).toBe(422);
    expect(over.json.detail).toEqual([
      expect.objectContaining({ loc: ["body", "source_url", 5], type: "csv_too_many_rows", ctx: { max_rows: 5, existing: 3, total_errors: 1 } }),
    ]);
    expect((await progress(w, id)).total).toBe(3);
    const fits = await append(w, id, goodCsv(3, 2));
    expect(fits.status, fits.text).toBe(200);
    expect(fits.json).toMatchObject({ added: 2, skipped_existing: 1, total_rows: 5 });
  });

  it("a batch abandoned midway is never dialed, blocks no one for long, and is dropped by its timer", async () => {
    const { w, id, stub } = await running(1);
    const before = await progress(w, id);

    // A Worker that staged part of a file and died: its batch is opened and filled but never committed.
    const { token } = unwrap(await stub.beginAppend(w.org.id)) as { token: string };
    const chunk = Array.from({ length: 3 }, (_, i) => ({
      row: i + 2,
      phone_number: phone(40 + i),
      initial_context: { first_name: "X" },
      greeting_override: null,
    }));
    expect(unwrap(await stub.stageAppend(token, packContacts(chunk)))).toMatchObject({ inserted: 3, duplicates: [] });
    expect(await staged(id)).toBe(3);
    await tick(stub);
    expect(await progress(w, id)).toEqual(before);
    for (let i = 40; i < 43; i++) expect(carrier.dialsOf(id, phone(i))).toHaveLength(0);

    // Another append meanwhile is told to wait rather than mixing its rows into the live batch.
    const busy = await append(w, id, goodCsv(1, 60));
    expect(busy.status).toBe(409);
    expect(busy.json.detail).toMatch(/Another file is being added/);

    // Idle past the limit: the timer drops the batch, logged; its token commits nothing.
    await advance(appendLimits.staleMs, stub);
    expect(await staged(id)).toBe(0);
    expect((await logEvents(w, id)).some((l) => l.event === "contacts_append_abandoned" && l.details.staged_rows === 3)).toBe(true);
    expect(await errorOf(stub.commitAppend(token, "x"))).toMatch(/^\[409\] This append was abandoned/);
    expect(await progress(w, id)).toMatchObject({ total: before.total, pending: before.pending });
    for (let i = 40; i < 43; i++) expect(carrier.dialsOf(id, phone(i))).toHaveLength(0);

    // A batch gone stale without its timer having run yet is dropped by the next append, which goes through.
    const second = unwrap(await stub.beginAppend(w.org.id)) as { token: string };
    await stub.stageAppend(second.token, packContacts(chunk));
    clock.set(clock.now() + appendLimits.staleMs);
    const next = await append(w, id, goodCsv(1, 60));
    expect(next.status, next.text).toBe(200);
    expect(next.json).toMatchObject({ added: 1, total_rows: before.total + 1 });
    expect(await staged(id)).toBe(0);
    await tick(stub);
    expect(carrier.dialsOf(id, phone(60))).toHaveLength(1);
    for (let i = 40; i < 43; i++) expect(carrier.dialsOf(id, phone(i))).toHaveLength(0);
  });
});
