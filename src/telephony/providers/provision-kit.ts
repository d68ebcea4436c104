// Shared by the provisioning modules: the name of the carrier application we create for a configuration
// (stable, so a repeated save finds it instead of creating a second one) and the URL it answers on.
import type { ConfigContext, ProviderEnv, ProviderName } from "./types";
import type { CarrierResponse } from "./kit";
import { publicUrl } from "../../lib/settings";

export const applicationName = (ctx: ConfigContext) => `edgedial-${ctx.id}`;

/** The application's first answer URL: until one of its numbers gets an agent (another URL, with a token), a call is hung up. */
export const inboundUrl = (env: ProviderEnv, provider: ProviderName) => publicUrl(env.publicBaseUrl, `/api/v1/telephony/${provider}/inbound`);

/**
 * A configuration not ready for what was asked (no carrier application yet): thrown before anything is asked of the
 * carrier, so the API answers 409 (fix the configuration) rather than 502 (the carrier refused).
 */
export class SetupIncomplete extends Error {
  override readonly name = "SetupIncomplete";
}

/** Provisioning failures throw; the save keeps the configuration and shows this message on the checklist. */
export function provisioningError(carrier: string, res: CarrierResponse, message: string | null | undefined): Error {
  if (res.status === 0) return new Error(`${carrier}: ${res.text}`);
  return new Error(`${carrier} refused to create the application (HTTP ${res.status}): ${message || res.text.slice(0, 300) || "no message"}`);
}
