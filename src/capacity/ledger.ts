// Whether one more call fits the engine budgets beside the calls already admitted. Pure: the capacity object reads
// its leases and limits and asks here, so the rule is tested without a runtime.
import { callBudgetOf, orgBudgetOf, type EngineKey, type EngineLimits } from "./budgets";
import type { CallDemand } from "./demand";

/** An admitted call as the ledger counts it. */
export type Held = { orgId: number; demand: CallDemand };

/** The engine that has no room for the call (the deployment's budget, or the organization's share of it), or null. */
export function blockingEngine(
  limits: EngineLimits,
  held: readonly Held[],
  orgId: number,
  demand: CallDemand,
): { engine: EngineKey; scope: "deployment" | "organization" } | null {
  for (const [key, d] of Object.entries(demand)) {
    if (d.rpm <= 0 && d.streams <= 0) continue;
    let rpm = d.rpm;
    let streams = d.streams;
    let orgRpm = d.rpm;
    let orgStreams = d.streams;
    for (const h of held) {
      const x = h.demand[key];
      if (!x) continue;
      rpm += x.rpm;
      streams += x.streams;
      if (h.orgId === orgId) {
        orgRpm += x.rpm;
        orgStreams += x.streams;
      }
    }
    const over = (used: number, limit: number | null) => limit != null && used > limit + 1e-9;
    const all = callBudgetOf(limits, key);
    if (over(rpm, all.rpm) || over(streams, all.streams)) return { engine: key, scope: "deployment" };
    const own = orgBudgetOf(limits, orgId, key);
    if (over(orgRpm, own.rpm) || over(orgStreams, own.streams)) return { engine: key, scope: "organization" };
  }
  return null;
}

/** The requests per minute the held calls leave spare on an engine's whole budget (for work outside calls). */
export function spareRpm(budgetRpm: number | null, held: readonly Held[], key: EngineKey): number | null {
  if (budgetRpm == null) return null;
  let used = 0;
  for (const h of held) used += h.demand[key]?.rpm ?? 0;
  return Math.max(0, budgetRpm - used);
}
