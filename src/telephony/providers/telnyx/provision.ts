// Creates (or finds) the Call Control application (the `connection_id`) of a configuration saved without one.
import type { ConfigContext, ProviderEnv } from "../types";
import { carrierFetch, str } from "../kit";
import { applicationName, inboundUrl, provisioningError } from "../provision-kit";
import { telnyxApi, telnyxErrorMessage, telnyxHeaders } from "./calls";

export async function telnyxProvision(ctx: ConfigContext, env: ProviderEnv) {
  if (str(ctx.config.connection_id)) return { state: {} };
  const name = applicationName(ctx);
  const base = `${telnyxApi(env)}/call_control_applications`;
  const found = await carrierFetch(
    `${base}?${new URLSearchParams({ "filter[application_name][contains]": name })}`,
    { method: "GET", headers: telnyxHeaders(ctx) },
    env,
  );
  const existing = found.status === 200 ? (found.json?.data ?? []).find((a: any) => a?.application_name === name) : null;
  if (existing?.id) return { state: {}, config: { connection_id: String(existing.id) } };
  const res = await carrierFetch(
    base,
    {
      method: "POST",
      headers: telnyxHeaders(ctx),
      body: JSON.stringify({ application_name: name, webhook_event_url: inboundUrl(env, "telnyx"), webhook_api_version: "2" }),
    },
    env,
  );
  if (res.status >= 200 && res.status < 300 && res.json?.data?.id) return { state: {}, config: { connection_id: String(res.json.data.id) } };
  throw provisioningError("Telnyx", res, telnyxErrorMessage(res.json));
}
