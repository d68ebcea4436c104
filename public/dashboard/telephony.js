// Telephony: carrier configurations (created from the provider field table GET /organizations/telephony-providers,
// credentials verified, one default for outbound calls) and their phone numbers (caller ID, the agent that answers
// inbound calls: inbound_workflow_id).
import { api, clearError, clearFieldErrors, confirmAction, field, fmtTime, h, load, main, page, placeErrors, showError, table } from "./core.js";

/** The control for one provider field, by its documented type. */
function control(f) {
  if (f.type === "boolean") return h("input", { type: "checkbox", checked: f.default === true });
  if (f.type === "object" || f.type === "array")
    return h("textarea", { rows: 3, spellcheck: "false" }, f.default === undefined ? "" : JSON.stringify(f.default));
  const allowed = /one of: ([^.]+)/i.exec(f.description)?.[1];
  return h("input", {
    type: f.sensitive ? "password" : f.type === "integer" ? "number" : "text",
    autocomplete: "off",
    value: f.default ?? "",
    placeholder: allowed ?? null,
  });
}

/** The field's value as the API takes it; undefined leaves it out (its default applies). */
function fieldValue(f, el) {
  if (f.type === "boolean") return el.checked;
  const v = el.value.trim();
  if (v === "") return undefined;
  if (f.type === "integer") return Number(v);
  if (f.type === "object" || f.type === "array") {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v;
}

const setPath = (obj, path, value) => {
  const parts = path.split(".");
  let o = obj;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  o[parts.at(-1)] = value;
};

function createForm(providers, onCreated) {
  const picker = h(
    "select",
    {},
    providers.map((p) => h("option", { value: p.name }, p.display_name)),
  );
  const name = h("input", { type: "text", autocomplete: "off", required: true });
  const isDefault = h("input", { type: "checkbox" });
  const fieldsBox = h("div");
  let controls = [];
  const renderFields = () => {
    const p = providers.find((x) => x.name === picker.value);
    // A group with its own dotted fields is shown as those fields; fields the API ignores are not offered.
    const shown = p.fields.filter(
      (f) => f.name !== "provider" && !/^Accepted and ignored/.test(f.description) && !p.fields.some((g) => g.name.startsWith(`${f.name}.`)),
    );
    controls = shown.map((f) => [f, control(f)]);
    fieldsBox.replaceChildren(
      h("p", { class: "hint" }, p.connectivity === "sip" ? "A SIP connection. " : "", h("a", { href: p.docs_url }, `${p.display_name}: setup guide`)),
      ...controls.map(([f, el]) => field(`cfg-${f.name.replace(/\./g, "-")}`, `${f.name}${f.required ? " (required)" : ""}`, el, f.description)),
    );
  };
  // Locally the sandbox comes first: it needs no account, and its calls complete offline.
  if (providers.some((x) => x.name === "sandbox")) picker.value = "sandbox";
  picker.addEventListener("change", renderFields);
  renderFields();
  const form = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        const config = { provider: picker.value };
        for (const [f, el] of controls) {
          const v = fieldValue(f, el);
          // A default left as it is stays out: the API applies it, and an optional group is not created by its defaults.
          if (v !== undefined && v !== f.default) setPath(config, f.name, v);
        }
        try {
          const made = await api("/organizations/telephony-configs", {
            method: "POST",
            json: { name: name.value, is_default_outbound: isDefault.checked, config },
          });
          clearError();
          onCreated(made);
        } catch (err) {
          placeErrors(err, (loc) => (loc[1] === "name" ? "cfg-name" : loc[1] === "config" && loc.length > 2 ? `cfg-${loc.slice(2).join("-")}` : null));
        }
      },
    },
    field("cfg-provider", "Carrier", picker),
    field("cfg-name", "Name", name),
    h("div", { class: "check" }, isDefault, h("label", { for: "cfg-default" }, "Default for outbound calls")),
    fieldsBox,
    h("button", { type: "submit", class: "primary" }, "Create configuration"),
  );
  isDefault.id = "cfg-default";
  return form;
}

function numberForm(config, agents, onAdded) {
  const p = `num-${config.id}`;
  const address = h("input", { type: "text", autocomplete: "off", placeholder: "+14155550100" });
  const label = h("input", { type: "text", autocomplete: "off" });
  const callerId = h("input", { type: "checkbox", id: `${p}-caller`, checked: !config.phone_numbers?.length });
  const inbound = agentSelect(agents, null);
  const form = h(
    "form",
    {
      class: "inline",
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        const body = { address: address.value.trim(), is_default_caller_id: callerId.checked };
        if (label.value.trim()) body.label = label.value.trim();
        if (inbound.value) body.inbound_workflow_id = Number(inbound.value);
        try {
          await api(`/organizations/telephony-configs/${config.id}/phone-numbers`, { method: "POST", json: body });
          clearError();
          onAdded();
        } catch (err) {
          placeErrors(err, (loc) => ({ address: `${p}-address`, label: `${p}-label`, inbound_workflow_id: `${p}-inbound` })[loc[1]] ?? null);
        }
      },
    },
    field(`${p}-address`, "Number", address),
    field(`${p}-label`, "Label (optional)", label),
    field(`${p}-inbound`, "Answers inbound calls", inbound),
    h("div", { class: "check" }, callerId, h("label", { for: `${p}-caller` }, "Use as caller ID")),
    h("button", { type: "submit", class: "primary" }, "Add number"),
  );
  return form;
}

const agentSelect = (agents, value) =>
  h(
    "select",
    {},
    h("option", { value: "" }, "No agent (calls are declined)"),
    agents.map((a) => h("option", { value: a.id, selected: a.id === value }, a.name)),
  );

/**
 * A sandbox number's "Call this number": the carrier simulator dials it (docs/sandbox.md), its agent answers, and the
 * call's page opens while the simulated caller talks.
 */
function sandboxCallButton(path, n) {
  return h(
    "button",
    {
      type: "button",
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const placed = await api(`${path}/sandbox-call`, { method: "POST", json: {} });
          if (placed.run_id) location.hash = `#/runs/${placed.workflow_id}/${placed.run_id}`;
          else
            showError(new Error(`The simulator called ${n.address}, but edgedial did not start a run (the number has no agent, or edgedial was not reached).`));
        } catch (err) {
          showError(err);
        } finally {
          e.target.disabled = false;
        }
      },
    },
    `Call ${n.address}`,
  );
}

function numberRow(config, n, agents, reload) {
  const path = `/organizations/telephony-configs/${config.id}/phone-numbers/${n.id}`;
  const put = async (json) => {
    try {
      await api(path, { method: "PUT", json });
      reload();
    } catch (err) {
      showError(err);
    }
  };
  const inbound = agentSelect(agents, n.inbound_workflow_id);
  inbound.setAttribute("aria-label", `Agent answering ${n.address}`);
  inbound.addEventListener("change", () => put({ inbound_workflow_id: inbound.value ? Number(inbound.value) : null }));
  return h(
    "tr",
    {},
    h("td", {}, n.address, n.label ? ` (${n.label})` : ""),
    h(
      "td",
      {},
      n.is_default_caller_id
        ? "Caller ID"
        : h("button", { type: "button", onclick: () => put({ is_default_caller_id: true }) }, `Use ${n.address} as caller ID`),
    ),
    h("td", {}, inbound),
    h(
      "td",
      {},
      config.provider === "sandbox" && n.inbound_workflow_id ? sandboxCallButton(path, n) : "",
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            if (!(await confirmAction("Remove number", `Remove ${n.address} from this configuration?`, true))) return;
            await api(path, { method: "DELETE" }).then(reload, showError);
          },
        },
        `Remove ${n.address}`,
      ),
    ),
  );
}

async function configSection(config, agents, reload) {
  const numbers = await api(`/organizations/telephony-configs/${config.id}/phone-numbers?limit=100`);
  config.phone_numbers = numbers.items;
  const verdict = h("p", { role: "status", id: `verify-${config.id}` });
  const list = config.setup_checklist;
  return h(
    "section",
    { class: "card", "aria-labelledby": `cfg-h-${config.id}` },
    h("h2", { id: `cfg-h-${config.id}` }, `${config.name} (${config.provider})`),
    h(
      "p",
      {},
      config.is_default_outbound ? "Default for outbound calls. " : "",
      config.inactive ? `Inactive: ${config.inactive_reason ?? ""}` : "Active.",
      ` Created ${fmtTime(config.created_at)}.`,
    ),
    h("p", {}, list.ready_for_outbound ? "Ready for outbound calls." : `Not ready for outbound calls: ${list.outbound_blocked_reason ?? "see the steps"}.`),
    h(
      "ul",
      { class: "checklist" },
      list.steps.map((st) => h("li", {}, `${st.complete ? "Done" : "To do"}: ${st.title}`)),
    ),
    h(
      "div",
      { class: "controls" },
      h(
        "button",
        {
          type: "button",
          onclick: async () => {
            verdict.textContent = "Checking…";
            try {
              const r = await api(`/organizations/telephony-configs/${config.id}/verify`, { method: "POST" });
              verdict.textContent = r.ok ? "The carrier accepted the credentials." : `The carrier refused: ${r.message ?? "no reason given"}`;
            } catch (err) {
              verdict.textContent = err.status === 409 ? String(err.detail) : "";
              if (err.status !== 409) showError(err);
            }
          },
        },
        "Verify credentials",
      ),
      config.is_default_outbound
        ? null
        : h(
            "button",
            {
              type: "button",
              onclick: () =>
                api(`/organizations/telephony-configs/${config.id}`, { method: "PUT", json: { is_default_outbound: true } }).then(reload, showError),
            },
            "Make default",
          ),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            if (!(await confirmAction("Delete configuration", `Delete ${config.name} and its numbers?`, true))) return;
            await api(`/organizations/telephony-configs/${config.id}`, { method: "DELETE" }).then(reload, showError);
          },
        },
        "Delete configuration",
      ),
    ),
    verdict,
    table(
      h("caption", {}, `Numbers of ${config.name}`),
      ["Number", "Caller ID", "Answers inbound calls", ""],
      h(
        "tbody",
        {},
        numbers.items.map((n) => numberRow(config, n, agents, reload)),
      ),
    ),
    h("h3", {}, "Add a number"),
    numberForm(config, agents, reload),
  );
}

export async function telephonyPage() {
  const heading = page("Telephony", h("p", {}, "Loading…"));
  const [providers, configs, agents] = await Promise.all([
    load("/organizations/telephony-providers"),
    load("/organizations/telephony-configs?limit=100"),
    load("/workflow/fetch?limit=100"),
  ]);
  const reload = () => telephonyPage().catch(showError);
  const sections = await Promise.all(configs.items.map((c) => configSection(c, agents.items, reload)));
  main.replaceChildren(
    heading,
    ...(sections.length ? sections : [h("p", {}, "No telephony configurations yet.")]),
    h("section", { class: "card", "aria-labelledby": "new-cfg" }, h("h2", { id: "new-cfg" }, "New configuration"), createForm(providers.items, reload)),
  );
}
