// Campaign settings (contract 6): the zod schemas used by create and PATCH, and the defaults the engine applies.
// Strict objects: an unknown field in a request is a 422 `extra_forbidden` (contract 9).
import { z } from "@hono/zod-openapi";

const TIME = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

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

/** Everything the engine needs to dial; stored in the campaign object and mirrored in D1 `campaigns.settings`. */
export type CampaignSettings = {
  retry_config: RetryConfig;
  max_concurrency: number;
  rate_limit: number;
  schedule_config: ScheduleConfig | null;
  circuit_breaker: CircuitBreaker;
};

export const DEFAULT_SETTINGS: CampaignSettings = {
  retry_config: RetryConfig.parse({}),
  max_concurrency: 10,
  rate_limit: 1,
  schedule_config: null,
  circuit_breaker: CircuitBreaker.parse({}),
};

/** A PATCH of settings (every part optional; nested objects partial). */
export type SettingsPatch = {
  name?: string;
  retry_config?: Partial<RetryConfig>;
  max_concurrency?: number;
  rate_limit?: number;
  schedule_config?: ScheduleConfig | null | Partial<ScheduleConfig>;
  circuit_breaker?: Partial<CircuitBreaker>;
};

/** A PATCH merged over the current settings: nested objects field by field; `schedule_config: null` removes it.
 *  The result is not validated here: callers check it (the route for located 422s, the object before storing). */
export function mergeSettings(cur: CampaignSettings, p: SettingsPatch): CampaignSettings {
  return {
    retry_config: p.retry_config ? { ...cur.retry_config, ...p.retry_config } : cur.retry_config,
    max_concurrency: p.max_concurrency ?? cur.max_concurrency,
    rate_limit: p.rate_limit ?? cur.rate_limit,
    schedule_config:
      p.schedule_config === undefined
        ? cur.schedule_config
        : p.schedule_config === null
          ? null
          : ({ ...(cur.schedule_config ?? { enabled: true, timezone: "UTC", slots: [] }), ...p.schedule_config } as ScheduleConfig),
    circuit_breaker: p.circuit_breaker ? { ...cur.circuit_breaker, ...p.circuit_breaker } : cur.circuit_breaker,
  };
}
