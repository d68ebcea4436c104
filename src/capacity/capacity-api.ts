// The capacity object's RPC vocabulary, shared by the object and the callers that ask it.
import type { EngineKey } from "./budgets";
import type { CallDemand } from "./demand";

/** One call's engine lease: the same id as its organization lease, so both are freed together. */
export type CapacityRequest = {
  leaseId: string;
  orgId: number;
  ttlSeconds: number;
  demand: CallDemand;
  /** A campaign to wake (its `wake()` RPC) when a lease frees after this request was refused. */
  waiter?: number;
};

/** `engine`: when refused, the engine without room; `scope`: whose budget (the deployment's, or the organization's share). */
export type CapacityResult = {
  granted: boolean;
  retryAfterSeconds?: number;
  engine?: EngineKey;
  scope?: "deployment" | "organization";
};

/** A request outside any call (post-call analysis): ok, or when the engine's spare rate has a token again. */
export type TokenResult = { ok: boolean; retryAfterSeconds: number };

export type CapacityUsage = {
  /** Calls holding engine leases now, and per organization. */
  calls: number;
  byOrg: Record<string, number>;
  /** Per engine that a held call uses: what is held, and the deployment's budget for calls. */
  engines: Record<EngineKey, { rpm: number; streams: number; budgetRpm: number | null; budgetStreams: number | null }>;
};
