// Campaign records: create (from an uploaded CSV), list, read, and PATCH settings. The engine's
// routes (start, pause, progress, logs, ...) live with the engine and return the same object (view.ts).
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, ne } from "drizzle-orm";
import { campaigns } from "../db/schema";
import { createRouter } from "../lib/app";
import { actorOf, audit } from "../lib/audit";
import { getDb } from "../lib/db";
import { ApiError, conflict, invalid, notFound, zodIssuesToItems } from "../lib/errors";
import { IDEMPOTENCY_HEADER, idempotencyKeyHeader, withIdempotency } from "../lib/idempotency";
import { decodeCursor, newestFirst, pageOf, pageQuery, toPage } from "../lib/pagination";
import { configurationChoice, errors, idParam, json, ONE_OF_SOURCES, refId } from "../lib/schemas";
import { DefaultCountry } from "../telephony/numbers";
import { AgentConflict } from "../workflows";
import { createCampaign } from "./create";
import { OnInvalid, RefusedRowsCsv } from "./partial-import";
import { deleteCampaign } from "./delete";
import { isFinished, refusal } from "./engine/transitions";
import {
  SETTINGS_FIELDS,
  SETTINGS_VIEW,
  SETTING_NAMES,
  completeSettings,
  mergeSettings,
  validateSettings,
  type CampaignSettings,
  type SettingsPatch,
} from "./engine/settings";
import { CAMPAIGN_STATES, Campaign, CREATING, campaignView, flattenSummary, selectSummaries, summaryView } from "./view";
import { refusalError, unwrap } from "./errors";
import { campaignStub } from "./stub";

const tags = ["campaigns"];

const CreateCampaign = z
  .strictObject({
    name: z.string().min(1).max(255),
    workflow_id: refId().openapi({ description: "The agent that makes the calls" }),
    source_type: z.literal("csv").default("csv"),
    source_url: z.string().min(1).optional().openapi({
      description:
        "The `file_key` returned by POST /s3/presigned-upload-url, a key under this organization. One of `source_url` and its alias `source_id` is required (neither is a 422 `missing` at `source_url`); when both are sent, `source_url` is used. Every column but phone_number and the greeting override columns becomes the contact's initial_context: at most 100 such columns, and at most 16 KB as JSON per row (the cap of a call's initial_context); a row over it is a located 422 `csv_context_too_large`.",
    }),
    source_id: z.string().min(1).optional().openapi({ description: "Alias of `source_url` (one of the two is required)." }),
    telephony_configuration_id: configurationChoice("Default: the organization's default configuration, or its only one"),
    default_country: DefaultCountry.openapi({
      example: "US",
      description:
        "ISO 3166 alpha-2. A phone_number without + in the file is read as a national number of this country and stored in E.164 (carriers only; a PBX's short numbers stay extensions). Without it, such a row's error suggests the E.164 form in the caller ID's country.",
    }),
    import: z.enum(["sync", "background"]).default("sync").openapi({
      description:
        '`sync` (the default): the file is imported before the answer, and any problem is a 422 with nothing created. `background`: the answer comes at once with the campaign in state `importing`; its `imported_rows` count up (GET /campaign/{id}, its progress) until it becomes `draft`. A file that does not pass makes it `failed` with no contacts, the reason in `import_error.message` and the located problems in `import_error.errors` (as the 422 would have listed them). With `on_invalid: "skip"` the rows with problems are left out instead: the campaign becomes `draft` with the others, `import_refused` counts those left out and GET /campaign/{id}/refused.csv returns them with the reason of each. For big files: a 1,000,000-row file answers in well under a second.',
    }),
    on_invalid: OnInvalid,
    ...SETTINGS_FIELDS,
  })
  .openapi("CreateCampaign", ONE_OF_SOURCES);

/** The created campaign; with `on_invalid: "skip"` also the rows left out. */
const CreatedCampaign = Campaign.extend({ refused: RefusedRowsCsv.optional() }).openapi("CreatedCampaign");

/** A settings object for PATCH: every field optional and no defaults, so fields not sent keep their values. */
function patchOf<T extends z.ZodObject>(schema: T, name: string) {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, v] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    shape[k] = (v instanceof z.ZodDefault ? (v.removeDefault() as z.ZodType) : v).optional();
  }
  return z.strictObject(shape).openapi(name);
}

const PATCH_NOTES: Record<string, string> = {
  schedule_config:
    '`null` turns the schedule off. An object is merged field by field over the current schedule: fields not sent keep their values, and `slots`, when sent, replaces the whole list (1–50). A campaign without a schedule gets `enabled: true` and `timezone: "UTC"` unless sent, and must be sent `slots`. The merged schedule is validated as a whole: a 422 is located at the field, under `body.schedule_config`.',
};

/** Every setting of the one schema, optional: objects become partial (merged field by field), nullable stays so. */
function settingsPatchShape() {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(SETTINGS_VIEW) as [string, z.ZodType][]) {
    const nullable = field instanceof z.ZodNullable;
    const inner = (nullable ? (field as z.ZodNullable<z.ZodType>).unwrap() : field) as z.ZodType;
    const pascal = name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
    const patch = inner instanceof z.ZodObject ? patchOf(inner, `${pascal}Patch`) : inner;
    const optional = (nullable ? patch.nullable() : patch).optional();
    shape[name] = PATCH_NOTES[name] ? optional.openapi({ description: PATCH_NOTES[name] }) : optional;
  }
  return shape;
}

const PatchCampaign = z
  .strictObject({
    name: z.string().min(1).max(255).optional(),
    ...settingsPatchShape(),
  })
  .openapi("UpdateCampaign");

const CampaignSummary = Campaign.omit({ logs: true }).openapi("CampaignSummary", {
  description: "A campaign as listed: every field of the campaign object but its logs (GET /campaign/{campaign_id} carries them)",
});

const ListQuery = pageQuery.extend({
  state: z.enum(CAMPAIGN_STATES).optional().openapi({ description: "Only campaigns in this state" }),
});

const create = createRoute({
  method: "post",
  path: "/campaign/create",
  tags,
  summary: "Create a campaign from an uploaded CSV (all or nothing; or imported in the background)",
  description:
    'Checks, in order: the agent exists (404) and is active (409); a telephony configuration resolves (404/409); the file exists under the organization (422); every CSV row (422, one item per problem with `loc: ["body", "source_url", row, column]`, including numbers the organization\'s calling policy refuses (`destination_not_allowed`), at most 100, the total in the first item\'s `ctx.total_errors`); every template variable the agent uses and gives no default is a column, and no row leaves it blank (422 `template_value_empty` at the row). Nothing is created when a check fails, unless `on_invalid: "skip"`: then the rows that pass make the campaign and the refused ones come back in `refused` as CSV. With `import: "background"` the file\'s rows and columns are checked by the background import instead (see `import`).',
  request: {
    headers: z.object({ [IDEMPOTENCY_HEADER]: idempotencyKeyHeader("Replays the first response for the same key and body within 24 hours") }),
    body: { content: { "application/json": { schema: CreateCampaign } }, required: true },
  },
  responses: { 200: json(CreatedCampaign), ...errors(401, 404, 409, 422), 409: AgentConflict },
});

const list = createRoute({
  method: "get",
  path: "/campaign/",
  tags,
  summary: "List campaigns, newest first",
  description: "Also served at `/campaign` (no trailing slash), the same operation.",
  request: { query: ListQuery },
  responses: { 200: json(pageOf(CampaignSummary)), ...errors(401, 422) },
});

// The same listing without the trailing slash (clients differ): served, but one operation in the document.
const listNoSlash = createRoute({ ...list, path: "/campaign", hide: true });

const get = createRoute({
  method: "get",
  path: "/campaign/{campaign_id}",
  tags,
  summary: "Get a campaign",
  request: { params: idParam("campaign_id") },
  responses: { 200: json(Campaign), ...errors(401, 404, 422) },
});

const patch = createRoute({
  method: "patch",
  path: "/campaign/{campaign_id}",
  tags,
  summary: "Change a campaign's name or settings (not once finished); takes effect at once",
  request: { params: idParam("campaign_id"), body: { content: { "application/json": { schema: PatchCampaign } }, required: true } },
  responses: { 200: json(Campaign), ...errors(401, 404, 409, 422) },
});

const remove = createRoute({
  method: "delete",
  path: "/campaign/{campaign_id}",
  tags,
  summary: "Delete a campaign that is not running (draft, completed, cancelled or failed)",
  description:
    "Its contacts, its uploaded CSV (unless another campaign was made from the same file) and its calls' recordings go; its runs stay as call history. A running, paused or importing campaign, or one whose calls are still in progress, is a 409.",
  request: { params: idParam("campaign_id") },
  responses: { 204: { description: "Deleted" }, ...errors(401, 404, 409, 422) },
});

const refusedCsvRoute = createRoute({
  method: "get",
  path: "/campaign/{campaign_id}/refused.csv",
  tags,
  summary: 'The rows a background import with `on_invalid: "skip"` left out, as CSV with the reason of each',
  description:
    "The format of a synchronous create's `refused.csv`: the file's own columns as read, then `row` (in the file, header = 1) and `reason` (every problem of the row, `; `-separated); at most 10,000 rows (the campaign's `import_refused.truncated` says when more were left out). 404 when the campaign's import left no row out, or was not a background import with `on_invalid: \"skip\"` (a synchronous one answers its refused rows in the create's response).",
  request: { params: idParam("campaign_id") },
  responses: { 200: { description: "CSV (RFC 4180, CRLF)", content: { "text/csv": { schema: z.string() } } }, ...errors(401, 404, 422) },
});

/** The merged settings must still be valid as a whole (e.g. a schedule patched onto none needs its slots). */
function checkMerged(merged: CampaignSettings, sent: Record<string, unknown>): void {
  const check = validateSettings(merged);
  if (check.ok) return;
  // Located under the field sent (`body.schedule_config.slots`); a stored part that was not sent is not the client's.
  const issues = check.issues.filter((i) => sent[String(i.path[0])] !== undefined);
  if (issues.length) throw new ApiError(422, zodIssuesToItems(issues, ["body"], merged));
}

/** One page of the organization's campaigns from their D1 summary rows (hidden while importing). */
async function listCampaigns(env: Env, orgId: number, q: z.infer<typeof ListQuery>) {
  const before = decodeCursor(q.cursor);
  const state = q.state ? eq(campaigns.state, q.state) : ne(campaigns.state, CREATING);
  const rows = await newestFirst(selectSummaries(env).$dynamic(), campaigns.id, before, q.limit, eq(campaigns.orgId, orgId), state).all();
  return toPage(
    rows.map((r) => ({ ...r, id: r.c.id })),
    q.limit,
    (r) => {
      const { logs: _logs, ...summary } = summaryView(flattenSummary(r));
      return summary;
    },
  );
}

export const campaignRecordsRouter = createRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const source = body.source_url ?? body.source_id;
    if (source === undefined) throw invalid(["body", "source_url"], "Field required", "missing");
    const orgId = c.get("orgId");
    const result = await withIdempotency(c.env, { orgId, scope: "campaign_create", key: c.req.header(IDEMPOTENCY_HEADER), request: body }, async () => {
      const created = await createCampaign(
        c.env,
        orgId,
        {
          name: body.name,
          workflow_id: body.workflow_id,
          source_url: source,
          telephony_configuration_id: body.telephony_configuration_id,
          default_country: body.default_country,
          import: body.import,
          on_invalid: body.on_invalid,
          settings: completeSettings(Object.fromEntries(SETTING_NAMES.map((n) => [n, body[n]]))),
        },
        actorOf(c),
      );
      const view = await campaignView(c.env, orgId, created.id);
      return { status: 200, body: "refused" in created ? { ...view, refused: created.refused } : view };
    });
    return c.json(result.body as z.infer<typeof CreatedCampaign>, 200);
  })
  .openapi(list, async (c) => c.json(await listCampaigns(c.env, c.get("orgId"), c.req.valid("query")), 200))
  .openapi(listNoSlash, async (c) => c.json(await listCampaigns(c.env, c.get("orgId"), c.req.valid("query")), 200))
  .openapi(get, async (c) => {
    const { campaign_id } = c.req.valid("param");
    return c.json(await campaignView(c.env, c.get("orgId"), campaign_id), 200);
  })
  .openapi(refusedCsvRoute, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const row = await getDb(c.env)
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(and(eq(campaigns.id, campaign_id), eq(campaigns.orgId, c.get("orgId")), ne(campaigns.state, CREATING)))
      .get();
    if (!row) throw notFound("Campaign");
    const report = unwrap(await campaignStub(c.env, campaign_id).refusedRows());
    if (!report) throw notFound("Rows left out by this campaign's import");
    return c.body(`${report.csv}\r\n`, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="campaign-${campaign_id}-refused.csv"`,
    }) as never;
  })
  .openapi(remove, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const orgId = c.get("orgId");
    const db = getDb(c.env);
    const row = await db
      .select({ id: campaigns.id, state: campaigns.state, sourceId: campaigns.sourceId, name: campaigns.name })
      .from(campaigns)
      .where(and(eq(campaigns.id, campaign_id), eq(campaigns.orgId, orgId), ne(campaigns.state, CREATING)))
      .get();
    if (!row) throw notFound("Campaign");
    // The object's state is the truth (D1 mirrors it a moment later).
    // A campaign whose contacts went before a failure (a second DELETE finishing the first) has only its D1 row.
    const snap = await campaignStub(c.env, campaign_id).snapshot();
    if (!snap.ok && snap.status !== 404) throw refusalError(snap);
    const state = snap.ok ? snap.value.state : row.state;
    const done = await deleteCampaign(c.env, db, orgId, { ...row, state }, campaignStub(c.env, campaign_id));
    await audit(c, db, { action: "delete", resourceType: "campaign", resourceId: campaign_id, summary: { name: row.name, ...done } });
    return c.body(null, 204);
  })
  .openapi(patch, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const body = c.req.valid("json") as SettingsPatch & Record<string, unknown>;
    const orgId = c.get("orgId");
    const current = await campaignView(c.env, orgId, campaign_id); // 404 for an unknown or another org's id
    if (isFinished(current.state)) throw conflict(refusal(current.state, "update"));
    const sent: SettingsPatch = {};
    for (const k of ["name", ...SETTING_NAMES] as const) {
      if (body[k] !== undefined) (sent as Record<string, unknown>)[k] = body[k];
    }
    checkMerged(mergeSettings(completeSettings(current), sent), sent as Record<string, unknown>);
    unwrap(await campaignStub(c.env, campaign_id).updateSettings(sent));
    // Field names, with the values of the scalar ones (the pace and concurrency are what matter for accountability).
    const scalars = Object.fromEntries((["name", "max_concurrency", "rate_limit"] as const).filter((k) => sent[k] !== undefined).map((k) => [k, sent[k]]));
    await audit(c, getDb(c.env), { action: "update", resourceType: "campaign", resourceId: campaign_id, summary: { fields: Object.keys(sent), ...scalars } });
    return c.json(await campaignView(c.env, orgId, campaign_id), 200);
  });
