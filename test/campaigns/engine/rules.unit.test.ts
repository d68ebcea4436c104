// The engine's pure rules: what a round's lease answers make of its picks, and what a call status does to its attempt.
import { describe, expect, it } from "vitest";
import type { AttemptRow } from "../../../src/campaigns/engine/attempts";
import { judge } from "../../../src/campaigns/engine/call-statuses";
import { leaseIdFor, sortAnswers } from "../../../src/campaigns/engine/round";
import type { LeaseResult } from "../../../src/organizations/leases";

const picks = [1, 2, 3, 4].map((id) => ({ id, attempts: 0, phone_number: `+1415555000${id}` }));
const ids = picks.map((p) => leaseIdFor(9, p.id, 1));
const granted: LeaseResult = { granted: true, inUse: 1, cap: 10 };

describe("a round's lease answers", () => {
  it("dial what was granted while room and pace last; the rest of the grants go back unused", () => {
    const r = sortAnswers(picks, [granted, granted, granted, granted], ids, { go: true, room: 2, budget: 5 });
    expect(r.chosen).toEqual([
      { contactId: 1, leaseId: "campaign:9:1:1" },
      { contactId: 2, leaseId: "campaign:9:2:1" },
    ]);
    expect(r.unused).toEqual([ids[2], ids[3]]);
    expect(r.refused).toBeNull();
  });

  it("a campaign that stopped meanwhile dials nothing; a rule's skip and the organization's refusal are told apart", () => {
    const skip: LeaseResult = { granted: false, inUse: 0, cap: 10, skip: "suppressed" };
    const full: LeaseResult = { granted: false, inUse: 10, cap: 10, retryAfterSeconds: 3 };
    const r = sortAnswers(picks, [granted, skip, full, granted], ids, { go: false, room: 5, budget: 5 });
    expect(r.chosen).toEqual([]);
    expect(r.unused).toEqual([ids[0], ids[3]]);
    expect(r.skipped).toEqual([{ contact: picks[1], lease: skip }]);
    expect(r.refused).toBe(full);
  });
});

const attempt = (a: Partial<AttemptRow>): AttemptRow => ({
  id: 1,
  contact_id: 1,
  attempt: 1,
  status: "in_flight",
  last_status: null,
  run_id: 7,
  provider_call_id: null,
  lease_id: null,
  dialed_at: 0,
  ended_at: null,
  failure: 0,
  error: null,
  ...a,
});
const status = (s: string, runId: number | null = 7) => ({ runId, contactId: 1, attempt: 1, status: s, at: "" }) as Parameters<typeof judge>[1];

describe("a call status", () => {
  it("ends an open attempt once; a final attempt takes nothing more", () => {
    expect(judge(attempt({}), status("completed"))).toEqual({ kind: "final" });
    expect(judge(attempt({ status: "busy" }), status("completed"))).toEqual({ kind: "none" });
  });

  it("moves progress forward only, and is news while the attempt has not learned its run", () => {
    expect(judge(attempt({ last_status: "initiated" }), status("ringing"))).toEqual({ kind: "progress", rank: 2, prev: 1 });
    expect(judge(attempt({ last_status: "ringing" }), status("initiated"))).toEqual({ kind: "none" });
    expect(judge(attempt({ last_status: "ringing", run_id: null }), status("initiated"))).toEqual({ kind: "progress", rank: 1, prev: 2 });
  });

  it("of another run, or of an attempt the campaign does not know, changes nothing", () => {
    expect(judge(attempt({}), status("completed", 8))).toEqual({ kind: "unknown" });
    expect(judge(undefined, status("completed"))).toEqual({ kind: "unknown" });
    expect(judge(attempt({ run_id: null }), status("completed", 8))).toEqual({ kind: "final" });
  });
});
