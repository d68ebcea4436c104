// /organizations/suppressions: the organization's do-not-call list, kept by its organization object, which checks
// it before every dial (campaign dials and single calls). Numbers are E.164 (as every dial is normalized).
import { createRoute, z } from "@hono/zod-openapi";
import Papa from "papaparse";
import { createRouter } from "../lib/app";
import { audit } from "../lib/audit";
import { base64Decode, base64UrlEncode } from "../lib/crypto";
import { getDb } from "../lib/db";
import { ApiError, invalid, notFound, unprocessable, type ValidationItem } from "../lib/errors";
import { errors, json } from "../lib/schemas";
import { organizationStub } from "../organizations/organization-object";
import { parseE164 } from "./numbers";

const tags = ["organizations"];
const PATH = "/organizations/suppressions";
export const MAX_SUPPRESSIONS_PER_REQUEST = 10_000;

const Suppression = z
  .object({
    phone_number: z.string().openapi({ example: "+14155550100" }),
    reason: z.string().nullable(),
    source: z.enum(["api", "csv"]),
    created_at: z.string(),
  })
  .openapi("Suppression");

const Added = z.object({ added: z.number().int(), already_listed: z.number().int(), total: z.number().int() }).openapi("SuppressionsAdded");

const Reason = z.string().trim().min(1).max(200);
const AddSuppressions = z
  .strictObject({
    phone_numbers: z.array(z.string().max(32)).min(1).max(MAX_SUPPRESSIONS_PER_REQUEST),
    reason: Reason.optional(),
  })
  .openapi("AddSuppressions");

const NumberParam = z.object({
  phone_number: z
    .string()
    .max(32)
    .openapi({ param: { name: "phone_number", in: "path" }, example: "+14155550100" }),
});

const about =
  "Numbers on the list are never called: a campaign contact whose turn comes is finished as `suppressed` without a call (logged `dial_skipped`, counted in progress `calling_rules.skipped.suppressed`), and a single call to one is a 422 at `phone_number` (type `number_suppressed`). Checked by the organization's coordinator before every dial, so a number added while a campaign runs is not called from then on.";

const list = createRoute({
  method: "get",
  path: PATH,
  tags,
  summary: "The suppression (do-not-call) list, in number order",
  description: about,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(1000).default(100),
      cursor: z.string().min(1).max(200).optional().openapi({ description: "The previous page's next_cursor" }),
    }),
  },
  responses: {
    200: json(z.object({ items: z.array(Suppression), total: z.number().int(), next_cursor: z.string().nullable() }).openapi("SuppressionPage")),
    ...errors(401, 422),
  },
});

const add = createRoute({
  method: "post",
  path: PATH,
  tags,
  summary: "Add numbers to the suppression list",
  description: `${about} Up to ${MAX_SUPPRESSIONS_PER_REQUEST} E.164 numbers; any invalid one is a located 422 and nothing is added. A number already listed keeps its first reason.`,
  request: { body: { content: { "application/json": { schema: AddSuppressions } }, required: true } },
  responses: { 200: json(Added), ...errors(401, 422) },
});

const addCsv = createRoute({
  method: "post",
  path: `${PATH}/csv`,
  tags,
  summary: "Add the numbers of a CSV file to the suppression list",
  description: `${about} The body is the CSV itself (\`Content-Type: text/csv\`, at most 1 MB): a header row with a \`phone_number\` column (other columns, such as \`reason\`, are read when present). Any invalid row is a 422 located at \`body\`, row and column, and nothing is added.`,
  request: { body: { content: { "text/csv": { schema: z.string() } }, required: true } },
  responses: { 200: json(Added), ...errors(401, 415, 422) },
});

const getOne = createRoute({
  method: "get",
  path: `${PATH}/{phone_number}`,
  tags,
  summary: "Whether a number is on the suppression list",
  request: { params: NumberParam },
  responses: { 200: json(Suppression), ...errors(401, 404) },
});

const remove = createRoute({
  method: "delete",
  path: `${PATH}/{phone_number}`,
  tags,
  summary: "Take a number off the suppression list",
  request: { params: NumberParam },
  responses: { 204: { description: "Removed" }, ...errors(401, 404) },
});

const view = (r: { number: string; reason: string | null; source: string; created_at: string }) => ({
  phone_number: r.number,
  reason: r.reason,
  source: r.source as "api" | "csv",
  created_at: r.created_at,
});

function cursorNumber(cursor: string | undefined): string | null {
  if (!cursor) return null;
  try {
    const n = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(base64Decode(cursor));
    if (n.length > 0 && n.length <= 40) return n;
  } catch {
    // the 422 below
  }
  throw invalid(["query", "cursor"], "Invalid cursor", "value_error", cursor);
}

/** The path's number, read as `+…` however the client encoded it (a `+` in a path can arrive as a space). */
function pathNumber(raw: string): string {
  const n = raw.trim().replace(/^ /, "+");
  return n.startsWith("+") ? n : `+${n}`;
}

/** Every number normalized, or a 422 listing each bad one at its place; duplicates within the request merged. */
function readNumbers(raw: { value: string; loc: (string | number)[] }[]): string[] {
  const problems: ValidationItem[] = [];
  const out = new Set<string>();
  for (const r of raw) {
    const p = parseE164(r.value.trim());
    if (p.ok) out.add(p.value);
    else if (problems.length < 100) problems.push({ loc: r.loc, msg: p.message, type: "value_error", input: r.value });
  }
  if (problems.length) throw unprocessable(problems);
  return [...out];
}

export const suppressionsRouter = createRouter()
  .openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await organizationStub(c.env, c.get("orgId")).suppressions(cursorNumber(cursor), limit);
    const last = page.items.length === limit ? page.items[page.items.length - 1].number : null;
    return c.json({ items: page.items.map(view), total: page.total, next_cursor: last ? base64UrlEncode(new TextEncoder().encode(last)) : null }, 200);
  })
  .openapi(add, async (c) => {
    const body = c.req.valid("json");
    const numbers = readNumbers(body.phone_numbers.map((value, i) => ({ value, loc: ["body", "phone_numbers", i] })));
    const org = organizationStub(c.env, c.get("orgId"));
    const r = await org.suppress(
      numbers.map((number) => ({ number, reason: body.reason ?? null })),
      "api",
    );
    await audit(c, getDb(c.env), { action: "update", resourceType: "suppression_list", resourceId: c.get("orgId"), summary: { source: "api", ...r } });
    const { total } = await org.suppressions(null, 1);
    return c.json({ added: r.added, already_listed: r.existing, total }, 200);
  })
  .openapi(addCsv, async (c) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "text/csv") throw new ApiError(415, "Send the CSV itself with Content-Type: text/csv");
    const text = await c.req.text();
    const parsed = Papa.parse<Record<string, string>>(text.replace(/^\uFEFF/, ""), { header: true, skipEmptyLines: "greedy" });
    const fields = (parsed.meta.fields ?? []).map((f) => f.trim());
    if (!fields.includes("phone_number")) throw invalid(["body"], "The CSV needs a header row with a phone_number column", "missing_column");
    const rows = parsed.data.slice(0, MAX_SUPPRESSIONS_PER_REQUEST * 10);
    const numbers = readNumbers(rows.map((r, i) => ({ value: String(r.phone_number ?? ""), loc: ["body", i + 2, "phone_number"] })));
    const reasons = new Map<string, string>();
    for (const r of rows) {
      const p = parseE164(String(r.phone_number ?? "").trim());
      if (p.ok && r.reason?.trim()) reasons.set(p.value, r.reason.trim().slice(0, 200));
    }
    const org = organizationStub(c.env, c.get("orgId"));
    const result = { added: 0, existing: 0 };
    for (let i = 0; i < numbers.length; i += MAX_SUPPRESSIONS_PER_REQUEST) {
      const r = await org.suppress(
        numbers.slice(i, i + MAX_SUPPRESSIONS_PER_REQUEST).map((number) => ({ number, reason: reasons.get(number) ?? null })),
        "csv",
      );
      result.added += r.added;
      result.existing += r.existing;
    }
    await audit(c, getDb(c.env), { action: "update", resourceType: "suppression_list", resourceId: c.get("orgId"), summary: { source: "csv", ...result } });
    const { total } = await org.suppressions(null, 1);
    return c.json({ added: result.added, already_listed: result.existing, total }, 200);
  })
  .openapi(getOne, async (c) => {
    const row = await organizationStub(c.env, c.get("orgId")).suppression(pathNumber(c.req.valid("param").phone_number));
    if (!row) throw notFound("Suppressed number");
    return c.json(view(row), 200);
  })
  .openapi(remove, async (c) => {
    const number = pathNumber(c.req.valid("param").phone_number);
    if (!(await organizationStub(c.env, c.get("orgId")).unsuppress(number))) throw notFound("Suppressed number");
    await audit(c, getDb(c.env), { action: "delete", resourceType: "suppression_list", resourceId: c.get("orgId"), summary: { phone_number: number } });
    return c.body(null, 204);
  });
