// The pure rules of a call that comes in: whether the number takes it (and why not, for the log), the caller's and
// dialed numbers as E.164, and the template variables the agent gets.

/** What an inbound call finds: the number dialed, its configuration, its agent. */
export type InboundFacts = {
  number: { isActive: boolean; inboundWorkflowId: number | null; label: string | null } | null;
  configInactive: boolean;
};

export type Refusal = "number_unknown" | "number_inactive" | "configuration_inactive" | "no_agent";

/** Why the call is not put through to an agent before the agent is even loaded, or null. */
export function refusalOf(f: InboundFacts): Refusal | null {
  if (!f.number) return "number_unknown";
  if (!f.number.isActive) return "number_inactive";
  if (f.configInactive) return "configuration_inactive";
  if (f.number.inboundWorkflowId == null) return "no_agent";
  return null;
}

/** What the caller hears when no agent takes the call: short, polite, no internals. */
export const NOT_IN_SERVICE = "Sorry, no one can take your call at this number right now. Please try again later. Goodbye.";

/**
 * A carrier's way of writing a number, as E.164 where it is one: Plivo, Vobiz, Vonage and Exotel drop the `+`
 * (`14155550100`), Exotel may prefix a national 0; SIP URIs, extensions and withheld callers stay as they are.
 */
export function asE164(raw: string): string {
  const v = raw.trim();
  if (/^\+[1-9]\d{6,14}$/.test(v)) return v;
  if (/^[1-9]\d{7,14}$/.test(v)) return `+${v}`;
  return v;
}

/** The addresses a dialed number may be stored under (E.164, or as written for a PBX's extensions and URIs). */
export function addressCandidates(raw: string): string[] {
  const v = raw.trim();
  return [...new Set([asE164(v), v].filter(Boolean))];
}

/**
 * The agent's template variables for an inbound call: its own defaults (template_context_variables), then the
 * number's label as `number_label`, then `caller_number` and `called_number`, which always win.
 */
export function inboundVariables(defaults: Record<string, unknown>, label: string | null, caller: string, called: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(defaults ?? {})) if (v === null || ["string", "number", "boolean"].includes(typeof v)) out[k] = v;
  if (label) out.number_label = label;
  out.caller_number = caller;
  out.called_number = called;
  return out;
}
