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

  it("a name that resolves to a loopback or private address is that address: refused unless allowed; unresolvable: refused", async () => {
    const f = fake(() => new Response("ok"));
    const dns = (answers: Record<string, string[] | null>) => ({
      asked: [] as string[],
      resolve(host: string) {
        this.asked.push(host);
        return Promise.resolve(host in answers ? answers[host] : []);
      },
    });
    const d = dns({
      "localtest.me": ["127.0.0.1"],
      "rebind.example.com": ["93.184.216.34", "::1"],
      "intranet.example.com": ["10.1.2.3"],
      "gone.example.com": null,
    });
    const run = (url: string, allow = false) => runHttpTool(tool({ url }), {}, { ...ctx(f.fetcher, allow), resolve: (h: string) => d.resolve(h) });
    const loop = await run("http://localtest.me:8787/api/v1/organizations/api-keys");
    expect(loop.record.status).toBe("refused");
    expect(loop.content).toMatch(/resolves to a loopback address \(localtest\.me is 127\.0\.0\.1\)/);
    expect((await run("https://rebind.example.com/x")).record.status).toBe("refused");
    expect((await run("https://intranet.example.com/x")).record.status).toBe("refused");
    expect((await run("https://gone.example.com/x")).content).toMatch(/could not be resolved/);
    expect(f.seen).toHaveLength(0);
    // The organization that allows private addresses may name its own hosts; a public answer passes.
    expect((await run("https://intranet.example.com/x", true)).content).toBe("ok");
    expect((await run("https://api.example.com/orders")).content).toBe("ok");
    // Addresses are not asked about; special-use names never reach DNS.
    d.asked.length = 0;
    expect((await run("http://127.0.0.1:9/x", true)).content).toBe("ok");
    expect((await run("https://shop.test/x")).record.status).toBe("refused");
    expect(d.asked).toEqual([]);
  });

  it("every spelling of loopback and localhost is refused without asking DNS", async () => {
    const f = fake(() => new Response("ok"));
    const resolve = () => Promise.reject(new Error("DNS must not be asked"));
    for (const url of [
      "http://localhost:8787/x",
      "http://LOCALHOST./x",
      "http://api.localhost/x",
      "http://%6c%6fcalhost/x",
      "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/x",
      "http://127.1/x",
      "http://0x7f.1/x",
      "http://2130706433/x",
      "http://0177.0.0.1/x",
      "http://127\u30020\u30020\u30021/x",
      "http://[::1]/x",
      "http://[0:0:0:0:0:0:0:1]/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://[::ffff:7f00:1]/x",
      "http://0/x",
      "http://x.invalid/x",
    ]) {
      const out = await runHttpTool(tool({ url }), {}, { ...ctx(f.fetcher, false), resolve });
      expect(out.record.status, url).toBe("refused");
    }
    expect(f.seen).toHaveLength(0);
  });

  it("this service itself is refused whatever the organization allows", async () => {
    const f = fake(() => new Response("ok"));
    const own = { ...ctx(f.fetcher, true), ownOrigins: ["https://edgedial.example.com"] };
    for (const url of [
      "https://edgedial.example.com/api/v1/organizations/api-keys",
      "https://EDGEDIAL.example.com./api/v1/x",
      "https://edgedial.example.com:8443/x",
    ]) {
      const out = await runHttpTool(tool({ url }), {}, own);
      expect(out.record.status, url).toBe("refused");
      expect(out.content, url).toMatch(/this service itself/);
    }
    expect(f.seen).toHaveLength(0);
    expect((await runHttpTool(tool({ url: "https://api.example.com/x" }), {}, own)).content).toBe("ok");
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
