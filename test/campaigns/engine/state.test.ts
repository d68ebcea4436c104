/// <reference types="vite/client" />
// The campaign's state changes (src/campaigns/engine/state.ts): each trigger of the transition table writes the state
// with the columns that go with it, and no other code writes the state at all.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../../src/campaigns/engine/schema";
import { transition } from "../../../src/campaigns/engine/state";
import { DoSql, migrate } from "../../../src/lib/do-sql";

let n = 0;
/** A blank campaign database (the object is never initialized: no constructor work gets in the way). */
function withDb<T>(fn: (db: DoSql) => T): Promise<T> {
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(`state-test:${++n}:${Date.now()}`));
  return runInDurableObject(stub, (_obj, state) => {
    const db = new DoSql(state.storage);
    migrate(db, MIGRATIONS);
    return fn(db);
  });
}

const seed = (db: DoSql, state: string) =>
  db.run`INSERT INTO campaign (id, campaign_id, org_id, name, workflow_id, telephony_configuration_id, source_id, state, settings, created_at, window_open, blocked)
    VALUES (1, 1, 1, 'c', 1, 1, 's', ${state}, '{}', '2030-01-01T00:00:00.000Z', 1, 'org_cap')`;
const row = (db: DoSql) => db.one`SELECT state, started_at, completed_at, source_error, breaker_since, window_open, blocked, summary_dirty FROM campaign`;
const T = Date.parse("2030-01-07T10:00:00Z");

describe("transition", () => {
  it("start, resume, complete and source_failed write their own columns with the state", async () => {
    await withDb((db) => {
      seed(db, "draft");
      db.run`UPDATE campaign SET summary_dirty = 0`;
      expect(transition(db, "start", T)).toBe("running");
      expect(row(db)).toEqual({
        state: "running",
        started_at: new Date(T).toISOString(),
        completed_at: null,
        source_error: null,
        breaker_since: T,
        window_open: null,
        blocked: null,
        summary_dirty: 1,
      });
      expect(transition(db, "breaker_trip", T + 1)).toBe("paused");
      expect(transition(db, "resume", T + 2)).toBe("running");
      // The breaker's window starts just after the resume; started_at is the first start's.
      expect(row(db)).toMatchObject({ state: "running", started_at: new Date(T).toISOString(), breaker_since: T + 3 });
      expect(transition(db, "complete", T + 4)).toBe("completed");
      expect(row(db)).toMatchObject({ state: "completed", completed_at: new Date(T + 4).toISOString() });
    });
    await withDb((db) => {
      seed(db, "draft");
      expect(transition(db, "source_failed", T, "the file vanished")).toBe("failed");
      expect(row(db)).toMatchObject({ state: "failed", source_error: "the file vanished" });
    });
  });

  it("what the table does not allow is a 409 and writes nothing; before initialize a 404", async () => {
    await withDb((db) => {
      expect(() => transition(db, "start", T)).toThrow("[404] Campaign not found");
      seed(db, "completed");
      db.run`UPDATE campaign SET summary_dirty = 0`;
      expect(() => transition(db, "pause", T)).toThrow("[409] Cannot pause a campaign in state 'completed'");
      expect(() => transition(db, "complete", T)).toThrow("[409] Cannot complete a campaign in state 'completed'");
      expect(row(db)).toMatchObject({ state: "completed", summary_dirty: 0 });
    });
  });
});

describe("one writer of the state", () => {
  // Every source file that runs in the campaign object, as text (bundled by Vite at build time, no file system needed).
  const sources = import.meta.glob("../../../src/campaigns/**/*.ts", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

  it("only engine/state.ts writes campaign.state", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(10);
    const writers = Object.entries(sources)
      .filter(([, text]) => /UPDATE\s+campaign\s+SET\s[^`;]*\bstate\s*=/i.test(text))
      .map(([path]) => path.replace(/^.*src\//, "src/"));
    expect(writers).toEqual(["src/campaigns/engine/state.ts"]);
  });
});
