// Calls: single calls (not a campaign's) by default, filtered by agent, status, direction, who answered (the
// answering-machine detection's class), dates and a number's digits, all through the runs list's own query
// parameters. "All agents" asks each agent's list and merges them newest first (the API lists calls per agent).
import { api, fmtTime, h, load, main, page, showError, stateBadge, table } from "./core.js";

const STATUSES = ["queued", "initiated", "ringing", "in_progress", "completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"];
const PER_AGENT = 50;
/** Answering-machine detection's classes (the runs list's amd_class filter). */
const AMD_CLASSES = ["human", "machine_greeting", "beep", "ivr_menu", "call_screening", "fax_tone", "silence"];

/** The list's query string from the filter form's values (empty values left out). */
export function callsQuery(f) {
  const q = new URLSearchParams({ limit: String(PER_AGENT) });
  if (f.source) q.set("source", f.source);
  if (f.status) q.set("status", f.status);
  if (f.direction) q.set("direction", f.direction);
  if (f.amd) q.set("amd_class", f.amd);
  const digits = f.number.replace(/[^\d+]/g, "");
  if (digits) q.set("phone_number", digits);
  if (f.from) q.set("created_after", new Date(`${f.from}T00:00:00`).toISOString());
  if (f.to) q.set("created_before", new Date(new Date(`${f.to}T00:00:00`).getTime() + 86_400_000).toISOString());
  return q.toString();
}

export async function callsPage() {
  const heading = page("Calls", h("p", {}, "Loading…"));
  const agents = (await load("/workflow/fetch?limit=100")).items;
  const select = (id, label, options) =>
    h(
      "div",
      { class: "field" },
      h("label", { for: id }, label),
      h(
        "select",
        { id, name: id },
        options.map(([v, t]) => h("option", { value: v }, t)),
      ),
    );
  const input = (id, label, type, attrs = {}) => h("div", { class: "field" }, h("label", { for: id }, label), h("input", { id, name: id, type, ...attrs }));
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter calls" },
    select("f-agent", "Agent", [["", "All agents"], ...agents.map((a) => [String(a.id), a.name])]),
    select("f-source", "Made by", [
      ["single", "Single calls"],
      ["campaign", "Campaigns"],
      ["", "Both"],
    ]),
    select("f-status", "Status", [["", "Any status"], ...STATUSES.map((s) => [s, s.replace("_", " ")])]),
    select("f-direction", "Direction", [
      ["", "Any direction"],
      ["outbound", "Outbound"],
      ["inbound", "Inbound"],
      ["web", "Web (browser)"],
    ]),
    select("f-amd", "Answered by", [["", "Anyone or anything"], ...AMD_CLASSES.map((c) => [c, c.replaceAll("_", " ")])]),
    input("f-from", "From date", "date"),
    input("f-to", "To date", "date"),
    input("f-number", "Number contains", "search", { inputmode: "tel", autocomplete: "off" }),
    h("button", { type: "submit", class: "primary" }, "Show calls"),
  );
  const caption = h("caption", { "aria-live": "polite" });
  const body = h("tbody");
  const show = async () => {
    const v = (id) => form.querySelector(`#${id}`).value;
    const query = callsQuery({
      source: v("f-source"),
      status: v("f-status"),
      direction: v("f-direction"),
      amd: v("f-amd"),
      number: v("f-number"),
      from: v("f-from"),
      to: v("f-to"),
    });
    const which = v("f-agent") ? agents.filter((a) => String(a.id) === v("f-agent")) : agents;
    const pages = await Promise.all(which.map((a) => api(`/workflow/${a.id}/runs?${query}`).then((p) => p.items.map((r) => ({ ...r, agent: a.name })))));
    const runs = pages.flat().sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    body.replaceChildren(
      ...runs.map((r) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/runs/${r.workflow_id}/${r.id}` }, r.name)),
          h("td", {}, r.agent),
          h("td", {}, r.phone_number),
          h("td", {}, r.direction),
          h("td", {}, stateBadge(r.status)),
          h("td", { class: "num" }, r.duration_seconds == null ? "—" : `${r.duration_seconds} s`),
          h("td", {}, fmtTime(r.created_at)),
        ),
      ),
    );
    const capped = pages.some((p) => p.length === PER_AGENT);
    caption.textContent = `${runs.length} call(s)${capped ? ` (the newest ${PER_AGENT} per agent)` : ""}, newest first`;
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    show().catch(showError);
  });
  main.replaceChildren(heading, form, table(caption, ["Call", "Agent", "Number", "Direction", "Status", "Length", "Created"], body, [5]));
  await show();
}
