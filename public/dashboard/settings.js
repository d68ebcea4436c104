// Organization settings: API keys (a new key is shown once), webhook endpoints with their delivery log, and (in
// policy.js) the calling policy and the suppression list.
import { api, clearError, clearFieldErrors, confirmAction, field, fmtTime, h, load, main, page, placeErrors, showError, table } from "./core.js";
import { policySection, suppressionsSection } from "./policy.js";

const EVENTS = ["run.completed", "run.analyzed", "campaign.state_changed", "campaign.completed"];

async function keysSection(reload) {
  const keys = await load("/organizations/api-keys?limit=100");
  const name = h("input", { type: "text", autocomplete: "off" });
  const shown = h("div", { role: "status" });
  const form = h(
    "form",
    {
      class: "inline",
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        try {
          const made = await api("/organizations/api-keys", { method: "POST", json: { name: name.value } });
          clearError();
          const out = h("output", { id: "new-key", class: "code" }, made.key);
          shown.replaceChildren(h("p", {}, `Key "${made.name}" created. Copy it now: it is not shown again.`), out);
          name.value = "";
          keysBody.append(keyRow(made, reload));
        } catch (err) {
          placeErrors(err, (loc) => (loc[1] === "name" ? "key-name" : null));
        }
      },
    },
    field("key-name", "Name of the new key", name),
    h("button", { type: "submit", class: "primary" }, "Create key"),
  );
  const keysBody = h(
    "tbody",
    {},
    keys.items.map((k) => keyRow(k, reload)),
  );
  return h(
    "section",
    { class: "card", "aria-labelledby": "keys-h" },
    h("h2", { id: "keys-h" }, "API keys"),
    table(h("caption", {}, "Active keys"), ["Name", "Ends in", "Created", "Last used", ""], keysBody),
    form,
    shown,
  );
}

function keyRow(k, reload) {
  return h(
    "tr",
    {},
    h("td", {}, k.name),
    h("td", {}, `…${k.key_last4}`),
    h("td", {}, fmtTime(k.created_at)),
    h("td", {}, fmtTime(k.last_used_at)),
    h(
      "td",
      {},
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            if (!(await confirmAction("Revoke key", `Revoke "${k.name}"? Requests with it are refused within 10 seconds.`, true))) return;
            await api(`/organizations/api-keys/${k.id}`, { method: "DELETE" }).then(reload, showError);
          },
        },
        `Revoke ${k.name}`,
      ),
    ),
  );
}

async function deliveriesOf(hook, box) {
  const list = await api(`/webhooks/${hook.id}/deliveries?limit=50`);
  box.replaceChildren(
    table(
      h("caption", {}, `Deliveries to ${hook.url}, newest first`),
      ["Sent", "Event message", "Result", "Attempts", "Answer", ""],
      h(
        "tbody",
        {},
        list.items.length
          ? list.items.map((d) =>
              h(
                "tr",
                {},
                h("td", {}, fmtTime(d.created_at)),
                h("td", {}, d.message_id),
                h("td", {}, d.status),
                h("td", { class: "num" }, d.attempts),
                h("td", {}, d.last_response_status ? `HTTP ${d.last_response_status}` : (d.last_error ?? "—")),
                h(
                  "td",
                  {},
                  h(
                    "button",
                    {
                      type: "button",
                      onclick: () =>
                        api(`/webhooks/${hook.id}/deliveries/${d.id}/redeliver`, { method: "POST" }).then(() => deliveriesOf(hook, box), showError),
                    },
                    "Send again",
                  ),
                ),
              ),
            )
          : h("tr", {}, h("td", { colspan: 6 }, "Nothing delivered yet.")),
      ),
      [3],
    ),
  );
}

async function webhooksSection(reload) {
  const hooks = await load("/webhooks?limit=100");
  const url = h("input", { type: "url", autocomplete: "off", placeholder: "https://example.com/edgedial" });
  const boxes = EVENTS.map((ev) => h("input", { type: "checkbox", id: `hook-ev-${ev}`, value: ev, checked: true }));
  const secret = h("div", { role: "status" });
  const form = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        try {
          const made = await api("/webhooks", { method: "POST", json: { url: url.value.trim(), events: boxes.filter((b) => b.checked).map((b) => b.value) } });
          clearError();
          secret.replaceChildren(h("p", {}, "Endpoint added. Its signing secret, shown only now:"), h("output", { class: "code" }, made.secret));
          list.append(hookItem(made, reload));
        } catch (err) {
          placeErrors(err, (loc) => (loc[1] === "url" ? "hook-url" : loc[1] === "events" ? "hook-events" : null));
        }
      },
    },
    field("hook-url", "Endpoint URL", url),
    h(
      "fieldset",
      {},
      h("legend", {}, "Events"),
      boxes.map((b) => h("div", { class: "check" }, b, h("label", { for: b.id }, b.value))),
      h("p", { class: "field-error", id: "hook-events-error", hidden: true }),
    ),
    h("input", { type: "hidden", id: "hook-events" }),
    h("button", { type: "submit", class: "primary" }, "Add endpoint"),
    secret,
  );
  const list = h(
    "div",
    {},
    hooks.items.map((hk) => hookItem(hk, reload)),
  );
  return h("section", { class: "card", "aria-labelledby": "hooks-h" }, h("h2", { id: "hooks-h" }, "Webhooks"), list, h("h3", {}, "Add an endpoint"), form);
}

function hookItem(hook, reload) {
  const box = h("div");
  return h(
    "details",
    { class: "hook" },
    h("summary", { onclick: () => deliveriesOf(hook, box).catch(showError) }, `${hook.url} (${hook.enabled ? "on" : "off"}): ${hook.events.join(", ")}`),
    h(
      "div",
      { class: "controls" },
      h(
        "button",
        { type: "button", onclick: () => api(`/webhooks/${hook.id}`, { method: "PATCH", json: { enabled: !hook.enabled } }).then(reload, showError) },
        hook.enabled ? "Turn off" : "Turn on",
      ),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            if (!(await confirmAction("Delete endpoint", `Stop sending events to ${hook.url}?`, true))) return;
            await api(`/webhooks/${hook.id}`, { method: "DELETE" }).then(reload, showError);
          },
        },
        "Delete endpoint",
      ),
    ),
    box,
  );
}

export async function settingsPage() {
  const heading = page("Settings", h("p", {}, "Loading…"));
  // Each section reloads alone, so a change in one keeps what another shows (a new key, unsaved policy edits).
  const live = (make) => {
    let el;
    const reload = async () => {
      try {
        const next = await make(reload);
        el.replaceWith(next);
        el = next;
      } catch (err) {
        showError(err);
      }
    };
    return make(reload).then((first) => (el = first));
  };
  const sections = await Promise.all([live(keysSection), live(webhooksSection), policySection(), live(suppressionsSection)]);
  main.replaceChildren(heading, ...sections);
}
