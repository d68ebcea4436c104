// The scripts' API client (scripts/lib/api.mjs, shared by agent-test.mjs and sandbox-check.mjs): what it sends, what
// it answers, and that it fails with the reason (a refusal, or no answer within its bound) instead of going on.
// The client is given a stand-in transport: this project's runtime reaches no local port and runs no child process.
import { describe, expect, it } from "vitest";
// @ts-expect-error a plain ES module of the scripts', without types
import { API_TIMEOUT_MS, apiClient } from "../../scripts/lib/api.mjs";

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>;
type Sent = { url: string; method: string; headers: Record<string, string>; body: string | undefined };

/** A transport that records each request and answers it with `answer`'s response. */
function transport(answer: (sent: Sent, signal: AbortSignal) => Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = (url: string, init: RequestInit) => {
    const s = { url, method: String(init.method), headers: init.headers as Record<string, string>, body: init.body as string | undefined };
    sent.push(s);
    return answer(s, init.signal!);
  };
  return { sent, fetch };
}

describe("the scripts' API client", () => {
  it("sends the key and a JSON body under /api/v1, and answers the parsed JSON (null when empty)", async () => {
    const t = transport(async (s) => (s.method === "DELETE" ? new Response(null, { status: 204 }) : Response.json({ id: 7 })));
    const api: Api = apiClient("http://127.0.0.1:8787/", "edk_test", { fetch: t.fetch });
    expect(await api("POST", "/workflow/create", { name: "a" })).toEqual({ id: 7 });
    expect(await api("DELETE", "/workflow/7")).toBeNull();
    expect(t.sent).toEqual([
      {
        url: "http://127.0.0.1:8787/api/v1/workflow/create",
        method: "POST",
        headers: { "X-API-Key": "edk_test", "Content-Type": "application/json" },
        body: '{"name":"a"}',
      },
      { url: "http://127.0.0.1:8787/api/v1/workflow/7", method: "DELETE", headers: { "X-API-Key": "edk_test" }, body: undefined },
    ]);
  });

  it("throws anything but a 2xx with the method, path, status and (the start of) the body", async () => {
    const t = transport(async () => Response.json({ detail: "name is required" }, { status: 422 }));
    const api: Api = apiClient("http://127.0.0.1:8787", "edk_test", { fetch: t.fetch });
    await expect(api("POST", "/workflow/create", {})).rejects.toThrow('POST /workflow/create: HTTP 422 {"detail":"name is required"}');
    const long = transport(async () => new Response("x".repeat(1000), { status: 500 }));
    const err = await (apiClient("http://h", "k", { fetch: long.fetch }) as Api)("GET", "/a").catch((e: Error) => e);
    expect((err as Error).message).toBe(`GET /a: HTTP 500 ${"x".repeat(400)}`);
  });

  it("gives up on a request with no answer within its bound, and names a transport failure", async () => {
    // Never answers: only the client's own bound ends the wait.
    const silent = transport((_s, signal) => new Promise((_r, reject) => signal.addEventListener("abort", () => reject(signal.reason))));
    const started = Date.now();
    await expect((apiClient("http://h", "k", { fetch: silent.fetch, timeoutMs: 300 }) as Api)("GET", "/workflow/1")).rejects.toThrow(
      "GET /workflow/1: no answer within 0.3 s",
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(API_TIMEOUT_MS).toBe(60_000);
    const refused = transport(async () => {
      throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:8787") });
    });
    await expect((apiClient("http://h", "k", { fetch: refused.fetch }) as Api)("GET", "/x")).rejects.toThrow("GET /x: connect ECONNREFUSED 127.0.0.1:8787");
  });
});
