// A host name's addresses, asked before the service fetches it on a client's behalf (SSRF: a public name may resolve
// to 127.0.0.1). Workers have no resolver API (no node:dns lookup, fetch resolves internally), so DNS is asked over
// HTTPS: Cloudflare's resolver in its JSON form (`application/dns-json`), A and AAAA in parallel, CNAMEs followed by
// the resolver. Pure parsing apart from the one fetch, so the answer's reading is tested alone.

/** The addresses `host` resolves to; null when DNS could not be asked or its answer not read (the caller decides). */
export type Resolve = (host: string) => Promise<string[] | null>;

export const DOH_ENDPOINT = "https://cloudflare-dns.com/dns-query";
const A = 1;
const AAAA = 28;

/** The A and AAAA records of a DNS JSON answer; [] for a name that has none (NXDOMAIN too); null when unreadable. */
export function addressesOf(answer: unknown): string[] | null {
  if (!answer || typeof answer !== "object") return null;
  const a = answer as { Status?: unknown; Answer?: unknown };
  if (typeof a.Status !== "number") return null;
  // 0 NOERROR, 3 NXDOMAIN: an answer. Anything else (SERVFAIL, REFUSED) says nothing about the name.
  if (a.Status !== 0 && a.Status !== 3) return null;
  if (!Array.isArray(a.Answer)) return [];
  return a.Answer.filter((r) => r && (r.type === A || r.type === AAAA) && typeof r.data === "string").map((r) => String(r.data));
}

/** A resolver over DNS-over-HTTPS; each question bounded by `timeoutMs`. */
export function dohResolver(fetcher: typeof fetch = fetch, endpoint = DOH_ENDPOINT, timeoutMs = 2000): Resolve {
  const ask = async (host: string, type: "A" | "AAAA") => {
    const url = `${endpoint}?name=${encodeURIComponent(host)}&type=${type}`;
    const res = await fetcher.call(undefined, url, { headers: { Accept: "application/dns-json" }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    return addressesOf(await res.json().catch(() => null));
  };
  return async (host) => {
    try {
      const [v4, v6] = await Promise.all([ask(host, "A"), ask(host, "AAAA")]);
      return v4 === null || v6 === null ? null : [...v4, ...v6];
    } catch {
      return null;
    }
  };
}
