// Which hosts the service may fetch on a client's behalf (SSRF). URLs are classified after the WHATWG parser has
// normalized them, so decimal (2130706433), octal and hex IPv4 forms, IPv4-mapped IPv6, percent-encoded and
// full-width spellings are seen as the address or name they stand for. Obvious local names (localhost, *.localhost,
// *.internal, *.local) are refused here; a public name's addresses are only known by asking DNS, which the caller
// does where it can (`checkResolved`, with ./dns.ts for HTTP tools).

export type HostClass =
  | "public"
  | "metadata" // cloud instance metadata (169.254.169.254, fd00:ec2::254, metadata.google.internal)
  | "link_local" // 169.254.0.0/16, fe80::/10
  | "unspecified" // 0.0.0.0/8, ::
  | "multicast" // 224.0.0.0/4, ff00::/8
  | "reserved" // 240.0.0.0/4 (and broadcast)
  | "loopback" // 127.0.0.0/8, ::1, localhost
  | "private" // 10/8, 172.16/12, 192.168/16, fc00::/7, local names
  | "cgnat"; // 100.64.0.0/10

/** Never fetched, whatever an organization allows. */
export const NEVER_ALLOWED: ReadonlySet<HostClass> = new Set(["metadata", "link_local", "unspecified", "multicast", "reserved"]);

function ipv4Class(a: number, b: number, c: number, d: number): HostClass {
  if (a === 169 && b === 254) return c === 169 && d === 254 ? "metadata" : "link_local";
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "cgnat";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved";
  return "public";
}

function parseIpv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** Eight 16-bit groups of a bracket-less IPv6 literal as the URL parser prints it (compressed, hex). */
function parseIpv6(host: string): number[] | null {
  const halves = host.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s ? s.split(":") : []);
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  // A dotted IPv4 tail (the parser prints hex, but accept both).
  const last = tail.length ? tail : head;
  const v4 = last.length ? parseIpv4(last[last.length - 1]) : null;
  if (v4) last.splice(last.length - 1, 1, ((v4[0] << 8) | v4[1]).toString(16), ((v4[2] << 8) | v4[3]).toString(16));
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const nums = all.map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  return nums.every((n) => Number.isFinite(n)) ? nums : null;
}

function ipv6Class(g: number[]): HostClass {
  const embedded = () => ipv4Class(g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255);
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) return embedded();
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded();
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return "metadata";
  if ((g[0] & 0xffc0) === 0xfe80) return "link_local";
  if ((g[0] & 0xfe00) === 0xfc00) return "private";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  return "public";
}

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"]);

/** The class of a URL's hostname (as `new URL(...).hostname` gives it). */
export function classifyHost(hostname: string): HostClass {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") && host.endsWith("]")) {
    const g = parseIpv6(host.slice(1, -1));
    return g ? ipv6Class(g) : "reserved";
  }
  const v4 = parseIpv4(host);
  if (v4) return ipv4Class(v4[0], v4[1], v4[2], v4[3]);
  if (METADATA_NAMES.has(host)) return "metadata";
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (host.endsWith(".internal") || host.endsWith(".local") || host.endsWith(".localdomain") || !host.includes(".")) return "private";
  return "public";
}

/**
 * Special-use names (RFC 6761 test., example., invalid.; RFC 7686 onion.; RFC 9476 alt.) that public DNS never answers
 * for. Refused where the caller asks (`refuseSpecialUse`): an HTTP tool there can only reach a resolver's local
 * override. localhost. is loopback and local., internal., home.arpa. are private names above.
 */
const SPECIAL_USE_TLDS = new Set(["test", "example", "invalid", "onion", "alt"]);
export function isSpecialUseName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return SPECIAL_USE_TLDS.has(host.slice(host.lastIndexOf(".") + 1)) && !host.startsWith("[");
}

/** Why a URL is refused: its host's class, or `own_origin` when it is this service itself. */
export type UrlVerdict = { ok: true } | { ok: false; class: HostClass | "own_origin"; message: string };

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };

/** Port with the scheme's default filled in: http://h, http://h:80 and ws://h are all port 80. */
function portOf(u: URL): string {
  return u.port || DEFAULT_PORTS[u.protocol] || "";
}

/**
 * Is `u` this service, reached at `origin`? On a machine or a private network a port is a service: a PBX beside
 * edgedial (Asterisk at 127.0.0.1:8088 next to edgedial at 127.0.0.1:8787) is another one, while any loopback spelling
 * of the service's own port (localhost, 127.0.0.1, [::1]) is the service. A public name is Cloudflare's edge, which
 * hands every port it proxies (443, 8443, 2053, ...) to the Worker, so there the name alone decides.
 */
export function sameService(u: URL, origin: string): boolean {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  const a = u.hostname.toLowerCase().replace(/\.$/, "");
  const b = o.hostname.toLowerCase().replace(/\.$/, "");
  const cls = classifyHost(b);
  if (cls === "public") return a === b;
  if (portOf(u) !== portOf(o)) return false;
  return a === b || (cls === "loopback" && classifyHost(a) === "loopback");
}

/**
 * May the service fetch `url`? `allowPrivate` admits loopback, private, CGNAT and local names (an organization's own
 * PBX on its network); metadata, link-local, unspecified, multicast and reserved addresses are never admitted.
 * `ownOrigins` (where this service is reached: the request's origin, PUBLIC_BASE_URL) are refused whatever is allowed:
 * the service must not call itself on a client's behalf. Other ports of the same host are other services.
 */
export function checkOutboundUrl(
  url: string,
  opts: { allowPrivate?: boolean; ownOrigins?: ReadonlyArray<string | null | undefined>; refuseSpecialUse?: boolean } = {},
): UrlVerdict {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, class: "reserved", message: "Must be a valid URL" };
  }
  const own = (opts.ownOrigins ?? []).find((o) => o && sameService(u, o));
  if (own) return { ok: false, class: "own_origin", message: `Must not point at this service itself (${new URL(own).origin})` };
  if (opts.refuseSpecialUse && isSpecialUseName(u.hostname))
    return {
      ok: false,
      class: "reserved",
      message: "Must not point at a special-use name (.test, .example, .invalid, .onion, .alt), which public DNS never resolves",
    };
  const cls = classifyHost(u.hostname);
  if (cls === "public") return { ok: true };
  if (NEVER_ALLOWED.has(cls)) return { ok: false, class: cls, message: `Must not point at a ${cls.replace("_", "-")} address` };
  if (opts.allowPrivate) return { ok: true };
  return {
    ok: false,
    class: cls,
    message: `Must not point at a ${cls === "cgnat" ? "shared (CGNAT)" : cls} address unless the organization allows private PBX addresses`,
  };
}

/**
 * The same policy applied to the addresses a public name resolves to (DNS asked by the caller): a name that resolves
 * to a loopback or private address is that address. Between this answer and the fetch's own lookup the name may
 * change (DNS rebinding, a short TTL): the check narrows the hole, it does not close it.
 */
export function checkResolved(hostname: string, addresses: readonly string[], opts: { allowPrivate?: boolean } = {}): UrlVerdict {
  for (const a of addresses) {
    const cls = classifyHost(a.includes(":") ? `[${a}]` : a);
    if (cls === "public" || (opts.allowPrivate && !NEVER_ALLOWED.has(cls))) continue;
    const what = cls === "cgnat" ? "shared (CGNAT)" : cls.replace("_", "-");
    const unless = NEVER_ALLOWED.has(cls) ? "" : " unless the organization allows private PBX addresses";
    return { ok: false, class: cls, message: `Must not point at a name that resolves to a ${what} address (${hostname} is ${a})${unless}` };
  }
  return { ok: true };
}
