// Test and benchmark support: rows written, counted where they happen. D1: every statement's meta.rows_written (rows
// plus index entries, what D1 bills) and meta.changes (table rows), summed at the binding's session layer, so writes
// made by Durable Objects in this isolate count too. A Durable Object's SQLite: each cursor's rowsWritten.
export type D1Tally = {
  rowsWritten: number;
  changes: number;
  /** Each write (the first 10,000) with its parameters, to name it in messages and tell a test's own writes from
   *  another file's background work. */
  writeLog: { written: number; changes: number; sql: string; params: unknown[] }[];
  /** Every statement run (reads too), what D1's per-query limits and throughput count. */
  statements: number;
  /** Statements that wrote a row (rows_written > 0). */
  writeStatements: number;
  rowsRead: number;
  /** The database's size in bytes after the latest statement (meta.size_after), what D1's 10 GB limit counts. */
  sizeAfter: number;
};

/** Every D1 write in this isolate since countD1Writes(); `writeLog` names each statement that wrote. */
export const d1Tally: D1Tally = { rowsWritten: 0, changes: 0, writeLog: [], statements: 0, writeStatements: 0, rowsRead: 0, sizeAfter: 0 };

type Meta = { rows_written?: number; rows_read?: number; changes?: number; size_after?: number };
type Result = { meta?: Meta } | undefined;

function add(results: Result | Result[], sql: unknown, params: unknown): void {
  const list = Array.isArray(results) ? results : [results];
  const texts = Array.isArray(sql) ? sql : [sql];
  // One statement's parameters are a list of values; a batch's, a list of such lists.
  const paramLists = Array.isArray(sql) ? (params as unknown[][]) : [params as unknown[]];
  list.forEach((r, i) => {
    d1Tally.statements++;
    d1Tally.rowsRead += r?.meta?.rows_read ?? 0;
    if (r?.meta?.size_after) d1Tally.sizeAfter = r.meta.size_after;
    const written = r?.meta?.rows_written ?? 0;
    if (!written) return;
    d1Tally.writeStatements++;
    d1Tally.rowsWritten += written;
    d1Tally.changes += r?.meta?.changes ?? 0;
    if (d1Tally.writeLog.length >= 10_000) return;
    d1Tally.writeLog.push({ written, changes: r?.meta?.changes ?? 0, sql: String(texts[i] ?? texts[0]), params: paramLists[i] ?? [] });
  });
}

let installed = false;

/**
 * Counts every D1 write from now on. It wraps the binding's own session methods (`_send`, `_queryOrThrow`: every
 * statement, batch and raw() read passes through one of them); it throws if this runtime's binding has neither.
 */
export function countD1Writes(db: D1Database): void {
  if (installed) return;
  let proto = Object.getPrototypeOf((db as any).alwaysPrimarySession ?? {});
  while (proto && !Object.hasOwn(proto, "_send")) proto = Object.getPrototypeOf(proto);
  if (!proto || typeof proto._queryOrThrow !== "function") throw new Error("rows-written: the D1 binding has no _send/_queryOrThrow to count at");
  const send = proto._send;
  const query = proto._queryOrThrow;
  proto._send = async function (this: unknown, endpoint: string, sql: unknown, params: unknown, ...rest: unknown[]) {
    const r = await send.call(this, endpoint, sql, params, ...rest);
    add(r, sql, params);
    return r;
  };
  proto._queryOrThrow = async function (this: unknown, req: { queries?: { sql: string; params?: unknown[] }[] }, ...rest: unknown[]) {
    const r = await query.call(this, req, ...rest);
    add(
      r,
      (req?.queries ?? []).map((q) => q.sql),
      (req?.queries ?? []).map((q) => q.params ?? []),
    );
    return r;
  };
  installed = true;
}

/** A Durable Object's SQLite rows written (cursor.rowsWritten, index and trigger writes included). */
export class SqlRowTally {
  rows = 0;
  /** Statements run (each is a cursor: a runtime object the isolate's garbage collector tracks until a major collection). */
  statements = 0;
  // Read when the next statement runs (or at total()): a cursor's rowsWritten is complete once it was consumed.
  private last: SqlStorageCursor<Record<string, SqlStorageValue>> | null = null;

  total(): number {
    this.settle();
    return this.rows;
  }

  private settle(): void {
    if (this.last) this.rows += this.last.rowsWritten;
    this.last = null;
  }

  /**
   * `storage` with `sql.exec` counted; everything else is the real thing. (The runtime refuses a stand-in for the
   * whole state in an object's constructor, so an object's SQL helper is handed this storage instead.)
   */
  wrap(storage: DurableObjectStorage): DurableObjectStorage {
    const sql = new Proxy(storage.sql, {
      get: (target, prop) => {
        if (prop === "exec")
          return (query: string, ...bindings: unknown[]) => {
            this.settle();
            this.statements++;
            const cursor = target.exec(query, ...bindings);
            this.last = cursor;
            return cursor;
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    return new Proxy(storage, {
      get: (target, prop) => {
        if (prop === "sql") return sql;
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }
}
