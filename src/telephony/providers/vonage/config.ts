// Vonage Voice API: an RS256 JWT minted from the application's private key; callbacks optionally signed
// (HS256) with the account signature secret.
import { callerIdStep, credentialsStep, isSet, webhookSigningStep } from "../../checklist";
import { defineConfig, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Vonage";
export const docsUrl = "https://developer.vonage.com/en/voice/voice-api/overview";

export const definition = defineConfig("vonage", {
  api_key: text("Account API key.", { required: true, max: 64 }),
  api_secret: secret("Account API secret.", { required: true }),
  application_id: text("Voice application id.", { required: true, max: 64 }),
  private_key: secret("The application's private key (PEM), used to sign the JWTs of API requests.", { required: true, max: 16384 }),
  signature_secret: secret("Signature secret; verifies signed callbacks.", { nullable: true }),
});

export function steps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    webhookSigningStep(isSet(ctx.config.signature_secret), "signature_secret"),
  ];
}
