// Test support: the Worker's fetch with env.DB wrapped to count D1 round trips (each first/all/run/raw of a statement,
// each batch and exec is one trip to the database; prepare and bind are not).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { app } from "../src/app";

export type Counted = { status: number; json: any; text: string; trips: number; sql: string[] };

function countingDb(db: D1Database, record: (sql: string) => void): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        if (prop === "bind") return (...args: unknown[]) => wrap(v.apply(target, args), sql);
        if (["first", "all", "run", "raw"].includes(prop as string)) {
          return (...args: unknown[]) => {
            record(sql);
            return v.apply(target, args);
          };
        }
        return v.bind(target);
      },
    });
    real.set(proxy, stmt);
    return proxy;
  };
  return new Proxy(db, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          record(`batch of ${stmts.length}`);
          return target.batch(stmts.map((s) => real.get(s) ?? s));
        };
      }
      if (prop === "exec") {
        return (sql: string) => {
          record(sql);
          return target.exec(sql);
        };
      }
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

// One counting binding for every call, as a Worker keeps one env.DB: what the isolate keeps per binding (the drizzle
// instance, health's last good check) carries over from call to call as it would in production.
let log: string[] = [];
const counting = countingDb(env.DB, (sql) => log.push(sql));

/** One request through the app with a counting D1; waits for work left running after the response. */
export async function countedCall(method: string, path: string, key?: string, overrides: Partial<Env> = {}, body?: unknown): Promise<Counted> {
  const headers: Record<string, string> = key ? { "X-API-Key": key } : {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  return countedFetch(new Request(`http://edgedial.test${path}`, init), overrides);
}

/** countedCall for a request built elsewhere (a carrier's signed callback, as the simulator made it). */
export async function countedFetch(request: Request, overrides: Partial<Env> = {}): Promise<Counted> {
  const sql: string[] = [];
  log = sql;
  const ctx = createExecutionContext();
  const res = await app.fetch(request, { ...env, ...overrides, DB: counting }, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  const json = /json/.test(res.headers.get("Content-Type") ?? "") && text ? JSON.parse(text) : undefined;
  return { status: res.status, json, text, trips: sql.length, sql };
}
