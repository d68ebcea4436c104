// Errors the campaign object throws across RPC. Workers RPC keeps an Error's message but not its class,
// so the HTTP status travels in the message ("[409] Cannot pause ...") and routes map it back.
import { ApiError } from "../lib/errors";

export class EngineError extends Error {
  constructor(
    readonly status: 404 | 409 | 422,
    readonly detail: string,
  ) {
    super(`[${status}] ${detail}`);
  }
}

export const engineConflict = (detail: string) => new EngineError(409, detail);

const ENCODED = /^\[(404|409|422)\] ([\s\S]*)$/;

/** The ApiError an error thrown by the campaign object stands for, or null when it is not one of ours. */
export function engineErrorToApi(err: unknown): ApiError | null {
  const msg = err instanceof Error ? err.message : typeof err === "string" ? err : null;
  const m = msg ? ENCODED.exec(msg) : null;
  if (!m) return null;
  const status = Number(m[1]) as 404 | 409 | 422;
  if (status === 422) return new ApiError(422, [{ loc: ["body"], msg: m[2], type: "value_error" }]);
  return new ApiError(status, m[2]);
}
