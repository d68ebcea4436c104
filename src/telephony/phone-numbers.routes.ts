// Phone numbers of a configuration: normalized per provider family, unique per organization,
// at most one default caller ID per configuration.
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { phoneNumbers } from "../db/schema";
import { createRouter } from "../lib/app";
import { actorOf, auditStatement } from "../lib/audit";
import { isoNow } from "../lib/clock";
import { getDb, isUniqueViolation, type Db } from "../lib/db";
import { conflict, invalid, notFound } from "../lib/errors";
import { decodeCursor, newestFirst, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { normalizeNumber } from "./numbers";
import { getProvider } from "./providers/registry";
import { CreatePhoneNumberBody, DeletedPhoneNumber, PhoneNumber, UpdatePhoneNumberBody } from "./schemas";
import { getConfig } from "./store";
import { checkInboundAgent, checkTestedAgent, inboundUrlOf, routeNumberToEdgedial } from "./inbound-attach";

const tags = ["telephony"];
const NUMBERS = "/organizations/telephony-configs/{config_id}/phone-numbers";
const ONE_NUMBER = `${NUMBERS}/{number_id}`;
const numberParams = z.object({ ...idParam("config_id").shape, ...idParam("number_id").shape });

const list = createRoute({
  method: "get",
  path: NUMBERS,
  tags,
  summary: "List a configuration's phone numbers (newest first)",
  request: { params: idParam("config_id"), query: pageQuery },
  responses: { 200: json(pageOf(PhoneNumber)), ...errors(401, 404, 422) },
});

// What giving a number an inbound agent can answer besides the usual (docs/inbound.md).
const ATTACH_ANSWERS =
  "Giving the number an `inbound_workflow_id` points the carrier at edgedial first, where its API allows; nothing is saved when that fails. 409: the number already exists in this organization, or the configuration has nothing to point yet (no carrier application: save the configuration again to create one; the carrier was not asked). 502: the carrier refused or could not be reached (its words in `detail`). 503: CALLBACK_SECRET is not configured.";

const add = createRoute({
  method: "post",
  path: NUMBERS,
  tags,
  summary: "Add a phone number (E.164; ari also takes extensions, SIP URIs and dial strings)",
  description: ATTACH_ANSWERS,
  request: { params: idParam("config_id"), body: { content: { "application/json": { schema: CreatePhoneNumberBody } }, required: true } },
  responses: { 200: json(PhoneNumber), ...errors(401, 404, 409, 422, 502, 503) },
});

const update = createRoute({
  method: "put",
  path: ONE_NUMBER,
  tags,
  summary: "Update a phone number (partial)",
  description: ATTACH_ANSWERS,
  request: { params: numberParams, body: { content: { "application/json": { schema: UpdatePhoneNumberBody } }, required: true } },
  responses: { 200: json(PhoneNumber), ...errors(401, 404, 409, 422, 502, 503) },
});

const remove = createRoute({
  method: "delete",
  path: ONE_NUMBER,
  tags,
  summary: "Delete a phone number",
  request: { params: numberParams },
  responses: { 200: json(DeletedPhoneNumber), ...errors(401, 404, 422) },
});

type Row = typeof phoneNumbers.$inferSelect;
const view = (r: Row, inboundUrl: string | null) => ({
  id: r.id,
  address: r.address,
  label: r.label,
  is_active: r.isActive,
  is_default_caller_id: r.isDefaultCallerId,
  inbound_workflow_id: r.inboundWorkflowId ?? null,
  require_passing_tests: r.inboundRequirePassingTests,
  inbound_url: inboundUrl,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

const NUMBER_NOT_FOUND = "Phone number";

function normalizedAddress(raw: string, pbx: boolean): string {
  const n = normalizeNumber(raw, pbx);
  if (!n.ok) throw invalid(["body", "address"], n.message, "value_error", raw);
  return n.value;
}

function saveConflict(err: unknown, address: string): never {
  if (isUniqueViolation(err)) throw conflict(`Phone number ${address} already exists in this organization`);
  // The configuration was deleted between our read and this write.
  if (/FOREIGN KEY constraint failed/i.test(String((err as { cause?: unknown })?.cause ?? "") + String((err as Error)?.message ?? ""))) {
    throw notFound("Telephony configuration");
  }
  throw err;
}

/**
 * Unsets the configuration's other default caller ID; batched with the write that sets the new one. When
 * that write targets an existing number, the clear only applies if the number is still there.
 */
const clearDefaultCallerId = (db: Db, configId: number, target?: { id: number; orgId: number }) =>
  db
    .update(phoneNumbers)
    .set({ isDefaultCallerId: false })
    .where(
      and(
        eq(phoneNumbers.configId, configId),
        eq(phoneNumbers.isDefaultCallerId, true),
        target ? ne(phoneNumbers.id, target.id) : undefined,
        target
          ? sql`exists (select 1 from phone_numbers pn where pn.id = ${target.id} and pn.config_id = ${configId} and pn.org_id = ${target.orgId})`
          : undefined,
      ),
    );

export const phoneNumbersRouter = createRouter()
  .openapi(list, async (c) => {
    const orgId = c.get("orgId");
    const { config_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const db = getDb(c.env);
    const config = await getConfig(db, orgId, config_id);
    const query = db.select().from(phoneNumbers).$dynamic();
    const rows = await newestFirst(query, phoneNumbers.id, before, limit, eq(phoneNumbers.configId, config_id), eq(phoneNumbers.orgId, orgId)).all();
    const url = await inboundUrlOf(c.env, c.req.url, config);
    return c.json(
      toPage(rows, limit, (r) => view(r, url)),
      200,
    );
  })
  .openapi(add, async (c) => {
    const orgId = c.get("orgId");
    const { config_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = getDb(c.env);
    const config = await getConfig(db, orgId, config_id);
    const address = normalizedAddress(body.address, getProvider(config.provider).pbx);
    if (body.inbound_workflow_id != null) {
      await checkInboundAgent(db, orgId, body.inbound_workflow_id);
      if (body.require_passing_tests) await checkTestedAgent(db, orgId, body.inbound_workflow_id);
      await routeNumberToEdgedial(c.env, c.req.url, config, address);
    }
    const insert = db
      .insert(phoneNumbers)
      .values({
        orgId,
        configId: config_id,
        address,
        label: body.label ?? null,
        isActive: body.is_active,
        isDefaultCallerId: body.is_default_caller_id,
        inboundWorkflowId: body.inbound_workflow_id ?? null,
        inboundRequirePassingTests: body.require_passing_tests,
      })
      .returning();
    const audited = auditStatement(db, actorOf(c), {
      action: "create",
      resourceType: "phone_number",
      resourceId: sql`(SELECT id FROM phone_numbers WHERE org_id = ${orgId} AND address = ${address})`,
      summary: {
        config_id,
        address,
        is_active: body.is_active,
        is_default_caller_id: body.is_default_caller_id,
        inbound_workflow_id: body.inbound_workflow_id ?? null,
        require_passing_tests: body.require_passing_tests,
      },
    });
    let row: Row;
    try {
      if (body.is_default_caller_id) {
        const [, inserted] = await db.batch([clearDefaultCallerId(db, config_id), insert, audited]);
        row = inserted[0];
      } else {
        row = (await db.batch([insert, audited]))[0][0];
      }
    } catch (err) {
      saveConflict(err, address);
    }
    return c.json(view(row, await inboundUrlOf(c.env, c.req.url, config)), 200);
  })
  .openapi(update, async (c) => {
    const orgId = c.get("orgId");
    const { config_id, number_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = getDb(c.env);
    const config = await getConfig(db, orgId, config_id);
    const address = body.address !== undefined ? normalizedAddress(body.address, getProvider(config.provider).pbx) : undefined;
    if (body.inbound_workflow_id != null || body.require_passing_tests === true) {
      const current = await db
        .select({ address: phoneNumbers.address, agent: phoneNumbers.inboundWorkflowId, gated: phoneNumbers.inboundRequirePassingTests })
        .from(phoneNumbers)
        .where(and(eq(phoneNumbers.id, number_id), eq(phoneNumbers.configId, config_id), eq(phoneNumbers.orgId, orgId)))
        .get();
      if (!current) throw notFound(NUMBER_NOT_FOUND);
      // The attachment as it will be: its agent and whether it requires passing tests, each sent or kept.
      const agent = body.inbound_workflow_id !== undefined ? body.inbound_workflow_id : current.agent;
      if (body.inbound_workflow_id != null) await checkInboundAgent(db, orgId, body.inbound_workflow_id);
      if (agent != null && (body.require_passing_tests ?? current.gated)) await checkTestedAgent(db, orgId, agent);
      if (body.inbound_workflow_id != null) await routeNumberToEdgedial(c.env, c.req.url, config, address ?? current.address);
    }
    const write = db
      .update(phoneNumbers)
      .set({
        ...(address !== undefined ? { address } : {}),
        ...(body.label !== undefined ? { label: body.label } : {}),
        ...(body.is_active !== undefined ? { isActive: body.is_active } : {}),
        ...(body.is_default_caller_id !== undefined ? { isDefaultCallerId: body.is_default_caller_id } : {}),
        ...(body.inbound_workflow_id !== undefined ? { inboundWorkflowId: body.inbound_workflow_id } : {}),
        ...(body.require_passing_tests !== undefined ? { inboundRequirePassingTests: body.require_passing_tests } : {}),
        updatedAt: isoNow(),
      })
      .where(and(eq(phoneNumbers.id, number_id), eq(phoneNumbers.configId, config_id), eq(phoneNumbers.orgId, orgId)))
      .returning();
    const audited = auditStatement(db, actorOf(c), {
      action: "update",
      resourceType: "phone_number",
      resourceId: number_id,
      summary: {
        config_id,
        ...(address !== undefined ? { address } : {}),
        ...(body.label !== undefined ? { label: body.label } : {}),
        ...(body.is_active !== undefined ? { is_active: body.is_active } : {}),
        ...(body.is_default_caller_id !== undefined ? { is_default_caller_id: body.is_default_caller_id } : {}),
        ...(body.inbound_workflow_id !== undefined ? { inbound_workflow_id: body.inbound_workflow_id } : {}),
        ...(body.require_passing_tests !== undefined ? { require_passing_tests: body.require_passing_tests } : {}),
      },
    });
    let rows: Row[];
    try {
      if (body.is_default_caller_id === true) {
        [, rows] = await db.batch([clearDefaultCallerId(db, config_id, { id: number_id, orgId }), write, audited]);
      } else {
        [rows] = await db.batch([write, audited]);
      }
    } catch (err) {
      saveConflict(err, address ?? "");
    }
    if (!rows[0]) throw notFound(NUMBER_NOT_FOUND);
    return c.json(view(rows[0], await inboundUrlOf(c.env, c.req.url, config)), 200);
  })
  .openapi(remove, async (c) => {
    const orgId = c.get("orgId");
    const { config_id, number_id } = c.req.valid("param");
    const db = getDb(c.env);
    const target = and(eq(phoneNumbers.id, number_id), eq(phoneNumbers.configId, config_id), eq(phoneNumbers.orgId, orgId));
    // The audit entry first, under the delete's own condition, so that it can still name the number.
    const [, [row]] = await db.batch([
      auditStatement(
        db,
        actorOf(c),
        {
          action: "delete",
          resourceType: "phone_number",
          resourceId: number_id,
          summary: sql`(SELECT json_object('config_id', config_id, 'address', address) FROM phone_numbers WHERE id = ${number_id})`,
        },
        sql`exists (select 1 from ${phoneNumbers} where ${target})`,
      ),
      db.delete(phoneNumbers).where(target).returning({ id: phoneNumbers.id }),
    ]);
    if (!row) throw notFound(NUMBER_NOT_FOUND);
    return c.json({ id: row.id, deleted: true as const }, 200);
  });
