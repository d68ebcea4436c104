// Telephony configurations: providers, configurations, and (in phone-numbers.routes.ts) their numbers.
import { readThrough } from "../lib/read-cache";
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, ne, not, sql } from "drizzle-orm";
import { campaigns, phoneNumbers, telephonyConfigs, workflowRuns } from "../db/schema";
import { createRouter } from "../lib/app";
import { actorOf, auditStatement } from "../lib/audit";
import { clock, isoNow } from "../lib/clock";
import { getDb, isUniqueViolation, type Db } from "../lib/db";
import { ApiError, conflict, invalid, notFound, zodIssuesToItems } from "../lib/errors";
import { localDev } from "../lib/deployment";
import { decodeCursor, newestFirst, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { SecretBox } from "../lib/secret-box";
import { CONFIG_LOC, prepareCreate, prepareUpdate, redactSecretInputs } from "./config-input";
import { allowsPrivatePbx } from "./calling-policy";
import { pbxUrlErrors } from "./pbx-urls";
import { phoneNumbersRouter } from "./phone-numbers.routes";
import { providerEnvOf, provisionOnSave, requireSaveSettings } from "./provisioning";
import { loadConfigContext } from "./resolve";
import { getProvider, isProviderName, PROVIDER_LIST } from "./providers/registry";
import { CreateConfigBody, DeletedConfig, ProviderInfo, TelephonyConfig, UpdateConfigBody, UpdateConfigBodyDoc } from "./schemas";
import { activeNumbersOf, CONFIG_NOT_FOUND, findConfig, findConfigWithNumbers, getConfig } from "./store";
import { configView, type ConfigRow } from "./view";

const tags = ["telephony"];
/** The carrier's message kept on a failed credentials check (enough to read, bounded in the row). */
const MAX_CREDENTIALS_ERROR = 500;
const CONFIGS = "/organizations/telephony-configs";
const ONE_CONFIG = `${CONFIGS}/{config_id}`;

const listProviders = createRoute({
  method: "get",
  path: "/organizations/telephony-providers",
  tags,
  summary: "List the supported providers and their configuration fields",
  responses: { 200: json(pageOf(ProviderInfo)), ...errors(401) },
});

const listConfigs = createRoute({
  method: "get",
  path: CONFIGS,
  tags,
  summary: "List the organization's telephony configurations (newest first)",
  request: { query: pageQuery },
  responses: { 200: json(pageOf(TelephonyConfig)), ...errors(401, 422) },
});

const createConfig = createRoute({
  method: "post",
  path: CONFIGS,
  tags,
  summary: "Create a telephony configuration (secrets are encrypted at rest and masked in responses)",
  request: { body: { content: { "application/json": { schema: CreateConfigBody } }, required: true } },
  responses: { 200: json(TelephonyConfig), ...errors(401, 404, 409, 422) },
});

const getOne = createRoute({
  method: "get",
  path: ONE_CONFIG,
  tags,
  summary: "Get a telephony configuration",
  request: { params: idParam("config_id") },
  responses: { 200: json(TelephonyConfig), ...errors(401, 404, 422) },
});

const CredentialsVerification = z
  .object({
    ok: z.boolean().openapi({ description: "True when the carrier accepted the credentials" }),
    message: z.string().nullable().openapi({ description: "The carrier's answer when it refused them (never a secret); null on success" }),
    verified_at: z.string().openapi({ description: "When the check was made (ISO 8601)" }),
    configuration: TelephonyConfig,
  })
  .openapi("CredentialsVerification");

const verify = createRoute({
  method: "post",
  path: `${ONE_CONFIG}/verify`,
  tags,
  summary: "Ask the carrier whether the stored credentials work",
  description:
    "Makes one read-only carrier request (Twilio, Plivo, Vobiz, Exotel: fetch the account; Telnyx: get the balance; " +
    "Cloudonix: get the domain; Asterisk ARI: GET /asterisk/info) " +
    "and records the result in the configuration's `state`: `credentials_verified_at` (when it was checked) and, on failure, " +
    "`credentials_error` with the carrier's message, which marks the blocking `credentials` checklist step incomplete; " +
    "success clears it. Answers 200 whatever the carrier said, with the result and the configuration (secrets masked). 409 when the provider " +
    "documents no read-only call to check with; saving a changed `config` clears the previous result.",
  request: { params: idParam("config_id") },
  responses: { 200: json(CredentialsVerification), ...errors(401, 404, 409, 422, 503) },
});

const updateSpec = {
  method: "put",
  path: ONE_CONFIG,
  tags,
  summary: "Update a telephony configuration (partial: rename, rotate a secret, change fields, set default)",
  responses: { 200: json(TelephonyConfig), ...errors(401, 404, 409, 422) },
} as const;
// Served with the edge schema (config checked against the stored provider in the handler) and documented
// with every variant: both describe the same operation.
const updateServed = createRoute({
  ...updateSpec,
  hide: true,
  request: { params: idParam("config_id"), body: { content: { "application/json": { schema: UpdateConfigBody } }, required: true } },
});
const updateDocumented = createRoute({
  ...updateSpec,
  request: { params: idParam("config_id"), body: { content: { "application/json": { schema: UpdateConfigBodyDoc } }, required: true } },
});

const remove = createRoute({
  method: "delete",
  path: ONE_CONFIG,
  tags,
  summary: "Delete a telephony configuration (409 while an unfinished campaign or a call in progress uses it)",
  request: { params: idParam("config_id") },
  responses: { 200: json(DeletedConfig), ...errors(401, 404, 409, 422) },
});

/** The create body's 422s, with any echoed secret removed (the shared hook would echo every input). */
const redactingHook = (result: { success: boolean }): undefined => {
  if (result.success) return;
  const r = result as unknown as { error: { issues: Parameters<typeof zodIssuesToItems>[0] }; data?: unknown };
  const named = (r.data as { config?: { provider?: unknown } } | undefined)?.config?.provider;
  const sensitive = typeof named === "string" && isProviderName(named) ? getProvider(named).sensitive : [];
  // With an unknown provider the only issue is the discriminator itself, so nothing secret is at stake.
  throw new ApiError(422, redactSecretInputs(zodIssuesToItems(r.error.issues, ["body"], r.data), sensitive, CONFIG_LOC));
};

const DEFAULT_INDEX = /UNIQUE constraint failed: telephony_configs\.org_id$/m;

function saveConflict(err: unknown, name: string): never {
  if (isUniqueViolation(err)) {
    const text = String((err as { cause?: unknown })?.cause ?? "") + String((err as Error)?.message ?? "");
    if (DEFAULT_INDEX.test(text)) throw conflict("Another configuration became the default at the same time; retry");
    throw conflict(`A telephony configuration named '${name}' already exists`);
  }
  throw err;
}

const IN_USE_STATES = sql`('importing', 'draft', 'running', 'paused')`;
// A call not yet final still needs its configuration: the carrier's callbacks are verified with its secrets, and
// only a final status releases the call's slot. Matches the partial index workflow_runs_live_config_idx.
const LIVE_STATUSES = sql`('queued', 'initiated', 'ringing', 'in_progress')`;
const inUseBy = (id: number) =>
  sql`(exists (select 1 from campaigns cu where cu.telephony_configuration_id = ${id} and cu.state in ${IN_USE_STATES})
    or exists (select 1 from workflow_runs wr where wr.telephony_configuration_id = ${id} and wr.status in ${LIVE_STATUSES}))`;
/** How many live calls the 409 names. */
const NAMED_CALLS = 5;

/** A strictly later timestamp than `prev`, so it can serve as a compare-and-set version. */
function nextStamp(prev: string): string {
  const now = clock.now();
  const prevMs = Date.parse(prev);
  return new Date(Number.isFinite(prevMs) && prevMs >= now ? prevMs + 1 : now).toISOString();
}

async function viewOf(db: Db, row: ConfigRow) {
  const numbers = (await activeNumbersOf(db, [row.id])).get(row.id) ?? [];
  return configView(getProvider(row.provider), row, numbers);
}

const configsRouter = createRouter()
  .openapi(listProviders, (c) => {
    const items = PROVIDER_LIST.filter((p) => !p.localOnly || localDev(c.env)).map((p) => ({
      name: p.name,
      display_name: p.displayName,
      connectivity: p.connectivity,
      supports_trunks: p.supportsTrunks,
      docs_url: p.docsUrl,
      fields: [...p.fields],
    }));
    return c.json({ items, next_cursor: null }, 200);
  })
  .openapi(listConfigs, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const db = getDb(c.env);
    const query = db.select().from(telephonyConfigs).$dynamic();
    const rows = await newestFirst(query, telephonyConfigs.id, before, limit, eq(telephonyConfigs.orgId, c.get("orgId"))).all();
    const numbers = await activeNumbersOf(
      db,
      rows.slice(0, limit).map((r) => r.id),
    );
    return c.json(
      toPage(rows, limit, (r) => configView(getProvider(r.provider), r, numbers.get(r.id) ?? [])),
      200,
    );
  })
  .openapi(
    createConfig,
    async (c) => {
      const orgId = c.get("orgId");
      const body = c.req.valid("json");
      const provider = getProvider(body.config.provider as string);
      if (provider.localOnly && !localDev(c.env))
        throw invalid(["body", "config", "provider"], `${provider.name} is available only in local development (npm run dev)`);
      requireSaveSettings(c.env, provider.name);
      const prepared = await prepareCreate(provider, body.config, orgId, SecretBox.fromEnv(c.env));
      const db = getDb(c.env);
      await requireAllowedPbxUrls(db, orgId, prepared.config, c.req.url, c.env.PUBLIC_BASE_URL);
      const insert = db
        .insert(telephonyConfigs)
        .values({
          orgId,
          name: body.name,
          provider: provider.name,
          isDefaultOutbound: body.is_default_outbound,
          config: prepared.config,
          secrets: prepared.secrets,
        })
        .returning();
      const audited = auditStatement(db, actorOf(c), {
        action: "create",
        resourceType: "telephony_config",
        resourceId: sql`(SELECT id FROM telephony_configs WHERE org_id = ${orgId} AND name = ${body.name})`,
        summary: { name: body.name, provider: provider.name, is_default_outbound: body.is_default_outbound },
      });
      let row: ConfigRow;
      try {
        if (body.is_default_outbound) {
          // One transaction: clear the old default, insert the new one. D1 runs batches one at a time,
          // so two concurrent creates leave exactly one default (the later one).
          const clear = db
            .update(telephonyConfigs)
            .set({ isDefaultOutbound: false })
            .where(and(eq(telephonyConfigs.orgId, orgId), eq(telephonyConfigs.isDefaultOutbound, true)));
          const [, inserted] = await db.batch([clear, insert, audited]);
          row = inserted[0];
        } else {
          row = (await db.batch([insert, audited]))[0][0];
        }
      } catch (err) {
        saveConflict(err, body.name);
      }
      row = await provisionOnSave(c.env, c.req.url, row);
      return c.json(await viewOf(db, row), 200);
    },
    redactingHook,
  )
  .openapi(getOne, async (c) => {
    const db = getDb(c.env);
    const orgId = c.get("orgId");
    const id = c.req.valid("param").config_id;
    // One D1 round trip, one statement: the configuration and its active numbers (in activeNumbersOf's order).
    // Repeated reads share the answer for up to READ_CACHE_MS (lib/read-cache.ts); a write through this isolate ends it.
    const view = await readThrough(c.env, orgId, `telephony-config ${id}`, async () => {
      const found = await findConfigWithNumbers(db, orgId, id);
      return found && configView(getProvider(found.row.provider), found.row, found.numbers);
    });
    if (!view) throw notFound(CONFIG_NOT_FOUND);
    return c.json(view, 200);
  })
  .openapi(verify, async (c) => {
    const db = getDb(c.env);
    const orgId = c.get("orgId");
    const row = await getConfig(db, orgId, c.req.valid("param").config_id);
    const provider = getProvider(row.provider);
    const check = provider.calls?.verifyCredentials;
    if (!check) throw conflict(`${provider.displayName} credentials cannot be verified: the carrier documents no read-only call to check them with`);
    const result = await check(await loadConfigContext(c.env, row), providerEnvOf(c.env, c.req.url));
    const at = isoNow();
    // json_set/json_remove in place: only the two keys change, whatever else wrote the state meanwhile.
    const state = result.ok
      ? sql`json_set(json_remove(${telephonyConfigs.state}, '$.credentials_error'), '$.credentials_verified_at', ${at})`
      : sql`json_set(${telephonyConfigs.state}, '$.credentials_error', ${result.message.slice(0, MAX_CREDENTIALS_ERROR)}, '$.credentials_verified_at', ${at})`;
    const saved = await db
      .update(telephonyConfigs)
      .set({ state })
      .where(and(eq(telephonyConfigs.id, row.id), eq(telephonyConfigs.orgId, orgId)))
      .returning()
      .get();
    if (!saved) throw new ApiError(404, `${CONFIG_NOT_FOUND} not found`);
    return c.json({ ok: result.ok, message: result.ok ? null : result.message, verified_at: at, configuration: await viewOf(db, saved) }, 200);
  })
  .openapi(updateServed, async (c) => {
    const orgId = c.get("orgId");
    const id = c.req.valid("param").config_id;
    const body = c.req.valid("json");
    const db = getDb(c.env);
    const box = SecretBox.fromEnv(c.env);

    // Read, merge, then write only if nobody wrote in between (updated_at is the version); on a lost race,
    // merge again over the newer row, so no concurrent partial update is silently undone.
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await getConfig(db, orgId, id);
      const provider = getProvider(row.provider);
      if (body.config !== undefined) requireSaveSettings(c.env, provider.name);
      const prepared = await prepareUpdate(provider, row, body.config, orgId, box);
      if (body.config !== undefined) await requireAllowedPbxUrls(db, orgId, prepared.config, c.req.url, c.env.PUBLIC_BASE_URL);
      const unchanged = and(eq(telephonyConfigs.id, id), eq(telephonyConfigs.orgId, orgId), eq(telephonyConfigs.updatedAt, row.updatedAt));
      const configChanged = body.config !== undefined;
      const update = db
        .update(telephonyConfigs)
        .set({
          name: body.name ?? row.name,
          config: prepared.config,
          secrets: prepared.secrets,
          updatedAt: nextStamp(row.updatedAt),
          ...(body.is_default_outbound !== undefined ? { isDefaultOutbound: body.is_default_outbound } : {}),
          // The user changed the configuration: a previous failure no longer describes it.
          ...(configChanged ? { inactive: false, inactiveSince: null, inactiveReason: null } : {}),
          // ... nor does an earlier credentials check (POST .../verify checks the new ones).
          ...(configChanged ? { state: sql`json_remove(${telephonyConfigs.state}, '$.credentials_error', '$.credentials_verified_at')` } : {}),
        })
        .where(unchanged)
        .returning();
      // Field names only: a changed secret is named, never shown.
      const audited = auditStatement(db, actorOf(c), {
        action: "update",
        resourceType: "telephony_config",
        resourceId: id,
        summary: {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.config !== undefined
            ? {
                config_fields: Object.keys(body.config)
                  .filter((k) => k !== "provider")
                  .sort(),
              }
            : {}),
          ...(body.is_default_outbound !== undefined ? { is_default_outbound: body.is_default_outbound } : {}),
        },
      });
      let updated: ConfigRow[];
      try {
        if (body.is_default_outbound === true) {
          const clear = db
            .update(telephonyConfigs)
            .set({ isDefaultOutbound: false })
            .where(
              and(
                eq(telephonyConfigs.orgId, orgId),
                eq(telephonyConfigs.isDefaultOutbound, true),
                ne(telephonyConfigs.id, id),
                // Only when the update below will apply, so a lost race clears nothing.
                sql`exists (select 1 from telephony_configs tc where tc.id = ${id} and tc.org_id = ${orgId} and tc.updated_at = ${row.updatedAt})`,
              ),
            );
          [, updated] = await db.batch([clear, update, audited]);
        } else {
          [updated] = await db.batch([update, audited]);
        }
      } catch (err) {
        saveConflict(err, body.name ?? row.name);
      }
      if (updated[0]) {
        const saved = configChanged ? await provisionOnSave(c.env, c.req.url, updated[0]) : updated[0];
        return c.json(await viewOf(db, saved), 200);
      }
    }
    throw conflict("The configuration was changed by another request at the same time; retry");
  })
  .openapi(remove, async (c) => {
    const orgId = c.get("orgId");
    const id = c.req.valid("param").config_id;
    const db = getDb(c.env);
    const mine = sql`exists (select 1 from telephony_configs tc where tc.id = ${id} and tc.org_id = ${orgId})`;
    // One transaction, each statement guarded by "no unfinished campaign uses it": finished campaigns
    // let go of the reference (the foreign key would otherwise forbid the delete), numbers go with it. The audit
    // entry comes first, under the same guard, so that it can still name what goes.
    const [, , , deleted] = await db.batch([
      auditStatement(
        db,
        actorOf(c),
        {
          action: "delete",
          resourceType: "telephony_config",
          resourceId: id,
          summary: sql`(SELECT json_object('name', name, 'provider', provider) FROM telephony_configs WHERE id = ${id})`,
        },
        sql`${mine} AND NOT ${inUseBy(id)}`,
      ),
      db
        .update(campaigns)
        .set({ telephonyConfigurationId: null })
        .where(and(eq(campaigns.telephonyConfigurationId, id), mine, not(inUseBy(id)))),
      db.delete(phoneNumbers).where(and(eq(phoneNumbers.configId, id), eq(phoneNumbers.orgId, orgId), not(inUseBy(id)))),
      db
        .delete(telephonyConfigs)
        .where(and(eq(telephonyConfigs.id, id), eq(telephonyConfigs.orgId, orgId), not(inUseBy(id))))
        .returning({ id: telephonyConfigs.id }),
    ]);
    if (deleted[0]) return c.json({ id, deleted: true as const }, 200);
    if (!(await findConfig(db, orgId, id))) throw new ApiError(404, `${CONFIG_NOT_FOUND} not found`);
    const users = await db
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(and(eq(campaigns.telephonyConfigurationId, id), sql`${campaigns.state} in ${IN_USE_STATES}`))
      .all();
    if (users.length) throw conflict(`Telephony configuration is in use by unfinished campaigns (${users.map((u) => u.id).join(", ")})`);
    const live = await db
      .select({ id: workflowRuns.id, name: workflowRuns.name, n: sql<number>`count(*) over ()` })
      .from(workflowRuns)
      .where(and(eq(workflowRuns.telephonyConfigurationId, id), sql`${workflowRuns.status} in ${LIVE_STATUSES}`))
      .orderBy(workflowRuns.id)
      .limit(NAMED_CALLS)
      .all();
    if (live.length) {
      const named = live.map((r) => `${r.name} (id ${r.id})`).join(", ");
      const more = Number(live[0].n) > live.length ? ` and ${Number(live[0].n) - live.length} more` : "";
      throw conflict(`Telephony configuration has calls in progress: ${named}${more}; delete it once they have ended`);
    }
    // Whatever blocked the delete ended meanwhile.
    throw conflict("The configuration was in use a moment ago; retry");
  });

configsRouter.openAPIRegistry.registerPath(updateDocumented);

export const telephonyRouter = createRouter().route("/", configsRouter).route("/", phoneNumbersRouter);

/** SSRF: a 422 at each PBX URL the organization may not use (private ones need its calling policy's allow_private_pbx). */
async function requireAllowedPbxUrls(db: Db, orgId: number, config: Record<string, unknown>, requestUrl: string, publicBase?: string): Promise<void> {
  // This service is where the API was called and where carriers reach it; another port of the same host is not.
  const own = [new URL(requestUrl).origin, publicBase];
  // Public URLs need no policy read.
  if (!pbxUrlErrors(config, false, own).length) return;
  const items = pbxUrlErrors(config, await allowsPrivatePbx(db, orgId), own);
  if (items.length) throw new ApiError(422, items);
}
