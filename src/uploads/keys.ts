// Upload keys: chosen by the server under the organization, `campaigns/{org_id}/{uuid}/{safe file name}`.
// Only URL-safe characters reach a key, so the S3 and Worker-served URLs never disagree on encoding.

export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
export const UPLOAD_EXPIRES_SECONDS = 900;
export const UPLOAD_CONTENT_TYPE = "text/csv";

const MAX_NAME = 100;

/** A file name reduced to `[A-Za-z0-9._-]`, without leading dots, at most 100 characters; never empty. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  let safe = base
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents dropped, letters kept: "Liste-été" -> "Liste-ete"
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^[._]+/, "");
  if (safe.length > MAX_NAME) {
    // Keep the extension when shortening: a long name still ends in ".csv".
    const dot = safe.lastIndexOf(".");
    const ext = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : "";
    safe = safe.slice(0, MAX_NAME - ext.length) + ext;
  }
  return safe || "upload.csv";
}

export function newFileKey(orgId: number, fileName: string, uuid: string = crypto.randomUUID()): string {
  return `campaigns/${orgId}/${uuid}/${safeFileName(fileName)}`;
}

const KEY = /^campaigns\/(\d+)\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

/** True for a key of the shape this server issues. */
export function isWellFormedKey(key: string): boolean {
  return KEY.test(key);
}

/** True when `key` is a well-formed key under this organization (anything else is never read for it). */
export function keyBelongsTo(orgId: number, key: string): boolean {
  const m = KEY.exec(key);
  return m !== null && Number(m[1]) === orgId;
}
