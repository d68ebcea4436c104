// How the campaign object's refusals (a 404, 409 or 422 for the client) cross RPC: as typed values. Workers RPC keeps
// only an Error's message (not its class or fields), and a Durable Object method that throws is reported by the
// runtime as an uncaught exception with its stack, once per refused request: a client asking to pause a draft
// campaign is not a fault of the service. So the engine throws an EngineError (engine/refusals.ts), the object's
// methods answer a Result (refusable), and the Worker's callers turn a refusal into the HTTP error (unwrap).
import { ApiError } from "../lib/errors";
import { EngineError, type RefusalStatus } from "./engine/refusals";

export type Refused = { ok: false; status: RefusalStatus; detail: string };
/** What a refusable method of the campaign object answers. */
export type Result<T> = { ok: true; value: T } | Refused;

/** Runs one engine operation: its value, or the refusal it threw (any other error is thrown on). */
export async function refusable<T>(op: () => T | Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await op() };
  } catch (err) {
    if (err instanceof EngineError) return { ok: false, status: err.status, detail: err.detail };
    throw err;
  }
}

/** The HTTP error a refusal stands for (a 422 located at the body). */
export function refusalError(r: Refused): ApiError {
  if (r.status === 422) return new ApiError(422, [{ loc: ["body"], msg: r.detail, type: "value_error" }]);
  return new ApiError(r.status, r.detail);
}

/** The Worker's side of a refusable call: the value, or the refusal's HTTP error thrown. */
export function unwrap<T>(r: Result<T>): T {
  if (r.ok) return r.value;
  throw refusalError(r);
}
