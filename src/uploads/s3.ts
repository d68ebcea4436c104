// SigV4 query-signed PUT URLs straight to R2's S3 endpoint.
// Host, content type and content length are signed, so the object lands only under the issued key, with the
// declared type and exactly the declared size; the expiry is part of the signed query.
import { AwsV4Signer } from "aws4fetch";

export type S3Target = {
  endpoint: string; // https://<account>.r2.cloudflarestorage.com, or an override (a local S3 server in tests)
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
};

type S3Env = Pick<Env, "R2_ACCOUNT_ID" | "R2_ACCESS_KEY_ID" | "R2_SECRET_ACCESS_KEY" | "R2_BUCKET_NAME"> & {
  /** Optional var: another S3 endpoint (path-style), for the integration suite's local S3 server. */
  R2_S3_ENDPOINT?: string;
};

/** The S3 target when credentials are fully configured, else null (the Worker-served upload route is used). */
export function s3TargetFromEnv(env: S3Env): S3Target | null {
  const endpoint = env.R2_S3_ENDPOINT?.trim() || (env.R2_ACCOUNT_ID ? `https://${env.R2_ACCOUNT_ID}.r2.cloudflarestorage.com` : "");
  if (!endpoint || !env.R2_ACCESS_KEY_ID || !env.R2_SECRET_ACCESS_KEY || !env.R2_BUCKET_NAME) return null;
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    bucket: env.R2_BUCKET_NAME,
    accessKeyId: env.R2_ACCESS_KEY_ID,
    secretAccessKey: env.R2_SECRET_ACCESS_KEY,
    region: "auto", // R2's only region
  };
}

/** `YYYYMMDDTHHMMSSZ`, the SigV4 timestamp. */
export function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, "");
}

/** A presigned path-style PUT URL for `key`, valid `expiresIn` seconds from `nowMs`. */
export async function presignS3Put(t: S3Target, key: string, opts: { size: number; contentType: string; expiresIn: number; nowMs: number }): Promise<string> {
  const signer = new AwsV4Signer({
    method: "PUT",
    url: `${t.endpoint}/${t.bucket}/${key}?X-Amz-Expires=${opts.expiresIn}`,
    headers: { "content-type": opts.contentType, "content-length": String(opts.size) },
    accessKeyId: t.accessKeyId,
    secretAccessKey: t.secretAccessKey,
    service: "s3",
    region: t.region,
    datetime: amzDate(opts.nowMs),
    signQuery: true,
    allHeaders: true, // content-type and content-length are "unsignable" by default; sign them
  });
  const signed = await signer.sign();
  return signed.url.toString();
}
