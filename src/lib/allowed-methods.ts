// 405 Method Not Allowed: which methods a path supports, derived from the routes the app registered (never a
// hand-kept list), so a path that exists answers 405 with `Allow` for another method while unknown paths stay 404.
import type { Context } from "hono";
import { TrieRouter } from "hono/router/trie-router";

type RouteLike = { method: string; path: string };

/** Hono matches HEAD against GET routes (answering without a body), so a GET route allows HEAD too. */
function withHead(methods: Set<string>): string[] {
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

const paramCount = (path: string) => (path.match(/\/:/g) ?? []).length;

/**
 * A matcher over `routes` (middleware, registered as ALL, is left out), rebuilt when routes are added. Where a
 * literal route and a parameterized one both match (`/campaign/create` and `/campaign/{campaign_id}`), the
 * literal one names the resource: only the routes with the fewest path parameters count.
 */
export function allowedMethods(routes: readonly RouteLike[]): (path: string) => string[] {
  let router: TrieRouter<RouteLike> | null = null;
  let built = -1;
  return (path) => {
    if (!router || built !== routes.length) {
      router = new TrieRouter<RouteLike>();
      for (const r of routes) if (r.method !== "ALL") router.add("ALL", r.path, r);
      built = routes.length;
    }
    const [matches] = router.match("GET", path) as [[RouteLike, unknown][]];
    const fewest = Math.min(...matches.map(([r]) => paramCount(r.path)));
    return withHead(new Set(matches.filter(([r]) => paramCount(r.path) === fewest).map(([r]) => r.method.toUpperCase())));
  };
}

/** The app's answer when no route took the request: 405 with `Allow` if the path exists for other methods, else 404. */
export function notFoundOrNotAllowed(routes: readonly RouteLike[]) {
  const allowedFor = allowedMethods(routes);
  return (c: Context) => {
    const allowed = allowedFor(c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method.toUpperCase())) {
      return c.json({ detail: "Method Not Allowed" }, 405, { Allow: allowed.join(", ") });
    }
    return c.json({ detail: "Not Found" }, 404);
  };
}
