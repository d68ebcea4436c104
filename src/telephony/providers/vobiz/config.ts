// Vobiz (Plivo-compatible): X-Auth-ID / X-Auth-Token headers; callbacks signed (V2/V3) with the auth token.
// The field table and checklist are shared with Plivo (../plivo-family).
import { familyDefinition, familySteps } from "../plivo-family";

export const displayName = "Vobiz";
export const docsUrl = "https://docs.vobiz.ai";

export const definition = familyDefinition("vobiz", {
  authId: "Account id (auth ID).",
  authToken: "Auth token; also verifies the signature of callbacks.",
});

export const steps = familySteps;
