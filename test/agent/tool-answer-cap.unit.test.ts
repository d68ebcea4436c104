// The model reads at most 16 kB (16,384 bytes) of an HTTP tool's answer, as docs/agent-actions.md states: the bound
// is written here as the documented number, not taken from the code's constant, so raising the cap fails this test.
import { describe, expect, it } from "vitest";
import type { HttpTool } from "../../src/agent/actions";
import { runHttpTool } from "../../src/agent/http-tool";

const CAP = 16 * 1024;
const tool: HttpTool = {
  name: "lookup",
  description: "",
  parameters: {},
  url: "https://api.example.com/orders",
  method: "GET",
  headers: {},
  timeoutMs: 1000,
  nodes: null,
};
/** A fetcher answering `body` in chunks of 4,000 bytes (a cap must hold across reads, not only within one). */
const answering = (body: string) =>
  (async () => {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 4000) c.enqueue(bytes.subarray(i, i + 4000));
        c.close();
      },
    });
    return new Response(stream, { status: 200 });
  }) as unknown as typeof fetch;
const run = (body: string) => runHttpTool(tool, {}, { headers: {}, allowsPrivate: async () => false, fetcher: answering(body) });

describe("the tool answer cap (16 kB)", () => {
  it("an answer of exactly 16,384 bytes is read whole, without a note", async () => {
    const out = await run("a".repeat(16_384));
    expect(out.content).toBe("a".repeat(16_384));
    expect(out.record.status).toBe("ok");
  });

  it("one byte more is cut at 16,384 bytes, and the model is told", async () => {
    const out = await run(`${"a".repeat(16_384)}b`);
    expect(out.content).toBe(`${"a".repeat(16_384)}\n[The answer was cut at 16384 bytes]`);
  });

  it("a 64 kB answer gives the model 16,384 bytes of it", async () => {
    const out = await run("c".repeat(64 * 1024));
    expect(out.content.startsWith("c".repeat(CAP))).toBe(true);
    expect(out.content.slice(CAP)).toBe("\n[The answer was cut at 16384 bytes]");
  });
});
