// Creates (or finds) the Plivo application of a configuration saved without application_id.
import type { ConfigContext, ProviderEnv } from "../types";
import { carrierFetch, str } from "../../../calls/kit";
import { applicationName, inboundUrl, provisioningError } from "../../../calls/provision-kit";
import { plivoAccountUrl, plivoHeaders } from "./calls";

export async function plivoProvision(ctx: ConfigContext, env: ProviderEnv) {
  if (str(ctx.config.application_id)) return { state: {} };
  const name = applicationName(ctx);
  const base = `${plivoAccountUrl(ctx, env)}/Application/`;
  const found = await carrierFetch(`${base}?${new URLSearchParams({ app_name: name })}`, { method: "GET", headers: plivoHeaders(ctx) });
  const existing = found.status === 200 ? (found.json?.objects ?? []).find((a: any) => a?.app_name === name) : null;
  if (existing?.app_id) return { state: {}, config: { application_id: String(existing.app_id) } };
  const url = inboundUrl(env, "plivo");
  const res = await carrierFetch(base, {
    method: "POST",
    headers: plivoHeaders(ctx),
    body: JSON.stringify({ app_name: name, answer_url: url, answer_method: "POST", hangup_url: url, hangup_method: "POST" }),
  });
  if (res.status >= 200 && res.status < 300 && res.json?.app_id) return { state: {}, config: { application_id: String(res.json.app_id) } };
  throw provisioningError("Plivo", res, res.json?.error);
}
