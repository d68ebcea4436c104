// The organization object's lease API on the shared concurrent-call cap, used by single calls and campaign dials.

export type LeaseRequest = {
  leaseId: string;
  ttlSeconds: number;
  /** A campaign id to wake (its `wake()` RPC) when a slot frees after this request was refused. */
  waiter?: number;
  /**
   * A single call (not a campaign's dial): it also takes a token from the organization's and the key's call-start
   * buckets, checked before the cap. `keyId` null (no key known) counts against the organization only.
   */
  callStart?: { keyId: number | null };
};
/** `rateLimited`: refused by a call-start bucket (`Rate limit exceeded`), not by the cap. */
export type LeaseResult = { granted: boolean; inUse: number; cap: number; retryAfterSeconds?: number; rateLimited?: boolean };
