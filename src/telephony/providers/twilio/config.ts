// Twilio: Basic auth with the account SID and auth token; callbacks signed with the auth token (X-Twilio-Signature).
import { callerIdStep, credentialsStep } from "../checklist";
import { defineConfig, flag, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Twilio";
export const docsUrl = "https://www.twilio.com/docs/voice/api/call-resource";

export const definition = defineConfig("twilio", {
  account_sid: text("Account SID: AC followed by 32 hex digits.", {
    required: true,
    max: 64,
    // Twilio documents an account SID as "AC" + 32 hexadecimal characters.
    shape: { pattern: /^AC[0-9a-fA-F]{32}$/, message: "Twilio account SIDs are AC followed by 32 hex digits" },
  }),
  auth_token: secret("Auth token; also verifies the X-Twilio-Signature of callbacks.", { required: true }),
  amd_enabled: flag("Detect whether a person or a machine answers (the carrier may bill it per call).", false),
});

export function steps(ctx: ConfigContext) {
  return [credentialsStep(ctx.state.credentials_error), callerIdStep(ctx.activeNumbers.length, true)];
}
