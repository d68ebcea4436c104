// Campaign settings: the zod schemas used by create and PATCH, and the defaults the engine applies.
// Strict objects: an unknown field in a request is a 422 `extra_forbidden`.
import { z } from "@hono/zod-openapi";
import { isValidTimeZone } from "../../lib/time-zones";

const TIME = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;

export const RetryConfig = z
  .strictObject({
    enabled: z.boolean().default(true),
    max_retries: z.number().int().min(0).max(10).default(2),
    retry_delay_seconds: z.number().int().min(30).max(86400).default(120),
    retry_on_busy: z.boolean().default(true),
    retry_on_no_answer: z.boolean().default(true),
    retry_on_voicemail: z.boolean().default(false),
  })
  .openapi("RetryConfig");

export const ScheduleSlot = z
  .strictObject({
    day_of_week: z.number().int().min(0).max(6).openapi({ description: "0 = Monday … 6 = Sunday" }),
    start_time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "Expected HH:MM (00:00–23:59)"),
    end_time: z.string().regex(TIME, "Expected HH:MM (00:00–24:00)"),
  })
  .refine((s) => s.start_time < s.end_time, { message: "end_time must be after start_time", path: ["end_time"] });

export const ScheduleConfig = z
  .strictObject({
    enabled: z.boolean().default(true),
    timezone: z.string().refine(isValidTimeZone, { message: "Unknown IANA timezone" }).default("UTC"),
    slots: z.array(ScheduleSlot).min(1).max(50),
  })
  .openapi("ScheduleConfig");

export const CircuitBreaker = z
  .strictObject({
    enabled: z.boolean().default(false),
    failure_threshold: z.number().min(0).max(1).default(0.5),
    window_seconds: z.number().int().min(30).max(3600).default(120),
    min_calls_in_window: z.number().int().min(1).max(1000).default(5),
  })
  .openapi("CircuitBreaker");

export const MaxConcurrency = z.number().int().min(1).max(100);
export const RateLimit = z.number().int().min(1).max(50);

export type RetryConfig = z.infer<typeof RetryConfig>;
export type ScheduleConfig = z.infer<typeof ScheduleConfig>;
export type CircuitBreaker = z.infer<typeof CircuitBreaker>;

/**
 * The one source of a campaign's settings: create takes these fields (defaults filled), PATCH takes them partially
 * (records.routes.ts derives its schema from this one), the campaign object stores and re-checks them, and D1
 * mirrors them. Adding a setting: one field here, and the code that uses it.
 */
export const SETTINGS_FIELDS = {
  retry_config: RetryConfig.default(RetryConfig.parse({})),
  max_concurrency: MaxConcurrency.default(10),
  rate_limit: RateLimit.default(1).openapi({ description: "Calls started per second at most (1–50)" }),
  schedule_config: ScheduleConfig.nullable().default(null),
  circuit_breaker: CircuitBreaker.default(CircuitBreaker.parse({})),
  voicemail_action: z.enum(["hang_up", "leave_message"]).default("hang_up").openapi({
    description:
      "When an answering machine answers (the carrier's detection where it has one, else the agent's from the first words): `hang_up`, or `leave_message` (the greeting is spoken after the tone). The run's status is `voicemail` either way.",
  }),
  require_passing_tests: z.boolean().default(false).openapi({
    description:
      "Start (and resume) only while the agent's current version passed its newest finished test suite run (a 409 naming why otherwise; docs/agent-tests.md). The agent's own workflow_configurations.require_passing_tests asks the same of every campaign.",
  }),
};
export const CampaignSettingsSchema = z.object(SETTINGS_FIELDS);

type Fields = typeof SETTINGS_FIELDS;
/** The settings as a response carries them: every field present, no defaults to fill. */
export const SETTINGS_VIEW = Object.fromEntries(Object.entries(SETTINGS_FIELDS).map(([k, v]) => [k, v.removeDefault()])) as {
  [K in keyof Fields]: ReturnType<Fields[K]["removeDefault"]>;
};

/** Everything the engine needs to dial; stored in the campaign object and mirrored in D1 `campaigns.settings`. */
export type CampaignSettings = z.output<typeof CampaignSettingsSchema>;
export const SETTING_NAMES = Object.keys(SETTINGS_FIELDS) as (keyof CampaignSettings)[];

export const DEFAULT_SETTINGS: CampaignSettings = CampaignSettingsSchema.parse({});

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Settings as stored (or as a request's fields), completed with the defaults: a nested object is completed field by
 * field, so an older or partial row still reads whole. Not validated (validateSettings does that).
 */
export function completeSettings(stored: Obj | null | undefined): CampaignSettings {
  const out: Obj = {};
  for (const name of SETTING_NAMES) {
    const dflt = DEFAULT_SETTINGS[name] as unknown;
    const v = stored?.[name];
    out[name] = v === undefined ? dflt : isObj(dflt) && isObj(v) ? { ...dflt, ...v } : v;
  }
  return out as CampaignSettings;
}

/** A PATCH of settings (every part optional; nested objects partial) and the name. */
export type SettingsPatch = { name?: string } & {
  [K in keyof CampaignSettings]?: CampaignSettings[K] extends infer T ? (T extends Obj ? Partial<T> | null : T) : never;
};

/**
 * A PATCH merged over the current settings: nested objects field by field, `null` removes a nullable part (the
 * schedule), a scalar replaces. A schedule merged onto none starts from `enabled: true, timezone: "UTC"`.
 * Not validated here: callers check the result (the route for located 422s, the object before storing).
 */
export function mergeSettings(cur: CampaignSettings, p: SettingsPatch): CampaignSettings {
  const out: Obj = { ...cur };
  for (const name of SETTING_NAMES) {
    const v = (p as Obj)[name];
    if (v === undefined) continue;
    const base = (cur as Obj)[name] ?? (name === "schedule_config" ? { enabled: true, timezone: "UTC", slots: [] } : {});
    out[name] = isObj(v) && isObj(base) ? { ...base, ...v } : v;
  }
  return out as CampaignSettings;
}

export type SettingsCheck = { ok: true; settings: CampaignSettings } | { ok: false; issues: z.core.$ZodIssue[] };

/** The merged or stored settings against the one schema (every caller checks the same rules). */
export function validateSettings(s: CampaignSettings): SettingsCheck {
  const r = CampaignSettingsSchema.safeParse(s);
  return r.success ? { ok: true, settings: r.data } : { ok: false, issues: r.error.issues };
}
