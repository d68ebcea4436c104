// Plivo: Basic auth with auth_id and auth_token; callbacks signed (V3) with the auth token.
import { applicationStep, callerIdStep, credentialsStep, isSet } from "../../checklist";
import { defineConfig, optionalId, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Plivo";
export const docsUrl = "https://www.plivo.com/docs/voice/api/call";

export const definition = defineConfig("plivo", {
  auth_id: text("Auth ID of the account.", { required: true, max: 64 }),
  auth_token: secret("Auth token; also verifies the V3 signature of callbacks.", { required: true }),
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
