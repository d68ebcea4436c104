// Reads and writes an organization's destination policy (the rules are in destination-policy.ts). One round trip:
// the stored policy and the organization's E.164 caller IDs (the default allowed countries) together.
import { and, eq, like } from "drizzle-orm";
import { callingPolicies, phoneNumbers } from "../db/schema";
import { auditStatement, type Actor } from "../lib/audit";
import { isoNow } from "../lib/clock";
import type { Db } from "../lib/db";
import { defaultRules, effectiveRules, type AttemptCapConfig, type CallingRules, type LocalHoursConfig } from "./calling-rules";
import { checkDestination, effectivePolicy, type DestinationType, type EffectivePolicy, type Refusal, type StoredPolicy } from "./destination-policy";
import { checkPbxDestination, pbxNumber } from "./pbx-destinations";
import { log } from "../lib/log";

export type PolicyState = {
  stored: StoredPolicy | null;
  allowPrivatePbx: boolean;
  recordCalls: boolean;
  localHours: LocalHoursConfig | null;
  attemptCap: AttemptCapConfig | null;
  rules: CallingRules;
  updatedAt: string | null;
  callerIds: string[];
  effective: EffectivePolicy;
};

/** `defaults`: the deployment's calling rules (defaultRules(env)); only `rules` depends on them. */
export async function loadCallingPolicy(db: Db, orgId: number, defaults: CallingRules = defaultRules({})): Promise<PolicyState> {
  const [rows, numbers] = await db.batch([
    db.select().from(callingPolicies).where(eq(callingPolicies.orgId, orgId)).limit(1),
    db
      .selectDistinct({ address: phoneNumbers.address })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.orgId, orgId), eq(phoneNumbers.isActive, true), like(phoneNumbers.address, "+%"))),
  ]);
  const row = rows[0];
  const stored: StoredPolicy | null = row
    ? {
        allowedCountries: row.allowedCountries ?? null,
        blockedNumberTypes: (row.blockedNumberTypes as DestinationType[] | null) ?? null,
        allowedNumbers: row.allowedNumbers ?? [],
      }
    : null;
  const callerIds = numbers.map((n) => n.address);
  return {
    stored,
    allowPrivatePbx: row?.allowPrivatePbx ?? false,
    recordCalls: row?.recordCalls ?? true,
    localHours: row?.localHours ?? null,
    attemptCap: row?.attemptCap ?? null,
    rules: effectiveRules(row ?? null, defaults),
    updatedAt: row?.updatedAt ?? null,
    callerIds,
    effective: effectivePolicy(stored, callerIds),
  };
}

/**
 * Why the organization may not dial `number` (normalized), or null. Checked before every dial, single or campaign;
 * a refusal is logged, as refused expensive destinations are what a stolen key is used for. `pbxTemplates`: the
 * dial-string forms of an ari configuration (pbxTemplates()), whose destinations have their number extracted first.
 */
export async function destinationRefusal(db: Db, orgId: number, number: string, pbxTemplates?: readonly string[] | null): Promise<Refusal | null> {
  if (pbxTemplates) {
    const n = pbxNumber(number, pbxTemplates);
    // An extension or a SIP user by name stays in the PBX: no policy to load.
    if ("internal" in n && n.internal) return null;
  } else if (!number.startsWith("+")) return null;
  const effective = (await loadCallingPolicy(db, orgId)).effective;
  const refused = pbxTemplates ? checkPbxDestination(number, pbxTemplates, effective) : checkDestination(number, effective);
  if (refused) log("warning", "destination_refused", { org_id: orgId, ...refused.ctx });
  return refused;
}

export type PolicyUpdate = {
  allowedCountries?: string[] | null;
  blockedNumberTypes?: DestinationType[] | null;
  allowedNumbers?: string[];
  allowPrivatePbx?: boolean;
  recordCalls?: boolean;
  localHours?: LocalHoursConfig | null;
  attemptCap?: AttemptCapConfig | null;
};

/** The calling rules campaign dials follow (the recipient's local hours, the attempt cap): one row read. */
export async function loadCallingRules(db: Db, orgId: number, defaults: CallingRules): Promise<CallingRules> {
  const row = await db
    .select({ localHours: callingPolicies.localHours, attemptCap: callingPolicies.attemptCap })
    .from(callingPolicies)
    .where(eq(callingPolicies.orgId, orgId))
    .get();
  return effectiveRules(row ?? null, defaults);
}

/** One yes/no setting of the organization's policy; `fallback` when it has never set a policy. */
async function policyFlag(db: Db, orgId: number, flag: "allowPrivatePbx" | "recordCalls", fallback: boolean): Promise<boolean> {
  const row = await db.select({ value: callingPolicies[flag] }).from(callingPolicies).where(eq(callingPolicies.orgId, orgId)).get();
  return row?.value ?? fallback;
}

/** Whether the organization records its calls (on unless it turned recording off). */
export const recordsCalls = (db: Db, orgId: number) => policyFlag(db, orgId, "recordCalls", true);

/** Whether the organization lets its PBX URLs point at loopback, private, CGNAT or local names (SSRF guard). */
export const allowsPrivatePbx = (db: Db, orgId: number) => policyFlag(db, orgId, "allowPrivatePbx", false);

/**
 * Sets the fields given and keeps the others, in one statement (two concurrent updates of different fields both
 * stick), recorded in the audit log in the same batch.
 */
export async function updateCallingPolicy(db: Db, actor: Actor, u: PolicyUpdate): Promise<void> {
  const orgId = actor.orgId;
  const set = {
    ...(u.allowedCountries !== undefined ? { allowedCountries: u.allowedCountries } : {}),
    ...(u.blockedNumberTypes !== undefined ? { blockedNumberTypes: u.blockedNumberTypes } : {}),
    ...(u.allowedNumbers !== undefined ? { allowedNumbers: u.allowedNumbers } : {}),
    ...(u.allowPrivatePbx !== undefined ? { allowPrivatePbx: u.allowPrivatePbx } : {}),
    ...(u.recordCalls !== undefined ? { recordCalls: u.recordCalls } : {}),
    ...(u.localHours !== undefined ? { localHours: u.localHours } : {}),
    ...(u.attemptCap !== undefined ? { attemptCap: u.attemptCap } : {}),
    updatedAt: isoNow(),
  };
  const fields = Object.entries({
    allowed_countries: u.allowedCountries,
    blocked_number_types: u.blockedNumberTypes,
    allowed_numbers: u.allowedNumbers,
    allow_private_pbx: u.allowPrivatePbx,
    record_calls: u.recordCalls,
    local_hours: u.localHours,
    attempt_cap: u.attemptCap,
  }).flatMap(([k, v]) => (v === undefined ? [] : [k]));
  await db.batch([
    db
      .insert(callingPolicies)
      .values({ orgId, allowedCountries: null, blockedNumberTypes: null, allowedNumbers: [], ...set })
      .onConflictDoUpdate({ target: callingPolicies.orgId, set }),
    // Who opened which destinations: the new lists themselves (short), and how many numbers are allowed one by one.
    auditStatement(db, actor, {
      action: "update",
      resourceType: "calling_policy",
      resourceId: orgId,
      summary: {
        fields,
        ...(u.allowedCountries !== undefined ? { allowed_countries: u.allowedCountries } : {}),
        ...(u.blockedNumberTypes !== undefined ? { blocked_number_types: u.blockedNumberTypes } : {}),
        ...(u.allowedNumbers !== undefined ? { allowed_numbers_count: u.allowedNumbers.length } : {}),
        ...(u.allowPrivatePbx !== undefined ? { allow_private_pbx: u.allowPrivatePbx } : {}),
        ...(u.recordCalls !== undefined ? { record_calls: u.recordCalls } : {}),
        ...(u.localHours !== undefined ? { local_hours: u.localHours } : {}),
        ...(u.attemptCap !== undefined ? { attempt_cap: u.attemptCap } : {}),
      },
    }),
  ]);
}
