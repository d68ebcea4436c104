// "Start from a template" on the New agent page: the starter agents of GET /workflow/templates, each with what it
// does, its test values, what a caller says to walk it and the placeholders to change before real calls; one click
// creates the agent (POST /workflow/templates/{id}) and opens its page, ready for "Talk to this agent".
import { api, h, showError } from "./core.js";

const values = (vars) =>
  Object.entries(vars)
    .map(([k, v]) => `${k} = ${v}`)
    .join(" · ");

function card(t, onCreated) {
  const button = h("button", { type: "button", class: "primary" }, `Use “${t.name}”`);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      onCreated(await api(`/workflow/templates/${encodeURIComponent(t.id)}`, { method: "POST", json: {} }));
    } catch (err) {
      showError(err);
      button.disabled = false;
    }
  });
  return h(
    "article",
    { class: "card template", "data-template": t.id },
    h("h3", {}, t.name, " ", h("span", { class: "state" }, t.direction)),
    h("p", {}, t.description),
    h("p", { class: "hint" }, "Test values: ", values(t.template_context_variables)),
    h("p", { class: "hint" }, "Try saying: ", t.sample_conversation.map((line) => `“${line}”`).join(" then ")),
    h("ul", { class: "hint" }, ...t.change_before_use.map((c) => h("li", {}, "Change before real calls: ", h("code", {}, c.path), ` — ${c.description}`))),
    button,
  );
}

/** The template section; `onCreated(agent)` runs with the new agent. */
export function templatePicker(onCreated) {
  const list = h("div", { class: "rows" }, h("p", {}, "Loading templates…"));
  const section = h(
    "section",
    { id: "templates", "aria-labelledby": "templates-heading" },
    h("h2", { id: "templates-heading" }, "Start from a template"),
    h("p", { class: "hint" }, "A complete agent with test values for its variables; on npm run dev it answers offline with a scripted model."),
    list,
  );
  api("/workflow/templates")
    .then((body) => list.replaceChildren(...body.items.map((t) => card(t, onCreated))))
    .catch((err) => {
      list.replaceChildren(h("p", {}, "Templates could not be loaded."));
      showError(err);
    });
  return section;
}
