// The setup checklist: providers list their steps; readiness is derived here,
// in one place, so no provider can report "ready" while a blocking step is incomplete.
import type { ChecklistStep } from "./types";

export type Checklist = {
  ready_for_outbound: boolean;
  outbound_blocked_reason: string | null;
  steps: ChecklistStep[];
  docs_url: string;
};

export type Readiness = { ready: boolean; blockedReason: string | null };

/** Ready only when no blocking step is incomplete and the configuration is not inactive. */
export function readiness(steps: readonly ChecklistStep[], inactive: { inactive: boolean; reason: string | null }): Readiness {
  const blocking = steps.find((s) => s.blocks_outbound && !s.complete);
  if (blocking) return { ready: false, blockedReason: `Setup step '${blocking.key}' is incomplete: ${blocking.description}` };
  if (inactive.inactive) return { ready: false, blockedReason: `Configuration is inactive${inactive.reason ? `: ${inactive.reason}` : ""}` };
  return { ready: true, blockedReason: null };
}

export function buildChecklist(steps: ChecklistStep[], inactive: { inactive: boolean; reason: string | null }, docsUrl: string): Checklist {
  const r = readiness(steps, inactive);
  return { ready_for_outbound: r.ready, outbound_blocked_reason: r.blockedReason, steps, docs_url: docsUrl };
}

const withError = (text: string, error: unknown) => (typeof error === "string" && error ? `${text} Last error: ${error}` : text);

// Step builders shared by the provider modules; each provider decides which apply and whether they block.

export function credentialsStep(error: unknown): ChecklistStep {
  return {
    key: "credentials",
    title: "Credentials",
    description: withError("Enter the account credentials; they are stored encrypted.", error),
    complete: !error,
    blocks_outbound: true,
  };
}

export function callerIdStep(activeNumbers: number, blocks: boolean): ChecklistStep {
  return {
    key: "caller_id",
    title: "Caller ID",
    description: blocks ? "Add at least one active phone number to call from." : "Optionally add an extension or number to present as caller ID.",
    complete: activeNumbers > 0,
    blocks_outbound: blocks,
  };
}

export function applicationStep(present: boolean, field: string, error: unknown): ChecklistStep {
  return {
    key: "application",
    title: "Carrier application",
    description: withError(`Set ${field}, or leave it empty and save to have the application created automatically.`, error),
    complete: present,
    blocks_outbound: true,
  };
}

export function webhookSigningStep(present: boolean, field: string): ChecklistStep {
  return {
    key: "webhook_signing",
    title: "Webhook signing",
    description: `Set ${field} so callbacks can be verified by the carrier's signature.`,
    complete: present,
    blocks_outbound: false,
  };
}

/** A configured string value (an id, a key); masks count too, since a mask stands for a stored secret. */
export const isSet = (v: unknown): boolean => typeof v === "string" && v.length > 0;
