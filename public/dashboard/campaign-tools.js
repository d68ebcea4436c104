// A campaign's tools beside its controls: download results.csv, settings (PATCH, taken at the next dispatch round),
// contacts appended from another CSV, redial (a new draft campaign of the contacts not reached) and delete.
import { api, clearError, clearFieldErrors, confirmAction, downloadText, field, h, placeErrors, showError } from "./core.js";
import { csvUpload } from "./csv-upload.js";

const FINISHED = ["completed", "cancelled", "failed"];

export function campaignTools(root, campaign) {
  const id = campaign.id;
  const results = h(
    "button",
    {
      type: "button",
      id: "download-results",
      onclick: async () => {
        try {
          downloadText(`campaign-${id}-results.csv`, await api(`/campaign/${id}/results.csv`, { text: true }));
        } catch (err) {
          showError(err);
        }
      },
    },
    "Download results.csv",
  );

  const concurrency = h("input", { type: "number", min: 1, value: campaign.max_concurrency });
  const rate = h("input", { type: "number", min: 1, max: 50, value: campaign.rate_limit });
  const voicemail = h(
    "select",
    {},
    ["hang_up", "leave_message"].map((v) =>
      h("option", { value: v, selected: campaign.voicemail_action === v }, v === "hang_up" ? "Hang up" : "Leave the message"),
    ),
  );
  const saved = h("p", { role: "status" });
  const settings = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(settings);
        try {
          await api(`/campaign/${id}`, {
            method: "PATCH",
            json: { max_concurrency: Number(concurrency.value), rate_limit: Number(rate.value), voicemail_action: voicemail.value },
          });
          clearError();
          saved.textContent = "Saved: the next dialing round uses them.";
        } catch (err) {
          placeErrors(err, (loc) => ({ max_concurrency: "set-concurrency", rate_limit: "set-rate", voicemail_action: "set-voicemail" })[loc[1]] ?? null);
        }
      },
    },
    field("set-concurrency", "Calls at once at most", concurrency),
    field("set-rate", "Calls started per second at most", rate),
    field("set-voicemail", "On reaching voicemail", voicemail),
    h("button", { type: "submit" }, "Save settings"),
    saved,
  );

  const csv = csvUpload("append-csv");
  const appended = h("p", { role: "status" });
  const append = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          const key = await csv.upload();
          const r = await api(`/campaign/${id}/contacts`, { method: "POST", json: { source_url: key } });
          clearError();
          appended.textContent = `Added ${r.added} contact(s); ${r.skipped_existing} already in the campaign.`;
        } catch (err) {
          if (csv.showProblems(err)) appended.textContent = "Nothing added: fix the rows marked in the preview.";
          else showError(err);
        }
      },
    },
    csv.element,
    h("button", { type: "submit" }, "Add contacts"),
    appended,
  );

  const finished = FINISHED.includes(campaign.state);
  const redial = h(
    "button",
    {
      type: "button",
      hidden: !finished,
      onclick: async () => {
        if (!(await confirmAction("Redial", "Create a new draft campaign with the contacts that were busy, did not answer or reached voicemail?"))) return;
        try {
          const made = await api(`/campaign/${id}/redial`, { method: "POST", json: {} });
          location.hash = `#/campaigns/${made.id}`;
        } catch (err) {
          showError(err);
        }
      },
    },
    "Redial the contacts not reached",
  );
  const remove = h(
    "button",
    {
      type: "button",
      class: "danger",
      onclick: async () => {
        if (!(await confirmAction("Delete campaign", "Delete this campaign, its contacts and its log? Its calls stay listed with the agent.", true))) return;
        try {
          await api(`/campaign/${id}`, { method: "DELETE" });
          location.hash = "#/campaigns";
        } catch (err) {
          showError(err);
        }
      },
    },
    "Delete campaign",
  );

  root.replaceChildren(
    h("div", { class: "controls" }, results, redial, remove),
    h("details", {}, h("summary", {}, "Settings"), settings),
    ...(finished ? [] : [h("details", {}, h("summary", {}, "Add contacts"), append)]),
  );
}
