// Plivo: Basic auth with auth_id and auth_token; callbacks signed (V3) with the auth token.
// The field table and checklist are shared with Vobiz (../plivo-family).
import { familyDefinition, familySteps } from "../plivo-family";

export const displayName = "Plivo";
export const docsUrl = "https://www.plivo.com/docs/voice/api/call";

export const definition = familyDefinition("plivo", {
  authId: "Auth ID of the account: MA (main account) or SA (subaccount) followed by 18 letters or digits.",
  // Plivo documents Auth IDs as 20 characters starting with MA or SA. Vobiz documents no shape.
  authIdShape: { pattern: /^(MA|SA)[A-Za-z0-9]{18}$/, message: "Plivo Auth IDs are MA or SA followed by 18 letters or digits" },
  authToken: "Auth token; also verifies the V3 signature of callbacks.",
});

export const steps = familySteps;
