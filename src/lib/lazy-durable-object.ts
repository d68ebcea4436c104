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

export function lazyDurableObject<C extends ObjectClass>(load: () => Promise<C>): LazyClass<C> {
  let Real: C | undefined;
  let loading: Promise<C> | undefined;
  const inner = new WeakMap<object, DurableObject<Env>>();
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
      void ctx.blockConcurrencyWhile(async () => {
        const cls = await loadReal();
        inner.set(this, new cls(ctx, env));
      });
    }
    static load(): Promise<C> {
      return loadReal();
    }
  }
  return Lazy as unknown as LazyClass<C>;
}
