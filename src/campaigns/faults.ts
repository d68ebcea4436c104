// Expected refusals of the campaign object (EngineError: a 404, 409 or 422 for the client) cross RPC as values,
// not exceptions. A Durable Object method that throws is reported by the runtime as an uncaught exception with its
// stack, once per refused request; a client asking to pause a draft campaign is not a fault of the service.
// The object's methods return a Fault instead (returnFaults); the Worker's stub (campaigns/stub.ts) turns it into
// the refusal's HTTP error.
import { EngineError } from "./errors";

const KEY = "__engine_fault";
export type Fault = { [KEY]: string };

export function isFault(value: unknown): value is Fault {
  return typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[KEY] === "string";
}

/** The methods of the campaign object callers reach through its stub and whose refusals are expected. */
export const FAULT_RETURNING_METHODS = [
  "initialize",
  "beginImport",
  "importContacts",
  "importPacked",
  "finishImport",
  "failSource",
  "discard",
  "beginAppend",
  "stageAppend",
  "commitAppend",
  "discardAppend",
  "snapshot",
  "progress",
  "logs",
  "start",
  "resume",
  "pause",
  "cancel",
  "updateSettings",
  "redialPlan",
  "redialContacts",
  "linkRedial",
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
