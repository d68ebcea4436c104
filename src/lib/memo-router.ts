// The app's router: Hono's TrieRouter with its answers remembered per method and path.
//
// Why: Hono's default SmartRouter prefers RegExpRouter, which refuses this API's paths (a literal segment and a
// parameter at the same place with different tails: `/workflow/fetch/{id}` and `/workflow/{id}/validate`), so every
// request walked the trie of ~200 routes and middleware, one of the largest costs per request. A route table never
// changes once requests flow, so the same method and path always match the same handlers and parameters: the answer
// is kept and reused. Bounded: at most MEMO_MAX answers (the oldest dropped first), and paths longer than
// MEMO_MAX_PATH are never kept, so odd or hostile paths cost a trie walk, as before, and never memory.
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";

export const MEMO_MAX = 1_000;
export const MEMO_MAX_PATH = 256;

export class MemoRouter<T> implements Router<T> {
  readonly name = "MemoRouter + TrieRouter";
  readonly #trie = new TrieRouter<T>();
  readonly #memo = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    // Routes are added before the first request; should one come later, nothing remembered may predate it.
    this.#memo.clear();
    this.#trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MEMO_MAX_PATH) return this.#trie.match(method, path);
    const key = `${method} ${path}`;
    let result = this.#memo.get(key);
    if (!result) {
      // Hono only reads a match's handlers and parameters (HonoRequest decodes them on each read), so one answer
      // can serve every request for the same method and path.
      result = this.#trie.match(method, path);
      if (this.#memo.size >= MEMO_MAX) this.#memo.delete(this.#memo.keys().next().value as string);
      this.#memo.set(key, result);
    }
    return result;
  }

  /** Test support: how many answers are remembered. */
  get remembered(): number {
    return this.#memo.size;
  }
}
