// Where deliveries may go: https only, and never a metadata, private or loopback address (SSRF). Local development
// (LOCAL_DEV) also allows http and local addresses, for a receiver on the developer's machine. Checked at save and
// again before every delivery.
import { localDev } from "../lib/deployment";
import { checkOutboundUrl } from "../lib/url-guard";

/** Why `url` may not receive webhooks, or null when it may. */
export function webhookUrlProblem(env: { LOCAL_DEV?: string; PUBLIC_BASE_URL?: string }, url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "Must be a valid URL";
  }
  const local = localDev(env);
  // `//` too: the URL parser also reads `https:host/path` as https, which the API document's pattern does not allow.
  if ((u.protocol !== "https:" && !(local && u.protocol === "http:")) || !/^\s*https?:\/\//i.test(url)) return "Must be an https:// URL";
  if (u.username || u.password) return "Must not carry credentials";
  // The service never posts to itself (a loop, or a way into its own API); another port of a local host is another
  // service. An unusable PUBLIC_BASE_URL matches nothing (health reports it).
  const verdict = checkOutboundUrl(url, { allowPrivate: local, ownOrigins: [env.PUBLIC_BASE_URL] });
  return verdict.ok ? null : verdict.message;
}
