// Reading a DNS-over-HTTPS answer (the JSON form), and the resolver over a fetch the test plays: A and AAAA asked
// together, NXDOMAIN an empty answer, a failing resolver null (the caller refuses the request then).
import { describe, expect, it } from "vitest";
import { addressesOf, dohResolver } from "../../src/lib/dns";

describe("DNS over HTTPS", () => {
  it("reads A and AAAA records, follows nothing else, and tells an answer from a failure", () => {
    const answer = {
      Status: 0,
      Answer: [
        { name: "www.example.com", type: 5, data: "example.com." },
        { name: "example.com", type: 1, data: "127.0.0.1" },
        { name: "example.com", type: 28, data: "::1" },
      ],
    };
    expect(addressesOf(answer)).toEqual(["127.0.0.1", "::1"]);
    expect(addressesOf({ Status: 3 })).toEqual([]);
    expect(addressesOf({ Status: 2 })).toBeNull();
    expect(addressesOf("<html>")).toBeNull();
  });

  it("asks A and AAAA over the given fetch with the JSON media type; a failure is null", async () => {
    const asked: string[] = [];
    const fetcher = (async (url: string, init: RequestInit) => {
      asked.push(`${url} ${new Headers(init.headers).get("accept")}`);
      const type = new URL(url).searchParams.get("type");
      return Response.json({ Status: 0, Answer: [{ type: type === "A" ? 1 : 28, data: type === "A" ? "10.0.0.7" : "fd00::7" }] });
    }) as unknown as typeof fetch;
    expect(await dohResolver(fetcher, "https://dns.test/dns-query")("intranet.example.com")).toEqual(["10.0.0.7", "fd00::7"]);
    expect(asked.sort()).toEqual([
      "https://dns.test/dns-query?name=intranet.example.com&type=A application/dns-json",
      "https://dns.test/dns-query?name=intranet.example.com&type=AAAA application/dns-json",
    ]);
    const down = (async () => new Response("busy", { status: 503 })) as unknown as typeof fetch;
    expect(await dohResolver(down)("example.com")).toBeNull();
    const broken = (async () => {
      throw new Error("network");
    }) as unknown as typeof fetch;
    expect(await dohResolver(broken)("example.com")).toBeNull();
  });
});
