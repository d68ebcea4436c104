// The engine's view of the organization's concurrent-call cap: one OrganizationObject per organization. A seam lets
// in-process simulations and benchmarks stand in an equivalent in-memory coordinator.
import { organizationStub } from "../../organizations/organization-object";
import type { LeaseRequest, LeaseResult } from "../../organizations/leases";
import { log } from "../../lib/log";

export type LeaseClient = {
  acquire(req: LeaseRequest): Promise<LeaseResult>;
  /** `release`: leases to free first, in the same call (a round gives back what final statuses freed). */
  acquireMany(reqs: LeaseRequest[], release?: string[]): Promise<LeaseResult[]>;
  release(leaseId: string, undial?: boolean): Promise<unknown>;
  /** Several release() in one call (a batch of final statuses frees its slots together). */
  releaseMany(leaseIds: string[], undial?: boolean): Promise<unknown>;
};

let factory: ((env: Env, orgId: number) => LeaseClient) | null = null;

/** Test support: replaces the organization object (null restores it). */
export function setLeaseClient(f: ((env: Env, orgId: number) => LeaseClient) | null): void {
  factory = f;
}

export function leaseClient(env: Env, orgId: number): LeaseClient {
  return factory ? factory(env, orgId) : (organizationStub(env, orgId) as unknown as LeaseClient);
}

/**
 * The organization's lease API as one campaign object uses it. One client is kept: calls on one stub reach the
 * organization object in the order they were made (a batch's release before the next round's acquire).
 */
export class OrgLeases {
  private current: { orgId: number; client: LeaseClient } | null = null;
  /** Leases of attempts that ended, to give back to the organization (with the next round's acquire). */
  readonly toRelease: string[] = [];

  constructor(private readonly env: Env) {}

  client(orgId: number): LeaseClient {
    if (this.current?.orgId !== orgId) this.current = { orgId, client: leaseClient(this.env, orgId) };
    return this.current.client;
  }

  /** `undial`: the calls never reached a carrier (they do not count towards the numbers' attempt cap). */
  async release(orgId: number, leaseIds: string[], undial = false): Promise<void> {
    try {
      await this.client(orgId).releaseMany(leaseIds, undial);
    } catch (err) {
      // The leases expire by themselves; a failed release costs capacity for a while, never correctness.
      log("warning", "lease_release_failed", { lease_ids: leaseIds, error: String(err) });
    }
  }
}
