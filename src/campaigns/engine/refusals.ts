// The engine's refusals: a 404, 409 or 422 for the client, thrown where the engine decides it. The object's RPC
// methods turn them into typed values (../errors.ts: refusable), so none crosses RPC as an exception.
export type RefusalStatus = 404 | 409 | 422;

export class EngineError extends Error {
  constructor(
    readonly status: RefusalStatus,
    readonly detail: string,
  ) {
    // The status in the message too: an EngineError that escapes (an alarm's) is logged with it.
    super(`[${status}] ${detail}`);
  }
}

export const engineConflict = (detail: string) => new EngineError(409, detail);
export const campaignNotFound = () => new EngineError(404, "Campaign not found");
