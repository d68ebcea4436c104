// An HTTP tool's request on its own, over a fetch the test plays: the model's arguments as the query (GET) or JSON
// body, the opened headers sent; redirects refused, errors and timeouts as plain errors for the model, the answer cut
// at its cap, the organization's network policy asked at every request, and a header's value never in what comes back.
import { describe, expect, it } from "vitest";
import { type HttpTool, httpTools } from "../../src/agent/actions";
import { MAX_TOOL_RESPONSE_BYTES, runHttpTool } from "../../src/agent/http-tool";

const SECRET = "Bearer sk-live-0123456789";
const tool = (over: Partial<HttpTool> = {}): HttpTool => ({
  name: "lookup",
  description: "",
  parameters: {},
  url: "https://api.example.com/orders?src=agent",
  method: "GET",
  headers: {},
  timeoutMs: 1000,
  nodes: null,
  ...over,
});

type Seen = { url: string; init: RequestInit };
function fake(answer: (seen: Seen) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const fetcher = (async (url: string, init: RequestInit) => {
    const s = { url, init };
    seen.push(s);
    return answer(s);
  }) as unknown as typeof fetch;
  return { seen, fetcher };
}
const ctx = (fetcher: typeof fetch, allow = false) => ({ headers: { Authorization: SECRET }, allowsPrivate: async () => allow, fetcher });

describe("an HTTP tool's request", () => {
  it("GET: the arguments in the query; POST: as a JSON body; the headers sent; the answer back as text", async () => {
    const f = fake(() => new Response('{"status":"shipped"}', { status: 200 }));
    const out = await runHttpTool(tool(), { order: "A17", qty: 2 }, ctx(f.fetcher));
    expect(out.content).toBe('{"status":"shipped"}');
    expect(out.record).toMatchObject({ name: "lookup", arguments: { order: "A17", qty: 2 }, status: "ok", http_status: 200 });
    expect(f.seen[0].url).toBe("https://api.example.com/orders?src=agent&order=A17&qty=2");
    expect(new Headers(f.seen[0].init.headers).get("authorization")).toBe(SECRET);
    expect(f.seen[0].init.redirect).toBe("manual");

    const p = fake(() => new Response(null, { status: 204 }));
    const posted = await runHttpTool(tool({ method: "POST" }), { order: "A17" }, ctx(p.fetcher));
    expect(p.seen[0].init.body).toBe('{"order":"A17"}');
    expect(new Headers(p.seen[0].init.headers).get("content-type")).toBe("application/json");
    expect(posted.content).toBe("(The tool answered HTTP 204 with no content)");
  });

  it("a redirect is not followed; a 500 and an unreachable host are errors the model reads", async () => {
    const r = await runHttpTool(tool(), {}, ctx(fake(() => new Response(null, { status: 302, headers: { Location: "http://10.0.0.1/" } })).fetcher));
    expect(r.content).toBe("Error: the tool answered with a redirect (HTTP 302), which is not followed");
    expect(r.record).toMatchObject({ status: "error", http_status: 302 });
    const e = await runHttpTool(tool(), {}, ctx(fake(() => new Response("database down", { status: 500 })).fetcher));
    expect(e.content).toBe("Error: the tool answered HTTP 500: database down");
    const down = await runHttpTool(
      tool(),
      {},
      ctx(
        fake(() => {
          throw new TypeError("connection refused");
        }).fetcher,
      ),
    );
    expect(down.content).toBe("Error: the tool could not be reached: connection refused");
  });

  it("a tool that does not answer in time is a timeout", async () => {
    const slow = fake(
      (s) =>
        new Promise<Response>((_, reject) =>
          s.init.signal?.addEventListener("abort", () => reject(Object.assign(new Error("timed out"), { name: "TimeoutError" }))),
        ),
    );
    const out = await runHttpTool(tool({ timeoutMs: 100 }), {}, ctx(slow.fetcher));
    expect(out.content).toBe("Error: the tool did not answer within 0.1 s");
    expect(out.record.status).toBe("timeout");
    expect(out.record.duration_ms).toBeGreaterThanOrEqual(90);
  });

  it("the answer is cut at the cap, with a note", async () => {
    const big = "x".repeat(MAX_TOOL_RESPONSE_BYTES + 5000);
    const out = await runHttpTool(tool(), {}, ctx(fake(() => new Response(big)).fetcher));
    expect(out.content).toBe(`${"x".repeat(MAX_TOOL_RESPONSE_BYTES)}\n[The answer was cut at ${MAX_TOOL_RESPONSE_BYTES} bytes]`);
  });

  it("a private address is refused unless the organization allows it; metadata never", async () => {
    const f = fake(() => new Response("ok"));
    const refused = await runHttpTool(tool({ url: "http://127.0.0.1:9/x" }), {}, ctx(f.fetcher, false));
    expect(refused.content).toMatch(/^Error: the tool's address is refused: /);
    expect(refused.record.status).toBe("refused");
    expect(f.seen).toHaveLength(0);
    expect((await runHttpTool(tool({ url: "http://127.0.0.1:9/x" }), {}, ctx(f.fetcher, true))).content).toBe("ok");
    expect((await runHttpTool(tool({ url: "http://169.254.169.254/latest" }), {}, ctx(f.fetcher, true))).record.status).toBe("refused");
  });

  it("a header's value echoed by the tool is blanked before the model reads it, and is in no error", async () => {
    const echo = await runHttpTool(tool(), {}, ctx(fake((s) => new Response(`you sent ${new Headers(s.init.headers).get("authorization")}`)).fetcher));
    expect(echo.content).toBe("you sent [redacted]");
    const err = await runHttpTool(tool(), {}, ctx(fake(() => new Response(`bad token ${SECRET}`, { status: 401 })).fetcher));
    expect(err.content).toBe("Error: the tool answered HTTP 401: bad token [redacted]");
    expect(JSON.stringify(err.record)).not.toContain("sk-live");
  });

  it("reads the definition's tools (method upper-cased, default timeout, nodes)", () => {
    const [t] = httpTools({ tools: [{ name: "a", url: "https://x.example/", method: "post", nodes: [] }] });
    expect(t).toMatchObject({ name: "a", method: "POST", timeoutMs: 5000, nodes: null });
  });
});
