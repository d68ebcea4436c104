// The app's router remembers matches (src/lib/memo-router.ts): every answer must be the trie's own, and the memory
// it keeps bounded.
import { beforeAll, describe, expect, it } from "vitest";
import type { Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { app, mountAllRouters } from "../../src/app";
import { MEMO_MAX, MEMO_MAX_PATH, MemoRouter } from "../../src/lib/memo-router";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Concrete paths for a route pattern: parameters as an id, a word, a literal sibling's name; plus a tail and a slash. */
function pathsFor(pattern: string): string[] {
  const fill = (v: string) => pattern.replace(/:[^/{]+(\{[^}]*\})?/g, v).replace(/\*$/, "x/y");
  return [fill("1"), fill("create"), fill("abc"), `${fill("7")}/extra`, `${fill("1")}/`];
}

describe("MemoRouter", () => {
  // The routers are mounted when a request needs them (src/app.ts); these read the whole route table.
  beforeAll(mountAllRouters);

  it("answers every method and path exactly as a plain TrieRouter over the same routes, first and when remembered", () => {
    expect(app.router).toBeInstanceOf(MemoRouter);
    // What Hono gives its router for each route (hono-base's #addRoute): [handler, the route].
    const trie = new TrieRouter<[unknown, unknown]>();
    for (const r of app.routes) trie.add(r.method, r.path, [r.handler, r]);
    const memo = app.router as Router<unknown>;
    const paths = new Set(["/", "/api/v1", "/api/v1/", "/nope", "/api/v1/nope/1", ...app.routes.flatMap((r) => pathsFor(r.path))]);
    let compared = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        const expected = trie.match(method, path);
        expect(memo.match(method, path), `${method} ${path}`).toEqual(expected);
        expect(memo.match(method, path), `${method} ${path} remembered`).toEqual(expected);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it("keeps at most MEMO_MAX answers, never a long path's, and forgets them all when a route is added", () => {
    const router = new MemoRouter<string>();
    router.add("GET", "/a/:id", "a");
    for (let i = 0; i < MEMO_MAX + 50; i++) expect(router.match("GET", `/a/${i}`)).toEqual([[["a", { id: String(i) }]]]);
    expect(router.remembered).toBe(MEMO_MAX);
    // The oldest answers went first; the newest are kept and still right.
    expect(router.match("GET", `/a/${MEMO_MAX + 49}`)).toEqual([[["a", { id: String(MEMO_MAX + 49) }]]]);
    expect(router.remembered).toBe(MEMO_MAX);

    const fresh = new MemoRouter<string>();
    fresh.add("GET", "/a/:id", "a");
    const long = "x".repeat(MEMO_MAX_PATH);
    expect(fresh.match("GET", `/a/${long}`)).toEqual([[["a", { id: long }]]]);
    expect(fresh.remembered).toBe(0);

    fresh.match("GET", "/b");
    expect(fresh.match("GET", "/b")).toEqual([[]]);
    fresh.add("GET", "/b", "b");
    expect(fresh.remembered).toBe(0);
    expect(fresh.match("GET", "/b")).toEqual([[["b", {}]]]);
  });
});
