// POST /s3/presigned-upload-url in both modes, and the Worker-served signed upload route.
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { clock } from "../../src/lib/clock";
import { createOrg, type Org } from "../helpers";
import { expectedSignature } from "./sigv4";

type Json = any;

async function send(req: Request, envOverride: Partial<Env> = {}) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, { ...env, ...envOverride } as Env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  let json: Json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

function presign(org: Org, body: unknown, envOverride: Partial<Env> = {}) {
  return send(
    new Request("http://edgedial.test/api/v1/s3/presigned-upload-url", {
      method: "POST",
      headers: { "X-API-Key": org.key, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    envOverride,
  );
}

const put = (url: string, body: BodyInit | null, headers: Record<string, string> = { "Content-Type": "text/csv" }) =>
  send(new Request(url, { method: "PUT", headers, body }));

const CSV = "phone_number,name\n+14155550100,Ada\n";
const size = (s: string) => new TextEncoder().encode(s).byteLength;

let org: Org;
beforeAll(async () => {
  org = await createOrg();
});
afterEach(() => clock.set(null));

describe("presign request validation", () => {
  it("needs an API key", async () => {
    const res = await send(
      new Request("http://edgedial.test/api/v1/s3/presigned-upload-url", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ file_name: "a.csv", file_size: 1, content_type: "text/csv" }),
      }),
    );
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: "Not authenticated" });
  });

  it("refuses a content type other than text/csv", async () => {
    const res = await presign(org, { file_name: "a.csv", file_size: 10, content_type: "application/pdf" });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "content_type"], type: "literal_error", input: "application/pdf" });
  });

  it("refuses a size below 1 byte and names missing fields", async () => {
    const zero = await presign(org, { file_name: "a.csv", file_size: 0, content_type: "text/csv" });
    expect(zero.status).toBe(422);
    expect(zero.json.detail[0]).toMatchObject({ loc: ["body", "file_size"], type: "greater_than_equal" });
    const missing = await presign(org, { file_size: 3, content_type: "text/csv" });
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0]).toMatchObject({ loc: ["body", "file_name"], type: "missing", msg: "Field required" });
  });

  it("answers 413 above 100 MB, and accepts exactly 100 MB", async () => {
    const over = await presign(org, { file_name: "a.csv", file_size: 100 * 1024 * 1024 + 1, content_type: "text/csv" });
    expect(over.status).toBe(413);
    expect(over.json.detail).toMatch(/too large/i);
    const at = await presign(org, { file_name: "a.csv", file_size: 100 * 1024 * 1024, content_type: "text/csv" });
    expect(at.status).toBe(200);
  });
});

describe("presign with R2 S3 credentials (SigV4)", () => {
  const creds = {
    R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
    R2_ACCESS_KEY_ID: "AKIDEXAMPLE0000000000",
    R2_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    R2_BUCKET_NAME: "edgedial-uploads",
  };

  it("signs a PUT to R2's endpoint that matches an independently computed signature", async () => {
    clock.set(Date.UTC(2026, 10, 22, 12, 34, 56));
    const res = await presign(org, { file_name: "My Contacts (v2).csv", file_size: 1234, content_type: "text/csv" }, creds);
    expect(res.status).toBe(200);
    const { upload_url, file_key, s3_key, expires_in } = res.json;
    expect(s3_key).toBe(file_key);
    expect(expires_in).toBe(900);
    expect(file_key).toMatch(new RegExp(`^campaigns/${org.id}/[0-9a-f-]{36}/My_Contacts_v2_.csv$`));

    const url = new URL(upload_url);
    expect(url.protocol).toBe("https:");
    expect(url.host).toBe(`${creds.R2_ACCOUNT_ID}.r2.cloudflarestorage.com`);
    expect(url.pathname).toBe(`/${creds.R2_BUCKET_NAME}/${file_key}`);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": `${creds.R2_ACCESS_KEY_ID}/20261122/auto/s3/aws4_request`,
      "X-Amz-Date": "20261122T123456Z",
      "X-Amz-Expires": "900",
      "X-Amz-SignedHeaders": "content-length;content-type;host",
    });
    const { "X-Amz-Signature": signature, ...unsigned } = q;
    expect(Object.keys(unsigned).sort()).toEqual(["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders"]);

    const expected = await expectedSignature({
      method: "PUT",
      host: url.host,
      path: url.pathname,
      query: unsigned,
      headers: { "content-type": "text/csv", "content-length": "1234" },
      secretAccessKey: creds.R2_SECRET_ACCESS_KEY,
      date: "20261122",
      amzDate: "20261122T123456Z",
      region: "auto",
      service: "s3",
    });
    expect(signature).toBe(expected.signature);

    // The same computation with another content type or size gives another signature: both are bound.
    for (const headers of [
      { "content-type": "text/plain", "content-length": "1234" },
      { "content-type": "text/csv", "content-length": "1235" },
    ]) {
      const other = await expectedSignature({
        method: "PUT",
        host: url.host,
        path: url.pathname,
        query: unsigned,
        headers,
        secretAccessKey: creds.R2_SECRET_ACCESS_KEY,
        date: "20261122",
        amzDate: "20261122T123456Z",
        region: "auto",
        service: "s3",
      });
      expect(other.signature).not.toBe(signature);
    }
  });

  it("uses the endpoint override (path-style) when set", async () => {
    const res = await presign(org, { file_name: "a.csv", file_size: 5, content_type: "TEXT/CSV" }, {
      ...creds,
      R2_S3_ENDPOINT: "http://127.0.0.1:7480/",
    } as Partial<Env>);
    expect(res.status).toBe(200);
    const url = new URL(res.json.upload_url);
    expect(url.origin).toBe("http://127.0.0.1:7480");
    expect(url.pathname).toBe(`/edgedial-uploads/${res.json.file_key}`);
  });

  it("falls back to the Worker-served URL when any credential is missing", async () => {
    const res = await presign(org, { file_name: "a.csv", file_size: 5, content_type: "text/csv" }, { ...creds, R2_SECRET_ACCESS_KEY: "" });
    expect(res.status).toBe(200);
    expect(res.json.upload_url).toMatch(/^http:\/\/edgedial\.test\/api\/v1\/uploads\/campaigns\//);
  });
});

describe("the independent SigV4 computation", () => {
  // AWS's published example (S3 docs, "Authenticating Requests: Using Query Parameters"): GET test.txt, 86400 s.
  it("reproduces AWS's documented example signature", async () => {
    const { signature } = await expectedSignature({
      method: "GET",
      host: "examplebucket.s3.amazonaws.com",
      path: "/test.txt",
      query: {
        "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
        "X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
        "X-Amz-Date": "20130524T000000Z",
        "X-Amz-Expires": "86400",
        "X-Amz-SignedHeaders": "host",
      },
      headers: {},
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      date: "20130524",
      amzDate: "20130524T000000Z",
      region: "us-east-1",
      service: "s3",
    });
    expect(signature).toBe("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  });
});

describe("Worker-served upload URL", () => {
  async function grant(content = CSV, name = "contacts.csv") {
    const res = await presign(org, { file_name: name, file_size: size(content), content_type: "text/csv" });
    expect(res.status).toBe(200);
    return res.json as { upload_url: string; file_key: string; expires_in: number };
  }

  it("stores exactly the declared bytes under the key, without an API key", async () => {
    const g = await grant();
    expect(g.expires_in).toBe(900);
    expect(g.upload_url.startsWith(`http://edgedial.test/api/v1/uploads/${g.file_key}?`)).toBe(true);
    const res = await put(g.upload_url, CSV, { "Content-Type": "text/csv; charset=utf-8" });
    expect(res.status).toBe(200);
    const obj = await env.UPLOADS.get(g.file_key);
    expect(await obj!.text()).toBe(CSV);
    expect(obj!.httpMetadata?.contentType).toBe("text/csv");
  });

  it("honors PUBLIC_BASE_URL for the URL's origin", async () => {
    const res = await presign(org, { file_name: "a.csv", file_size: 5, content_type: "text/csv" }, { PUBLIC_BASE_URL: "https://dial.example.com" });
    expect(res.json.upload_url).toMatch(/^https:\/\/dial\.example\.com\/api\/v1\/uploads\/campaigns\//);
  });

  it("refuses an expired URL (403) and stores nothing", async () => {
    const start = Date.now();
    clock.set(start);
    const g = await grant();
    clock.set(start + 899_000);
    const early = await put(g.upload_url, CSV);
    expect(early.status).toBe(200);
    await env.UPLOADS.delete(g.file_key);
    clock.set(start + 901_000);
    const late = await put(g.upload_url, CSV);
    expect(late.status).toBe(403);
    expect(late.json).toEqual({ detail: "Upload URL has expired" });
    expect(await env.UPLOADS.head(g.file_key)).toBeNull();
  });

  it("refuses a tampered URL (403): signature, key, size, type or expiry changed, or a parameter missing", async () => {
    const g = await grant();
    const url = new URL(g.upload_url);
    const variants: URL[] = [];
    const withParam = (k: string, v: string | null) => {
      const u = new URL(url);
      if (v === null) u.searchParams.delete(k);
      else u.searchParams.set(k, v);
      return u;
    };
    const sig = url.searchParams.get("sig")!;
    variants.push(withParam("sig", (sig[0] === "A" ? "B" : "A") + sig.slice(1)));
    variants.push(withParam("size", String(size(CSV) + 100)));
    variants.push(withParam("type", "text/plain"));
    variants.push(withParam("expires", String(Number(url.searchParams.get("expires")) + 3600)));
    variants.push(withParam("sig", null));
    const otherKey = new URL(url);
    otherKey.pathname = url.pathname.replace(`/campaigns/${org.id}/`, `/campaigns/${org.id + 1}/`);
    variants.push(otherKey);
    const renamed = new URL(url);
    renamed.pathname = url.pathname.replace("contacts.csv", "other.csv");
    variants.push(renamed);
    for (const v of variants) {
      const res = await put(v.toString(), CSV);
      expect(res.status, v.toString()).toBe(403);
      expect(res.json).toEqual({ detail: "Invalid upload signature" });
    }
    expect(await env.UPLOADS.head(g.file_key)).toBeNull();
  });

  it("refuses a body larger than declared (413), by Content-Length or while streaming, and stores nothing", async () => {
    const g = await grant();
    const bigger = CSV + "+14155550101,Bob\n";
    const byLength = await put(g.upload_url, bigger);
    expect(byLength.status).toBe(413);
    expect(byLength.json.detail).toMatch(/too large/i);
    // It names the file_size the URL was issued for (the presign limit would not help the client).
    expect(byLength.json.detail).toContain(`declared file_size of ${size(CSV)} bytes`);

    // No Content-Length: the limit is enforced on the bytes as they arrive.
    const bytes = new TextEncoder().encode(bigger);
    const stream = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(bytes.slice(0, 10));
        ctl.enqueue(bytes.slice(10));
        ctl.close();
      },
    });
    const streamed = await put(g.upload_url, stream);
    expect(streamed.status).toBe(413);
    expect(streamed.json.detail).toContain(`declared file_size of ${size(CSV)} bytes`);
    expect(await env.UPLOADS.head(g.file_key)).toBeNull();
  });

  it("refuses a body shorter than declared (422) and stores nothing", async () => {
    const g = await grant();
    const res = await put(g.upload_url, CSV.slice(0, 5));
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body"], type: "upload_size_mismatch", ctx: { declared: size(CSV), received: 5 } });
    const streamedShort = await put(
      g.upload_url,
      new ReadableStream<Uint8Array>({
        start(ctl) {
          ctl.enqueue(new TextEncoder().encode(CSV.slice(0, 7)));
          ctl.close();
        },
      }),
    );
    expect(streamedShort.status).toBe(422);
    expect(streamedShort.json.detail[0].ctx).toEqual({ declared: size(CSV), received: 7 });
    expect(await env.UPLOADS.head(g.file_key)).toBeNull();
  });

  it("refuses another content type (415) and stores nothing", async () => {
    const g = await grant();
    for (const headers of [{ "Content-Type": "text/plain" }, {} as Record<string, string>]) {
      const res = await put(g.upload_url, CSV, headers);
      expect(res.status).toBe(415);
      expect(res.json.detail).toMatch(/^Unsupported Media Type: expected Content-Type text\/csv/);
    }
    expect(await env.UPLOADS.head(g.file_key)).toBeNull();
  });

  it("refuses a path that is not a key this server issues", async () => {
    const res = await put("http://edgedial.test/api/v1/uploads/../../etc/passwd?size=1&type=text%2Fcsv&expires=9999999999&sig=x", "x");
    expect([403, 404]).toContain(res.status);
  });
});
