// Presigned uploads against a real S3 server that verifies SigV4 (Ceph RGW on loopback, like R2 does): a URL the
// Worker signs is accepted for exactly the bytes it was issued for, and refused (403) tampered with or expired.
import { env } from "cloudflare:workers";
import { AwsClient } from "aws4fetch";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { call, createOrg, type Org } from "../helpers";

const s3 = new AwsClient({ accessKeyId: env.R2_ACCESS_KEY_ID, secretAccessKey: env.R2_SECRET_ACCESS_KEY, service: "s3", region: "auto" });
const endpoint = (env as unknown as { R2_S3_ENDPOINT: string }).R2_S3_ENDPOINT;
const bucketUrl = `${endpoint}/${env.R2_BUCKET_NAME}`;

const CSV = "phone_number,first_name\n+14155550100,Ada\n+14155550101,Bob\n";
const bytes = new TextEncoder().encode(CSV);

let org: Org;

beforeAll(async () => {
  const res = await s3.fetch(bucketUrl, { method: "PUT" });
  // 409 BucketAlreadyOwnedByYou when a previous run made it.
  expect([200, 409], await res.text()).toContain(res.status);
  org = await createOrg();
});
afterEach(() => clock.set(null));

async function presign(size = bytes.byteLength) {
  const res = await call("POST", "/api/v1/s3/presigned-upload-url", {
    key: org.key,
    body: { file_name: "contacts.csv", file_size: size, content_type: "text/csv" },
  });
  expect(res.status, res.text).toBe(200);
  return res.json as { upload_url: string; file_key: string; expires_in: number };
}

const put = (url: string, body: Uint8Array = bytes, contentType = "text/csv") => fetch(url, { method: "PUT", headers: { "Content-Type": contentType }, body });

async function stored(key: string): Promise<string | null> {
  const res = await s3.fetch(`${bucketUrl}/${key}`);
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  expect(res.status).toBe(200);
  return res.text();
}

async function refused(res: Response) {
  const text = await res.text();
  expect(res.status, text).toBe(403);
  return text;
}

describe("presigned upload to a SigV4-verifying S3 server", () => {
  it("the server accepts the signed PUT and stores exactly the bytes under the issued key", async () => {
    const g = await presign();
    const url = new URL(g.upload_url);
    expect(url.origin).toBe(new URL(endpoint).origin);
    expect(url.pathname).toBe(`/${env.R2_BUCKET_NAME}/${g.file_key}`);
    expect(g.file_key).toMatch(new RegExp(`^campaigns/${org.id}/`));
    const res = await put(g.upload_url);
    expect(res.status, await res.text()).toBe(200);
    expect(await stored(g.file_key)).toBe(CSV);
  });

  it("refuses a tampered URL: signature, key, expiry or signed headers changed", async () => {
    const g = await presign();
    const url = new URL(g.upload_url);
    const variants: [string, URL][] = [];
    const sig = url.searchParams.get("X-Amz-Signature")!;
    const withParam = (k: string, v: string) => {
      const u = new URL(url);
      u.searchParams.set(k, v);
      return u;
    };
    variants.push(["signature", withParam("X-Amz-Signature", (sig[0] === "a" ? "b" : "a") + sig.slice(1))]);
    variants.push(["expiry", withParam("X-Amz-Expires", "86400")]);
    variants.push(["signed headers", withParam("X-Amz-SignedHeaders", "host")]);
    const otherKey = new URL(url);
    otherKey.pathname = url.pathname.replace("contacts.csv", "other.csv");
    variants.push(["key", otherKey]);
    for (const [what, u] of variants) {
      await refused(await put(u.toString()));
      expect(await stored(g.file_key), what).toBeNull();
    }
    expect(await stored(g.file_key.replace("contacts.csv", "other.csv"))).toBeNull();
  });

  it("refuses a body of another size or another content type than was signed", async () => {
    const g = await presign();
    await refused(await put(g.upload_url, new TextEncoder().encode(CSV + "+14155550102,Cy\n")));
    await refused(await put(g.upload_url, bytes.slice(0, 10)));
    await refused(await put(g.upload_url, bytes, "text/plain"));
    expect(await stored(g.file_key)).toBeNull();
  });

  it("refuses an expired URL, and accepts one still inside its 900 seconds", async () => {
    clock.set(Date.now() - 16 * 60_000);
    const expired = await presign();
    expect(expired.expires_in).toBe(900);
    await refused(await put(expired.upload_url));
    expect(await stored(expired.file_key)).toBeNull();

    clock.set(Date.now() - 14 * 60_000);
    const fresh = await presign();
    clock.set(null);
    const res = await put(fresh.upload_url);
    expect(res.status, await res.text()).toBe(200);
    expect(await stored(fresh.file_key)).toBe(CSV);
  });
});
