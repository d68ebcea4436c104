// Expected refusals of the campaign object (EngineError: a 404, 409 or 422 for the client) cross RPC as values,
// not exceptions. A Durable Object method that throws is reported by the runtime as an uncaught exception with its
// stack, once per refused request; a client asking to pause a draft campaign is not a fault of the service.
// The object's methods return a Fault instead (returnFaults); the caller's stub turns it back into the same
// rejection the RPC used to make (unwrapFaults), so callers and viaEngine see no difference.
import { EngineError } from "./errors";

const KEY = "__engine_fault";
export type Fault = { [KEY]: string };

export function isFault(value: unknown): value is Fault {
  return typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[KEY] === "string";
}

/** The methods of the campaign object callers reach through its stub and whose refusals are expected. */
export const FAULT_RETURNING_METHODS = [
  "initialize", "importContacts", "importPacked", "finishImport", "failSource", "discard", "snapshot", "progress", "logs",
  "start", "resume", "pause", "cancel", "updateSettings", "redialPlan", "redialContacts", "linkRedial",
] as const;

type Method = (...args: unknown[]) => Promise<unknown>;

/** Makes the named prototype methods resolve to a Fault where they would have thrown an EngineError. */
export function returnFaults(cls: { prototype: object }, names: readonly string[]): void {
  const proto = cls.prototype as Record<string, Method>;
  for (const name of names) {
    const original = proto[name];
    proto[name] = async function (this: unknown, ...args: unknown[]) {
      try {
        return await original.apply(this, args);
      } catch (err) {
        if (err instanceof EngineError) return { [KEY]: err.message } satisfies Fault;
        throw err;
      }
    };
  }
}

/** A stub whose fault-returning methods reject again with the refusal's message ("[409] ..."), as RPC used to. */
export function unwrapFaults<T extends object>(stub: T): T {
  const wrapped = new Set<PropertyKey>(FAULT_RETURNING_METHODS);
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (!wrapped.has(prop) || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        // Called as a method of the stub: an RPC method stub has no real `apply` (it would be another RPC).
        const r = await (target as Record<PropertyKey, Method>)[prop](...args);
        if (isFault(r)) throw new Error(r[KEY]);
        return r;
      };
    },
  });
}
