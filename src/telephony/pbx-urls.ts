// The URLs a PBX configuration makes the service fetch (SSRF), checked on save; the rule itself, also applied before
// every connection, is in providers/pbx-urls.ts.
import type { ValidationItem } from "../lib/errors";
import { CONFIG_LOC } from "./config-input";
import { getPath } from "./merge";
import type { Obj } from "../lib/helpers";
import { type OwnOrigins, pbxUrlRefusal } from "./providers/pbx-urls";

export const PBX_URL_PATHS = ["ari_endpoint", "external_pbx.agent_api.url", "external_pbx.non_agent_api.url"] as const;

/** Located 422 items for the configuration's PBX URLs the organization may not use. */
export function pbxUrlErrors(config: Obj, allowPrivate: boolean, ownOrigins: OwnOrigins): ValidationItem[] {
  const items: ValidationItem[] = [];
  for (const path of PBX_URL_PATHS) {
    const url = getPath(config, path);
    // Unparsable values are the schema's business (external_pbx URLs are free text there).
    if (typeof url !== "string" || !URL.canParse(url)) continue;
    const msg = pbxUrlRefusal(url, allowPrivate, ownOrigins);
    if (msg) items.push({ loc: [...CONFIG_LOC, ...path.split(".")], msg, type: "url_not_allowed", input: url.length > 2048 ? url.slice(0, 2048) : url });
  }
  return items;
}
