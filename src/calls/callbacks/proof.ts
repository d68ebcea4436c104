// How a carrier's request to edgedial proves itself before it changes anything: our per-run token in the path
// (callback-urls.ts), then the run, its configuration and carrier loaded; a failure is 401/403. Shared by every
// carrier-facing router (callbacks, inbound, resume, transfer), so none imports another's routes.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getDb } from "../../lib/db";
import { CALL_SETTINGS, requireSettings } from "../../lib/deployment";
import { ApiError } from "../../lib/errors";
import { pathId } from "../../lib/schemas";
import { publicUrl as joinPublicUrl } from "../../lib/settings";
import type { AppEnv } from "../../lib/types";
import { getProvider } from "../../telephony/providers/registry";
import { PROVIDER_NAMES, type StatusUpdate } from "../../telephony/providers/types";
import { providerEnvOf } from "../../telephony/provisioning";
import { loadConfigContext } from "../../telephony/resolve";
import { getConfigWithNumbers } from "../../telephony/store";
import { getRun, type RunRow } from "../runs/runs";
import { verifyCallbackToken } from "./callback-urls";

export const Params = z.object({
  provider: z.enum(PROVIDER_NAMES).openapi({ param: { name: "provider", in: "path" } }),
  run_id: pathId("run_id"),
  token: z.string().openapi({ param: { name: "token", in: "path" }, description: "The per-run callback token" }),
});

export const refused = (status: 401 | 403, detail: string) => new ApiError(status, detail);

/** A callback naming another call than the run's is refused (Vobiz signs only the URL, so this is its body check). */
export function matchesRun(run: Pick<RunRow, "providerCallId">, u: StatusUpdate, requireId: boolean): boolean {
  if (run.providerCallId == null) return true;
  if (!u.providerCallId && !u.requestId) return !requireId;
  return u.providerCallId === run.providerCallId || (u.requestId != null && u.requestId === run.providerCallId);
}

/** The URL the carrier called, rebuilt on our configured public origin (a TLS proxy may present another). */
export function publicUrl(env: Env, requestUrl: string): string {
  const u = new URL(requestUrl);
  return joinPublicUrl(providerEnvOf(env, requestUrl).publicBaseUrl, u.pathname + u.search);
}

export type Checked = { run: RunRow; ctx: Awaited<ReturnType<typeof loadConfigContext>>; provider: ReturnType<typeof getProvider> };

export async function authenticate(c: Context<AppEnv>, providerName: string, runId: number, token: string): Promise<Checked> {
  // A deployment missing a setting answers 503 (the carrier retries later), not 401/403 for a valid callback.
  requireSettings(c.env, CALL_SETTINGS);
  if (!(await verifyCallbackToken(c.env.CALLBACK_SECRET, providerName, runId, token))) throw refused(401, "Invalid callback token");
  return loadRun(c, providerName, runId);
}

/** The run a checked token names, with its configuration and provider. */
export async function loadRun(c: Context<AppEnv>, providerName: string, runId: number): Promise<Checked> {
  const db = getDb(c.env);
  const run = await getRun(db, runId);
  if (!run || run.provider !== providerName || run.telephonyConfigurationId == null) throw refused(401, "Invalid callback token");
  // The configuration and its numbers in one statement: every carrier callback comes this way.
  const found = await getConfigWithNumbers(db, run.orgId, run.telephonyConfigurationId);
  const provider = getProvider(providerName);
  return { run, ctx: await loadConfigContext(c.env, found.row, found.numbers), provider };
}

/**
 * Callbacks carry no API key (the carrier cannot send one): `security: []` overrides the document's default, and the
 * description says what authorizes them instead.
 */
export const callbackAuth = {
  security: [],
  description:
    "No API key. Authorized by the per-run token in the path (an HMAC this service puts in every callback URL it hands the carrier) and, " +
    "where the carrier signs its callbacks, by that signature (Twilio `X-Twilio-Signature`; Plivo `X-Plivo-Signature-V3` and Vobiz " +
    "`X-Vobiz-Signature-V3` with their nonces; Telnyx `telnyx-signature-ed25519` with `telnyx-timestamp`; Vonage's signed JWT in " +
    "`Authorization: Bearer`). A callback failing either check is 401 or 403 and changes nothing.",
};
