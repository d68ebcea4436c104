// A new campaign: name, agent, telephony configuration, a few settings and a CSV of contacts. The file goes up by the
// presigned flow; a 422 about rows is shown at its rows (fix them in the text and create again), about fields at them.
import { api, clearError, clearFieldErrors, field, h, load, main, page, placeErrors, showError } from "./core.js";
import { csvUpload } from "./csv-upload.js";

const FIELD_IDS = {
  name: "camp-name",
  workflow_id: "camp-agent",
  telephony_configuration_id: "camp-config",
  max_concurrency: "camp-concurrency",
  rate_limit: "camp-rate",
};

export async function newCampaignPage() {
  const heading = page("New campaign", h("p", {}, "Loading…"));
  const [agents, configs] = await Promise.all([load("/workflow/fetch?limit=100"), load("/organizations/telephony-configs?limit=100")]);
  const name = h("input", { type: "text", autocomplete: "off", required: true });
  const agent = h(
    "select",
    {},
    agents.items.filter((a) => a.status === "active").map((a) => h("option", { value: a.id }, a.name)),
  );
  const config = h(
    "select",
    {},
    h("option", { value: "" }, "The organization's default"),
    configs.items.map((c) => h("option", { value: c.id }, `${c.name} (${c.provider})`)),
  );
  const concurrency = h("input", { type: "number", min: 1, value: 10 });
  const rate = h("input", { type: "number", min: 1, max: 50, value: 1 });
  const csv = csvUpload("camp-csv");
  const status = h("p", { role: "status" });
  const form = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        if (csv.empty()) {
          showError(new Error("Choose a CSV file of contacts first."));
          return;
        }
        status.textContent = "Uploading the file…";
        try {
          const file_key = await csv.upload();
          status.textContent = "Checking every row…";
          const body = {
            name: name.value,
            workflow_id: Number(agent.value),
            source_url: file_key,
            max_concurrency: Number(concurrency.value),
            rate_limit: Number(rate.value),
          };
          if (config.value) body.telephony_configuration_id = Number(config.value);
          const made = await api("/campaign/create", { method: "POST", json: body });
          clearError();
          location.hash = `#/campaigns/${made.id}`;
        } catch (err) {
          const rows = csv.showProblems(err);
          status.textContent = rows
            ? `Not created: ${rows.rows} row(s) of the file have problems, marked in the preview. Fix them and create again.`
            : "Not created.";
          if (rows) {
            if (rows.general.length) showError(new Error(rows.general.map((g) => g.msg).join("; ")));
            else clearError();
          } else placeErrors(err, (loc) => FIELD_IDS[loc[1]] ?? null);
        }
      },
    },
    field("camp-name", "Name", name),
    field("camp-agent", "Agent", agent),
    field("camp-config", "Telephony configuration", config),
    field("camp-concurrency", "Calls at once at most", concurrency),
    field("camp-rate", "Calls started per second at most", rate),
    csv.element,
    h("button", { type: "submit", class: "primary" }, "Create campaign"),
    status,
  );
  main.replaceChildren(heading, h("p", {}, h("a", { href: "#/campaigns" }, "← Campaigns")), form);
}
