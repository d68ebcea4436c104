// Where the API's answers about an agent belong in the editor (pure: no DOM): a 422 item's loc, or a validate
// issue's node or edge and field, to the id of the form control that shows it.
/** Field id for a 422 item's loc (["body", "workflow_definition", "nodes", 0, "data", "prompt"]), or null. */
export function fieldOfLoc(loc) {
  const [, top, kind, i, part, name] = loc;
  if (top === "name") return "agent-name";
  if (top === "workflow_configurations")
    return kind === "voice_agent" && typeof i === "string" && typeof part === "string" ? `voice-${i}-${part}` : "agent-config";
  if (top !== "workflow_definition") return null;
  if (kind === "nodes" && typeof i === "number") return part === "data" ? `node-${i}-${name}` : `node-${i}-${part === "type" ? "type" : "id"}`;
  if (kind === "edges" && typeof i === "number") return part === "data" ? `edge-${i}-${name}` : `edge-${i}-${part ?? "source"}`;
  return "agent-json";
}

/** Field id for a validate issue ({kind, id, field: "data.prompt"}), by the node's or edge's position. */
export function fieldOfIssue(issue, def) {
  const list = issue.kind === "node" ? def.nodes : issue.kind === "edge" ? def.edges : null;
  if (!list) return null;
  const i = list.findIndex((x) => x.id === issue.id);
  if (i < 0) return null;
  const name = (issue.field ?? "id").replace(/^data\./, "");
  return `${issue.kind}-${i}-${name}`;
}
