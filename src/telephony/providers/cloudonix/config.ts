// Cloudonix: Bearer domain API key; no callback signature (our per-run token protects callbacks).
import { applicationStep, callerIdStep, credentialsStep, isSet } from "../checklist";
import { defineConfig, optionalId, secret, text } from "../define";
import type { ConfigContext } from "../types";

export const displayName = "Cloudonix";
export const docsUrl = "https://developers.cloudonix.com";

export const definition = defineConfig("cloudonix", {
  bearer_token: secret("Domain API key, sent as a Bearer token.", { required: true }),
  domain_id: text("Domain name or numeric id.", { required: true }),
  application_name: optionalId(
    "Voice application name; its URL is updated when inbound workflows are attached. When omitted, an application is created on save and its name stored.",
  ),
});

export function steps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    applicationStep(isSet(ctx.config.application_name), "application_name", ctx.state.application_error),
  ];
}

// Cloudonix's multi-tenant SIP gateway (its docs: point SIP equipment at sip.cloudonix.io and use the
// customer's domain, or a CNAME alias of it, as the SIP domain, so calls land in that domain).
// Cloudonix documents no per-region hosts or origin IPs, so one global entry is shown; the ports are the
// SIP defaults (unconfirmed).
const GATEWAY = "sip.cloudonix.io";

export function sipConnectivity(_ctx: ConfigContext) {
  const transport = (name: "udp" | "tcp" | "tls", port: number) => ({
    transport: name,
    hostname: GATEWAY,
    port,
    uri: `${name === "tls" ? "sips" : "sip"}:${GATEWAY}:${port};transport=${name}`,
  });
  return {
    provider_display_name: displayName,
    regions: [{ region: "global", inbound_transports: [transport("udp", 5060), transport("tcp", 5060), transport("tls", 5061)] }],
  };
}
