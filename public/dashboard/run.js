// A call's page: status and times, timing per turn (from the transcript's audio-clock times: how long each turn was
// and how long the agent took to answer), usage with an estimated cost (cost.js), the recording, the analysis, the
// agent's actions and transfer, and what it gathered.
import { api, fact, fmtTime, h, load, main, page, showError, Superseded, stateBadge, table } from "./core.js";
import { enginesOf, estimateCost, RATES_SOURCE, turnTimings, usd } from "./cost.js";
import { stagesText } from "./stages.js";

const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
const ROLE = { agent: "Agent", callee: "Callee", tool: "Action" };

/**
 * The recording as a player. The signed link is fetched once and played from memory: every position is seekable and
 * the duration is the file's own (a streamed response without byte ranges lets a player neither seek nor always
 * know its length).
 */
function recordingPlayer(run) {
  if (!run.recording_url) return h("p", {}, "No recording.");
  const audio = h("audio", { controls: true, preload: "metadata", id: "recording", "aria-label": `Recording of ${run.name}` });
  const note = h("p", { class: "hint", id: "recording-note" }, "Loading the recording…");
  fetch(run.recording_url)
    .then((r) => (r.ok ? r.blob() : Promise.reject(new Error(`HTTP ${r.status}`))))
    .then((blob) => {
      audio.src = URL.createObjectURL(blob);
      audio.addEventListener("loadedmetadata", () => (note.textContent = `${audio.duration.toFixed(1)} s, two channels: the callee left, the agent right.`), {
        once: true,
      });
    })
    .catch((err) => {
      audio.src = run.recording_url;
      note.textContent = `Streaming the recording (${err.message} when loading it whole).`;
    });
  return h("div", {}, audio, note);
}

function timingTable(run) {
  if (!run.transcript?.length) return h("p", {}, "No transcript for this call.");
  const rows = turnTimings(run.transcript).map((t) =>
    h(
      "tr",
      {},
      h("td", {}, h("span", { class: "role" }, ROLE[t.role] ?? t.role)),
      h("td", { class: "num" }, sec(t.start_ms)),
      h("td", { class: "num" }, sec(t.length_ms)),
      h("td", { class: "num" }, t.wait_ms === null ? "—" : sec(Math.max(0, t.wait_ms))),
      h("td", {}, t.text, t.interrupted ? " [interrupted]" : ""),
      h("td", { class: "stages" }, t.role === "agent" ? stagesText(t.timing) : ""),
    ),
  );
  return table(
    h("caption", {}, "Each turn: when it started, how long it lasted, and how long the agent took to answer (after the callee stopped)"),
    ["Who", "Starts at", "Length", "Agent answered after", "Said", "Reply measured (ms after the callee's last word)"],
    h("tbody", {}, rows),
    [1, 2, 3],
  );
}

function usageSection(run, engines) {
  const cost = estimateCost(run, engines);
  const u = run.usage;
  const dl = h("dl", { class: "figures", id: "usage" });
  fact(dl, "Speech heard (transcribed)", u ? `${u.stt_seconds.toFixed(1)} s` : null);
  fact(dl, "Speech spoken (synthesized)", u ? `${u.tts_seconds.toFixed(1)} s` : null);
  fact(dl, "Model tokens read", u?.input_tokens);
  fact(dl, "Model tokens written", u?.output_tokens);
  const part = (v, engine) => (v === null ? `not priced (${engine})` : `${usd(v)} (${engine})`);
  if (cost) {
    fact(dl, "Carrier minutes", usd(cost.carrier));
    fact(dl, "Speech to text", part(cost.stt, engines.stt));
    fact(dl, "Text to speech", part(cost.tts, engines.tts));
    fact(dl, "Model", part(cost.model, engines.llm));
    fact(dl, "Estimated cost", h("strong", {}, usd(cost.total), cost.unpriced.length ? " plus the engines not priced" : ""));
  }
  return [
    dl,
    h(
      "p",
      { class: "hint", id: "usage-source" },
      `An estimate, not a bill: the agent's engines at list prices (Workers AI's as of ${RATES_SOURCE.revision.slice(0, 10)}, `,
      h("a", { href: RATES_SOURCE.url, rel: "noreferrer" }, "its pricing page"),
      "; the table is public/dashboard/cost.js, docs/dashboard.md). Offline local engines cost nothing.",
    ),
  ];
}

function analysisSection(run) {
  const a = run.analysis;
  if (!a) return h("p", {}, "No post-call analysis (the agent asks for none, or it has not run yet).");
  const dl = h("dl", { class: "figures", id: "analysis" });
  fact(dl, "Analysis", a.status === "completed" ? "Completed" : `Failed: ${a.error ?? ""}`);
  fact(dl, "Summary", a.summary);
  fact(dl, "Successful", a.success === null ? null : a.success ? "Yes" : "No");
  fact(dl, "Why", a.success_reason);
  for (const [k, v] of Object.entries(a.data ?? {})) fact(dl, k, typeof v === "string" ? v : JSON.stringify(v));
  return dl;
}

function actionsSection(run) {
  const out = [];
  if (run.transfer) {
    const t = run.transfer;
    out.push(
      h(
        "p",
        {},
        `Transferred (${t.mode}${t.mode !== t.requested_mode ? `, asked ${t.requested_mode}` : ""}) to ${t.destination}: ${t.outcome ?? "ringing"}${t.message ? ` (${t.message})` : ""}.`,
      ),
    );
  }
  if (run.tool_calls?.length) {
    out.push(
      table(
        h("caption", {}, "The agent's actions during the call"),
        ["Action", "Result", "Took", "Arguments"],
        h(
          "tbody",
          {},
          run.tool_calls.map((t) =>
            h(
              "tr",
              {},
              h("td", {}, t.name),
              h("td", {}, t.status, t.http_status ? ` (HTTP ${t.http_status})` : "", t.error ? `: ${t.error}` : ""),
              h("td", { class: "num" }, `${t.duration_ms} ms`),
              h("td", {}, JSON.stringify(t.arguments)),
            ),
          ),
        ),
        [2],
      ),
    );
  }
  return out.length ? out : [h("p", {}, "No actions: no transfer, tool or keypad use.")];
}

/** A live sandbox call's keypad: the simulated callee presses the keys on the call (docs/sandbox.md). */
function sandboxKeypad(workflowId, runId) {
  const digits = h("input", { id: "sandbox-keys", inputmode: "tel", pattern: "[0-9*#A-Da-d]{1,32}", required: true, size: 8 });
  const note = h("p", { role: "status", class: "hint" }, "The simulated callee presses them on the live call; reload to see them in the conversation.");
  const form = h(
    "form",
    {
      class: "inline",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          const done = await api(`/workflow/${workflowId}/runs/${runId}/sandbox-keys`, { method: "POST", json: { digits: digits.value } });
          note.textContent = `Pressed ${done.digits}.`;
          digits.value = "";
        } catch (err) {
          showError(err);
        }
      },
    },
    h("label", { for: "sandbox-keys" }, "Press keys as the callee "),
    digits,
    h("button", { type: "submit" }, "Press"),
  );
  return [h("h2", {}, "Keypad (sandbox)"), form, note];
}

export async function runPage(workflowId, runId) {
  const heading = page("Call", h("p", {}, "Loading…"));
  // The agent's engines price the usage; an agent that can no longer be read is priced at the defaults.
  const [run, agent] = await Promise.all([
    load(`/workflow/${workflowId}/runs/${runId}`),
    load(`/workflow/fetch/${workflowId}`).catch((err) => (err instanceof Superseded ? Promise.reject(err) : null)),
  ]);
  const engines = enginesOf(agent?.workflow_configurations);
  heading.textContent = `Call ${run.name}`;
  document.title = `${run.name} · edgedial`;
  const facts = h("dl", { class: "facts" });
  fact(facts, "Status", stateBadge(run.status));
  // An inbound call's phone_number is the caller and from_number the organization's number they dialed.
  const inbound = run.direction === "inbound";
  fact(facts, "Direction", run.direction ?? "outbound");
  fact(facts, inbound ? "Caller" : "Number", run.phone_number);
  fact(facts, inbound ? "Dialed" : "From", run.from_number);
  fact(facts, "Carrier", run.provider);
  fact(facts, "Created", fmtTime(run.created_at));
  fact(facts, "Started", fmtTime(run.started_at));
  fact(facts, "Answered", fmtTime(run.answered_at));
  fact(facts, "Ended", fmtTime(run.ended_at));
  fact(facts, "Duration", run.duration_seconds == null ? null : `${run.duration_seconds} s`);
  fact(facts, "Why it ended", run.end_reason?.replace(/_/g, " "));
  fact(facts, "Disposition", run.disposition);
  // Who or what the agent judged had answered (answering-machine detection); "—" where it did not run.
  fact(facts, "Answered by", run.amd_class?.replace(/_/g, " "));
  if (run.error) fact(facts, "Error", run.error);
  if (run.notes) fact(facts, "Notes", run.notes);

  const gathered = run.gathered_context && Object.keys(run.gathered_context).length;
  const gatheredEl = gathered
    ? table(
        h("caption", {}, "Values the agent gathered"),
        ["Variable", "Value"],
        h(
          "tbody",
          {},
          Object.entries(run.gathered_context).map(([k, v]) =>
            h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, typeof v === "string" ? v : JSON.stringify(v))),
          ),
        ),
      )
    : h("p", {}, "Nothing gathered.");
  const back = run.campaign_id ? h("a", { href: `#/campaigns/${run.campaign_id}` }, "← Campaign") : h("a", { href: "#/calls" }, "← Calls");
  main.replaceChildren(
    heading,
    h("p", {}, back),
    facts,
    ...(run.provider === "sandbox" && run.status === "in_progress" ? sandboxKeypad(workflowId, runId) : []),
    h("h2", {}, "Recording"),
    recordingPlayer(run),
    h("h2", {}, "Conversation and timing"),
    timingTable(run),
    h("h2", {}, "Usage and estimated cost"),
    ...usageSection(run, engines),
    h("h2", {}, "Analysis"),
    analysisSection(run),
    h("h2", {}, "Actions"),
    ...actionsSection(run),
    h("h2", {}, "Gathered values"),
    gatheredEl,
  );
}
