// A single call must provide every template variable its agent uses, as a campaign's CSV must have a
// column for each (campaigns/csv/import.ts): the same set, from the same extraction.
import { unprocessable } from "../lib/errors";
import { missingVariables, templateVariables } from "../workflows";

/** 422, one `missing` item per variable at ["body", "initial_context", name], when `context` lacks any. */
export function requireVariables(definition: unknown, context: Record<string, unknown> | null | undefined): void {
  const missing = missingVariables(templateVariables(definition), context);
  if (!missing.length) return;
  throw unprocessable(
    missing.map((name) => ({
      loc: ["body", "initial_context", name],
      msg: `Field required: the agent uses the template variable {{${name}}}, but initial_context has no value for it`,
      type: "missing",
      ctx: { variable: name },
    })),
  );
}
