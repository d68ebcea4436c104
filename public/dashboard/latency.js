// How fast the agent answers: each reply's measured stages on the call page (the transcript's `timing`, ms after the
// caller's last word), and on the agent page p50/p95 of each over its recent calls (GET /workflow/{id}/latency), with
// the gap the calls' recordings show (the caller's voice → the agent's) p50/p90 per carrier.
import { api, h, showError, table } from "./core.js";
import { HEARD, STAGES } from "./stages.js";

/** How the agent's speech engine ends the caller's turn (the endpoint's turn_detection). */
const TURN_DETECTION = {
  flux: "Deepgram Flux's end-of-turn events (the silence bound as fallback)",
  "smart-turn": "smart-turn, asked at a short pause (the silence bound as fallback)",
  silence: "the silence bound alone (end_of_turn_ms)",
};

/** The agent's latency over its recent calls, as a table of p50/p95 per stage. */
export function latencySection(id) {
  const root = h("div", { id: "latency" }, h("p", { class: "hint" }, "Loading…"));
  api(`/workflow/${id}/latency?calls=50`)
    .then((l) => {
      const turns = h("p", { id: "turn-detection" }, `End of the caller's turn: ${TURN_DETECTION[l.turn_detection] ?? l.turn_detection}`);
      if (!l.replies) return root.replaceChildren(turns, h("p", {}, "No measured replies yet (calls answered since timings were recorded)."));
      const ms = (v) => (v === null ? "—" : `${v} ms`);
      const rows = [...STAGES, HEARD, ["cut_ms", "cut by a barge-in"]].map(([k, name]) => {
        const f = l.figures[k];
        return h("tr", {}, h("td", {}, name), h("td", { class: "num" }, f.count), h("td", { class: "num" }, ms(f.p50)), h("td", { class: "num" }, ms(f.p95)));
      });
      root.replaceChildren(
        turns,
        table(
          h("caption", {}, `${l.replies} replies over the last ${l.calls} calls with a transcript: ms after the caller's last word`),
          ["Stage", "Replies", "p50", "p95"],
          h("tbody", {}, rows),
          [1, 2, 3],
        ),
        heardTable(l.heard),
      );
    })
    .catch((err) => {
      root.replaceChildren(h("p", {}, "The latency could not be loaded."));
      showError(err);
    });
  return root;
}

/** The gap heard on the recordings, over all the calls read and per carrier (p50/p90). */
function heardTable(heard) {
  if (!heard?.count) return h("p", { class: "hint" }, "No reply measured on a recording yet (measured after each recorded call).");
  const ms = (v) => (v === null ? "—" : `${v} ms`);
  const row = (name, calls, f) =>
    h(
      "tr",
      {},
      h("td", {}, name),
      h("td", { class: "num" }, calls),
      h("td", { class: "num" }, f.count),
      h("td", { class: "num" }, ms(f.p50)),
      h("td", { class: "num" }, ms(f.p90)),
    );
  const calls = heard.carriers.reduce((n, c) => n + c.calls, 0);
  return table(
    h("caption", {}, "Heard on the calls' recordings: from the end of the caller's voice to the start of the agent's"),
    ["Carrier", "Calls", "Replies", "p50", "p90"],
    h("tbody", { id: "heard-latency" }, [row("all", calls, heard), ...heard.carriers.map((c) => row(c.carrier, c.calls, c))]),
    [1, 2, 3, 4],
  );
}
