// The agent editor: name, the graph's steps (nodes) and transitions (edges) as a form, the same definition as JSON,
// engines and voice settings (workflow_configurations as JSON), and a diagram of the graph. Saving creates or
// updates the agent; the API's 422 items and then its validate answer are shown at the fields they name, so a
// draft with problems still saves (as the API allows) and the problems stay visible until fixed.
import { api, clearError, clearFieldErrors, field, h, placeErrors, setFieldError, showError } from "./core.js";
import { fieldOfIssue, fieldOfLoc } from "./agent-fields.js";
import { graphSvg } from "./graph-svg.js";
import { voiceForm } from "./voice-form.js";

const NODE_TYPES = ["startCall", "agentNode", "endCall", "globalNode", "webhook", "apiTrigger", "transferCall"];
/** The text fields the form offers per node type (the rest stays in the JSON view). */
const TEXT_FIELDS = {
  startCall: ["greeting", "prompt"],
  agentNode: ["prompt"],
  endCall: ["prompt"],
  globalNode: ["prompt"],
  webhook: ["url"],
  apiTrigger: ["trigger_path"],
  transferCall: ["destination", "message"],
};
const FIELD_LABELS = {
  greeting: "Greeting (first words)",
  prompt: "Prompt",
  url: "URL",
  trigger_path: "Trigger path",
  destination: "Transfer to",
  message: "Said before the transfer",
};
const EDGE_FIELDS = ["label", "condition"];

export const BLANK = {
  nodes: [
    { id: "start", type: "startCall", data: { greeting: "", prompt: "" } },
    { id: "end", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "done", condition: "The conversation is finished" } }],
};

/**
 * Renders the editor into `root`. `agent` is the stored agent (or null for a new one); `onSaved(agent)` runs after a
 * successful save.
 */
export function agentEditor(root, agent, onSaved) {
  let def = structuredClone(agent?.workflow_definition ?? BLANK);
  def.nodes ??= [];
  def.edges ??= [];
  const name = h("input", { type: "text", value: agent?.name ?? "", required: true, autocomplete: "off" });
  const config = h("textarea", { rows: 6, spellcheck: "false" }, JSON.stringify(agent?.workflow_configurations ?? {}, null, 2));
  const json = h("textarea", { rows: 14, spellcheck: "false", class: "code" });
  const nodesBox = h("div", { class: "rows" });
  const edgesBox = h("div", { class: "rows" });
  const diagram = h("figure", { class: "diagram" });
  const verdict = h("div", { id: "agent-validation", role: "status" });
  const readConfig = () => {
    try {
      return JSON.parse(config.value || "{}");
    } catch {
      return null;
    }
  };
  const voice = voiceForm(readConfig, (obj) => {
    config.value = JSON.stringify(obj, null, 2);
  });
  config.addEventListener("change", () => voice.render());

  const sync = () => {
    json.value = JSON.stringify(def, null, 2);
    diagram.replaceChildren(h("figcaption", {}, "The graph"), graphSvg(def.nodes, def.edges));
  };
  const text = (id, label, value, onInput, rows = 0) => {
    const control = rows
      ? h("textarea", { rows, oninput: (e) => (onInput(e.target.value), sync()) }, value ?? "")
      : h("input", { type: "text", value: value ?? "", autocomplete: "off", oninput: (e) => (onInput(e.target.value), sync()) });
    return field(id, label, control);
  };
  const select = (id, label, options, value, onChange) =>
    field(
      id,
      label,
      h(
        "select",
        { onchange: (e) => (onChange(e.target.value), renderForm()) },
        options.map((o) => h("option", { value: o, selected: o === value }, o)),
      ),
    );

  const renderForm = () => {
    nodesBox.replaceChildren(
      ...def.nodes.map((n, i) => {
        n.data ??= {};
        return h(
          "fieldset",
          { class: "row-card" },
          h("legend", {}, `Step ${i + 1}: ${n.id}`),
          text(`node-${i}-id`, "Id", n.id, (v) => {
            for (const e of def.edges) {
              if (e.source === n.id) e.source = v;
              if (e.target === n.id) e.target = v;
            }
            n.id = v;
          }),
          select(`node-${i}-type`, "Type", NODE_TYPES, n.type, (v) => (n.type = v)),
          ...(TEXT_FIELDS[n.type] ?? []).map((f) => text(`node-${i}-${f}`, FIELD_LABELS[f], n.data[f], (v) => (n.data[f] = v), f === "prompt" ? 3 : 0)),
          h("button", { type: "button", class: "danger", onclick: () => (def.nodes.splice(i, 1), renderForm()) }, `Remove step ${n.id}`),
        );
      }),
    );
    const ids = def.nodes.map((n) => n.id);
    edgesBox.replaceChildren(
      ...def.edges.map((e, i) => {
        e.data ??= {};
        return h(
          "fieldset",
          { class: "row-card" },
          h("legend", {}, `Transition ${i + 1}`),
          select(`edge-${i}-source`, "From", ids.includes(e.source) ? ids : [e.source, ...ids], e.source, (v) => (e.source = v)),
          select(`edge-${i}-target`, "To", ids.includes(e.target) ? ids : [e.target, ...ids], e.target, (v) => (e.target = v)),
          ...EDGE_FIELDS.map((f) => text(`edge-${i}-${f}`, f === "label" ? "Name" : "When", e.data[f], (v) => (e.data[f] = v))),
          h("button", { type: "button", class: "danger", onclick: () => (def.edges.splice(i, 1), renderForm()) }, `Remove transition ${i + 1}`),
        );
      }),
    );
    sync();
  };

  const addNode = () => {
    let n = def.nodes.length + 1;
    while (def.nodes.some((x) => x.id === `step${n}`)) n++;
    def.nodes.push({ id: `step${n}`, type: "agentNode", data: { prompt: "" } });
    renderForm();
  };
  const addEdge = () => {
    def.edges.push({
      id: `e${Date.now().toString(36)}`,
      source: def.nodes[0]?.id ?? "",
      target: def.nodes.at(-1)?.id ?? "",
      data: { label: "", condition: "" },
    });
    renderForm();
  };
  const applyJson = () => {
    try {
      const parsed = JSON.parse(json.value);
      if (!parsed || !Array.isArray(parsed.nodes)) throw new Error("The definition needs a nodes list");
      parsed.edges ??= [];
      def = parsed;
      setFieldError("agent-json", null);
      renderForm();
    } catch (err) {
      setFieldError("agent-json", `Not applied: ${err.message}`);
    }
  };

  /** Shows the validate answer: each problem at its field, the rest (and warnings) in the summary. */
  const showValidation = (result) => {
    const loose = [];
    for (const issue of result.errors) {
      const id = fieldOfIssue(issue, def);
      if (!id || !setFieldError(id, issue.message)) loose.push(issue.message);
    }
    verdict.replaceChildren(
      ...[
        h(
          "p",
          { class: result.is_valid ? "ok" : "bad" },
          result.is_valid ? "The agent is valid: it can take calls." : `${result.errors.length} problem(s) to fix before it can take calls.`,
        ),
        loose.length || result.warnings.length
          ? h(
              "ul",
              {},
              loose.map((m) => h("li", {}, m)),
              result.warnings.map((w) => h("li", {}, `Note: ${w.message}`)),
            )
          : null,
      ].filter(Boolean),
    );
  };

  const save = async (e) => {
    e.preventDefault();
    clearFieldErrors(root);
    let configurations;
    try {
      configurations = JSON.parse(config.value || "{}");
    } catch (err) {
      setFieldError("agent-config", `Not JSON: ${err.message}`);
      return;
    }
    const body = { name: name.value, workflow_definition: def, workflow_configurations: configurations };
    try {
      const saved = agent ? await api(`/workflow/${agent.id}`, { method: "PUT", json: body }) : await api("/workflow/create", { method: "POST", json: body });
      clearError();
      agent = saved;
      showValidation(await api(`/workflow/${saved.id}/validate`, { method: "POST" }));
      onSaved?.(saved);
    } catch (err) {
      const placed = placeErrors(err, fieldOfLoc);
      if (placed) verdict.replaceChildren(h("p", { class: "bad" }, "Not saved: fix the fields marked below."));
    }
  };

  renderForm();
  root.replaceChildren(
    h(
      "form",
      { onsubmit: save, novalidate: true, class: "editor" },
      field("agent-name", "Name", name),
      h("h3", {}, "Steps"),
      nodesBox,
      h("button", { type: "button", onclick: addNode }, "Add a step"),
      h("h3", {}, "Transitions"),
      edgesBox,
      h("button", { type: "button", onclick: addEdge }, "Add a transition"),
      diagram,
      h(
        "details",
        {},
        h("summary", {}, "The definition as JSON"),
        field("agent-json", "Definition (nodes and edges)", json, "Edit and apply to update the form and the diagram."),
        h("button", { type: "button", onclick: applyJson }, "Apply JSON"),
      ),
      voice.element,
      field("agent-config", "All agent settings (JSON)", config, 'workflow_configurations: e.g. {"voice_agent": {"llm": {...}, "tts": {...}}} (docs/api.md).'),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", id: "agent-save" }, agent ? "Save a new version" : "Create agent")),
      verdict,
    ),
  );
  return { validate: async () => agent && showValidation(await api(`/workflow/${agent.id}/validate`, { method: "POST" }).catch(showError)) };
}
