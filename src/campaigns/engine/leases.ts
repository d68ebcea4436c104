// The engine's view of the organization's concurrent-call cap: one OrganizationObject per organization. A seam lets
// in-process simulations and benchmarks stand in an equivalent in-memory coordinator.
import { organizationStub } from "../../organizations/organization-object";
import type { LeaseRequest, LeaseResult } from "../../organizations/leases";
import { log } from "../../lib/log";
import { hasDemand, releaseEngines } from "../../capacity/admission";
import { capacityStub } from "../../capacity/engine-capacity-object";
import type { CallDemand } from "../../capacity/demand";
import type { CapacityResult } from "../../capacity/capacity-api";
import { workflowDemand } from "../../calls/admission/engine-admission";

/** The agent's engine demand is read again after this long (an agent's settings may change mid-campaign). */
const DEMAND_TTL_MS = 60_000;

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
    // The engine leases have the same ids (taken only where the agent's engines are counted; unknown ids are fine).
    if (!this.demand || hasDemand(this.demand.demand)) await releaseEngines(this.env, leaseIds);
  }

  private demand: { workflowId: number; at: number; demand: CallDemand } | null = null;

  /** What one call of the campaign's agent holds of the engines (cached for DEMAND_TTL_MS). */
  async engineDemand(orgId: number, workflowId: number): Promise<CallDemand> {
    const now = Date.now();
    if (this.demand?.workflowId !== workflowId || now - this.demand.at > DEMAND_TTL_MS)
      this.demand = { workflowId, at: now, demand: await workflowDemand(this.env, orgId, workflowId) };
    return this.demand.demand;
  }

  /**
   * Engine leases for the dials the organization granted (`granted`: their lease ids), after releasing `freed`.
   * Null when the agent's engines are not counted. A failure to ask grants them: the budget guards calls, it must
   * not stop a campaign when the capacity object cannot be reached.
   */
  async engines(
    c: { org_id: number; workflow_id: number; campaign_id: number },
    granted: string[],
    freed: string[],
    ttlSeconds: number,
  ): Promise<CapacityResult[] | null> {
    const demand = await this.engineDemand(c.org_id, c.workflow_id);
    if (!hasDemand(demand)) return null;
    try {
      return await capacityStub(this.env).acquireMany(
        granted.map((leaseId) => ({ leaseId, orgId: c.org_id, ttlSeconds, demand, waiter: c.campaign_id })),
        freed.length ? freed : undefined,
      );
    } catch (err) {
      log("warning", "engine_capacity_unreachable", { campaign_id: c.campaign_id, error: String(err) });
      return null;
    }
  }
}
