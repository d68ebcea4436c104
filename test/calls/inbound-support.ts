// Test support for calls that come in: the seats agent attached to the organization's number, and a caller dialing it
// through the simulator in the carrier's own format.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Callback } from "../../src/dev/simulator/types";
import type { ProviderName } from "../../src/telephony/providers/types";
import { call } from "../helpers";
import { DEFINITION, SEATS_DISPOSITIONS } from "./conversation-support";
import { CALLER, type Setup, setup, sim } from "./support";

/** The caller's number. */
export const CALLING = "+14155550177";

export const runsOf = async (orgId: number) =>
  (await env.DB.prepare("SELECT * FROM workflow_runs WHERE org_id = ? ORDER BY id").bind(orgId).all<Record<string, any>>()).results;

/** Attaches an agent to the configuration's first number (null detaches). */
export async function attach(s: Setup, workflowId: number | null) {
  const list = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, { key: s.org.key });
  return call("PUT", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${list.json.items[0].id}`, {
    key: s.org.key,
    body: { inbound_workflow_id: workflowId },
  });
}

/** The seats agent (first_name from its own defaults: the number's default context) attached to the number. */
export async function inboundSetup(provider: ProviderName, before?: (s: Setup) => Promise<unknown>) {
  const s = await setup(provider);
  await before?.(s);
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: s.org.key,
    body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS, template_context_variables: { first_name: "Ada" } },
  });
  expect(wf.status, wf.text).toBe(200);
  const attached = await attach(s, wf.json.id);
  expect(attached.status, attached.text).toBe(200);
  return { s, agentId: wf.json.id as number, number: attached.json };
}

/** A caller dials the number: the carrier's first request about the new call, signed as the carrier signs it. */
export const dial = async (s: Setup, body: Record<string, unknown> = {}) =>
  (await sim<{ callback: Callback }>("POST", `/accounts/${s.acct.id}/inbound`, { to: CALLER, from: CALLING, ...body })).callback;
