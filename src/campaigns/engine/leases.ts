// The engine's view of the organization's concurrent-call cap: one OrganizationObject per organization. A seam lets
// in-process simulations and benchmarks stand in an equivalent in-memory coordinator.
import { organizationStub } from "../../organizations/organization-object";
import type { LeaseRequest, LeaseResult } from "../../organizations/leases";

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
