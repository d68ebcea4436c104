// A call must give every template variable its agent uses a value that is not blank, unless the agent gives it a
// default (template_context_variables), as each row of a campaign's CSV must (campaigns/csv/import.ts): the same
// set, from the same extraction. A blank value would be spoken as nothing ("Hi , do you have a minute?").
import { unprocessable } from "../../lib/errors";
import { blankVariables, templateVariables, withDefaults } from "../../workflows";

type Agent = { definition: unknown; templateContextVariables: unknown };

/** The call's context with the agent's defaults filled in where it gives no value (or a blank one). */
export function contextWithDefaults(agent: Agent, context: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return withDefaults(templateVariables(agent.definition), context, agent.templateContextVariables);
}

/**
 * The context the call runs with (contextWithDefaults); a 422, one item per variable at ["body", "initial_context",
 * name], when a variable is still absent (`missing`) or blank (`template_value_empty`).
 */
export function requireVariables(agent: Agent, context: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const filled = contextWithDefaults(agent, context);
  const { missing, empty } = blankVariables(templateVariables(agent.definition), filled);
  if (!missing.length && !empty.length) return filled;
  throw unprocessable([
    ...missing.map((name) => ({
      loc: ["body", "initial_context", name],
      msg: `Field required: the agent uses the template variable {{${name}}}, but initial_context has no value for it (and the agent's template_context_variables no default)`,
      type: "missing",
      ctx: { variable: name },
    })),
    ...empty.map((name) => ({
      loc: ["body", "initial_context", name],
      msg: `The agent uses the template variable {{${name}}}, and an empty value would be spoken as nothing: give a value, or give the agent a default in template_context_variables`,
      type: "template_value_empty",
      ctx: { variable: name },
    })),
  ]);
}
