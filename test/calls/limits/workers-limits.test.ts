// The limit-enforcing layer itself (test/calls/limits/workers-limits.ts): six connections waiting for headers and a
// seventh held back until one has them, subrequests refused past the limit, every binding a session uses counted,
// and nothing counted outside a session.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../../src/lib/db";
import { organizations } from "../../../src/db/schema";
import { installLimits, Ledger, routeLocally, within, WORKERS_LIMITS } from "./workers-limits";

installLimits();
afterEach(() => routeLocally(() => null));

/**
 * `http://held.test/<n>` answers only when the test releases it (or its signal aborts); `started` lists the ones that
 * went out. `http://held.test/now` answers at once.
 */
function heldServer() {
  const started: number[] = [];
  const release = new Map<number, (r: Response) => void>();
  routeLocally((input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url === "http://held.test/now") return Promise.resolve(new Response("now"));
    const m = /^http:\/\/held\.test\/(\d+)$/.exec(url);
    if (!m) return null;
    started.push(Number(m[1]));
    return new Promise<Response>((resolve, reject) => {
      release.set(Number(m[1]), resolve);
      init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
    });
  });
  return { started, answer: (n: number, body = "ok") => release.get(n)?.(new Response(body)) };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("connections waiting for response headers", () => {
  it("six go out at once; a seventh waits until one of them has its headers, then goes", async () => {
    const server = heldServer();
    const ledger = new Ledger("t");
    const all = within(ledger, () => Array.from({ length: 7 }, (_, i) => fetch(`http://held.test/${i}`)));
    await settle();
    expect(server.started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ledger.queued.map((q) => q.what)).toEqual(["http://held.test/6"]);
    server.answer(3);
    await settle();
    expect(server.started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const n of [0, 1, 2, 4, 5, 6]) server.answer(n);
    expect((await Promise.all(all)).map((r) => r.status)).toEqual(Array(7).fill(200));
    expect([ledger.waiting, ledger.peakWaiting, ledger.subrequests]).toEqual([0, 6, 7]);
  });

  it("a slot is held only until the headers: a body still streaming does not hold one", async () => {
    const server = heldServer();
    const ledger = new Ledger("t");
    const first = await within(ledger, async () => {
      const p = Array.from({ length: 6 }, (_, i) => fetch(`http://held.test/${i}`));
      await settle();
      for (let i = 0; i < 6; i++) server.answer(i);
      return Promise.all(p);
    });
    // Six responses open, their bodies unread: six more go out at once.
    within(ledger, () => Array.from({ length: 6 }, (_, i) => fetch(`http://held.test/${10 + i}`)));
    await settle();
    expect(server.started).toHaveLength(12);
    expect(ledger.queued).toEqual([]);
    expect(ledger.open).toBe(6);
    expect(ledger.peakOpen).toBe(6);
    await first[0].text();
    await first[1].body?.cancel();
    expect(ledger.open).toBe(4);
  });

  it("a request aborted while it waits for a slot leaves the queue and never goes out", async () => {
    const server = heldServer();
    const ledger = new Ledger("t");
    const abort = new AbortController();
    within(ledger, () => Array.from({ length: 6 }, (_, i) => fetch(`http://held.test/${i}`)));
    const seventh = within(ledger, () => fetch("http://held.test/6", { signal: abort.signal }));
    await settle();
    abort.abort(new Error("gave up"));
    await expect(seventh).rejects.toThrow("gave up");
    server.answer(0);
    await settle();
    expect(server.started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ledger.waiting).toBe(5);
  });
});

describe("subrequests", () => {
  it("past the limit the next one throws, as the runtime's does, and nothing goes out", async () => {
    const server = heldServer();
    const ledger = new Ledger("t", { connections: WORKERS_LIMITS.connections, subrequests: 3 });
    within(ledger, () => [0, 1, 2].map((i) => fetch(`http://held.test/${i}`)));
    await expect(within(ledger, () => fetch("http://held.test/now"))).rejects.toThrow(/^Too many subrequests by single Worker invocation/);
    await settle();
    expect(server.started).toEqual([0, 1, 2]);
    expect(ledger.subrequests).toBe(3);
  });

  it("D1 statements, R2 calls (a multipart upload's too) and Durable Object calls count; outside a session nothing does", async () => {
    const ledger = new Ledger("t");
    const key = `limits/${crypto.randomUUID()}`;
    await within(ledger, async () => {
      await env.DB.prepare("SELECT 1").first();
      await getDb(env).select().from(organizations).limit(1).all();
      await env.DB.batch([env.DB.prepare("SELECT 1"), env.DB.prepare("SELECT 2")]);
      await env.UPLOADS.put(key, "x");
      const upload = await env.UPLOADS.createMultipartUpload(`${key}-mp`);
      const part = await env.UPLOADS.resumeMultipartUpload(`${key}-mp`, upload.uploadId).uploadPart(1, "y");
      await upload.complete([part]);
      await env.CALL_SESSION.get(env.CALL_SESSION.idFromName(`limits-${key}`)).mediaState();
    });
    expect(ledger.byKind).toEqual({ d1: 3, r2: 4, "durable-object": 1 });
    expect(ledger.requests).toContain("r2 uploadPart");
    await env.DB.prepare("SELECT 1").first();
    await env.UPLOADS.delete([key, `${key}-mp`]);
    expect(ledger.subrequests).toBe(8);
  });
});
