// Cursor pagination: newest first, `?limit=` 1–100 (default 50), opaque cursor.
import { z } from "@hono/zod-openapi";
import { and, desc, lt, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteSelect } from "drizzle-orm/sqlite-core";
import { base64Decode, base64UrlEncode } from "./crypto";
import { invalid } from "./errors";

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: "Page size (1–100)" }),
  // An empty `cursor=` is a client's mistake (a first page is asked for without one), not the first page.
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "Invalid cursor: the previous page's next_cursor, or no cursor for the first page")
    .optional()
    .openapi({
      description:
        "The previous page's `next_cursor`, unchanged (base64url, no padding); leave it out for the first page. Cursors are opaque but not secret; a value this service did not issue (or an empty one) is a 422 at `query.cursor`.",
      example: "NDI",
    }),
});

export function pageOf<T extends z.ZodTypeAny>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() });
}

/** Decodes a cursor into the id to continue below; a cursor we did not issue is a 422. */
export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  let n = NaN;
  try {
    n = Number(new TextDecoder().decode(base64Decode(cursor)));
  } catch {
    // fall through to the 422 below
  }
  if (!Number.isInteger(n) || n <= 0) throw invalid(["query", "cursor"], "Invalid cursor", "value_error", cursor);
  return n;
}

export function encodeCursor(id: number): string {
  return base64UrlEncode(new TextEncoder().encode(String(id)));
}

/** Given rows fetched with limit + 1 (newest first), returns the page and its next cursor. */
export function toPage<R extends { id: number }, O>(rows: R[], limit: number, map: (r: R) => O) {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { items: page.map(map), next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
}

/**
 * One page of `query`'s rows, newest first by `id`: those matching `where` below the cursor's id (`before`), one more
 * than `limit` so that toPage knows whether another page follows. `query` is a select made `$dynamic()`.
 */
export function newestFirst<Q extends SQLiteSelect>(query: Q, id: SQLiteColumn, before: number | null, limit: number, ...where: (SQL | undefined)[]) {
  return query
    .where(and(...where, before ? lt(id, before) : undefined))
    .orderBy(desc(id))
    .limit(limit + 1);
}
