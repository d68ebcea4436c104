// POST /organizations/erasure: erase one phone number from the organization (erasure.ts) and suppress it.
import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { createRouter } from "../lib/app";
import { actorOf, auditStatement } from "../lib/audit";
import { getDb } from "../lib/db";
import { ApiError } from "../lib/errors";
import { errors, json } from "../lib/schemas";
import { parseE164 } from "../telephony/numbers";
import { eraseNumber, MAX_FILES_PER_ERASURE, numberRef } from "./erasure";

const ErasureRequest = z
  .strictObject({
    phone_number: z
      .string()
      .max(32)
      .superRefine((n, ctx) => {
        const r = parseE164(n.trim());
        if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
      })
      .openapi({ description: "The person's number, E.164", example: "+14155550123" }),
    files_after: z.string().max(1024).optional().openapi({ description: "From a 202 answer: go on rewriting uploaded files after this one" }),
  })
  .openapi("ErasureRequest");

const count = (d: string) => z.number().int().openapi({ description: d });
const Erasure = z
  .object({
    phone_number_ref: z.string().openapi({ description: "The keyed hash the audit entry names the number by" }),
    suppressed: z.literal(true).openapi({ description: "The number is on the suppression list: never called again" }),
    complete: z.boolean().openapi({ description: "false (a 202): files remain; repeat the request with files_after" }),
    files_after: z.string().nullable(),
    runs: count("Runs deleted (to or from the number)"),
    objects: count("Recordings and details objects deleted"),
    webhook_deliveries: count("Webhook deliveries deleted (the runs' node deliveries and events naming the number)"),
    campaigns: count("Campaigns that held the number"),
    contacts: count("Campaign contacts deleted"),
    attempts: count("Campaign attempts deleted"),
    files_rewritten: count("Uploaded campaign files rewritten without the number's lines"),
    files_skipped: count("Uploaded files too large to rewrite in a request"),
  })
  .openapi("Erasure");

const erase = createRoute({
  method: "post",
  path: "/organizations/erasure",
  tags: ["organizations"],
  summary: "Erase a person's data by phone number, and suppress the number",
  description: `Within the organization only: the runs to or from the number (rows, recordings, transcripts and details, webhook deliveries), its contacts and attempts in every campaign, its lines in uploaded campaign files (up to ${MAX_FILES_PER_ERASURE} files per request; 202 with files_after when more remain), and the number inside stored idempotent responses and audit summaries. The number is added to the suppression list first. While a call to it is live the answer is 409 (the number is already suppressed): repeat once the call ended. One audit entry (action \`erase\`) names the number by a keyed hash. See docs/retention.md.`,
  request: { body: { content: { "application/json": { schema: ErasureRequest } }, required: true } },
  responses: { 200: json(Erasure), 202: json(Erasure), ...errors(401, 409, 422) },
});

export const erasureRouter = createRouter().openapi(erase, async (c) => {
  const body = c.req.valid("json");
  const number = body.phone_number.trim();
  const orgId = c.get("orgId");
  const r = await eraseNumber(c.env, orgId, number, body.files_after ?? null);
  const ref = await numberRef(c.env.CALLBACK_SECRET, number);
  if (r.status === "live") {
    throw new ApiError(409, "A call to this number is live; the number is suppressed now: repeat the erasure once the call has ended");
  }
  await auditStatement(
    getDb(c.env),
    actorOf(c),
    { action: "erase", resourceType: "run_data", resourceId: orgId, summary: { phone_number_ref: ref, ...r.counts, complete: r.status === "done" } },
    sql`1`,
  );
  const out = { phone_number_ref: ref, suppressed: true as const, complete: r.status === "done", files_after: r.files_after, ...r.counts };
  return r.status === "done" ? c.json(out, 200) : c.json(out, 202);
});
