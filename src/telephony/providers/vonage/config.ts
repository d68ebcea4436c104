// Vonage Voice API: an RS256 JWT minted from the application's private key; callbacks optionally signed
// (HS256) with the account signature secret.
import { callerIdStep, credentialsStep, isSet, webhookSigningStep } from "../checklist";
import { defineConfig, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Vonage";
export const docsUrl = "https://developer.vonage.com/en/voice/voice-api/overview";

export const definition = defineConfig("vonage", {
  api_key: text("Account API key.", { required: true, max: 64 }),
  api_secret: secret("Account API secret.", { required: true }),
  application_id: text("Voice application id (a UUID).", {
    required: true,
    max: 64,
    // Vonage application ids are UUIDs; the API refuses a JWT naming anything else.
    shape: {
      pattern: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
      message: "Vonage application ids are UUIDs (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
    },
  }),
  private_key: secret("The application's private key (PEM), used to sign the JWTs of API requests.", {
    required: true,
    max: 16384,
    // The key file Vonage hands out: PEM armour around a PKCS#8 (or PKCS#1 RSA) key; newlines may come escaped.
    shape: {
      pattern: /^\s*-----BEGIN (RSA )?PRIVATE KEY-----(\s|\\n)*[^-\s][\s\S]*-----END (RSA )?PRIVATE KEY-----(\s|\\n)*$/,
      message: "Must be the application's private key in PEM form (-----BEGIN PRIVATE KEY----- … -----END PRIVATE KEY-----)",
    },
  }),
  signature_secret: secret("Signature secret; verifies signed callbacks.", { nullable: true }),
});

export function steps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    webhookSigningStep(isSet(ctx.config.signature_secret), "signature_secret"),
  ];
}
