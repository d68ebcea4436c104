// An independent SigV4 query-signature computation (AWS "Authenticating Requests: Using Query Parameters"),
// written from the spec with WebCrypto so the tests never check aws4fetch against itself.
const enc = new TextEncoder();

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

async function hmacRaw(key: ArrayBuffer | Uint8Array, data: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", k, enc.encode(data));
}

/** RFC 3986 percent-encoding of one query name or value (AWS's UriEncode). */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

export type PresignInput = {
  method: string;
  host: string;
  path: string; // already URI-encoded, as it appears in the URL
  query: Record<string, string>; // every query parameter except X-Amz-Signature
  headers: Record<string, string>; // signed headers other than host, lowercase names
  secretAccessKey: string;
  date: string; // YYYYMMDD
  amzDate: string; // YYYYMMDDTHHMMSSZ
  region: string;
  service: string;
};

export async function expectedSignature(p: PresignInput): Promise<{ signature: string; canonicalRequest: string }> {
  const query = Object.entries(p.query)
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const headers = { ...p.headers, host: p.host };
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n as keyof typeof headers].trim()}\n`).join("");
  const canonicalRequest = [p.method, p.path, query, canonicalHeaders, names.join(";"), "UNSIGNED-PAYLOAD"].join("\n");
  const scope = `${p.date}/${p.region}/${p.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", p.amzDate, scope, hex(await crypto.subtle.digest("SHA-256", enc.encode(canonicalRequest)))].join("\n");
  const kDate = await hmacRaw(enc.encode("AWS4" + p.secretAccessKey), p.date);
  const kRegion = await hmacRaw(kDate, p.region);
  const kService = await hmacRaw(kRegion, p.service);
  const kSigning = await hmacRaw(kService, "aws4_request");
  return { signature: hex(await hmacRaw(kSigning, stringToSign)), canonicalRequest };
}
