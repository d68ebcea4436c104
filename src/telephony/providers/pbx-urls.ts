// Whether the service may connect to a PBX URL (SSRF), checked against lib/url-guard.ts. Here, in the carriers' kit,
// because the ARI carrier checks its endpoint before every connection; ../pbx-urls.ts applies it on save.
// Loopback, private, CGNAT and local names only when the organization's calling policy allows private PBX addresses;
// metadata and link-local never (define.ts httpUrl already refuses those at parse).
import { checkOutboundUrl } from "../../lib/url-guard";

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
