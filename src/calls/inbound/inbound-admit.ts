// Whether a call that came in is put through to an agent, whatever carrier brought it (the HTTP inbound URL,
// src/calls/inbound/inbound.ts, or the ARI events socket, src/calls/ari/ari-inbound.ts): the dialed number among the
// configuration's, its agent usable, a lease on the organization's concurrent-call cap, and then the run
// (`direction: "inbound"`, the caller's and dialed numbers as template variables). Each refusal is logged with its
// reason; how the caller is told (a document, a command, a hang-up cause) is the carrier's.
import { and, eq, inArray } from "drizzle-orm";
import { phoneNumbers } from "../../db/schema";
import { isoNow } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { ApiError } from "../../lib/errors";
import { log } from "../../lib/log";
import { organizationStub } from "../../organizations/organization-object";
import type { InboundCall, ProviderName } from "../../telephony/providers/types";
import type { ConfigRow } from "../../telephony/view";
import { loadUsableWorkflow, type UsableWorkflow } from "../../workflows";
import { gateRefusal } from "../../workflows/test-gate";
import { addressCandidates, asE164, inboundVariables, refusalOf, type Refusal } from "./inbound-rules";
import { createRun, type RunRow } from "../runs/runs";
import { SINGLE_CALL_LEASE_SECONDS } from "../start/start";
import { admitEngines, callDemandOf, releaseCallEngines } from "../admission/engine-admission";
import { applyStatus } from "../runs/status";

export type Admission = { ok: true; run: RunRow } | { ok: false; reason: Refusal | "agent_unusable" | "agent_untested" | "concurrent_call_limit" };

/**
 * Finds the number and agent, takes the lease and creates the run with `status` (in progress where the carrier asks
 * only once it has the call; ringing where our answer is still to come) and the carrier's call id.
 */
export async function admitInbound(env: Env, row: ConfigRow, provider: ProviderName, call: InboundCall, status: "ringing" | "in_progress"): Promise<Admission> {
  const db = getDb(env);
  const number =
    (await db
      .select()
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.configId, row.id), inArray(phoneNumbers.address, addressCandidates(call.to))))
      .get()) ?? null;
  const why = refusalOf({ number, configInactive: row.inactive });
  const fields = { provider, config_id: row.id, called_number: asE164(call.to), call_id: call.callId };
  if (why || !number?.inboundWorkflowId) {
    log("warning", "inbound_call_refused", { ...fields, reason: why });
    return { ok: false, reason: why ?? "no_agent" };
  }
  let workflow: UsableWorkflow;
  try {
    workflow = await loadUsableWorkflow(db, row.orgId, number.inboundWorkflowId);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    log("warning", "inbound_call_refused", { ...fields, reason: "agent_unusable", detail: String(err.detail) });
    return { ok: false, reason: "agent_unusable" };
  }
  // An attachment that requires passing tests puts no call through to a version that has not passed: the caller hears
  // the number's "no one can take your call" message (as for a number with no agent) and the log says why.
  const untested = number.inboundRequirePassingTests ? await gateRefusal(db, workflow, "number") : null;
  if (untested) {
    log("warning", "inbound_call_refused", { ...fields, reason: "agent_untested", detail: untested });
    return { ok: false, reason: "agent_untested" };
  }

  // The caller counts against the organization's cap like any call; over it the caller hears busy, not ringing.
  const leaseId = `inbound:${crypto.randomUUID()}`;
  const lease = await organizationStub(env, row.orgId).acquire({ leaseId, ttlSeconds: SINGLE_CALL_LEASE_SECONDS });
  if (!lease.granted) {
    log("warning", "inbound_call_refused", { ...fields, reason: "concurrent_call_limit", in_use: lease.inUse, cap: lease.cap });
    return { ok: false, reason: "concurrent_call_limit" };
  }
  // Past the engines' budget the caller hears busy too (the carriers' refusal for a full line), never a call that
  // fails mid-conversation.
  const engines = await admitEngines(env, row.orgId, leaseId, SINGLE_CALL_LEASE_SECONDS, callDemandOf(env, workflow.workflowConfigurations));
  if (!engines.granted) {
    await organizationStub(env, row.orgId).release(leaseId);
    log("warning", "inbound_call_refused", { ...fields, reason: "engine_capacity", engine: engines.engine ?? null });
    return { ok: false, reason: "concurrent_call_limit" };
  }
  let run: RunRow;
  try {
    const caller = asE164(call.from);
    run = await createRun(db, {
      orgId: row.orgId,
      workflowId: workflow.id,
      workflowUuid: workflow.uuid,
      definitionId: workflow.definitionId,
      phoneNumber: caller,
      fromNumber: number.address,
      initialContext: inboundVariables(workflow.templateContextVariables, number.label, caller, number.address),
      telephonyConfigurationId: row.id,
      provider,
      leaseId,
      direction: "inbound",
      status: "initiated",
      startedAt: isoNow(),
    });
    run = (await applyStatus(env, run, { status, providerCallId: call.callId })).run;
  } catch (err) {
    await organizationStub(env, row.orgId).release(leaseId);
    await releaseCallEngines(env, leaseId);
    throw err;
  }
  log("info", "inbound_call_answered", { ...fields, run_id: run.id, workflow_id: workflow.id });
  return { ok: true, run };
}
