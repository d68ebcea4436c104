// A Durable Object class whose module is loaded when the first object of the class is made, not when the isolate
// starts. Every new isolate of the Worker (a carrier's webhook, an API request) runs the global scope of everything
// the main module imports statically; the Durable Objects' modules build most of the Worker's zod schemas, so
// importing them there was most of its start (bench/startup/README.md). The class wrangler binds is this thin one;
// the real class is a dynamic import (esbuild keeps it in the one bundle and runs its modules on first use).
//
// Once the real class is loaded, constructing the thin class returns an instance of the real one (a constructor may
// return another object): the runtime, RPC and tests that reach into an object (`runInDurableObject`) see the real
// object. The first object of a class in an isolate is made before the module is loaded: it blocks its events
// (blockConcurrencyWhile) until the module is loaded and the real object made inside it, and its prototype gets a
// forwarding method for every method of the real class's prototype chain, so the runtime's handlers (fetch, alarm,
// webSocketMessage, ...) and RPC calls reach the real object. Its events are delivered only after that.
import { DurableObject } from "cloudflare:workers";

/** The handlers the runtime calls on a Durable Object by name (RPC methods are forwarded once the class is loaded). */
const RUNTIME_HANDLERS = ["fetch", "alarm", "webSocketMessage", "webSocketClose", "webSocketError"] as const;

type ObjectClass = new (ctx: DurableObjectState, env: Env) => DurableObject<Env>;
export type LazyClass<C extends ObjectClass> = C & { /** Loads the real class now (tests; idempotent). */ load(): Promise<C> };

/** The methods of a class's prototype chain, nearest first, up to (not including) DurableObject's own. */
export function methodsOf(cls: ObjectClass): string[] {
  const names = new Set<string>();
  for (let p = cls.prototype; p && p !== DurableObject.prototype && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const name of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (name !== "constructor" && typeof d?.value === "function") names.add(name);
    }
  return [...names];
}

/**
 * `methods`: the real class's RPC methods (its callers' stubs may reach a first object before the class is loaded);
 * a test checks each deployed class's list against the class itself.
 */
/**
 * The real object, made and started: its constructor's own blockConcurrencyWhile (migrations, recovery) is awaited
 * too, since the event that made the first object is already admitted and would otherwise reach it half started.
 */
async function constructed<C extends ObjectClass>(cls: C, ctx: DurableObjectState, env: Env): Promise<DurableObject<Env>> {
  const starts: Promise<unknown>[] = [];
  const own = ctx.blockConcurrencyWhile;
  const counting = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = own.call(ctx, fn) as Promise<T>;
    starts.push(p);
    return p;
  };
  Object.defineProperty(ctx, "blockConcurrencyWhile", { value: counting, configurable: true, writable: true });
  try {
    const real = new cls(ctx, env);
    await Promise.all(starts);
    return real;
  } finally {
    delete (ctx as unknown as Record<string, unknown>).blockConcurrencyWhile;
  }
}

export function lazyDurableObject<C extends ObjectClass>(load: () => Promise<C>, methods: readonly string[] = []): LazyClass<C> {
  let Real: C | undefined;
  let loading: Promise<C> | undefined;
  const inner = new WeakMap<object, DurableObject<Env>>();
  /** A first object's making of its real object (its handlers wait for it). */
  const made = new WeakMap<object, Promise<void>>();
  const loadReal = () =>
    (loading ??= load().then(
      (cls) => {
        Real = cls;
        // The forwarding methods the first objects need (already-made ones are still this class's instances).
        for (const name of methodsOf(cls))
          if (!Object.hasOwn(Lazy.prototype, name))
            Object.defineProperty(Lazy.prototype, name, {
              configurable: true,
              writable: true,
              value(this: object, ...args: unknown[]) {
                const target = inner.get(this) as unknown as Record<string, (...a: unknown[]) => unknown>;
                return target[name](...args);
              },
            });
        return cls;
      },
      (err) => {
        loading = undefined; // tried again by the next object rather than remembered
        throw err;
      },
    ));

  class Lazy extends DurableObject<Env> {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      // biome-ignore lint/correctness/noConstructorReturn: the real object stands in for this one (see above)
      if (Real) return new Real(ctx, env) as unknown as Lazy;
      // The real constructor runs inside: its own blockConcurrencyWhile (migrations) nests in this one.
      made.set(
        this,
        ctx.blockConcurrencyWhile(async () => {
          const cls = await loadReal();
          inner.set(this, await constructed(cls, ctx, env));
        }),
      );
    }
    static load(): Promise<C> {
      return loadReal();
    }
  }
  // The runtime looks a handler or an RPC method up on the object as soon as it has made it, for the very event that
  // made it (before that object's blockConcurrencyWhile holds anything back): a media stream's upgrade failed "Handler
  // does not export a fetch() function" on a new isolate's first call session. So the runtime's handlers and the
  // class's declared RPC methods exist on the first object from the start; each waits for the real object, then
  // hands the call over (at once when it is already made).
  for (const name of new Set<string>([...RUNTIME_HANDLERS, ...methods]))
    Object.defineProperty(Lazy.prototype, name, {
      configurable: true,
      writable: true,
      value(this: object, ...args: unknown[]) {
        const call = () => {
          const target = inner.get(this) as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>;
          const fn = target?.[name];
          if (typeof fn !== "function") return Promise.reject(new Error(`This Durable Object has no method ${name}()`));
          return fn.apply(target, args);
        };
        return inner.has(this) ? call() : (made.get(this) ?? Promise.resolve()).then(call);
      },
    });
  return Lazy as unknown as LazyClass<C>;
}
