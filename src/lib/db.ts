import { drizzle } from "drizzle-orm/d1";
import * as schema from "../db/schema";

const build = (db: D1Database) => drizzle(db, { schema });
export type Db = ReturnType<typeof build>;

// One drizzle instance per D1 binding: building one walks the whole schema (its relational config), which cost more
// CPU than a small query's own building. The instance holds no per-request state (D1 has no open transactions), and a
// binding that is gone takes its instance with it.
const instances = new WeakMap<D1Database, Db>();

export function getDb(env: { DB: D1Database }): Db {
  let db = instances.get(env.DB);
  if (!db) {
    db = build(env.DB);
    instances.set(env.DB, db);
  }
  return db;
}

/** True when a D1 error is a UNIQUE constraint failure (name clashes become 409s, not 500s). */
export function isUniqueViolation(err: unknown): boolean {
  const text = String((err as { cause?: unknown })?.cause ?? "") + String((err as Error)?.message ?? "");
  return /UNIQUE constraint failed/i.test(text);
}
