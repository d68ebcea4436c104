// An agent may not make the service call itself: an HTTP tool's url or a webhook node's url at this deployment's own
// origin (PUBLIC_BASE_URL, or the origin the saving request came in on) would let a model or a call's end reach
// edgedial's API with whatever the agent sends. Checked at save (a 422 at the field); a tool is checked again at every
// request (src/agent/http-tool.ts).
import type { ValidationItem } from "../lib/errors";
import { isObject, type Obj } from "../lib/helpers";
import { checkOutboundUrl } from "../lib/url-guard";

type Origins = ReadonlyArray<string | null | undefined>;

/** Every url of `definition` that points at this service, as 422 items located in the request body. */
export function ownOriginProblems(definition: Obj, ownOrigins: Origins): ValidationItem[] {
  const out: ValidationItem[] = [];
  const check = (url: unknown, loc: (string | number)[]) => {
    if (typeof url !== "string" || !url.trim()) return;
    const v = checkOutboundUrl(url.trim(), { allowPrivate: true, ownOrigins });
    if (!v.ok && v.class === "own_origin") out.push({ loc: ["body", "workflow_definition", ...loc], msg: v.message, type: "value_error" });
  };
  for (const [i, t] of (Array.isArray(definition.tools) ? definition.tools : []).entries()) if (isObject(t)) check(t.url, ["tools", i, "url"]);
  for (const [i, n] of (Array.isArray(definition.nodes) ? definition.nodes : []).entries())
    if (isObject(n) && n.type === "webhook" && isObject(n.data)) check(n.data.url, ["nodes", i, "data", "url"]);
  return out;
}
