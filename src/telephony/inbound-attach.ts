// Attaching an agent to a phone number for the calls that come in: the agent checked (the organization's own, not
// archived), then the carrier pointed at the configuration's inbound URL where its API allows (Twilio: the number's
// VoiceUrl; Plivo, Vobiz, Telnyx, Vonage, Cloudonix: the configuration's application). Where it does not (Exotel),
// the number's `inbound_url` is the URL to paste; Asterisk's events socket is held open to hear its callers. Detaching changes nothing at the carrier: the inbound URL
// then answers that number's callers with a polite message and a hang-up.
import { and, eq } from "drizzle-orm";
import { workflows } from "../db/schema";
import type { Db } from "../lib/db";
import { ApiError, conflict, invalid, notFound } from "../lib/errors";
import { loadUsableWorkflow } from "../workflows/store";
import { gateRefusal } from "../workflows/test-gate";
import { log } from "../lib/log";
import { inboundUrlFor } from "./inbound-url";
import { providerEnvOf } from "./provisioning";
import { SetupIncomplete } from "./providers/provision-kit";
import { getProvider } from "./providers/registry";
import type { ProviderName } from "./providers/types";
import { loadConfigContext } from "./resolve";
import type { ConfigRow } from "./view";

const LOC = ["body", "inbound_workflow_id"];

/** 404 for an agent that is not the organization's; 422 for an archived one (it takes no calls). */
export async function checkInboundAgent(db: Db, orgId: number, workflowId: number): Promise<void> {
  const row = await db
    .select({ status: workflows.status })
    .from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.orgId, orgId)))
    .get();
  if (!row) throw notFound("Workflow");
  if (row.status === "archived") throw invalid(LOC, "Workflow is archived: restore it before it takes calls", "value_error", workflowId);
}

/** 409 naming why, where the attachment requires passing tests and the agent's current version has not passed. */
export async function checkTestedAgent(db: Db, orgId: number, workflowId: number): Promise<void> {
  const why = await gateRefusal(db, await loadUsableWorkflow(db, orgId, workflowId), "number");
  if (why) throw conflict(why);
}

/** The URL the carrier must request for this configuration's numbers (shown on every number). */
export async function inboundUrlOf(env: Env, requestUrl: string, row: Pick<ConfigRow, "id" | "provider">): Promise<string | null> {
  if (!env.CALLBACK_SECRET) return null;
  return inboundUrlFor(env.CALLBACK_SECRET, providerEnvOf(env, requestUrl).publicBaseUrl, row.provider as ProviderName, row.id);
}

/**
 * Points the carrier at edgedial for `address` (a no-op where the carrier has no API for it). A refusal is a 502 with
 * the carrier's words, before anything is saved, so the number never claims an agent its callers cannot reach; a
 * configuration with nothing to point yet (no application) is a 409: the carrier was not asked.
 */
export async function routeNumberToEdgedial(env: Env, requestUrl: string, row: ConfigRow, address: string): Promise<void> {
  const provider = getProvider(row.provider);
  const listen = provider.calls?.lifecycle?.listen;
  if (listen) {
    // Asterisk: no URL to point anywhere; callers arrive on the events socket, held open from now on.
    const held = await listen(env, await loadConfigContext(env, row));
    if (!held.ok) throw new ApiError(502, held.message.slice(0, 500));
  }
  const route = provider.calls?.inbound?.route;
  if (!route) return;
  const url = await inboundUrlOf(env, requestUrl, row);
  if (!url) throw new ApiError(503, "CALLBACK_SECRET is not configured: inbound calls cannot be routed");
  try {
    await route(await loadConfigContext(env, row), providerEnvOf(env, requestUrl), address, url);
  } catch (err) {
    if (err instanceof SetupIncomplete) throw new ApiError(409, err.message.slice(0, 500));
    const message = String((err as Error)?.message ?? err);
    log("warning", "inbound_route_failed", { provider: provider.name, config_id: row.id, error: message });
    throw new ApiError(502, message.slice(0, 500));
  }
}
