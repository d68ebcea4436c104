// How fast the agent answers: each reply's measured stages on the call page (the transcript's `timing`, ms after the
// caller's last word), and on the agent page p50/p95 of each over its recent calls (GET /workflow/{id}/latency).
import { api, h, showError, table } from "./core.js";
import { STAGES } from "./stages.js";

/** The agent's latency over its recent calls, as a table of p50/p95 per stage. */
export function latencySection(id) {
  const root = h("div", { id: "latency" }, h("p", { class: "hint" }, "Loading…"));
  api(`/workflow/${id}/latency?calls=50`)
    .then((l) => {
      if (!l.replies) return root.replaceChildren(h("p", {}, "No measured replies yet (calls answered since timings were recorded)."));
      const ms = (v) => (v === null ? "—" : `${v} ms`);
      const rows = [...STAGES, ["cut_ms", "cut by a barge-in"]].map(([k, name]) => {
        const f = l.figures[k];
        return h("tr", {}, h("td", {}, name), h("td", { class: "num" }, f.count), h("td", { class: "num" }, ms(f.p50)), h("td", { class: "num" }, ms(f.p95)));
      });
      root.replaceChildren(
        table(
          h("caption", {}, `${l.replies} replies over the last ${l.calls} calls with a transcript: ms after the caller's last word`),
          ["Stage", "Replies", "p50", "p95"],
          h("tbody", {}, rows),
          [1, 2, 3],
        ),
      );
    })
    .catch((err) => {
      root.replaceChildren(h("p", {}, "The latency could not be loaded."));
      showError(err);
    });
  return root;
}
