// Campaign operations: start, pause, resume, cancel, redial, progress, logs and runs. Each handler checks
// the organization, then asks the campaign's Durable Object, which owns state and counts.
import { readThrough } from "../lib/read-cache";
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, ne } from "drizzle-orm";
import type { Context, MiddlewareHandler } from "hono";
import { campaigns, workflowRuns } from "../db/schema";
import { createRouter } from "../lib/app";
import type { AppEnv } from "../lib/types";
import { actorOf, audit } from "../lib/audit";
import { getDb } from "../lib/db";
import { CALL_SETTINGS, requireSettings } from "../lib/deployment";
import { ApiError, conflict, notFound } from "../lib/errors";
import { decodeCursor, encodeCursor, newestFirst, pageOf, pageQuery } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { runsPage } from "../calls/runs/recordings";
import { WorkflowRunListItem } from "../calls/runs/runs";
import { requireReady } from "../calls/start/start";
import { requirePassingTests } from "../agent-tests/gate";
import { resolveTelephonyConfig } from "../telephony/resolve";
import { findConfig } from "../telephony/store";
import { AgentConflict, getWorkflow, loadUsableWorkflow } from "../workflows";
import { ANSWERED_NO_CONVERSATION, DEFAULT_REDIAL_OUTCOMES } from "./engine/outcomes";
import { CONFIG_GONE, redialCampaign } from "./redial";
import { resultsCsv } from "./results-csv";
import { nextState, refusal } from "./engine/transitions";
import type { CampaignState } from "./engine/object-api";
import { unwrap } from "./errors";
import { campaignStub } from "./stub";
import { CAMPAIGN_STATES, Campaign, CampaignLog, CREATING, campaignView } from "./view";

const tags = ["campaigns"];
const params = idParam("campaign_id");

const FINAL_OUTCOMES = ["completed", ANSWERED_NO_CONVERSATION, "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"] as const;

const RedialBody = z
  .strictObject({
    outcomes: z
      .array(z.enum(FINAL_OUTCOMES))
      .min(1)
      .optional()
      .openapi({ description: "Final outcomes whose contacts the new campaign dials (default busy, no_answer, voicemail)" }),
  })
  .openapi("RedialCampaign");

const Progress = z
  .object({
    campaign_id: z.number().int(),
    state: z.enum(CAMPAIGN_STATES),
    total_rows: z.number().int(),
    imported_rows: z.number().int().openapi({ description: "Contacts imported so far: counts up while the state is `importing`" }),
    processed_rows: z.number().int(),
    failed_calls: z.number().int(),
    progress_percentage: z.number(),
    source_sync: z.object({ status: z.enum(["pending", "completed", "failed"]), last_synced_at: z.string().nullable(), error: z.string().nullable() }),
    rate_limit: z.number().int(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    total: z.number().int(),
    processed: z.number().int().openapi({ description: "Contacts attempted at least once" }),
    completed: z
      .number()
      .int()
      .openapi({ description: "Contacts reached: the call was answered and a conversation took place (the callee said something the agent understood)" }),
    answered_no_conversation: z.number().int().openapi({
      description:
        "Contacts whose call was answered but with no conversation (the callee said nothing the agent understood: silence, a dead line); their outcome is `answered_no_conversation`, not retried",
    }),
    failed: z.number().int().openapi({ description: "Contacts with no attempts left and no success" }),
    pending: z.number().int().openapi({ description: "Contacts not attempted yet" }),
    retry_waiting: z.number().int().openapi({ description: "Contacts called at least once whose next attempt waits (its delay, or the next window)" }),
    in_progress: z.number().int().openapi({
      description:
        "Calls being started or in progress. pending + retry_waiting + in_progress + completed + answered_no_conversation + failed = total at every moment",
    }),
    completion_percentage: z.number(),
    next_window_at: z.string().nullable().openapi({ description: "When outside the schedule: the next window opening" }),
    dispositions: z.record(z.string(), z.int()).openapi({ description: "Calls per disposition the voice agent chose (call_disposition_codes)" }),
    answering_machines: z
      .object({
        answered: z.number().int().openapi({ description: "Calls answered (final status completed or voicemail)" }),
        machines: z.number().int().openapi({
          description:
            "Of those, calls a machine answered (status voicemail: a voicemail greeting, a mailbox's beep or a fax tone, by the carrier's verdict or the agent's own detection; docs/answering-machines.md)",
        }),
        rate: z.number().openapi({ description: "machines / answered (0 before any call was answered)" }),
        amd_classes: z.record(z.string(), z.int()).openapi({
          description:
            "Calls per class the agent judged who answered (human, machine_greeting, beep, ivr_menu, call_screening, fax_tone, silence; classes with none left out), each call's being its run's `amd_class`. Calls the carrier judged are not in it",
          example: { human: 40, machine_greeting: 9, ivr_menu: 2, call_screening: 1 },
        }),
      })
      .openapi({ description: "The campaign's machine rate; each run's own verdict (class, evidence) is its `amd` (GET the run)" }),
    calling_rules: z
      .object({
        held_local_hours: z.number().int().openapi({ description: "Contacts ready to call but outside their local hours now" }),
        skipped: z.record(z.string(), z.int()).openapi({
          description: "Dials skipped by the organization's calling rules, by reason: suppressed (never called), attempt_cap (deferred), local_hours (held)",
        }),
        attempt_cap_wait: z
          .object({
            contacts: z.number().int().openapi({ description: "Contacts waiting because their number reached the attempt cap (campaign dials only)" }),
            next_at: z.string().nullable().openapi({ description: "When the cap lets the first of them be dialed (ISO 8601); null when none waits" }),
          })
          .openapi({ description: "Contacts held by the organization's attempt cap, and when it frees (docs/calling-rules.md)" }),
      })
      .openapi({ description: "What the organization's calling rules are doing to this campaign" }),
    waiting_for: z.enum(["org_cap", "engine_capacity", "attempt_cap"]).nullable().openapi({
      description:
        "While running: what holds the next calls back. org_cap: the organization's concurrent-call limit; engine_capacity: the deployment's AI engines are fully used by calls in progress (docs/capacity.md); attempt_cap: only contacts whose numbers reached the organization's attempt cap are left, dialed from calling_rules.attempt_cap_wait.next_at (docs/calling-rules.md); null: nothing",
    }),
  })
  .openapi("CampaignProgress");

const ContactRun = z.object({
  attempt: z.int(),
  run_id: z.int().nullable(),
  status: z.string().openapi({ description: "`dialing`, `in_flight`, or the call's final status" }),
  disposition: z.string().nullable(),
});

const Contact = z
  .object({
    id: z.int(),
    row: z.int().openapi({ description: "The contact's line in the CSV (the header is line 1)" }),
    phone_number: z.string(),
    status: z.enum(["pending", "retry_waiting", "in_progress", "done", "skipped"]),
    attempts: z.int(),
    outcome: z.string().nullable().openapi({
      description:
        "The final outcome once the contact is done: the call's final status, or `answered_no_conversation` for an answered call with no conversation",
    }),
    disposition: z.string().nullable().openapi({ description: "The newest disposition the agent chose on this contact's calls" }),
    runs: z.array(ContactRun).openapi({ description: "Each attempt's run (GET /workflow/{workflow_id}/runs/{run_id})" }),
  })
  .openapi("CampaignContact");

/** A paged list under the campaign (cursor and limit). */
const listRoute = <T extends z.ZodType>(path: string, summary: string, item: T) =>
  createRoute({
    method: "get",
    path: `/campaign/{campaign_id}/${path}`,
    tags,
    summary,
    request: { params, query: pageQuery },
    responses: { 200: json(pageOf(item)), ...errors(401, 404, 422) },
  });

const contacts = listRoute("contacts", "The campaign's contacts in row order, each with its calls (runs) and disposition", Contact);

const resultsCsvRoute = createRoute({
  method: "get",
  path: "/campaign/{campaign_id}/results.csv",
  tags,
  summary: "The campaign's results as CSV, streamed: one row per contact",
  description:
    "Columns: `row`, `phone_number`, the file's own columns, `status`, `attempts`, `outcome` (the latest call's; final once `status` is `done`; `answered_no_conversation` where the call was answered and nobody spoke, `completed` for a conversation), `disposition`, `gathered.<name>` for each variable the agent extracts, `run_ids` (`;`-separated), then the newest call's `duration_seconds` (the recording's length where the session ended the call), `end_reason`, `conversation` (true: the callee said something the agent understood; false: answered, no conversation), `caller_audio_s`, `agent_audio_s`, `transfer_outcome`, `summary` (the analysis', at most 500 characters), `cost_usd` (an estimate, the dashboard's rate table) and `recording_url` (a signed link valid for 7 days). Text a spreadsheet would run as a formula is prefixed with `'`.",
  request: { params },
  responses: { 200: { description: "CSV (RFC 4180, CRLF)", content: { "text/csv": { schema: z.string() } } }, ...errors(401, 404, 422) },
});

const eventsRoute = createRoute({
  method: "get",
  path: "/campaign/{campaign_id}/events",
  tags,
  summary: "Pushed progress: a WebSocket that sends the campaign's progress at once and after every change",
  description:
    'Upgrade with `Upgrade: websocket`. Each message is `{"type": "progress", "data": <the progress object>}`; `ping` is answered with `{"type": "pong"}`. A browser, which cannot set headers on a WebSocket, offers the subprotocols `edgedial.events` and its API key (`new WebSocket(url, ["edgedial.events", key])`); the answer selects `edgedial.events`. Idle watchers cost nothing (the campaign\'s object hibernates them).',
  request: { params },
  responses: { 101: { description: "Switching Protocols: the progress follows as messages" }, ...errors(401, 404, 422, 426) },
});

const operation = (verb: "start" | "pause" | "resume" | "cancel", summary: string) =>
  createRoute({
    method: "post",
    path: `/campaign/{campaign_id}/${verb}`,
    tags,
    summary,
    request: { params },
    // Start and resume need a usable agent: their 409 may list an invalid definition's problems.
    responses: { 200: json(Campaign), ...errors(401, 404, 409, 422), ...(verb === "start" || verb === "resume" ? { 409: AgentConflict } : {}) },
  });

const start = operation("start", "Start a draft campaign (or continue a paused one)");
const pause = operation("pause", "Pause: no new calls; calls in progress finish and are recorded");
const resume = operation("resume", "Resume a paused campaign");
const cancel = operation("cancel", "Cancel: pending contacts are skipped; calls in progress finish");

/** The redial body is optional, and some clients send Content-Type: application/json with no body at all. Hono's
 *  JSON validator would call that malformed (422 json_invalid), so for this route an empty (or blank) body reads as
 *  `{}`, the default outcomes. Runs before the validator; a non-empty body, malformed or not, is left alone.
 *  Without a Content-Type the blank body must stay empty: the media-type gate refuses (415) any body it can read
 *  back, and with no Content-Type the validator supplies `{}` itself, like the other (bodiless) actions. */
const emptyBodyMeansDefaults: MiddlewareHandler = async (c, next) => {
  if ((await c.req.text()).trim() === "") {
    // Hono caches the body text as a promise here (its type says string); the validator and json() read it back.
    c.req.bodyCache.text = Promise.resolve(c.req.header("content-type") ? "{}" : "") as unknown as string;
  }
  await next();
};

const redial = createRoute({
  method: "post",
  path: "/campaign/{campaign_id}/redial",
  tags,
  summary: "Create a new draft campaign with the contacts whose final outcome is in `outcomes`",
  middleware: [emptyBodyMeansDefaults],
  request: { params, body: { content: { "application/json": { schema: RedialBody } }, required: false } },
  responses: { 200: json(Campaign, "The new (child) campaign"), ...errors(401, 404, 409, 422), 409: AgentConflict },
});

const progress = createRoute({
  method: "get",
  path: "/campaign/{campaign_id}/progress",
  tags,
  summary: "A real-time snapshot of the campaign's progress",
  request: { params },
  responses: { 200: json(Progress), ...errors(401, 404, 422) },
});

const logs = listRoute("logs", "The campaign's log, newest first", CampaignLog);

const runs = listRoute("runs", "The campaign's calls (workflow runs), newest first", WorkflowRunListItem);

type Owned = { id: number; workflowId: number; telephonyConfigurationId: number | null; state: string; settings: Record<string, unknown> };

/** The campaign's summary row if it is this organization's (and not still being created), else 404. */
async function owned(env: Env, orgId: number, id: number): Promise<Owned> {
  const row = await getDb(env)
    .select({
      id: campaigns.id,
      workflowId: campaigns.workflowId,
      telephonyConfigurationId: campaigns.telephonyConfigurationId,
      state: campaigns.state,
      settings: campaigns.settings,
    })
    .from(campaigns)
    .where(and(eq(campaigns.id, id), eq(campaigns.orgId, orgId), ne(campaigns.state, CREATING)))
    .get();
  if (!row) throw notFound("Campaign");
  return row;
}

/** Contract 6: a campaign runs only with an active agent and a ready configuration (409 otherwise). */
async function requireDialable(env: Env, orgId: number, c: Owned): Promise<void> {
  // A deployment that cannot place calls refuses the start instead of starting and pausing itself.
  requireSettings(env, CALL_SETTINGS, 409, { requestOrigin: false });
  try {
    // A campaign (or its agent) that requires passing tests uses the agent only at a version that passed its suite.
    await requirePassingTests(getDb(env), await loadUsableWorkflow(getDb(env), orgId, c.workflowId), c.settings?.require_passing_tests === true);
    const cfg = await resolveTelephonyConfig(env, orgId, c.telephonyConfigurationId);
    requireReady(cfg);
  } catch (err) {
    // A vanished agent or configuration is a conflict with the campaign's state, not an unknown campaign.
    if (err instanceof ApiError && err.status === 404) throw conflict(String(err.detail));
    throw err;
  }
}

/**
 * Campaign ids this isolate has found visible in D1 (not `creating`) for some organization. A visible campaign never
 * goes back to `creating` nor changes organization, and a deleted one has its object wiped before its row goes, so the
 * progress route can then ask the campaign's object alone (progressFor checks the organization and the state itself;
 * a wiped object answers 404). Only existence is remembered here: nothing in this set grants access.
 */
const knownCampaigns = new Set<number>();
const MAX_KNOWN_CAMPAIGNS = 10_000;

/** Refuses an operation the table does not allow, before any other check (409 naming the state). */
async function currentState(env: Env, id: number): Promise<CampaignState> {
  return unwrap(await campaignStub(env, id).snapshot()).state;
}

/**
 * Start, resume, pause or cancel the organization's campaign, audited; the campaign as it is then. Start and resume
 * are refused first in a state the table does not allow (409 naming it), then when the campaign cannot dial; pause
 * and cancel are the object's to refuse.
 */
async function move(c: Context<AppEnv>, id: number, action: "start" | "resume" | "pause" | "cancel") {
  const orgId = c.get("orgId");
  const row = await owned(c.env, orgId, id);
  if (action === "start" || action === "resume") {
    const state = await currentState(c.env, id);
    if (!nextState(state, action)) throw conflict(refusal(state, action));
    await requireDialable(c.env, orgId, row);
  }
  unwrap(await campaignStub(c.env, id)[action]());
  await audit(c, getDb(c.env), { action, resourceType: "campaign", resourceId: id });
  return campaignView(c.env, orgId, id);
}

export const campaignControlRouter = createRouter()
  .openapi(start, async (c) => c.json(await move(c, c.req.valid("param").campaign_id, "start"), 200))
  .openapi(resume, async (c) => c.json(await move(c, c.req.valid("param").campaign_id, "resume"), 200))
  .openapi(pause, async (c) => c.json(await move(c, c.req.valid("param").campaign_id, "pause"), 200))
  .openapi(cancel, async (c) => c.json(await move(c, c.req.valid("param").campaign_id, "cancel"), 200))
  .openapi(redial, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const orgId = c.get("orgId");
    const row = await owned(c.env, orgId, campaign_id);
    // The route's validator has checked the body; an absent one (or an empty one, emptyBodyMeansDefaults) means the defaults.
    const body = (c.req.valid("json") as { outcomes?: (typeof FINAL_OUTCOMES)[number][] } | undefined) ?? {};
    const outcomes = [...new Set(body.outcomes ?? DEFAULT_REDIAL_OUTCOMES)];
    // A redial creates a campaign, and an archived agent takes no new campaigns (409, as create).
    // The state is refused first (409 naming it), then the agent; a vanished agent is a conflict too, not a 404.
    const state = await currentState(c.env, campaign_id);
    if (!nextState(state, "redial")) throw conflict(refusal(state, "redial"));
    try {
      await loadUsableWorkflow(getDb(c.env), orgId, row.workflowId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw conflict(String(err.detail));
      throw err;
    }
    // Deleting a configuration clears it from finished campaigns (D1 row); the child would name a configuration
    // that is gone. Refused rather than silently switched to another configuration of the organization.
    if (row.telephonyConfigurationId == null || !(await findConfig(getDb(c.env), orgId, row.telephonyConfigurationId))) {
      throw conflict(CONFIG_GONE);
    }
    const childId = await redialCampaign(c.env, campaign_id, outcomes, row.telephonyConfigurationId, actorOf(c).apiKeyId);
    return c.json(await campaignView(c.env, orgId, childId), 200);
  })
  .openapi(progress, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const orgId = c.get("orgId");
    // The object decides: another organization's campaign, or one still being created, is the same 404 as owned()'s.
    // D1 is asked only for an id this isolate has not seen exist, so guessed ids never bring up an empty object.
    if (!knownCampaigns.has(campaign_id)) {
      await owned(c.env, orgId, campaign_id);
      if (knownCampaigns.size >= MAX_KNOWN_CAMPAIGNS) knownCampaigns.clear();
      knownCampaigns.add(campaign_id);
    }
    // Pollers of one campaign share its answer for up to READ_CACHE_MS (lib/read-cache.ts); the progress WebSocket is
    // the way to see every change as it happens.
    const answer = await readThrough(c.env, orgId, `progress ${campaign_id}`, () => campaignStub(c.env, campaign_id).progressFor(orgId));
    if (!answer) throw notFound("Campaign");
    return c.json(answer, 200);
  })
  .openapi(logs, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    await owned(c.env, c.get("orgId"), campaign_id);
    const page = unwrap(await campaignStub(c.env, campaign_id).logs(limit, before));
    return c.json({ items: page.items.map(({ id: _id, ...entry }) => entry), next_cursor: page.next_before ? encodeCursor(page.next_before) : null }, 200);
  })
  .openapi(contacts, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await owned(c.env, c.get("orgId"), campaign_id);
    const page = unwrap(await campaignStub(c.env, campaign_id).contacts(decodeCursor(cursor) ?? 0, limit));
    return c.json({ items: page.items, next_cursor: page.next ? encodeCursor(page.next) : null }, 200);
  })
  .openapi(eventsRoute, async (c) => {
    const { campaign_id } = c.req.valid("param");
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") throw new ApiError(426, "Expected a WebSocket upgrade", { Upgrade: "websocket" });
    await owned(c.env, c.get("orgId"), campaign_id);
    return (await campaignStub(c.env, campaign_id).fetch(c.req.raw)) as never;
  })
  .openapi(resultsCsvRoute, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const orgId = c.get("orgId");
    const row = await owned(c.env, orgId, campaign_id);
    const agent = await getWorkflow(getDb(c.env), orgId, row.workflowId);
    const body = resultsCsv(c.env, orgId, campaignStub(c.env, campaign_id), agent?.definition ?? null, c.req.url);
    return c.body(body, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="campaign-${campaign_id}-results.csv"`,
    }) as never;
  })
  .openapi(runs, async (c) => {
    const { campaign_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const orgId = c.get("orgId");
    await owned(c.env, orgId, campaign_id);
    const query = getDb(c.env).select().from(workflowRuns).$dynamic();
    const rows = await newestFirst(query, workflowRuns.id, before, limit, eq(workflowRuns.campaignId, campaign_id), eq(workflowRuns.orgId, orgId)).all();
    return c.json(await runsPage(c.env, c.req.url, rows, limit), 200);
  });
