// Agents: the list, a new agent in the editor, and on an agent's page (after "Talk to this agent") its editor,
// versions and archive/restore.
import { agentEditor } from "./agent-editor.js";
import { latencySection } from "./latency.js";
import { templatePicker } from "./templates.js";
import { api, confirmAction, fmtTime, h, load, main, page, pagedRows, showError, stateBadge, table } from "./core.js";

const agentRow = (a) =>
  h(
    "tr",
    {},
    h("td", {}, h("a", { href: `#/agents/${a.id}` }, a.name)),
    h("td", {}, stateBadge(a.status)),
    h("td", { class: "num" }, a.version_number),
    h("td", { class: "num" }, a.total_runs),
    h("td", {}, fmtTime(a.updated_at)),
  );

export async function agentsPage() {
  const heading = page("Agents", h("p", {}, "Loading…"));
  const path = "/workflow/fetch?limit=50";
  const list = await load(path);
  const caption = h("caption");
  const [body, more] = pagedRows(list, path, agentRow, caption, "agent");
  main.replaceChildren(
    heading,
    h(
      "p",
      {},
      h("a", { href: "#/agents/new", class: "button primary" }, "New agent"),
      " ",
      h("a", { href: "#/agents/new", class: "button" }, "Start from a template"),
    ),
    ...(list.items.length ? [table(caption, ["Name", "Status", "Version", "Calls made", "Updated"], body, [2, 3]), more] : [h("p", {}, "No agents yet.")]),
  );
}

export function newAgentPage() {
  const root = h("div");
  const opened = (saved) => {
    location.hash = `#/agents/${saved.id}`;
  };
  page("New agent", h("p", {}, h("a", { href: "#/agents" }, "← Agents")), templatePicker(opened), h("h2", {}, "Or build your own"), root);
  agentEditor(root, null, (saved) => {
    // The new agent's own page keeps the editor open with its validation answer.
    location.hash = `#/agents/${saved.id}`;
  });
}

/** The editor, versions and archive/restore, added below the agent page's Talk section. */
export async function agentManagement(id) {
  const agent = await load(`/workflow/fetch/${id}`);
  const editorRoot = h("div");
  const versionsBody = h("tbody");
  const status = h("div", { class: "controls" });
  main.append(
    h("h2", {}, "Edit"),
    editorRoot,
    h("h2", {}, "Versions"),
    table(h("caption", {}, "Every saved version; calls use the published one"), ["Version", "Status", "Saved", ""], versionsBody),
    h("h2", {}, "Availability"),
    status,
    h("h2", {}, "Answer latency"),
    latencySection(id),
  );
  const editor = agentEditor(editorRoot, agent, () => loadVersions());
  editor.validate();

  const loadVersions = async () => {
    const list = await api(`/workflow/${id}/versions?limit=50`).catch((err) => (showError(err), { items: [] }));
    versionsBody.replaceChildren(
      ...list.items.map((v) =>
        h(
          "tr",
          {},
          h("td", {}, `Version ${v.version_number}`),
          h("td", {}, v.version_status),
          h("td", {}, fmtTime(v.created_at)),
          h(
            "td",
            {},
            h(
              "details",
              {},
              h("summary", {}, `Definition of version ${v.version_number}`),
              h("pre", { class: "code" }, JSON.stringify(v.workflow_definition, null, 2)),
            ),
          ),
        ),
      ),
    );
  };
  const renderStatus = (current) => {
    const archive = current === "active";
    status.replaceChildren(
      h("p", {}, archive ? "Active: it can take calls and run campaigns." : "Archived: it takes no calls until restored."),
      h(
        "button",
        {
          type: "button",
          class: archive ? "danger" : "primary",
          onclick: async () => {
            const label = archive ? "Archive agent" : "Restore agent";
            if (!(await confirmAction(label, archive ? "Archive this agent? New calls and campaigns with it are refused." : "Restore this agent?", archive)))
              return;
            try {
              const saved = await api(`/workflow/${id}/status`, { method: "PUT", json: { status: archive ? "archived" : "active" } });
              renderStatus(saved.status);
            } catch (err) {
              showError(err);
            }
          },
        },
        archive ? "Archive agent" : "Restore agent",
      ),
    );
  };
  renderStatus(agent.status);
  await loadVersions();
}
