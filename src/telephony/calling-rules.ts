// The organization's calling rules for campaign dials, besides which destinations it may dial at all
// (destination-policy.ts): the recipient's local hours and a cap on attempts per number across campaigns.
// Both are on unless the organization turns them off.

export type LocalHoursConfig = { enabled: boolean; start: string; end: string };
export type AttemptCapConfig = { enabled: boolean; max_attempts: number; window_hours: number };
export type CallingRules = { localHours: LocalHoursConfig; attemptCap: AttemptCapConfig };

export const DEFAULT_LOCAL_HOURS: LocalHoursConfig = { enabled: true, start: "08:00", end: "21:00" };
export const DEFAULT_ATTEMPT_CAP: AttemptCapConfig = { enabled: true, max_attempts: 3, window_hours: 24 };

/**
 * The deployment's defaults for organizations that set nothing: on, unless `CALLING_RULES_DEFAULTS` is "off" (the
 * test suites, whose clocks run at any hour, turn them on where they test them).
 */
export function defaultRules(env: object): CallingRules {
  const off = (env as { CALLING_RULES_DEFAULTS?: string }).CALLING_RULES_DEFAULTS === "off";
  return off
    ? { localHours: { ...DEFAULT_LOCAL_HOURS, enabled: false }, attemptCap: { ...DEFAULT_ATTEMPT_CAP, enabled: false } }
    : { localHours: DEFAULT_LOCAL_HOURS, attemptCap: DEFAULT_ATTEMPT_CAP };
}

/** The rules in force: what is stored, the deployment's defaults where nothing is. */
export function effectiveRules(
  stored: { localHours?: LocalHoursConfig | null; attemptCap?: AttemptCapConfig | null } | null,
  defaults: CallingRules,
): CallingRules {
  return { localHours: stored?.localHours ?? defaults.localHours, attemptCap: stored?.attemptCap ?? defaults.attemptCap };
}
