// Where the organization asks for it (calling_policies.redact_pii), a call's results are redacted before they are
// stored (src/lib/pii-redact.ts): the transcript's text, the gathered values of variables marked sensitive, and the
// tool calls' arguments. Read with the run's organization in one D1 query at the call's end.
import { sql } from "drizzle-orm";
import { getDb } from "../../lib/db";
import { isObject } from "../../lib/helpers";
import { REDACTED, redactText, redactValue, sensitiveValuesOf } from "../../lib/pii-redact";
import type { AgentOutcome } from "../../agent/voice-agent";
import type { StoredTurn } from "./details-object";

/** What saving a run's results needs of its organization and agent. */
export type RunOwner = { orgId: number; redact: boolean; sensitive: Set<string> };

/** The names of the definition's extraction variables marked `sensitive: true`. */
export function sensitiveNames(definition: unknown): Set<string> {
  const names = new Set<string>();
  const nodes = isObject(definition) && Array.isArray(definition.nodes) ? definition.nodes : [];
  for (const n of nodes) {
    const vars = isObject(n) && isObject(n.data) && Array.isArray(n.data.extraction_variables) ? n.data.extraction_variables : [];
    for (const v of vars) if (isObject(v) && v.sensitive === true && typeof v.name === "string") names.add(v.name);
  }
  return names;
}

/** The run's organization and whether (and what) to redact; the definition is read only where redaction is on. */
export async function runOwner(env: Env, runId: number): Promise<RunOwner | null> {
  const row = await getDb(env).get<{ org_id: number; redact: number | null; definition: string | null }>(
    sql`SELECT r.org_id, p.redact_pii AS redact, CASE WHEN p.redact_pii THEN d.definition END AS definition
        FROM workflow_runs r LEFT JOIN calling_policies p ON p.org_id = r.org_id LEFT JOIN workflow_definitions d ON d.id = r.definition_id
        WHERE r.id = ${runId}`,
  );
  if (!row) return null;
  let definition: unknown = null;
  try {
    definition = row.definition ? JSON.parse(row.definition) : null;
  } catch {
    definition = null;
  }
  return { orgId: row.org_id, redact: !!row.redact, sensitive: sensitiveNames(definition) };
}

type Results = { transcript: StoredTurn[]; gathered: Record<string, unknown> | null; toolCalls: AgentOutcome["toolCalls"] };

/** The results as stored under the owner's policy (unchanged where redaction is off). */
export function redactResults(owner: Pick<RunOwner, "redact" | "sensitive">, r: Results): Results {
  if (!owner.redact) return r;
  const values = sensitiveValuesOf(r.gathered, owner.sensitive);
  const gathered =
    r.gathered && Object.fromEntries(Object.entries(r.gathered).map(([k, v]) => [k, owner.sensitive.has(k) && v != null ? REDACTED.sensitive : v]));
  return {
    transcript: r.transcript.map((t) => ({ ...t, text: redactText(t.text, values) })),
    gathered,
    toolCalls: r.toolCalls?.map((c) => ({ ...c, arguments: redactValue(c.arguments, values, owner.sensitive) as Record<string, unknown> })),
  };
}
