// Asterisk ARI: a PBX we connect out to (Basic auth with an ari.conf user); numbers may also be
// extensions, SIP URIs or dial strings, and caller ID is optional.
import { z } from "@hono/zod-openapi";
import { callerIdStep, credentialsStep } from "../checklist";
import { constant, custom, defineConfig, group, httpUrl, integer, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Asterisk (ARI)";
export const docsUrl = "https://docs.asterisk.org/Configuration/Interfaces/Asterisk-REST-Interface-ARI/";

/** The one dialer product external_pbx supports, and the tag we identify ourselves with to it. */
export const EXTERNAL_PBX_TYPE = "vicidial";
export const SOURCE_TAG = "edgedial";

/** One of the dialer's two APIs: the same four fields, required (agent API) or optional (non-agent API). */
function dialerApi(name: "Agent" | "Non-agent", purpose: string, need: { required: true } | { nullable: true }) {
  return group(
    `${name} API of the dialer${purpose}.`,
    {
      url: text(`Full URL of the ${name.toLowerCase()} API script.`, { ...need, max: 2048 }),
      username: text(`${name} API user.`, need),
      password: secret(`${name} API password.`, need),
      source: text("Source tag sent to the dialer.", { default: SOURCE_TAG }),
    },
    need,
  );
}

export const definition = defineConfig("ari", {
  ari_endpoint: httpUrl("Base URL of the ARI interface, e.g. http://pbx.example.com:8088.", { required: true }),
  app_name: text("Stasis application name registered in the PBX (also the ari.conf user).", { required: true }),
  app_password: secret("Password of the ari.conf user.", { required: true }),
  ws_client_name: text("Name of the websocket_client.conf connection used for external media.", { default: "" }),
  dial_string_template: custom(
    z
      .string()
      .min(1)
      .max(255)
      .refine((v) => v.includes("{number}"), "Must contain {number}"),
    "string",
    "Dial string with {number} replaced by the callee, e.g. Local/{number}@from-internal.",
    { default: "PJSIP/{number}" },
  ),
  // The calling policy judges the number inside a dial string (src/telephony/pbx-destinations.ts), and only the
  // forms named here (with dial_string_template) may be sent whole: another trunk or context is another route out.
  allowed_dial_strings: custom(
    z
      .array(
        z
          .string()
          .min(1)
          .max(255)
          .refine((v) => v.split("{number}").length === 2, "Must contain {number} once"),
      )
      .max(20),
    "array",
    "Further dial-string forms a destination may be given in whole, e.g. PJSIP/{number}@trunk-b or Local/{number}@from-internal; any other dial string is refused. {number} stands for an extension, an E.164 number or digits after 00/011, which the calling policy judges.",
    { default: [] },
  ),
  external_pbx: group(
    "Dialer integration for agent and lead updates.",
    {
      type: constant(EXTERNAL_PBX_TYPE, `Dialer product; only "${EXTERNAL_PBX_TYPE}" is supported.`),
      agent_api: dialerApi("Agent", "", { required: true }),
      non_agent_api: dialerApi("Non-agent", ", for lead updates", { nullable: true }),
      timeout_seconds: integer("Timeout of dialer API requests, in seconds.", 1, 30, 8),
    },
    { nullable: true },
  ),
});

export function steps(ctx: ConfigContext) {
  return [credentialsStep(ctx.state.credentials_error), callerIdStep(ctx.activeNumbers.length, false)];
}
