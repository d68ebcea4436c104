import { drizzle } from "drizzle-orm/d1";
import * as schema from "../db/schema";

export type Db = ReturnType<typeof getDb>;

export function getDb(env: { DB: D1Database }) {
  return drizzle(env.DB, { schema });
}

/** True when a D1 error is a UNIQUE constraint failure (name clashes become 409s, not 500s). */
export function isUniqueViolation(err: unknown): boolean {
  const text = String((err as { cause?: unknown })?.cause ?? "") + String((err as Error)?.message ?? "");
  return /UNIQUE constraint failed/i.test(text);
}
