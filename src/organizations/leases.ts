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
  /**
   * The number this lease dials: refused (`skip: "suppressed"`) when it is on the organization's suppression list,
   * and, with `cap`, when it was dialed `cap.max` times within `cap.windowMs` (`skip: "attempt_cap"`, `retryAt`).
   * A granted dial is counted until its lease is released with `undial` (it never reached a carrier); `count: false`
   * (a single call) is checked against the suppression list only and never counted: the cap is on campaign dials.
   */
  dial?: { number: string; cap?: { max: number; windowMs: number } | null; count?: boolean };
};
/** `rateLimited`: refused by a call-start bucket (`Rate limit exceeded`), not by the cap. */
export type LeaseResult = {
  granted: boolean;
  inUse: number;
  cap: number;
  retryAfterSeconds?: number;
  rateLimited?: boolean;
  /** Refused by a calling rule rather than by the cap; `retryAt` (epoch ms) is when the attempt cap allows it. */
  skip?: "suppressed" | "attempt_cap";
  retryAt?: number;
};
