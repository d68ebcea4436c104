// GET|PUT /organizations/calling-policy: the organization's destination policy.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { actorOf } from "../lib/audit";
import { getDb } from "../lib/db";
import { errors, json } from "../lib/schemas";
import { loadCallingPolicy, updateCallingPolicy, type PolicyState } from "./calling-policy";
import { DEFAULT_ATTEMPT_CAP, DEFAULT_LOCAL_HOURS, defaultRules } from "./calling-rules";
import { COUNTRY_CODES, DEFAULT_BLOCKED_TYPES, NUMBER_TYPES } from "./destination-policy";
import { parseE164 } from "./numbers";

const tags = ["organizations"];
const PATH = "/organizations/calling-policy";

export const MAX_ALLOWED_NUMBERS = 1000;

const Country = z
  .string()
  .refine((c) => COUNTRY_CODES.has(c.toUpperCase()), {
    message: "Unknown country: use an ISO 3166-1 alpha-2 code such as US or GB",
    params: { type: "country_invalid" },
  })
  .openapi({ example: "US" });

const NumberType = z.enum(NUMBER_TYPES).openapi({
  description:
    "libphonenumber's number types, plus `satellite` (+870, +881, +882 16) and `global_service` (the other non-geographic ITU codes: +800, +808, +878, +882, +883, +888, +979)",
});

const E164 = z
  .string()
  .max(32)
  .superRefine((n, ctx) => {
    const r = parseE164(n);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
  })
  .openapi({ example: "+449098790000" });

const countriesDoc =
  "ISO 3166-1 alpha-2 codes of the countries E.164 destinations may be in; null = the default, the countries of the organization's active E.164 caller IDs (none when it has none). Numbers of the non-geographic codes have no country: only their type is judged.";
const typesDoc = `Number types refused; null = the default (${DEFAULT_BLOCKED_TYPES.join(", ")}); [] refuses none.`;
const privatePbxDoc =
  "Whether PBX URLs (ari `ari_endpoint`, `external_pbx` API URLs) may point at loopback, private (RFC 1918, fc00::/7), shared (CGNAT) addresses or local names such as `pbx.local`; default false. Metadata, link-local, multicast and reserved addresses are refused whatever this says. Checked on save and again before every connection.";
const recordDoc = "Whether answered calls are recorded (both sides, a two-channel WAV on the run's recording_url); default true.";
const numbersDoc = `E.164 numbers always allowed, whatever their country or type (at most ${MAX_ALLOWED_NUMBERS}).`;

const TIME = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;
const Time = (fallback: string) => z.string().regex(TIME, { message: "Use HH:MM, 00:00 to 24:00" }).default(fallback).openapi({ example: fallback });

const localHoursDoc = `Campaign calls start only while it is between \`start\` (inclusive) and \`end\` (exclusive) where the recipient is: in the zone of the number's country, narrowed by its area code where the country has several (libphonenumber's zone map), or in every zone it may be in when the number does not say; a contact's \`timezone\` column overrides. Non-geographic numbers, extensions and dial strings are not judged. Combined with each campaign's own schedule. null = the default (on, ${DEFAULT_LOCAL_HOURS.start}–${DEFAULT_LOCAL_HOURS.end}). Applies to running campaigns within a minute.`;
const attemptCapDoc = `At most \`max_attempts\` campaign dials to one number in any \`window_hours\`, across all the organization's campaigns (single calls through the API count towards it but are not refused by it). A dial over the cap waits until the oldest attempt leaves the window. null = the default (on, ${DEFAULT_ATTEMPT_CAP.max_attempts} in ${DEFAULT_ATTEMPT_CAP.window_hours} hours).`;

const LocalHours = z
  .strictObject({
    enabled: z.boolean().default(true),
    start: Time(DEFAULT_LOCAL_HOURS.start),
    end: Time(DEFAULT_LOCAL_HOURS.end),
  })
  .refine((h) => h.start < h.end, { message: "start must be before end", path: ["end"] })
  .openapi("LocalHours", { description: localHoursDoc });

const AttemptCap = z
  .strictObject({
    enabled: z.boolean().default(true),
    max_attempts: z.number().int().min(1).max(50).default(DEFAULT_ATTEMPT_CAP.max_attempts),
    window_hours: z.number().int().min(1).max(720).default(DEFAULT_ATTEMPT_CAP.window_hours),
  })
  .openapi("AttemptCap", { description: attemptCapDoc });

const CallingPolicy = z
  .object({
    allowed_countries: z
      .array(z.string())
      .nullable()
      .openapi({ description: `As set. ${countriesDoc}` }),
    blocked_number_types: z
      .array(NumberType)
      .nullable()
      .openapi({ description: `As set. ${typesDoc}` }),
    allowed_numbers: z.array(z.string()).openapi({ description: numbersDoc }),
    allow_private_pbx: z.boolean().openapi({ description: privatePbxDoc }),
    record_calls: z.boolean().openapi({ description: recordDoc }),
    local_hours: LocalHours.nullable().openapi({ description: `As set. ${localHoursDoc}` }),
    attempt_cap: AttemptCap.nullable().openapi({ description: `As set. ${attemptCapDoc}` }),
    effective: z
      .object({
        local_hours: LocalHours,
        attempt_cap: AttemptCap,
        allowed_countries: z.array(z.string()).openapi({ description: "The countries allowed now, defaults resolved", example: ["US"] }),
        allowed_countries_source: z.enum(["policy", "caller_ids"]).openapi({ description: "Where allowed_countries comes from" }),
        blocked_number_types: z.array(NumberType).openapi({ example: [...DEFAULT_BLOCKED_TYPES] }),
      })
      .openapi({ description: "The policy as every call and campaign dial is checked against it" }),
    updated_at: z.string().nullable(),
  })
  .openapi("CallingPolicy");

const UpdateCallingPolicy = z
  .object({
    allowed_countries: z.array(Country).max(COUNTRY_CODES.size).nullable().optional().openapi({ description: countriesDoc }),
    blocked_number_types: z.array(NumberType).max(NUMBER_TYPES.length).nullable().optional().openapi({ description: typesDoc }),
    allowed_numbers: z
      .array(E164)
      .max(MAX_ALLOWED_NUMBERS)
      .nullable()
      .optional()
      .openapi({ description: `${numbersDoc} null = [].` }),
    allow_private_pbx: z.boolean().optional().openapi({ description: privatePbxDoc }),
    record_calls: z.boolean().optional().openapi({ description: recordDoc }),
    local_hours: LocalHours.nullable()
      .optional()
      .openapi({ description: `${localHoursDoc} Fields left out take their defaults.` }),
    attempt_cap: AttemptCap.nullable()
      .optional()
      .openapi({ description: `${attemptCapDoc} Fields left out take their defaults.` }),
  })
  .strict()
  .openapi("UpdateCallingPolicy");

const refusals =
  "A single call to a refused destination is a 422 located at `phone_number` (type `destination_not_allowed`, ctx.reason `number_type_blocked` or `country_not_allowed`); so is a campaign CSV row, at create; a campaign contact refused when dialed (the policy changed since) fails without a call, logged as `dial_failed` with kind `destination_refused`. On Asterisk (ari), a short extension is the PBX's own and is not judged; longer digits, a SIP URI's number and a dial string's number are judged, and a dial string must have a form the configuration allows (docs/carriers.md).";

const get = createRoute({
  method: "get",
  path: PATH,
  tags,
  summary: "The organization's calling policy: which destinations it may dial",
  description: refusals,
  responses: { 200: json(CallingPolicy), ...errors(401) },
});

const put = createRoute({
  method: "put",
  path: PATH,
  tags,
  summary: "Change the calling policy (partial: fields left out keep their value, null restores the default)",
  description: refusals,
  request: { body: { content: { "application/json": { schema: UpdateCallingPolicy } }, required: true } },
  responses: { 200: json(CallingPolicy), ...errors(401, 422) },
});

const view = (p: PolicyState) => ({
  allowed_countries: p.stored?.allowedCountries ?? null,
  blocked_number_types: p.stored?.blockedNumberTypes ?? null,
  allowed_numbers: p.stored?.allowedNumbers ?? [],
  allow_private_pbx: p.allowPrivatePbx,
  record_calls: p.recordCalls,
  local_hours: p.localHours,
  attempt_cap: p.attemptCap,
  effective: {
    local_hours: p.rules.localHours,
    attempt_cap: p.rules.attemptCap,
    allowed_countries: [...p.effective.allowedCountries].sort(),
    allowed_countries_source: p.effective.countriesSource,
    blocked_number_types: NUMBER_TYPES.filter((t) => p.effective.blockedTypes.has(t)),
  },
  updated_at: p.updatedAt,
});

const uniq = <T>(list: T[]) => [...new Set(list)];

export const callingPolicyRouter = createRouter()
  .openapi(get, async (c) => c.json(view(await loadCallingPolicy(getDb(c.env), c.get("orgId"), defaultRules(c.env))), 200))
  .openapi(put, async (c) => {
    const body = c.req.valid("json");
    const db = getDb(c.env);
    await updateCallingPolicy(db, actorOf(c), {
      allowedCountries:
        body.allowed_countries === undefined ? undefined : body.allowed_countries && uniq(body.allowed_countries.map((x) => x.toUpperCase())).sort(),
      blockedNumberTypes:
        body.blocked_number_types === undefined ? undefined : body.blocked_number_types && NUMBER_TYPES.filter((t) => body.blocked_number_types!.includes(t)),
      allowedNumbers: body.allowed_numbers === undefined ? undefined : uniq(body.allowed_numbers ?? []),
      allowPrivatePbx: body.allow_private_pbx,
      recordCalls: body.record_calls,
      localHours: body.local_hours,
      attemptCap: body.attempt_cap,
    });
    return c.json(view(await loadCallingPolicy(db, c.get("orgId"), defaultRules(c.env))), 200);
  });
