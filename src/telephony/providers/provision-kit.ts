// Shared by the provisioning modules: the name of the carrier application we create for a configuration
// (stable, so a repeated save finds it instead of creating a second one) and the URL it answers on.
import type { ConfigContext, ProviderEnv, ProviderName } from "./types";
import type { CarrierResponse } from "./kit";
import { publicUrl } from "../../lib/settings";

export const applicationName = (ctx: ConfigContext) => `edgedial-${ctx.id}`;

/** Inbound calls are not handled yet: the application's URL answers with a hang-up document. */
export const inboundUrl = (env: ProviderEnv, provider: ProviderName) => publicUrl(env.publicBaseUrl, `/api/v1/telephony/${provider}/inbound`);

/** Provisioning failures throw; the save keeps the configuration and shows this message on the checklist. */
export function provisioningError(carrier: string, res: CarrierResponse, message: string | null | undefined): Error {
  if (res.status === 0) return new Error(`${carrier}: ${res.text}`);
  return new Error(`${carrier} refused to create the application (HTTP ${res.status}): ${message || res.text.slice(0, 300) || "no message"}`);
}
