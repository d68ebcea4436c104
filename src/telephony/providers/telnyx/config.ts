// Telnyx Call Control v2: Bearer API key; webhooks signed with Ed25519 (the account's public key).
import { z } from "@hono/zod-openapi";
import { applicationStep, callerIdStep, credentialsStep, isSet, webhookSigningStep } from "../checklist";
import { base64Decode } from "../../../lib/crypto";
import { custom, defineConfig, optionalId, secret } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Telnyx";
export const docsUrl = "https://developers.telnyx.com/docs/voice/programmable-voice/get-started";

function isEd25519PublicKey(v: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v)) return false;
  try {
    return base64Decode(v).length === 32;
  } catch {
    return false;
  }
}

export const definition = defineConfig("telnyx", {
  api_key: secret("API key (v2), sent as a Bearer token.", { required: true }),
  connection_id: optionalId("Call Control application (connection) id. When omitted, one is created on save and its id stored."),
  webhook_public_key: custom(
    z.string().refine(isEd25519PublicKey, "Must be the base64 Ed25519 public key (32 bytes) from the Telnyx portal"),
    "string",
    "Account public key (base64) used to verify the Ed25519 signature of webhooks.",
    { nullable: true },
  ),
});

export function steps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    applicationStep(isSet(ctx.config.connection_id), "connection_id", ctx.state.application_error),
    webhookSigningStep(isSet(ctx.config.webhook_public_key), "webhook_public_key"),
  ];
}
