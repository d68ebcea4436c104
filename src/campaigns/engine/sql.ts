// A small typed layer over a Durable Object's SQLite (`ctx.storage.sql`): rows come back typed, writes report counts.
export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

export class Sql {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Every row of a query. */
  all<T extends Row>(query: string, ...binds: SqlValue[]): T[] {
    return this.sql.exec<T>(query, ...binds).toArray();
  }

  /** The first row, or null. */
  one<T extends Row>(query: string, ...binds: SqlValue[]): T | null {
    const it = this.sql.exec<T>(query, ...binds).next();
    return it.done ? null : (it.value as T);
  }

  /** The first column of the first row (e.g. a count), or `fallback` when there is no row or it is NULL. */
  value<T extends SqlValue>(query: string, fallback: T, ...binds: SqlValue[]): T {
    const it = this.sql.exec(query, ...binds).raw().next();
    const v = it.done ? null : (it.value[0] as T | null);
    return v ?? fallback;
  }

  /** A write; returns whether it wrote anything (index and trigger writes included, so not a row count). */
  run(query: string, ...binds: SqlValue[]): number {
    return this.sql.exec(query, ...binds).rowsWritten;
  }

  /** A write; returns exactly how many rows it changed. */
  changes(query: string, ...binds: SqlValue[]): number {
    if (this.sql.exec(query, ...binds).rowsWritten === 0) return 0;
    return this.sql.exec("SELECT changes() AS n").one().n as number;
  }

  /** Runs `fn` atomically: all of its writes commit together or none do. */
  tx<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }
}
