// Creates (or finds) the Cloudonix voice application of a configuration saved without application_name.
import type { ConfigContext, ProviderEnv } from "../types";
import { carrierFetch, str } from "../kit";
import { applicationName, inboundUrl, provisioningError } from "../provision-kit";
import { cloudonixApi, cloudonixErrorMessage, cloudonixHeaders } from "./calls";

export async function cloudonixProvision(ctx: ConfigContext, env: ProviderEnv) {
  if (str(ctx.config.application_name)) return { state: {} };
  const name = applicationName(ctx);
  const base = `${cloudonixApi(env)}/customers/self/domains/${encodeURIComponent(str(ctx.config.domain_id))}/applications`;
  const found = await carrierFetch(`${base}/${encodeURIComponent(name)}`, { method: "GET", headers: cloudonixHeaders(ctx) }, env);
  if (found.status === 200 && found.json?.name === name) return { state: {}, config: { application_name: name } };
  const res = await carrierFetch(
    base,
    {
      method: "POST",
      headers: cloudonixHeaders(ctx),
      body: JSON.stringify({ name, type: "cxml", url: inboundUrl(env, "cloudonix"), method: "POST" }),
    },
    env,
  );
  if (res.status >= 200 && res.status < 300) return { state: {}, config: { application_name: name } };
  throw provisioningError("Cloudonix", res, cloudonixErrorMessage(res.json));
}
