// The simulator's state in its Durable Object's SQLite, so an evicted or restarted simulator answers as before (the
// local runtime evicts an idle object after ~10 s; a demo or a test on a busy machine outlives that). The carriers
// keep working on plain objects in memory; after each request the object writes back what changed, found by
// comparing each record's JSON with what was last written (cheap next to a request, and nothing to forget to mark).
// Recorded requests are appended as they come. What cannot be kept: open sockets (ARI's events, media streams) and
// timers in flight (a sandbox call about to be answered); a restarted simulator has none of them.
import { base64ToBytes, pcm16FromBytes } from "../../lib/audio/pcm";
import { type DoSql, type Migration, migrate } from "../../lib/do-sql";
import type { Account, Fault, RecordedRequest, SimCall } from "./types";

const MIGRATIONS: readonly Migration[] = [
  [
    "CREATE TABLE accounts (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
    // A call under each key the carriers find it by; a second key of the same call holds `@<first key>`.
    "CREATE TABLE calls (k TEXT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE requests (seq INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE INDEX requests_account ON requests (account, seq)",
    "CREATE TABLE faults (account TEXT PRIMARY KEY, body TEXT NOT NULL)",
    // The callee's lines (base64 16-bit PCM at 8 kHz), written once when given: too big to compare on every request.
    "CREATE TABLE callee_lines (account TEXT PRIMARY KEY, body TEXT NOT NULL)",
  ],
];

/** A signing key as JSON (Telnyx's Ed25519 private key, Vonage's RSA public key). */
type StoredKey = { $key: { jwk: JsonWebKey; name: string; hash?: string; usages: string[] } };

export type SimMemory = { accounts: Map<string, Account>; calls: Map<string, SimCall>; faults: Map<string, Fault[]> };

export class SimStore {
  private readonly written = { accounts: new Map<string, string>(), calls: new Map<string, string>(), faults: new Map<string, string>() };
  /** Keys exported once, when their account is created (export is async; writing back is not). */
  private readonly keys = new WeakMap<CryptoKey, StoredKey>();

  constructor(private readonly db: DoSql) {}

  /** Brings the schema up and reads everything back into memory. */
  async load(): Promise<SimMemory> {
    migrate(this.db, MIGRATIONS);
    const accounts = new Map<string, Account>();
    const lines = new Map(this.db.all<{ account: string; body: string }>`SELECT account, body FROM callee_lines`.map((r) => [r.account, r.body]));
    for (const { id, body } of this.db.all<{ id: string; body: string }>`SELECT id, body FROM accounts`) {
      const account = JSON.parse(body) as Account;
      for (const [k, v] of Object.entries(account.secret)) if (isStoredKey(v)) account.secret[k] = await this.importKey(v);
      const kept = lines.get(id);
      if (kept) account.calleeLines = decodeLines(JSON.parse(kept));
      accounts.set(id, account);
      this.written.accounts.set(id, body);
    }
    const calls = new Map<string, SimCall>();
    const rows = this.db.all<{ k: string; body: string }>`SELECT k, body FROM calls`;
    for (const { k, body } of rows) if (!body.startsWith("@")) calls.set(k, JSON.parse(body) as SimCall);
    for (const { k, body } of rows) {
      const first = body.startsWith("@") ? calls.get(body.slice(1)) : undefined;
      if (first) calls.set(k, first);
      this.written.calls.set(k, body);
    }
    const faults = new Map<string, Fault[]>();
    for (const { account, body } of this.db.all<{ account: string; body: string }>`SELECT account, body FROM faults`) {
      faults.set(account, JSON.parse(body) as Fault[]);
      this.written.faults.set(account, body);
    }
    return { accounts, calls, faults };
  }

  /** Exports an account's signing keys, so `save` can write it (call before the account is put in memory). */
  async prepare(account: Account): Promise<void> {
    for (const v of Object.values(account.secret)) {
      if (!(v instanceof CryptoKey) || this.keys.has(v)) continue;
      const alg = v.algorithm as { name: string; hash?: { name: string } };
      const jwk = (await crypto.subtle.exportKey("jwk", v)) as JsonWebKey;
      this.keys.set(v, { $key: { jwk, name: alg.name, hash: alg.hash?.name, usages: [...v.usages] } });
    }
  }

  /** Keeps the callee's lines of an account (as the control API received them, base64). */
  putLines(accountId: string, lines: string[]): void {
    this.db.run`INSERT INTO callee_lines (account, body) VALUES (${accountId}, ${JSON.stringify(lines)})
      ON CONFLICT (account) DO UPDATE SET body = excluded.body`;
  }

  /** The callee's lines kept for an account, or undefined. */
  lines(accountId: string): Int16Array[] | undefined {
    const body = this.db.value<string>`SELECT body FROM callee_lines WHERE account = ${accountId}`;
    return body ? decodeLines(JSON.parse(body)) : undefined;
  }

  record(accountId: string, req: RecordedRequest): void {
    this.db.run`INSERT INTO requests (account, body) VALUES (${accountId}, ${JSON.stringify(req)})`;
  }

  requests(accountId: string): RecordedRequest[] {
    return this.db.all<{ body: string }>`SELECT body FROM requests WHERE account = ${accountId} ORDER BY seq`.map((r) => JSON.parse(r.body));
  }

  /** Writes back every record whose JSON changed since it was last written, in one transaction. */
  save(mem: SimMemory): void {
    this.db.tx(() => {
      for (const [id, account] of mem.accounts) {
        const body = JSON.stringify(account, (k, v) => (k === "calleeLines" ? undefined : v instanceof CryptoKey ? this.keyJson(v) : v));
        if (this.written.accounts.get(id) === body) continue;
        this.db.run`INSERT INTO accounts (id, body) VALUES (${id}, ${body}) ON CONFLICT (id) DO UPDATE SET body = excluded.body`;
        this.written.accounts.set(id, body);
      }
      const firstKey = new Map<SimCall, string>();
      for (const [k, call] of mem.calls) {
        const first = firstKey.get(call);
        if (first === undefined) firstKey.set(call, k);
        const body = first === undefined ? JSON.stringify(call) : `@${first}`;
        if (this.written.calls.get(k) === body) continue;
        this.db.run`INSERT INTO calls (k, body) VALUES (${k}, ${body}) ON CONFLICT (k) DO UPDATE SET body = excluded.body`;
        this.written.calls.set(k, body);
      }
      for (const [account, list] of mem.faults) {
        const body = JSON.stringify(list);
        if (this.written.faults.get(account) === body) continue;
        this.db.run`INSERT INTO faults (account, body) VALUES (${account}, ${body}) ON CONFLICT (account) DO UPDATE SET body = excluded.body`;
        this.written.faults.set(account, body);
      }
    });
  }

  private keyJson(key: CryptoKey): StoredKey {
    const stored = this.keys.get(key);
    if (!stored) throw new Error("simulator store: a signing key was not prepared before its account was saved");
    return stored;
  }

  private async importKey({ $key: k }: StoredKey): Promise<CryptoKey> {
    const algorithm = k.hash ? { name: k.name, hash: k.hash } : { name: k.name };
    const key = await crypto.subtle.importKey("jwk", k.jwk, algorithm, true, k.usages);
    this.keys.set(key, { $key: k });
    return key;
  }
}

const isStoredKey = (v: unknown): v is StoredKey => typeof v === "object" && v !== null && "$key" in v;

const decodeLines = (lines: string[]) => lines.map((b64) => pcm16FromBytes(base64ToBytes(b64)));
