// Vobiz (Plivo-compatible): X-Auth-ID / X-Auth-Token headers; callbacks signed (V2/V3) with the auth token.
import { applicationStep, callerIdStep, credentialsStep, isSet } from "../../checklist";
import { defineConfig, optionalId, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Vobiz";
export const docsUrl = "https://docs.vobiz.ai";

export const definition = defineConfig("vobiz", {
  auth_id: text("Account id (auth ID).", { required: true, max: 64 }),
  auth_token: secret("Auth token; also verifies the signature of callbacks.", { required: true }),
  application_id: optionalId(
    "Voice application id; its answer URL is updated when inbound workflows are attached. When omitted, an application is created on save and its id stored.",
  ),
});

export function steps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    applicationStep(isSet(ctx.config.application_id), "application_id", ctx.state.application_error),
  ];
}
