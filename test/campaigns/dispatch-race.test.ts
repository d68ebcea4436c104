// Two dispatch rounds racing on one contact. The object runs one dispatch loop at a time, so this race needs two
// rounds at once (an old and a new instance across a reset, or a broken guard): the rounds are started directly in
// the object, and the organization's answers to their lease requests are held and let go in an order the test
// chooses (through the engine's lease-client seam; the organization object itself answers). Before an attempt is
// recorded, the round checks again that (1) the contact is still queued and (2) the lease it holds names the
// contact's next attempt. Each case below needs one of the two: the other cannot cover for it there.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { leaseIdFor } from "../../src/campaigns/engine/round";
import { setLeaseClient } from "../../src/campaigns/engine/leases";
import { clock } from "../../src/lib/clock";
import type { LeaseRequest, LeaseResult } from "../../src/organizations/leases";
import { organizationStub } from "../../src/organizations/organization-object";
import { type CampaignStub, type FakeCarrier, makeCampaign, orgStub, phone, resetWorld, sqlOf } from "./engine-harness";

/**
 * Waits for `cond` by polling on the test's own timers, failing after `ms`. (A promise the object resolves is not
 * awaited here: its continuation would run in the object's context, and the test's I/O after it would be refused.)
 */
async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A gate opened from inside the campaign's object (so what it releases carries on in the object's own context). */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => {
    open = r;
  });
  return { p, open };
}

/** One held lease request: `send` lets it reach the organization object, `deliver` hands the answer to the round. */
type Held = { reqs: LeaseRequest[]; answer: LeaseResult[] | null; send: () => void; deliver: () => void };

let carrier: FakeCarrier;
let held: Held[] = [];
let holding = 0; // how many of the next acquireMany calls are held

beforeEach(() => {
  carrier = resetWorld();
  held = [];
  holding = 0;
  setLeaseClient((e, orgId) => {
    const org = organizationStub(e, orgId);
    return {
      acquire: (r) => org.acquire(r),
      acquireMany: async (reqs, release) => {
        if (holding <= 0) return org.acquireMany(reqs, release);
        holding--;
        const [send, deliver] = [gate(), gate()];
        const h: Held = { reqs, answer: null, send: send.open, deliver: deliver.open };
        held.push(h);
        // The object itself sends the request (its stub) once let go, and waits for the test to deliver the answer.
        await send.p;
        h.answer = await org.acquireMany(reqs, release);
        await deliver.p;
        return h.answer;
      },
      release: (id, undial) => org.release(id, undial),
      releaseMany: (ids, undial) => org.releaseMany(ids, undial),
    };
  });
});
afterEach(() => setLeaseClient(null));

type Round = { done: boolean; error: unknown };
type Race = { stub: CampaignStub; a: Round; b: Round; starts: Set<Promise<void>> };

/** Two dispatch rounds started together in the object, their lease requests held; returns once both are held. */
async function raceTwoRounds(stub: CampaignStub): Promise<Race> {
  holding = 2;
  const race: Race = { stub, a: { done: false, error: null }, b: { done: false, error: null }, starts: new Set() };
  await runInDurableObject(stub, (instance) => {
    const { dispatch } = instance as unknown as { dispatch: { round(mine: Set<Promise<void>>): Promise<boolean> } };
    for (const r of [race.a, race.b])
      dispatch.round(race.starts).then(
        () => void Object.assign(r, { done: true }),
        (err) => void Object.assign(r, { done: true, error: err }),
      );
  });
  await until(() => held.length === 2, "both rounds to ask for leases");
  return race;
}

/** Lets held request `i` reach the organization object; returns its answer. */
async function send(race: Race, i: number): Promise<LeaseResult[]> {
  await runInDurableObject(race.stub, () => held[i].send());
  await until(() => held[i].answer !== null, `the answer to request ${i}`);
  return held[i].answer!;
}

/** Hands held request `i`'s answer to its round, and waits for the round and the starts it made. */
async function deliver(race: Race, i: number): Promise<void> {
  await runInDurableObject(race.stub, () => held[i].deliver());
  const round = i === 0 ? race.a : race.b;
  await until(() => round.done && race.starts.size === 0, `round ${i} and its starts`);
  expect(round.error).toBeNull();
}

const leasesAsked = (h: Held) => h.reqs.map((r) => r.leaseId);

describe("two dispatch rounds racing on one contact", () => {
  it("both pick the contact and both get its lease; it is dialed once", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { rate_limit: 50, max_concurrency: 5 }, start: true });
    const r = await raceTwoRounds(stub);
    const lease = leaseIdFor(id, 1, 1);
    expect(held.map(leasesAsked)).toEqual([[lease], [lease]]);
    expect((await send(r, 0))[0]).toMatchObject({ granted: true });
    expect((await send(r, 1))[0]).toMatchObject({ granted: true });
    await deliver(r, 0);
    await deliver(r, 1);
    expect(carrier.dialsOf(id, phone(0)).map((s) => [s.req.attempt, s.req.leaseId])).toEqual([[1, lease]]);
    expect(await sqlOf(stub, "SELECT attempt, status, lease_id FROM attempts")).toEqual([{ attempt: 1, status: "in_flight", lease_id: lease }]);
  });

  it("a contact that left the queue meanwhile is not dialed, though its lease still names its next attempt (the queued check)", async () => {
    // Contact 0 is on the organization's do-not-call list when the first round asks, and off it when the second asks:
    // the first round ends it as `suppressed` (no attempt used), the second is granted a lease for attempt 1, which
    // is still the contact's next attempt. Only the check that the contact is still queued stops the dial.
    const { id, orgId, stub } = await makeCampaign({ contacts: 2, settings: { rate_limit: 50, max_concurrency: 1 }, start: true });
    await orgStub(orgId).suppress([{ number: phone(0), reason: null }], "test");
    const r = await raceTwoRounds(stub);
    const lease = leaseIdFor(id, 1, 1);
    expect(held.map(leasesAsked)).toEqual([[lease], [lease]]);

    expect((await send(r, 0))[0]).toMatchObject({ granted: false, skip: "suppressed" });
    await deliver(r, 0);
    expect(await sqlOf(stub, "SELECT status, attempts, outcome FROM contacts WHERE id = 1")).toEqual([{ status: "done", attempts: 0, outcome: "suppressed" }]);

    await orgStub(orgId).unsuppress(phone(0));
    expect((await send(r, 1))[0]).toMatchObject({ granted: true });
    await deliver(r, 1);

    expect(carrier.dialsOf(id, phone(0))).toEqual([]);
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM attempts")).toEqual([{ n: 0 }]);
    expect(await sqlOf(stub, "SELECT status, attempts, outcome FROM contacts WHERE id = 1")).toEqual([{ status: "done", attempts: 0, outcome: "suppressed" }]);
    // The unused lease went back.
    expect((await orgStub(orgId).usage()).inUse).toBe(0);
  });

  it("a contact queued again for its next attempt is not dialed under the old attempt's lease (the lease check)", async () => {
    // The first round dials attempt 1; it ends busy, the retry delay passes and the contact is queued again for
    // attempt 2. Then the second round's answer arrives: the contact is queued, but its lease is attempt 1's, already
    // given back. Only the check that the lease names the next attempt stops a call that holds no slot.
    const retry = { enabled: true, max_retries: 2, retry_delay_seconds: 60, retry_on_busy: true };
    const { id, orgId, stub } = await makeCampaign({ contacts: 1, settings: { rate_limit: 50, max_concurrency: 1, retry_config: retry }, start: true });
    const r = await raceTwoRounds(stub);
    const [lease1, lease2] = [leaseIdFor(id, 1, 1), leaseIdFor(id, 1, 2)];

    expect((await send(r, 0))[0]).toMatchObject({ granted: true });
    await deliver(r, 0);
    expect(carrier.dialsOf(id, phone(0)).map((s) => s.req.leaseId)).toEqual([lease1]);
    expect((await send(r, 1))[0]).toMatchObject({ granted: true }); // attempt 1's lease, still held: a refresh

    await carrier.report(carrier.open(id)[0], "busy");
    expect((await orgStub(orgId).usage()).inUse).toBe(0);
    // The retry comes due while the campaign is paused (no round of the alarm's own), then it runs again.
    await stub.pause();
    clock.set(clock.now() + 61_000);
    await runDurableObjectAlarm(stub);
    expect(await sqlOf(stub, "SELECT status, attempts FROM contacts")).toEqual([{ status: "queued", attempts: 1 }]);
    await stub.resume();

    await deliver(r, 1);
    expect(carrier.dialsOf(id, phone(0))).toHaveLength(1);

    // The retry is dialed by the next round, under its own attempt's lease, which the organization counts.
    await runDurableObjectAlarm(stub);
    const dials = carrier.dialsOf(id, phone(0));
    expect(dials.map((s) => [s.req.attempt, s.req.leaseId])).toEqual([
      [1, lease1],
      [2, lease2],
    ]);
    expect(await sqlOf(stub, "SELECT attempt, lease_id FROM attempts ORDER BY attempt")).toEqual([
      { attempt: 1, lease_id: lease1 },
      { attempt: 2, lease_id: lease2 },
    ]);
    expect((await orgStub(orgId).usage()).inUse).toBe(1);
  });
});
