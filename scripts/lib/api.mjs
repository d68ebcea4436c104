// The edgedial API as the scripts call it (agent-test.mjs, sandbox-check.mjs): one JSON request with the
// organization's key, its answer parsed, and anything but a 2xx, or no answer within a bound, thrown with the method,
// the path and what came back, so a script fails with the reason instead of going on or waiting forever.

/** How long one request may take before the script gives up on it (a runtime that stopped answering). */
export const API_TIMEOUT_MS = 60_000;

/**
 * `api(method, path, body?)` against `base` (for example http://127.0.0.1:8787) under /api/v1 with `key`: the parsed
 * JSON answer (null when empty). `fetch`: the transport (a test's stand-in; the global one otherwise).
 */
export function apiClient(base, key, { timeoutMs = API_TIMEOUT_MS, fetch = globalThis.fetch } = {}) {
  const root = `${String(base).replace(/\/+$/, "")}/api/v1`;
  return async function api(method, path, body) {
    let res;
    try {
      res = await fetch(`${root}${path}`, {
        method,
        headers: { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const why = err?.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : String(err?.cause?.message ?? err?.message ?? err);
      throw new Error(`${method} ${path}: ${why}`);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : null;
  };
}
