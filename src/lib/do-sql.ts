// A Durable Object's SQLite (`ctx.storage.sql`) through tagged templates, shared by every object. Each `${value}`
// becomes a bound parameter at the place it is written, so a placeholder can never drift from its value; a literal
// `?` in the text is refused for the same reason. Rows come back typed. Also the objects' versioned migrations.
// ArrayBuffer: a BLOB (a call's recording buffered for a restart).
export type SqlValue = string | number | null | ArrayBuffer;
export type Row = Record<string, SqlValue>;

/** A piece of SQL with its bound values; interpolated into a query, its text and values are spliced in place. */
export class SqlFragment {
  constructor(
    readonly text: string,
    readonly values: readonly SqlValue[],
  ) {}
}

export type SqlPart = SqlValue | SqlFragment;

/** A template's text with a `?` per value, checked once per call site (templates are the same object each time). */
const plainText = new WeakMap<TemplateStringsArray, string>();

function checked(strings: TemplateStringsArray): string {
  let text = plainText.get(strings);
  if (text === undefined) {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows a value's place as it is written, ${}
    if (strings.some((s) => s.includes("?"))) throw new Error(`do-sql: write values as \${...}, not '?' (in: ${strings.join("${}")})`);
    text = strings.join("?");
    plainText.set(strings, text);
  }
  return text;
}

/** Builds a fragment to reuse in queries: `sql\`status = ${status}\``. */
export function sql(strings: TemplateStringsArray, ...parts: SqlPart[]): SqlFragment {
  const text = checked(strings);
  if (!parts.some((p) => p instanceof SqlFragment)) return new SqlFragment(text, parts as SqlValue[]);
  let spliced = strings[0];
  const values: SqlValue[] = [];
  parts.forEach((p, i) => {
    if (p instanceof SqlFragment) {
      spliced += p.text;
      values.push(...p.values);
    } else {
      spliced += "?";
      values.push(p);
    }
    spliced += strings[i + 1];
  });
  return new SqlFragment(spliced, values);
}

/** SQL text the code assembles from its own constants (generated expressions); never anything from input. */
export function fixedSql(text: string): SqlFragment {
  if (text.includes("?")) throw new Error("do-sql: fixed SQL takes no values");
  return new SqlFragment(text, []);
}

/** One object's database. Every query method is a tag: `db.all<Row>\`SELECT * FROM t WHERE id = ${id}\``. */
export class DoSql {
  constructor(private readonly storage: DurableObjectStorage) {}

  private exec<T extends Row>(strings: TemplateStringsArray, parts: SqlPart[]): SqlStorageCursor<T> {
    const q = sql(strings, ...parts);
    return this.storage.sql.exec<T>(q.text, ...q.values);
  }

  /** Every row. */
  all<T extends Row = Row>(strings: TemplateStringsArray, ...parts: SqlPart[]): T[] {
    return this.exec<T>(strings, parts).toArray();
  }

  /** The first row, or null. */
  one<T extends Row = Row>(strings: TemplateStringsArray, ...parts: SqlPart[]): T | null {
    const it = this.exec<T>(strings, parts).next();
    return it.done ? null : it.value;
  }

  /** The first column of the first row (a count, a max), or null when there is no row. */
  value<T extends SqlValue>(strings: TemplateStringsArray, ...parts: SqlPart[]): T | null {
    const it = this.exec(strings, parts).raw().next();
    return it.done ? null : ((it.value[0] as T | null) ?? null);
  }

  /** A write; returns whether it wrote anything (index and trigger writes included, so not a row count). */
  run(strings: TemplateStringsArray, ...parts: SqlPart[]): number {
    return this.exec(strings, parts).rowsWritten;
  }

  /** A write; returns exactly how many rows it changed. */
  changes(strings: TemplateStringsArray, ...parts: SqlPart[]): number {
    if (this.exec(strings, parts).rowsWritten === 0) return 0;
    return this.storage.sql.exec<{ n: number }>("SELECT changes() AS n").one().n;
  }

  /** A setting in the object's `kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)` table, or null. */
  getKv(k: string): string | null {
    return this.value<string>`SELECT v FROM kv WHERE k = ${k}`;
  }

  /** Sets a setting in the object's `kv` table. */
  putKv(k: string, v: string | number): void {
    this.run`INSERT INTO kv (k, v) VALUES (${k}, ${String(v)}) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;
  }

  /** Runs `fn` atomically: all of its writes commit together or none do. */
  tx<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }

  /** A schema statement with no values (migrations); never for anything built from input. */
  ddl(statement: string): void {
    this.storage.sql.exec(statement);
  }
}

/** One schema version: the statements that lead to it from the version before. Never edited once shipped. */
export type Migration = readonly string[];

/**
 * Brings the schema to `migrations.length`, each version in its own transaction; returns the version it found.
 * The version is kept in `schema_meta` (the campaign object's table since its first version).
 */
export function migrate(db: DoSql, migrations: readonly Migration[]): number {
  db.ddl(`CREATE TABLE IF NOT EXISTS schema_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
  const from = db.value<number>`SELECT v FROM schema_meta WHERE k = 'version'` ?? 0;
  for (let v = from; v < migrations.length; v++) {
    db.tx(() => {
      for (const statement of migrations[v]) db.ddl(statement);
      db.run`INSERT INTO schema_meta (k, v) VALUES ('version', ${v + 1}) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;
    });
  }
  return from;
}

/**
 * The constructor's start: migrations, then `then` (loading state, recovery), before the object takes any request
 * or alarm. The returned promise settles when both are done.
 */
export function migrateOnStart(ctx: DurableObjectState, db: DoSql, migrations: readonly Migration[], then?: () => void | Promise<void>): Promise<void> {
  return ctx.blockConcurrencyWhile(async () => {
    migrate(db, migrations);
    await then?.();
  });
}
