// Structural validation of an agent definition. Pure: no I/O, and total over any input, because it
// also runs on whatever a stored definition holds. Every problem is reported, not only the first.
import { isObject, type Obj } from "../lib/helpers";
import { speechLength } from "../lib/speech";
import { webhookNodeProblems, webhookNodeUrlProblem } from "./webhook-node";
import { actionProblems } from "./action-checks";

export const NODE_TYPES = ["startCall", "agentNode", "endCall", "globalNode", "webhook", "apiTrigger", "transferCall"] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Nodes that are steps of the conversation and so must be reachable from the start. Global, webhook and trigger
 * nodes stand beside the graph (applied to every step, fired on events, or an entry point) and need no edges. */
export const CONVERSATION_NODE_TYPES: ReadonlySet<string> = new Set(["startCall", "agentNode", "endCall", "transferCall"]);

/** A trigger path becomes one path segment of `/public/agent/{path}`. */
export const TRIGGER_PATH_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;

export type DefinitionError = {
  kind: "node" | "edge" | "workflow";
  /** The offending node or edge id; null for the workflow as a whole or an element without a usable id. */
  id: string | null;
  /** The offending field, e.g. `data.prompt`; null when the element as a whole is at fault. */
  field: string | null;
  message: string;
};

/** Something worth knowing that does not make the definition invalid (same shape as an error). */
export type DefinitionWarning = DefinitionError;

export type ValidationResult = { is_valid: boolean; errors: DefinitionError[]; warnings: DefinitionWarning[] };

/** How much text one carrier speaks in one utterance (the providers' maxSpeakChars, see ./speech-limits). */
export type SpeechLimit = { provider: string; maxChars: number };

export type ValidateOptions = {
  /** Trigger paths already owned by another agent of the same organization. */
  takenTriggerPaths?: ReadonlySet<string>;
  /** Carriers' per-utterance limits: a longer greeting is warned about (it is spoken in several parts). */
  speechLimits?: readonly SpeechLimit[];
};

const isNonEmptyString = (v: unknown): v is string => typeof v === "string" && v.trim().length > 0;
const isNodeType = (v: unknown): v is NodeType => typeof v === "string" && (NODE_TYPES as readonly string[]).includes(v);
const show = (v: unknown): string => {
  const s = typeof v === "string" ? v : (JSON.stringify(v) ?? String(v));
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

/** Fields each node type must carry in `data`. */
const REQUIRED_TEXT: Record<NodeType, string[]> = {
  startCall: ["prompt"],
  agentNode: ["prompt"],
  endCall: ["prompt"],
  globalNode: [],
  webhook: ["url"],
  transferCall: ["destination"],
  apiTrigger: ["trigger_path"],
};

// A node with a usable id; type is null when unknown (reported once, and edges to it are not reported again).
type GraphNode = { id: string; type: NodeType | null };

export function validateDefinition(definition: unknown, opts: ValidateOptions = {}): ValidationResult {
  const errors: DefinitionError[] = [];
  const warnings: DefinitionWarning[] = [];
  const workflowError = (field: string | null, message: string) => errors.push({ kind: "workflow", id: null, field, message });
  const nodeError = (id: string | null, field: string | null, message: string) => errors.push({ kind: "node", id, field, message });
  const edgeError = (id: string | null, field: string | null, message: string) => errors.push({ kind: "edge", id, field, message });

  if (!isObject(definition)) {
    workflowError(null, "The definition must be an object with nodes and edges");
    return { is_valid: false, errors, warnings };
  }
  let rawNodes: unknown[] = [];
  if (Array.isArray(definition.nodes)) rawNodes = definition.nodes;
  else workflowError("nodes", "nodes must be a list");
  let rawEdges: unknown[] = [];
  if (Array.isArray(definition.edges)) rawEdges = definition.edges;
  else if (definition.edges !== undefined) workflowError("edges", "edges must be a list");

  // Nodes: ids, types, data and the fields each type requires.
  const nodes = new Map<string, GraphNode>();
  const counts: Record<string, number> = {};
  const triggerPaths = new Map<string, string>();
  rawNodes.forEach((raw, index) => {
    if (!isObject(raw)) {
      nodeError(null, null, `Node at index ${index} must be an object`);
      return;
    }
    const id = isNonEmptyString(raw.id) ? raw.id : null;
    if (id === null) nodeError(null, "id", `Node at index ${index} has no id`);
    else if (nodes.has(id)) nodeError(id, "id", `Duplicate node id '${id}'`);

    if (!isNodeType(raw.type)) {
      const what = raw.type === undefined ? "has no type" : `has unknown type '${show(raw.type)}'`;
      nodeError(id, "type", `Node ${id === null ? `at index ${index}` : `'${id}'`} ${what}; expected one of ${NODE_TYPES.join(", ")}`);
      if (id !== null && !nodes.has(id)) nodes.set(id, { id, type: null });
      return;
    }
    const type = raw.type;
    counts[type] = (counts[type] ?? 0) + 1;

    let data: Obj = {};
    if (isObject(raw.data)) data = raw.data;
    else if (raw.data !== undefined && raw.data !== null) nodeError(id, "data", "data must be an object");

    for (const field of REQUIRED_TEXT[type]) {
      const value = data[field];
      if (value === undefined || value === null) nodeError(id, `data.${field}`, `A ${type} node requires data.${field}`);
      else if (typeof value !== "string") nodeError(id, `data.${field}`, `data.${field} must be a string`);
      else if (!value.trim()) nodeError(id, `data.${field}`, `data.${field} must not be empty`);
    }
    if (type === "startCall" && data.greeting !== undefined && data.greeting !== null && typeof data.greeting !== "string") {
      nodeError(id, "data.greeting", "data.greeting must be a string");
    }
    if (type === "startCall" && typeof data.greeting === "string") {
      const warning = greetingLengthWarning(data.greeting, opts.speechLimits ?? []);
      if (warning) warnings.push({ kind: "node", id, field: "data.greeting", message: warning });
    }
    if (type === "webhook" && isNonEmptyString(data.url)) {
      // SSRF: the service will call this address on the organization's behalf, so never an internal one.
      const why = webhookNodeUrlProblem(data.url);
      if (why) nodeError(id, "data.url", why);
    }
    if (type === "webhook") for (const [field, message] of webhookNodeProblems(data)) nodeError(id, field, message);
    if (type === "apiTrigger" && isNonEmptyString(data.trigger_path)) {
      const path = data.trigger_path;
      if (!TRIGGER_PATH_PATTERN.test(path)) {
        nodeError(id, "data.trigger_path", "data.trigger_path may only contain letters, digits, '.', '_', '~' and '-' (at most 128)");
      } else if (triggerPaths.has(path)) {
        nodeError(id, "data.trigger_path", `Trigger path '${path}' is already used by node '${triggerPaths.get(path)}'`);
      } else {
        triggerPaths.set(path, id ?? `#${index}`);
        if (opts.takenTriggerPaths?.has(path)) {
          nodeError(id, "data.trigger_path", `Trigger path '${path}' is already used by another agent in this organization`);
        }
      }
    }
    if (id !== null && !nodes.has(id)) nodes.set(id, { id, type });
  });

  const startCount = counts.startCall ?? 0;
  if (startCount === 0) workflowError("nodes", "The workflow needs exactly one startCall node; it has none");
  else if (startCount > 1) workflowError("nodes", `The workflow needs exactly one startCall node; it has ${startCount}`);
  if (!counts.endCall) workflowError("nodes", "The workflow needs at least one endCall node");
  if ((counts.globalNode ?? 0) > 1) workflowError("nodes", `The workflow may have at most one globalNode; it has ${counts.globalNode}`);

  // Edges: ids, endpoints, direction rules and distinct labels per source.
  const edgeIds = new Set<string>();
  const labelsBySource = new Map<string, Map<string, string>>();
  const adjacency = new Map<string, string[]>();
  rawEdges.forEach((raw, index) => {
    if (!isObject(raw)) {
      edgeError(null, null, `Edge at index ${index} must be an object`);
      return;
    }
    const id = isNonEmptyString(raw.id) ? raw.id : null;
    if (id === null) edgeError(null, "id", `Edge at index ${index} has no id`);
    else if (edgeIds.has(id)) edgeError(id, "id", `Duplicate edge id '${id}'`);
    else edgeIds.add(id);
    const name = id === null ? `at index ${index}` : `'${id}'`;

    const source = endpoint(raw.source);
    const target = endpoint(raw.target);
    if (source === null) edgeError(id, "source", `Edge ${name} has no source`);
    else if (!nodes.has(source)) edgeError(id, "source", `Edge ${name} starts at unknown node '${show(source)}'`);
    else if (nodes.get(source)!.type === "endCall")
      edgeError(id, "source", `Edge ${name} leaves endCall node '${source}'; nothing may follow the end of a call`);
    if (target === null) edgeError(id, "target", `Edge ${name} has no target`);
    else if (!nodes.has(target)) edgeError(id, "target", `Edge ${name} points at unknown node '${show(target)}'`);
    else if (nodes.get(target)!.type === "startCall")
      edgeError(id, "target", `Edge ${name} enters startCall node '${target}'; nothing may lead into the start`);

    let label: string | null = null;
    if (raw.data !== undefined && raw.data !== null) {
      if (!isObject(raw.data)) edgeError(id, "data", "data must be an object");
      else {
        for (const field of ["label", "condition"]) {
          const v = raw.data[field];
          if (v !== undefined && v !== null && typeof v !== "string") edgeError(id, `data.${field}`, `data.${field} must be a string`);
        }
        if (isNonEmptyString(raw.data.label)) label = raw.data.label.trim();
      }
    }
    // Labels name the choices an agent makes when leaving a node: two equal ones would be indistinguishable.
    if (label !== null && source !== null && nodes.has(source)) {
      const seen = labelsBySource.get(source) ?? new Map<string, string>();
      labelsBySource.set(source, seen);
      const key = label.toLowerCase();
      if (seen.has(key)) edgeError(id, "data.label", `Node '${source}' already has an outgoing edge labelled '${label}' (edge '${seen.get(key)}')`);
      else seen.set(key, id ?? `#${index}`);
    }
    if (source !== null && target !== null && nodes.has(source) && nodes.has(target)) {
      adjacency.set(source, [...(adjacency.get(source) ?? []), target]);
    }
  });

  // Transfers, key-press edges and HTTP tools (./action-checks).
  const types = new Map([...nodes].map(([id, n]) => [id, n.type as string | null]));
  for (const p of actionProblems(definition, types)) errors.push(p);

  // Reachability, only meaningful once a start exists (its absence is already reported).
  if (startCount > 0) {
    const seen = new Set<string>();
    const queue = [...nodes.values()].filter((n) => n.type === "startCall").map((n) => n.id);
    for (const id of queue) seen.add(id);
    while (queue.length) {
      for (const next of adjacency.get(queue.shift()!) ?? []) {
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    for (const node of nodes.values()) {
      if (node.type !== null && CONVERSATION_NODE_TYPES.has(node.type) && !seen.has(node.id)) {
        nodeError(node.id, null, `Node '${node.id}' (${node.type}) cannot be reached from the startCall node`);
      }
    }
  }

  return { is_valid: errors.length === 0, errors, warnings };
}

/**
 * A greeting longer than some carrier speaks in one utterance is cut into several (at sentence boundaries), which
 * the caller hears as pauses. Measured as the calls module measures it, on the template as written: filled template
 * variables can only make it longer.
 */
function greetingLengthWarning(greeting: string, limits: readonly SpeechLimit[]): string | null {
  const length = speechLength(greeting.trim());
  const over = limits.filter((l) => length > l.maxChars);
  if (!over.length) return null;
  const which = over.map((l) => `${l.provider} (${l.maxChars.toLocaleString("en-US")})`).join(", ");
  return `The greeting is ${length.toLocaleString("en-US")} characters (UTF-8 bytes), more than one utterance takes on ${which}: it will be spoken there in several parts, split at sentence boundaries`;
}

const endpoint = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/** The API Trigger paths a definition declares (well-formed ones only), in order, without repeats. */
export function triggerPathsOf(definition: unknown): string[] {
  const out = new Set<string>();
  if (!isObject(definition) || !Array.isArray(definition.nodes)) return [];
  for (const node of definition.nodes) {
    if (!isObject(node) || node.type !== "apiTrigger" || !isObject(node.data)) continue;
    const p = node.data.trigger_path;
    if (typeof p === "string" && TRIGGER_PATH_PATTERN.test(p)) out.add(p);
  }
  return [...out];
}
