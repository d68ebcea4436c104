// Exotel: Basic auth with api_key:api_token against the account's regional API host.
import { callerIdStep, credentialsStep } from "../checklist";
import { defineConfig, oneOf, secret, text } from "../define";
import type { ChecklistStep, ConfigContext } from "../types";

export const displayName = "Exotel";
export const docsUrl = "https://developer.exotel.com/api";

export const API_BASE_URLS = ["https://api.in.exotel.com", "https://api.exotel.com"] as const;

export const definition = defineConfig("exotel", {
  account_sid: text("Account SID.", { required: true, max: 64 }),
  api_key: secret("API key (the Basic auth user).", { required: true }),
  api_token: secret("API token (the Basic auth password).", { required: true }),
  api_base_url: oneOf(API_BASE_URLS, "API host of the account's region: Mumbai (api.in.exotel.com) or Singapore (api.exotel.com).", {
    default: API_BASE_URLS[0],
  }),
});

/**
 * Exotel has no API to route an Exophone: an agent answering its calls needs the number's flow pointed at edgedial by
 * hand. Informational (never blocks dialing out): the URL is on every number as `inbound_url`.
 */
export const inboundStep: ChecklistStep = {
  key: "inbound",
  title: "Calls that come in",
  description:
    "For an Exophone whose calls an agent answers: attach the agent to the number here, then in Exotel's App Bazaar give the number a flow " +
    "with a Voicebot applet whose URL is the number's inbound_url (shown on the phone number). Exotel has no API for this step.",
  complete: true,
  blocks_outbound: false,
};

export function steps(ctx: ConfigContext) {
  return [credentialsStep(ctx.state.credentials_error), callerIdStep(ctx.activeNumbers.length, true), inboundStep];
}
