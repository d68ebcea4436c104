// What other modules (campaigns, calls) use from agents: lookups with the archive rule, and the pure helpers.
export { findWorkflowByTriggerPath, findWorkflowByUuid, getWorkflow, loadUsableWorkflow, loadUsableWorkflowByUuid, loadUsableWorkflowByTrigger } from "./store";
export type { StoredWorkflow, UsableWorkflow } from "./store";
export {
  blankVariables,
  extractVariables,
  missingVariables,
  renderTemplate,
  startGreeting,
  templateVariables,
  variablesWithoutDefault,
  withDefaults,
} from "./template";
export type { Rendered } from "./template";
export { validateDefinition } from "./validate";
export { AgentConflict } from "./schemas";
export type { DefinitionError, DefinitionWarning, ValidationResult } from "./validate";
