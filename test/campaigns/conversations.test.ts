// Answered calls with no conversation (issue 39): the final status carries whether the session heard one; a contact
// answered on whose call nobody spoke ends `answered_no_conversation`, counted apart from `completed` (and from
// `failed`), also when the session's word comes after the carrier's final status; the counters' triggers agree with
// a full recount; a redial can pick those contacts.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import type { CampaignCallStatus } from "../../src/calls/campaign/campaign-calls";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { readCounts, recount } from "../../src/campaigns/engine/counts";
import { unwrap } from "../../src/campaigns/errors";
import { DoSql } from "../../src/lib/do-sql";
import { clock } from "../../src/lib/clock";
import { type FakeCarrier, makeCampaign, resetWorld, sqlOf, tick } from "./engine-harness";

const at = () => new Date().toISOString();

describe("answered, no conversation", () => {
  let carrier: FakeCarrier;
  beforeEach(() => {
    carrier = resetWorld();
  });
  afterEach(() => {
    setCallStarter(null);
    clock.set(null);
  });

  it("counts an answered call nobody spoke on apart from a conversation, whichever report comes first", async () => {
    const { id, stub } = await makeCampaign({ contacts: 4, settings: { max_concurrency: 4, rate_limit: 50 }, start: true });
    await tick(stub);
    const [talk, silent, lateSilent, unknown] = carrier.open(id);
    const st = (s: typeof talk, status: CampaignCallStatus["status"], conversation?: boolean | null): CampaignCallStatus => ({
      runId: s.runId,
      contactId: s.req.contactId,
      attempt: s.req.attempt,
      status,
      at: at(),
      ...(conversation === undefined ? {} : { conversation }),
    });
    const first = await stub.onCallStatuses([
      st(talk, "completed", true),
      st(silent, "completed", false),
      // The carrier's final status first, with nothing known of the conversation yet.
      st(lateSilent, "completed"),
      st(unknown, "completed", null),
    ]);
    expect(first.map((r) => r.applied)).toEqual([true, true, true, true]);
    let k = unwrap(await stub.progress());
    expect(k).toMatchObject({ completed: 3, answered_no_conversation: 1, failed: 0 });

    // The session's own final status follows with what it heard: the closed attempt's contact is corrected, once.
    const late = await stub.onCallStatuses([st(lateSilent, "completed", false), st(lateSilent, "completed", true), st(talk, "completed", false)]);
    expect(late.map((r) => r.applied)).toEqual([true, false, false]);
    k = unwrap(await stub.progress());
    expect(k).toMatchObject({ total: 4, completed: 2, answered_no_conversation: 2, failed: 0, pending: 0, in_progress: 0, retry_waiting: 0 });
    expect(k.pending + k.retry_waiting + k.in_progress + k.completed + k.answered_no_conversation + k.failed).toBe(k.total);

    const rows = unwrap(await stub.contacts(0, 10)).items;
    const outcome = (s: typeof talk) => rows.find((r) => r.id === s.req.contactId)?.outcome;
    expect([outcome(talk), outcome(silent), outcome(lateSilent), outcome(unknown)]).toEqual([
      "completed",
      "answered_no_conversation",
      "answered_no_conversation",
      "completed",
    ]);
    // Each attempt keeps the call's own status and what the session heard.
    const attempts = await sqlOf<{ contact_id: number; status: string; conversation: number | null }>(
      stub,
      "SELECT contact_id, status, conversation FROM attempts ORDER BY contact_id",
    );
    expect(attempts.map((a) => [a.status, a.conversation])).toEqual([
      ["completed", 1],
      ["completed", 0],
      ["completed", 0],
      ["completed", null],
    ]);
    // The trigger-kept counters equal a full scan; the campaign completed (nobody silent is dialed again).
    await runInDurableObject(stub, (_i, state) => {
      const db = new DoSql(state.storage);
      expect(readCounts(db)).toEqual(recount(db));
    });
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
    // A redial can take exactly the silent ones.
    expect(unwrap(await stub.redialPlan(["answered_no_conversation"])).count).toBe(2);
  });

  it("a conversation flag with a status that is not an answer changes nothing", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { max_concurrency: 1 }, start: true });
    await tick(stub);
    const [a] = carrier.open(id);
    const ref = { runId: a.runId, contactId: a.req.contactId, attempt: a.req.attempt };
    await stub.onCallStatuses([{ ...ref, status: "busy", at: at(), conversation: false }]);
    expect(unwrap(await stub.progress())).toMatchObject({ answered_no_conversation: 0 });
    expect((await stub.onCallStatuses([{ ...ref, status: "busy", at: at(), conversation: false }]))[0].applied).toBe(false);
    expect(unwrap(await stub.contacts(0, 1)).items[0].outcome).not.toBe("answered_no_conversation");
  });
});
