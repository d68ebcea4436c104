// POST /campaign/{campaign_id}/contacts: adds a second CSV's contacts to a draft, running or paused campaign
// (append.ts). The listing of the same path (GET) lives with the other campaign reads in control.routes.ts.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { audit } from "../lib/audit";
import { getDb } from "../lib/db";
import { invalid } from "../lib/errors";
import { IDEMPOTENCY_HEADER, idempotencyKeyHeader, withIdempotency } from "../lib/idempotency";
import { errors, idParam, json, ONE_OF_SOURCES } from "../lib/schemas";
import { DefaultCountry } from "../telephony/numbers";
import { appendContacts, type AppendOutcome } from "./append";
import { CAMPAIGN_STATES } from "./view";
import { OnInvalid, RefusedRowsCsv } from "./partial-import";

const AppendContacts = z
  .strictObject({
    source_url: z.string().min(1).optional().openapi({
      description:
        "The `file_key` returned by POST /s3/presigned-upload-url, a key under this organization: a CSV with the same rules as at create (a `phone_number` column, the greeting override columns, every template variable the agent uses as a column). One of `source_url` and its alias `source_id` is required; when both are sent, `source_url` is used.",
    }),
    source_id: z.string().min(1).optional().openapi({ description: "Alias of `source_url` (one of the two is required)." }),
    default_country: DefaultCountry.openapi({
      example: "US",
      description: "ISO 3166 alpha-2: as at create, a phone_number without + is read as a national number of this country (carriers only).",
    }),
    on_invalid: OnInvalid,
  })
  .openapi("AppendContacts", ONE_OF_SOURCES);

const AppendedContacts = z
  .object({
    campaign_id: z.int(),
    state: z.enum(CAMPAIGN_STATES),
    added: z.int().openapi({ description: "Contacts added to the campaign (queued: a running campaign dials them)" }),
    skipped_existing: z.int().openapi({ description: "Rows whose number is already in the campaign: not added again" }),
    skipped_examples: z
      .array(z.object({ row: z.int().openapi({ description: "The row in this file (header = 1)" }), phone_number: z.string() }))
      .openapi({ description: "The first few skipped rows, in row order (at most 5)" }),
    file_rows: z.int().openapi({ description: "Contact rows in the file: added + skipped_existing (+ refused.rows with on_invalid skip)" }),
    total_rows: z.int().openapi({ description: "The campaign's contacts after the append" }),
    refused: RefusedRowsCsv.optional(),
  })
  .openapi("AppendedContacts");

const append = createRoute({
  method: "post",
  path: "/campaign/{campaign_id}/contacts",
  tags: ["campaigns"],
  summary: "Add the contacts of another uploaded CSV to a draft, running or paused campaign (all or nothing)",
  description:
    'The file is checked as create checks it: it exists under the organization (422); every row (422, one item per problem with `loc: ["body", "source_url", row, column]`, at most 100, the total in the first item\'s `ctx.total_errors`, including numbers the calling policy refuses and a number twice in the file); every template variable the agent uses and gives no default is a column, and no row leaves it blank (422); the campaign holds at most 1,000,000 contacts (422 `csv_too_many_rows` at the first row past it). Nothing is added when a check fails, unless `on_invalid: "skip"`: then the rows that pass are added and the refused ones come back in `refused` as CSV. Numbers already in the campaign are skipped and reported. A running campaign dials the new contacts under its schedule, concurrency, pace and the calling rules. 409 in `importing`, `completed`, `cancelled` and `failed` (a finished campaign takes no contacts: redial it or create a new one), and while another file is being added to the same campaign.',
  request: {
    params: idParam("campaign_id"),
    headers: z.object({ [IDEMPOTENCY_HEADER]: idempotencyKeyHeader("Replays the first response for the same key, campaign and body within 24 hours") }),
    body: { content: { "application/json": { schema: AppendContacts } }, required: true },
  },
  responses: { 200: json(AppendedContacts), ...errors(401, 404, 409, 422) },
});

export const campaignAppendRouter = createRouter().openapi(append, async (c) => {
  const { campaign_id } = c.req.valid("param");
  const body = c.req.valid("json");
  const source = body.source_url ?? body.source_id;
  if (source === undefined) throw invalid(["body", "source_url"], "Field required", "missing");
  const orgId = c.get("orgId");
  const key = c.req.header(IDEMPOTENCY_HEADER);
  const result = await withIdempotency(c.env, { orgId, scope: "campaign_contacts", key, request: { campaign_id, body } }, async () => {
    const outcome = await appendContacts(c.env, orgId, campaign_id, { source_url: source, default_country: body.default_country, on_invalid: body.on_invalid });
    await audit(c, getDb(c.env), {
      action: "add_contacts",
      resourceType: "campaign",
      resourceId: campaign_id,
      summary: { source_url: source, added: outcome.added, skipped_existing: outcome.skipped_existing, total_rows: outcome.total_rows },
    });
    return { status: 200, body: outcome };
  });
  return c.json(result.body as AppendOutcome, 200);
});
