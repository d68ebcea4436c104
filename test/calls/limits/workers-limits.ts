// Workers' outbound limits, enforced in the test pool (the local runtime enforces none of them) and counted per call
// session. What Cloudflare documents (https://developers.cloudflare.com/workers/platform/limits/):
// - an invocation may have six connections waiting for response headers at once; a seventh is not refused but queued
//   until one of them has its headers. fetch() (a WebSocket upgrade too), R2, Queues and connect() open connections.
// - subrequests: 50 per invocation on Workers Free, 10,000 on Workers Paid (the default; configurable): fetch() and
//   requests to Cloudflare services (R2, KV, D1, Durable Objects, ...). Over the limit the call throws.
// A Durable Object shares one I/O context across its concurrent requests, so a session's connections are counted
// together; its subrequests are counted over the whole call, an upper bound whichever event the platform charges
// each to (it tops an object's limits up on each incoming request and WebSocket message).
//
// Attribution: every method of CallSession runs in an async scope naming its object (AsyncLocalStorage follows
// awaits, timers and promise reactions), so whatever a session starts, however deep (an engine's fetch, the run's
// D1 writes, the carrier's hang-up), is counted for that session; the rest of the Worker passes through uncounted.
import { AsyncLocalStorage } from "node:async_hooks";
import { env } from "cloudflare:workers";
import { CallSessionCore as CallSession } from "../../../src/calls/session/call-session";

export const WORKERS_LIMITS = { connections: 6, subrequests: 10_000 } as const;

export type Kind = "fetch" | "websocket" | "d1" | "r2" | "queue" | "ai" | "durable-object";
/** The kinds the platform counts as connections (D1 and Durable Object calls are subrequests only). */
const CONNECTING: ReadonlySet<Kind> = new Set(["fetch", "websocket", "r2", "queue", "ai"]);

type Waiter = { grant(): void; what: string };

/** One session's use of the limits, and their enforcement. */
export class Ledger {
  /** Connections waiting for their response headers now, and at most at once. */
  waiting = 0;
  peakWaiting = 0;
  /** Connections whose response is still open (a body being read, a WebSocket up): informative, not a limit. */
  open = 0;
  peakOpen = 0;
  /** Requests that had to wait for a connection slot (what the platform would delay). */
  readonly queued: { what: string; atMs: number }[] = [];
  subrequests = 0;
  readonly byKind: Partial<Record<Kind, number>> = {};
  /** Each subrequest: its URL, or the binding and method. */
  readonly requests: string[] = [];
  firstAtMs: number | null = null;
  lastAtMs: number | null = null;
  private readonly queue: Waiter[] = [];

  constructor(
    readonly label: string,
    /** Lowered by a test proving a limit bites on the session's own path. */
    public limits: { connections: number; subrequests: number } = WORKERS_LIMITS,
  ) {}

  /** Counts one subrequest; over the limit it throws, as the runtime does. */
  subrequest(kind: Kind, what: string): void {
    if (this.subrequests >= this.limits.subrequests) {
      throw new Error(`Too many subrequests by single Worker invocation (limit ${this.limits.subrequests}, session ${this.label})`);
    }
    this.subrequests++;
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
    this.requests.push(what);
    const now = Date.now();
    this.firstAtMs ??= now;
    this.lastAtMs = now;
  }

  /** Runs `start` once a connection slot is free; the slot is held until it settles (the response headers). */
  async connection<T>(what: string, start: () => Promise<T>, signal?: AbortSignal | null): Promise<T> {
    await this.slot(what, signal);
    try {
      return await start();
    } finally {
      this.headersIn();
    }
  }

  /** An open response: counted until `close` is called (once). */
  opened(): () => void {
    this.open++;
    this.peakOpen = Math.max(this.peakOpen, this.open);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.open--;
    };
  }

  private slot(what: string, signal?: AbortSignal | null): Promise<void> {
    signal?.throwIfAborted();
    if (this.waiting < this.limits.connections) {
      this.waiting++;
      this.peakWaiting = Math.max(this.peakWaiting, this.waiting);
      return Promise.resolve();
    }
    this.queued.push({ what, atMs: Date.now() });
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        what,
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** Headers arrived (or the attempt failed): the slot goes to the first one queued, else it is free. */
  private headersIn(): void {
    const next = this.queue.shift();
    if (next) next.grant();
    else this.waiting--;
  }

  /** The line the closing note quotes. */
  summary(callSeconds: number): string {
    const kinds = Object.entries(this.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    return (
      `session peak: ${this.peakWaiting} connections waiting for headers (${this.peakOpen} open at once), ` +
      `${this.subrequests} subrequests (${kinds}) in a ${Math.round(callSeconds)} s call; ${this.queued.length} queued, ` +
      `${this.open} left open`
    );
  }
}

const scope = new AsyncLocalStorage<Ledger>();
const ledgers = new Map<string, Ledger>();

/** The ledger of the session whose Durable Object id is `id` (a stub's `id.toString()`), created on first use. */
export function ledgerOf(id: string): Ledger {
  let l = ledgers.get(id);
  if (!l) {
    l = new Ledger(id);
    ledgers.set(id, l);
  }
  return l;
}

/** Runs `fn` as a session would, counted in `ledger` (the enforcer's own tests). */
export const within = <T>(ledger: Ledger, fn: () => T): T => scope.run(ledger, fn);

/** What answers the session's fetches behind the limits: the pool's own fetch unless a test routes some locally. */
type Transport = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> | null;
const original = globalThis.fetch;
let route: Transport = () => null;
/** Answers the URLs `r` takes (returning a Response promise) in place of the network; the rest go out as before. */
export function routeLocally(r: Transport): void {
  route = r;
}

const urlOf = (input: RequestInfo | URL) => (typeof input === "string" ? input : input instanceof URL ? input.href : input.url);

async function limitedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const ledger = scope.getStore();
  const send = () => route(input, init) ?? original(input, init);
  if (!ledger) return send();
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const kind: Kind = headers.get("upgrade")?.toLowerCase() === "websocket" ? "websocket" : "fetch";
  const url = urlOf(input);
  ledger.subrequest(kind, url);
  const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
  const res = await ledger.connection(url, send, signal);
  return tracked(res, ledger.opened());
}

/** The response, its connection counted open until its body ends or is cancelled, or its WebSocket closes. */
function tracked(res: Response, close: () => void): Response {
  const ws = res.webSocket;
  if (ws) {
    ws.addEventListener("close", close);
    ws.addEventListener("error", close);
    return res;
  }
  if (!res.body) {
    close();
    return res;
  }
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          close();
          c.close();
        } else c.enqueue(value);
      } catch (err) {
        close();
        c.error(err);
      }
    },
    cancel(reason) {
      close();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Synchronous re-entry (a binding method calling another of its own): counted once. */
let depth = 0;

/** Counts each call of `names` on `proto` made inside a session (a subrequest; a connection slot where it opens one). */
function count(proto: any, names: string[], kind: Kind, after?: (result: unknown) => void): void {
  for (const name of names) {
    const orig = proto[name];
    if (typeof orig !== "function" || orig.__limited) continue;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      const ledger = scope.getStore();
      if (!ledger || depth) {
        const out = orig.apply(this, args);
        if (after && out instanceof Promise) out.then(after, () => {});
        return out;
      }
      ledger.subrequest(kind, `${kind} ${name}`);
      depth++;
      try {
        if (!CONNECTING.has(kind)) return orig.apply(this, args);
        return ledger.connection(`${kind} ${name}`, async () => {
          const out = await orig.apply(this, args);
          after?.(out);
          return out;
        });
      } finally {
        depth--;
      }
    };
    wrapped.__limited = true;
    proto[name] = wrapped;
  }
}

/** A Durable Object stub whose method calls inside a session count as subrequests. */
function countingStub(stub: object): object {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function" || typeof prop === "symbol") return value;
      return (...args: unknown[]) => {
        scope.getStore()?.subrequest("durable-object", `durable-object ${prop}`);
        return Reflect.apply(value, target, args);
      };
    },
  });
}

let installed = false;

/**
 * Puts the limits in front of every session's outbound calls: global fetch, the D1, R2, Queue and AI bindings and
 * Durable Object stubs; every CallSession method enters its session's scope. Idempotent.
 */
export function installLimits(): void {
  if (installed) return;
  installed = true;
  globalThis.fetch = limitedFetch as typeof fetch;
  const proto = CallSession.prototype as unknown as Record<string, unknown>;
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
    const orig = d.value;
    if (name === "constructor" || typeof orig !== "function") continue;
    proto[name] = function (this: { ctx: DurableObjectState }, ...args: unknown[]) {
      if (scope.getStore()) return orig.apply(this, args);
      return scope.run(ledgerOf(this.ctx.id.toString()), () => orig.apply(this, args));
    };
  }
  const e = env as unknown as Record<string, any>;
  const d1 = Object.getPrototypeOf(e.DB);
  count(d1, ["batch", "exec"], "d1");
  count(Object.getPrototypeOf(e.DB.prepare("SELECT 1")), ["first", "run", "all", "raw"], "d1");
  // A multipart upload's own calls are on the object create/resume return (its class is not a global).
  const multipart = (out: unknown) => {
    if (out && typeof out === "object") count(Object.getPrototypeOf(out), ["uploadPart", "complete", "abort"], "r2");
  };
  const r2 = Object.getPrototypeOf(e.UPLOADS);
  count(r2, ["head", "get", "put", "delete", "list", "createMultipartUpload"], "r2", multipart);
  const resume = r2.resumeMultipartUpload;
  r2.resumeMultipartUpload = function (this: unknown, ...args: unknown[]) {
    const out = resume.apply(this, args);
    multipart(out);
    return out;
  };
  if (e.WEBHOOKS) count(Object.getPrototypeOf(e.WEBHOOKS), ["send", "sendBatch"], "queue");
  if (e.AI) count(Object.getPrototypeOf(e.AI), ["run"], "ai");
  const ns = Object.getPrototypeOf(e.CALL_SESSION);
  for (const name of ["get", "getByName"]) {
    const orig = ns[name];
    if (typeof orig !== "function") continue;
    ns[name] = function (this: unknown, ...args: unknown[]) {
      const stub = orig.apply(this, args);
      return scope.getStore() ? countingStub(stub) : stub;
    };
  }
}
