// The calling policy (who may be called and when: countries, local hours, an attempt cap, recording) and the
// suppression list (numbers never called: added one by one or from a CSV, removed).
import { api, clearError, clearFieldErrors, field, fmtTime, h, load, placeErrors, showError, table } from "./core.js";

export async function policySection() {
  const p = await load("/organizations/calling-policy");
  const eff = p.effective ?? {};
  const countries = h("input", { type: "text", autocomplete: "off", value: (p.allowed_countries ?? []).join(", ") });
  const record = h("input", { type: "checkbox", id: "pol-record", checked: p.record_calls });
  const hoursOn = h("input", { type: "checkbox", id: "pol-hours-on", checked: eff.local_hours?.enabled });
  const start = h("input", { type: "time", value: eff.local_hours?.start });
  const end = h("input", { type: "time", value: eff.local_hours?.end });
  const capOn = h("input", { type: "checkbox", id: "pol-cap-on", checked: eff.attempt_cap?.enabled });
  const maxAttempts = h("input", { type: "number", min: 1, max: 50, value: eff.attempt_cap?.max_attempts });
  const windowHours = h("input", { type: "number", min: 1, max: 720, value: eff.attempt_cap?.window_hours });
  const saved = h("p", { role: "status" });
  const ids = { allowed_countries: "pol-countries", local_hours: "pol-start", attempt_cap: "pol-max" };
  const form = h(
    "form",
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(form);
        const list = countries.value
          .split(/[\s,]+/)
          .map((c) => c.trim().toUpperCase())
          .filter(Boolean);
        try {
          await api("/organizations/calling-policy", {
            method: "PUT",
            json: {
              allowed_countries: list.length ? list : null,
              record_calls: record.checked,
              local_hours: { enabled: hoursOn.checked, start: start.value, end: end.value },
              attempt_cap: { enabled: capOn.checked, max_attempts: Number(maxAttempts.value), window_hours: Number(windowHours.value) },
            },
          });
          clearError();
          saved.textContent = "Saved.";
        } catch (err) {
          placeErrors(err, (loc) => ids[loc[1]] ?? null);
        }
      },
    },
    field(
      "pol-countries",
      "Countries that may be called",
      countries,
      `Two-letter codes, comma separated. Empty: the caller IDs' countries (now ${(eff.allowed_countries ?? []).join(", ") || "none"}).`,
    ),
    h("div", { class: "check" }, hoursOn, h("label", { for: "pol-hours-on" }, "Call only in the recipient's local hours")),
    field("pol-start", "From (recipient's time)", start),
    field("pol-end", "Until", end),
    h("div", { class: "check" }, capOn, h("label", { for: "pol-cap-on" }, "Limit attempts per number")),
    field("pol-max", "Attempts at most", maxAttempts),
    field("pol-window", "Within hours", windowHours),
    h("div", { class: "check" }, record, h("label", { for: "pol-record" }, "Record calls")),
    h("button", { type: "submit", class: "primary" }, "Save calling policy"),
    saved,
  );
  return h(
    "section",
    { class: "card", "aria-labelledby": "pol-h" },
    h("h2", { id: "pol-h" }, "Calling policy"),
    h("p", { class: "hint" }, `Last changed ${fmtTime(p.updated_at)}.`),
    form,
  );
}

export async function suppressionsSection(reload) {
  const list = await load("/organizations/suppressions?limit=200");
  const number = h("input", { type: "tel", autocomplete: "off", placeholder: "+14155550100" });
  const reason = h("input", { type: "text", autocomplete: "off" });
  const file = h("input", { type: "file", accept: ".csv,text/csv" });
  const done = h("p", { role: "status" });
  const add = h(
    "form",
    {
      class: "inline",
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFieldErrors(add);
        try {
          const r = await api("/organizations/suppressions", {
            method: "POST",
            json: { phone_numbers: [number.value.trim()], ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) },
          });
          clearError();
          done.textContent = `Added ${r.added} (${r.already_listed} already listed).`;
          reload();
        } catch (err) {
          placeErrors(err, (loc) => (loc[1] === "phone_numbers" ? "sup-number" : loc[1] === "reason" ? "sup-reason" : null));
        }
      },
    },
    field("sup-number", "Number never to call", number),
    field("sup-reason", "Reason (optional)", reason),
    h("button", { type: "submit", class: "primary" }, "Add to the list"),
  );
  const upload = h(
    "form",
    {
      class: "inline",
      onsubmit: async (e) => {
        e.preventDefault();
        if (!file.files?.[0]) return;
        try {
          const r = await api("/organizations/suppressions/csv", { method: "POST", body: await file.files[0].text(), type: "text/csv" });
          clearError();
          done.textContent = `Added ${r.added} from the file (${r.already_listed} already listed).`;
          reload();
        } catch (err) {
          showError(err);
        }
      },
    },
    field("sup-file", "Upload a CSV (a phone_number column; reason optional)", file),
    h("button", { type: "submit" }, "Upload"),
  );
  const rows = list.items.map((s) =>
    h(
      "tr",
      {},
      h("td", {}, s.phone_number),
      h("td", {}, s.reason ?? "—"),
      h("td", {}, fmtTime(s.created_at)),
      h(
        "td",
        {},
        h(
          "button",
          {
            type: "button",
            class: "danger",
            onclick: () => api(`/organizations/suppressions/${encodeURIComponent(s.phone_number)}`, { method: "DELETE" }).then(reload, showError),
          },
          `Remove ${s.phone_number}`,
        ),
      ),
    ),
  );
  return h(
    "section",
    { class: "card", "aria-labelledby": "sup-h" },
    h("h2", { id: "sup-h" }, "Suppression list"),
    table(h("caption", {}, `${list.items.length} number(s) never called`), ["Number", "Reason", "Added", ""], h("tbody", {}, rows)),
    add,
    upload,
    done,
  );
}
