// A campaign's contacts linked to their calls: each attempt's run, the voice agent's disposition counted once per
// attempt and logged, and the campaign's voicemail_action handed to every call it starts.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { resetWorld, tick } from "./engine-harness";
import { seedCampaign, setupOrg } from "./support";

describe("campaign contacts and their runs", () => {
  it("lists contacts with their attempts' runs; dispositions are counted once per attempt, logged, and shown on progress", async () => {
    const carrier = resetWorld();
    const o = await setupOrg();
    const { id, stub } = await seedCampaign(o, { n: 3 });
    await stub.updateSettings({ voicemail_action: "leave_message" });
    await stub.start();
    await tick(stub);
    const started = carrier.open(id);
    expect(started).toHaveLength(3);
    // Every call the campaign starts carries its voicemail setting.
    expect(started.map((s) => s.req.voicemailAction)).toEqual(["leave_message", "leave_message", "leave_message"]);

    const [first, second] = started;
    await carrier.report(first, "completed");
    await carrier.report(second, "voicemail");
    const outcome = { runId: first.runId, contactId: first.req.contactId, attempt: first.req.attempt, disposition: "interested" };
    expect(await stub.onRunOutcome(outcome)).toEqual({ applied: true });
    // A repeat, another run's report for the same attempt and an unknown attempt change nothing.
    expect(await stub.onRunOutcome(outcome)).toEqual({ applied: false });
    expect(await stub.onRunOutcome({ ...outcome, runId: first.runId + 100, disposition: "not_interested" })).toEqual({ applied: false });
    expect(await stub.onRunOutcome({ ...outcome, contactId: 999 })).toEqual({ applied: false });
    // Before the carrier's final status (the session may save first): counted all the same.
    const third = started[2];
    expect(await stub.onRunOutcome({ runId: third.runId, contactId: third.req.contactId, attempt: 1, disposition: "interested" })).toEqual({ applied: true });

    const progress = await call("GET", `/api/v1/campaign/${id}/progress`, { key: o.org.key });
    expect(progress.json.dispositions).toEqual({ interested: 2 });
    const logs = await call("GET", `/api/v1/campaign/${id}/logs?limit=100`, { key: o.org.key });
    const logged = logs.json.items.filter((l: any) => l.event === "call_disposition");
    expect(logged.map((l: any) => [l.details.run_id, l.details.disposition])).toEqual([
      [third.runId, "interested"],
      [first.runId, "interested"],
    ]);

    const page1 = await call("GET", `/api/v1/campaign/${id}/contacts?limit=2`, { key: o.org.key });
    expect(page1.status, page1.text).toBe(200);
    expect(page1.json.items).toEqual([
      {
        id: first.req.contactId,
        row: 2,
        phone_number: first.req.phoneNumber,
        status: "done",
        attempts: 1,
        outcome: "completed",
        disposition: "interested",
        runs: [{ attempt: 1, run_id: first.runId, status: "completed", disposition: "interested" }],
      },
      {
        id: second.req.contactId,
        row: 3,
        phone_number: second.req.phoneNumber,
        status: "done",
        attempts: 1,
        outcome: "voicemail",
        disposition: null,
        runs: [{ attempt: 1, run_id: second.runId, status: "voicemail", disposition: null }],
      },
    ]);
    const page2 = await call("GET", `/api/v1/campaign/${id}/contacts?limit=2&cursor=${page1.json.next_cursor}`, { key: o.org.key });
    expect(page2.json.items.map((c: any) => [c.row, c.status, c.runs[0].status, c.disposition])).toEqual([[4, "in_progress", "in_flight", "interested"]]);
    expect(page2.json.next_cursor).toBeNull();

    // Another organization sees none of it.
    const other = await setupOrg();
    expect((await call("GET", `/api/v1/campaign/${id}/contacts`, { key: other.org.key })).status).toBe(404);
    // The counts live in the object's own table, one row per code.
    const rows = await runInDurableObject(stub, (_o, state) => state.storage.sql.exec("SELECT code, n FROM dispositions").toArray());
    expect(rows).toEqual([{ code: "interested", n: 2 }]);
  });
});
