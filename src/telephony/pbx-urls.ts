// The URLs a PBX configuration makes the service fetch (SSRF): checked against lib/url-guard.ts on save and before
// every connection. Loopback, private, CGNAT and local names only when the organization's calling policy allows
// private PBX addresses; metadata and link-local never (define.ts httpUrl already refuses those at parse).
import type { ValidationItem } from "../lib/errors";
import { checkOutboundUrl } from "../lib/url-guard";
import { CONFIG_LOC } from "./config-input";
import { getPath } from "./merge";
import type { Obj } from "../lib/helpers";

export const PBX_URL_PATHS = ["ari_endpoint", "external_pbx.agent_api.url", "external_pbx.non_agent_api.url"] as const;

export const ENABLE_PRIVATE_PBX = "set allow_private_pbx with PUT /api/v1/organizations/calling-policy to allow it";

/** Where this service itself is reached (the API request's origin, PUBLIC_BASE_URL): never a PBX. */
export type OwnOrigins = ReadonlyArray<string | null | undefined> | null;

/**
 * The first reason the service may not fetch `url`, or null. Only an address the setting would admit gets the hint to
 * set it: this service's own origin stays refused with it on.
 */
export function pbxUrlRefusal(url: string, allowPrivate: boolean, ownOrigins: OwnOrigins): string | null {
  const v = checkOutboundUrl(url, { allowPrivate, ownOrigins: ownOrigins ?? [] });
  if (v.ok) return null;
  return v.class === "loopback" || v.class === "private" || v.class === "cgnat" ? `${v.message}; ${ENABLE_PRIVATE_PBX}` : v.message;
}

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
