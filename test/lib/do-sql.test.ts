// The Durable Objects' SQL helper (src/lib/do-sql.ts), on a real object's SQLite in workerd. Any object serves as
// the host: the tables here are the test's own.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DoSql, migrate, migrateOnStart, sql, type Migration } from "../../src/lib/do-sql";

let n = 0;
/** A fresh object's storage for `fn`. */
function withStorage<T>(fn: (db: DoSql, state: DurableObjectState) => T | Promise<T>): Promise<T> {
  const stub = env.ORGANIZATION.get(env.ORGANIZATION.idFromName(`do-sql-test:${++n}:${Date.now()}`));
  return runInDurableObject(stub, (_obj, state) => fn(new DoSql(state.storage), state));
}

describe("tagged queries", () => {
  it("binds each value where it is written, and a value is data even when it reads as SQL", async () => {
    await withStorage((db) => {
      db.ddl(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, note TEXT)`);
      const evil = "x'); DROP TABLE t; --";
      db.run`INSERT INTO t (id, name, score, note) VALUES (${1}, ${evil}, ${2.5}, ${null})`;
      db.run`INSERT INTO t (id, name, score, note) VALUES (${2}, ${"b"}, ${7}, ${"n"})`;
      expect(db.all<{ id: number; name: string; score: number; note: string | null }>`SELECT * FROM t ORDER BY id`).toEqual([
        { id: 1, name: evil, score: 2.5, note: null },
        { id: 2, name: "b", score: 7, note: "n" },
      ]);
      // The same value used twice is bound twice (no numbered placeholders to keep in step).
      const min: number | null = null;
      expect(db.all`SELECT id FROM t WHERE (${min} IS NULL OR id > ${min}) ORDER BY id`).toEqual([{ id: 1 }, { id: 2 }]);
    });
  });

  it("one, value, run and changes", async () => {
    await withStorage((db) => {
      db.ddl(`CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`);
      db.ddl(`CREATE INDEX t_v ON t (v)`);
      expect(db.one`SELECT * FROM t WHERE id = ${1}`).toBeNull();
      expect(db.value<number>`SELECT max(v) FROM t`).toBeNull();
      expect(db.value<number>`SELECT v FROM t WHERE id = ${1}`).toBeNull();
      for (const id of [1, 2, 3]) db.run`INSERT INTO t (id, v) VALUES (${id}, ${id * 10})`;
      expect(db.one<{ id: number; v: number }>`SELECT * FROM t WHERE id = ${2}`).toEqual({ id: 2, v: 20 });
      expect(db.value<number>`SELECT count(*) FROM t`).toBe(3);
      // run reports whether anything was written (the index counts too); changes counts rows exactly.
      expect(db.run`UPDATE t SET v = v + 1 WHERE id = ${99}`).toBe(0);
      expect(db.run`UPDATE t SET v = v + 1 WHERE id = ${1}`).toBeGreaterThan(0);
      expect(db.changes`UPDATE t SET v = v + 1 WHERE id >= ${2}`).toBe(2);
      expect(db.changes`DELETE FROM t WHERE id = ${99}`).toBe(0);
    });
  });

  it("fragments splice their text and values in order", async () => {
    await withStorage((db) => {
      db.ddl(`CREATE TABLE t (id INTEGER PRIMARY KEY, status TEXT NOT NULL)`);
      db.run`INSERT INTO t (id, status) VALUES (${1}, ${"a"}), (${2}, ${"b"}), (${3}, ${"c"})`;
      const open = sql`status IN (${"a"}, ${"b"})`;
      expect(open.values).toEqual(["a", "b"]);
      expect(db.all`SELECT id FROM t WHERE id >= ${1} AND ${open} AND id <= ${2} ORDER BY id`).toEqual([{ id: 1 }, { id: 2 }]);
      expect(db.value<number>`SELECT count(*) FROM t WHERE ${sql`${open} OR id = ${3}`}`).toBe(3);
      // A fragment without values is fixed SQL text.
      expect(db.value<number>`SELECT count(*) FROM t WHERE ${sql`status = 'c'`}`).toBe(1);
    });
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test's name quotes the tag's syntax
  it("refuses a literal '?' in the text: values are only ever written as ${...}", async () => {
    await withStorage((db) => {
      db.ddl(`CREATE TABLE t (id INTEGER PRIMARY KEY)`);
      expect(() => db.all`SELECT * FROM t WHERE id = ?`).toThrow(/not '\?'/);
      expect(() => sql`id = ?`).toThrow(/not '\?'/);
    });
  });

  it("tx commits all or nothing", async () => {
    await withStorage((db) => {
      db.ddl(`CREATE TABLE t (id INTEGER PRIMARY KEY)`);
      const ok = db.tx(() => {
        db.run`INSERT INTO t (id) VALUES (${1})`;
        return "ok";
      });
      expect(ok).toBe("ok");
      expect(() =>
        db.tx(() => {
          db.run`INSERT INTO t (id) VALUES (${2})`;
          throw new Error("boom");
        }),
      ).toThrow("boom");
      expect(db.all`SELECT id FROM t`).toEqual([{ id: 1 }]);
    });
  });
});

describe("migrations", () => {
  /** The host object's storage with no version recorded (its own tables are not in the way: the names differ). */
  const blank = (db: DoSql) => db.ddl(`DROP TABLE IF EXISTS schema_meta`);
  const v1: Migration = [`CREATE TABLE a (id INTEGER PRIMARY KEY)`];
  const v2: Migration = [`ALTER TABLE a ADD COLUMN note TEXT`, `CREATE TABLE b (id INTEGER PRIMARY KEY)`];
  const version = (db: DoSql) => db.value<number>`SELECT v FROM schema_meta WHERE k = 'version'`;

  it("runs each version once, in order, and records the newest", async () => {
    await withStorage((db) => {
      blank(db);
      expect(migrate(db, [v1])).toBe(0);
      expect(version(db)).toBe(1);
      expect(migrate(db, [v1])).toBe(1); // nothing left to run (v1 again would fail: the table exists)
      expect(migrate(db, [v1, v2])).toBe(1);
      expect(version(db)).toBe(2);
      db.run`INSERT INTO a (id, note) VALUES (${1}, ${"x"})`;
      expect(db.value<number>`SELECT count(*) FROM b`).toBe(0);
    });
  });

  it("a failing version is rolled back whole and the version stays where it was", async () => {
    await withStorage((db) => {
      blank(db);
      migrate(db, [v1]);
      const broken: Migration = [`CREATE TABLE c (id INTEGER PRIMARY KEY)`, `ALTER TABLE missing ADD COLUMN x TEXT`];
      expect(() => migrate(db, [v1, broken])).toThrow();
      expect(version(db)).toBe(1);
      expect(db.one`SELECT name FROM sqlite_master WHERE name = 'c'`).toBeNull();
      expect(migrate(db, [v1, v2])).toBe(1);
      expect(version(db)).toBe(2);
    });
  });

  it("migrateOnStart migrates, then runs the object's own start, before it settles", async () => {
    await withStorage(async (db, state) => {
      blank(db);
      const seen: (number | null)[] = [];
      await migrateOnStart(state, db, [v1, v2], () => {
        seen.push(version(db));
      });
      expect(seen).toEqual([2]);
    });
  });
});

describe("the objects' schemas", () => {
  it("an organization object from before versions adopts v1 and keeps its cap and rate-limit overrides", async () => {
    const { OrganizationObject } = await import("../../src/organizations/organization-object");
    const stub = env.ORGANIZATION.get(env.ORGANIZATION.idFromName(`do-sql-legacy-org:${Date.now()}`));
    const usage = await runInDurableObject(stub, async (_obj, state) => {
      const sql = state.storage.sql;
      for (const t of ["leases", "waiters", "settings", "rate_limit_overrides", "suppressions", "dials", "schema_meta"]) sql.exec(`DROP TABLE IF EXISTS ${t}`);
      // The tables exactly as the unversioned object created them, with some state in them.
      sql.exec(`CREATE TABLE leases (lease_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`);
      sql.exec(`CREATE TABLE waiters (campaign_id INTEGER PRIMARY KEY, since INTEGER NOT NULL)`);
      sql.exec(`CREATE TABLE settings (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
      sql.exec(`CREATE TABLE rate_limit_overrides (name TEXT PRIMARY KEY, rate REAL NOT NULL, burst INTEGER NOT NULL)`);
      sql.exec(`INSERT INTO settings VALUES ('cap', 3)`);
      sql.exec(`INSERT INTO leases VALUES ('held', ?)`, Date.now() + 3_600_000);
      const fresh = new OrganizationObject(state as DurableObjectState, env);
      await state.blockConcurrencyWhile(async () => {});
      // v1 adopted, then the later versions applied.
      expect(sql.exec("SELECT v FROM schema_meta WHERE k = 'version'").one().v).toBe(2);
      return fresh.usage();
    });
    expect(usage).toEqual({ inUse: 1, cap: 3 });
  });

  it("an ARI events object from before versions adopts v1, migrates on, and keeps its tracked calls and failure count", async () => {
    const { AriEventsObject } = await import("../../src/calls/ari/ari-events");
    const stub = env.ARI_EVENTS.get(env.ARI_EVENTS.idFromName(`do-sql-legacy-ari:${Date.now()}`));
    const status = await runInDurableObject(stub, async (_obj, state) => {
      const sql = state.storage.sql;
      for (const t of ["calls", "kv", "schema_meta"]) sql.exec(`DROP TABLE IF EXISTS ${t}`);
      sql.exec(
        `CREATE TABLE calls (run_id INTEGER PRIMARY KEY, answered INTEGER NOT NULL DEFAULT 0, hung_up_by_us INTEGER NOT NULL DEFAULT 0, dial_status TEXT, tracked_at INTEGER NOT NULL)`,
      );
      sql.exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`);
      sql.exec(`INSERT INTO calls (run_id, tracked_at) VALUES (7, ?)`, Date.now());
      sql.exec(`INSERT INTO kv VALUES ('failures', '2')`);
      const fresh = new AriEventsObject(state as DurableObjectState, env);
      await state.blockConcurrencyWhile(async () => {});
      // Adopted as v1, then migrated to the newest version (v2 adds the map of incoming channels to runs).
      expect(sql.exec("SELECT v FROM schema_meta WHERE k = 'version'").one().v).toBe(2);
      return fresh.status();
    });
    expect(status).toEqual({ connected: false, inFlight: 1, failures: 2, listening: false });
  });
});
