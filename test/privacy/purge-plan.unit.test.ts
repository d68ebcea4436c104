// The purge's decisions: which kinds expire for a run of a given age, the agent's override over the organization's,
// live runs untouched, the stop at the first young run, and the R2 budget that ends a batch for the next tick.
import { describe, expect, it } from "vitest";
import { DAY_MS, effectiveRetention, planPage, purgeDue, PURGE_INTERVAL_MS, type PurgeRow } from "../../src/privacy/purge-plan";
import { lineHasNumber, withoutNumber } from "../../src/privacy/erase-lines";

const NOW = Date.parse("2025-06-01T12:00:00Z");
const row = (id: number, ageDays: number, over: Partial<PurgeRow> = {}): PurgeRow => ({
  id,
  createdAt: new Date(NOW - ageDays * DAY_MS).toISOString(),
  final: true,
  recordingKey: `recordings/1/${id}.pcm`,
  detailsKey: `details/1/${id}.json`,
  hasBulk: true,
  ...over,
});
const policy = { recordings_days: 7, transcripts_days: 30, runs_days: 90 };

describe("purge plan", () => {
  it("each kind goes once its days are past, oldest first, and the scan stops at the first young run", () => {
    const rows = [row(1, 100), row(2, 40), row(3, 10), row(4, 3), row(5, 1)];
    const plan = planPage(rows, policy, NOW, 300, 0, false);
    expect(plan.deleteRuns).toEqual([1]);
    expect(plan.dropDetails).toEqual([2]);
    expect(plan.dropRecordings).toEqual([2, 3]);
    expect(plan.keys.sort()).toEqual(["details/1/1.json", "details/1/2.json", "recordings/1/1.pcm", "recordings/1/2.pcm", "recordings/1/3.pcm"].sort());
    expect(plan.done).toBe(true);
    expect(plan.lastId).toBe(3);
  });

  it("a live run keeps everything, a run with nothing left costs no key, null kinds keep forever", () => {
    const rows = [row(1, 100, { final: false }), row(2, 100, { recordingKey: null, detailsKey: null, hasBulk: false })];
    const plan = planPage(rows, { recordings_days: 7, transcripts_days: 30, runs_days: null }, NOW, 300, 0, true);
    expect(plan).toMatchObject({ deleteRuns: [], dropDetails: [], dropRecordings: [], keys: [], done: true, lastId: 2 });
    const forever = planPage([row(3, 1000)], { recordings_days: null, transcripts_days: null, runs_days: null }, NOW, 300, 0, false);
    expect(forever).toMatchObject({ deleteRuns: [], keys: [], done: true });
  });

  it("legacy bulk columns without a details object still expire", () => {
    const plan = planPage([row(1, 40, { detailsKey: null, recordingKey: null })], policy, NOW, 300, 0, true);
    expect(plan).toMatchObject({ dropDetails: [1], keys: [] });
  });

  it("stops before the run that would pass the R2 budget, to resume after the last run planned", () => {
    const rows = [row(1, 100), row(2, 100), row(3, 100)];
    const plan = planPage(rows, policy, NOW, 5, 0, false);
    expect(plan.deleteRuns).toEqual([1, 2]);
    expect(plan.keys).toHaveLength(4);
    expect(plan).toMatchObject({ done: false, lastId: 2 });
  });

  it("the agent's kinds win, its nulls follow the organization", () => {
    expect(effectiveRetention(policy, { recordings_days: 1, transcripts_days: null, runs_days: null })).toEqual({
      recordings_days: 1,
      transcripts_days: 30,
      runs_days: 90,
    });
  });

  it("an organization is purged when never purged, unfinished, or a day on", () => {
    expect(purgeDue(null, NOW)).toBe(true);
    expect(purgeDue({ at: NOW - 60_000, complete: false }, NOW)).toBe(true);
    expect(purgeDue({ at: NOW - 60_000, complete: true }, NOW)).toBe(false);
    expect(purgeDue({ at: NOW - PURGE_INTERVAL_MS, complete: true }, NOW)).toBe(true);
  });
});

describe("erasing a number from a CSV", () => {
  it("drops the lines whose cells hold the number in any common writing, never the header", () => {
    const csv = "phone_number,first_name\n+14155550123,Ada\n(415) 555-0123,Ada again\n+14155550199,Bob\n0014155550123,Ada abroad";
    const { text, removed } = withoutNumber(csv, "+14155550123");
    expect(removed).toBe(3);
    expect(text).toBe("phone_number,first_name\n+14155550199,Bob");
    expect(lineHasNumber("12,34,5550123", "+14155550123")).toBe(true);
    expect(lineHasNumber("12,34,555012", "+14155550123")).toBe(false);
  });
});
