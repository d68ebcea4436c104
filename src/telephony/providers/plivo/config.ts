// Plivo: Basic auth with auth_id and auth_token; callbacks signed (V3) with the auth token.
// The field table and checklist are shared with Vobiz (../plivo-family).
import { familyDefinition, familySteps } from "../plivo-family";

export const displayName = "Plivo";
export const docsUrl = "https://www.plivo.com/docs/voice/api/call";

export const definition = familyDefinition("plivo", {
  authId: "Auth ID of the account.",
  authToken: "Auth token; also verifies the V3 signature of callbacks.",
});

export const steps = familySteps;
