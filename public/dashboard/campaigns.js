// Campaigns: the list, and a campaign's page with live progress (pushed over /events, else polled), its controls,
// settings, contacts appended, redial, results.csv and delete (campaign-tools.js), its calls and its log.
import { campaignTools } from "./campaign-tools.js";
import { API, api, clearError, confirmAction, fmtTime, getKey, h, load, main, page, pagedRows, s, showError, stateBadge, table } from "./core.js";

const POLL_MS = 2000;

// Campaign operations each state allows (src/campaigns/engine/transitions.ts). A paused campaign is continued by resume.
const ACTIONS = {
  start: { states: ["draft"], label: "Start", text: "Start this campaign? It begins dialing its contacts within its schedule." },
  pause: { states: ["running"], label: "Pause", text: "Pause this campaign? No new calls start; calls in progress finish." },
  resume: { states: ["paused"], label: "Resume", text: "Resume this campaign? Dialing continues where it stopped." },
  cancel: {
    states: ["importing", "draft", "running", "paused"],
    label: "Cancel campaign",
    text: "Cancel this campaign? Pending contacts are skipped and it cannot be started again.",
    danger: true,
  },
};

const campaignRow = (c) =>
  h(
    "tr",
    {},
    h("td", {}, h("a", { href: `#/campaigns/${c.id}` }, c.name)),
    h("td", {}, stateBadge(c.state)),
    h("td", { class: "num" }, c.total_rows),
    h("td", { class: "num" }, c.processed_rows),
    h("td", { class: "num" }, c.failed_rows),
    h("td", {}, c.workflow_name),
    h("td", {}, fmtTime(c.created_at)),
  );

export async function campaignsPage() {
  const heading = page("Campaigns", h("p", {}, "Loading…"));
  const path = "/campaign?limit=50";
  const list = await load(path);
  const caption = h("caption");
  const [body, more] = pagedRows(list, path, campaignRow, caption, "campaign");
  main.replaceChildren(
    heading,
    h("p", {}, h("a", { href: "#/campaigns/new", class: "button primary" }, "New campaign")),
    ...(list.items.length
      ? [table(caption, ["Name", "State", "Contacts", "Processed", "Not reached", "Agent", "Created"], body, [2, 3, 4]), more]
      : [h("p", {}, "No campaigns yet: create one from a CSV of contacts.")]),
  );
}

/**
 * Where a campaign's progress comes from. Each source has one shape: it calls onProgress(progress) per update and
 * onError(err) on failure, and returns a stop function. pushedProgressSource is the WebSocket GET /campaign/{id}/events;
 * when it cannot connect or closes, pollingProgressSource (GET /campaign/{id}/progress every 2 s) takes over.
 */
function pushedProgressSource(campaignId, onProgress, onError, onSource) {
  let stopped = false;
  let fallback = null;
  const poll = () => {
    if (stopped || fallback) return;
    fallback = pollingProgressSource(campaignId, onProgress, onError);
    onSource("polled every 2 s");
  };
  let socket;
  try {
    const url = new URL(`${API}/campaign/${campaignId}/events`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    // A browser cannot set X-API-Key on a WebSocket: the API takes the key as the second subprotocol offered.
    socket = new WebSocket(url, ["edgedial.events", getKey() ?? ""]);
  } catch {
    poll();
    return () => {
      stopped = true;
      fallback?.();
    };
  }
  socket.addEventListener("message", (e) => {
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch {
      return;
    }
    if (!stopped && msg?.type === "progress" && msg.data) {
      onSource("pushed live");
      onProgress(msg.data);
    }
  });
  socket.addEventListener("close", poll);
  return () => {
    stopped = true;
    socket.close();
    fallback?.();
  };
}

function pollingProgressSource(campaignId, onProgress, onError) {
  let stopped = false;
  let timer = 0;
  const tick = async () => {
    try {
      const p = await api(`/campaign/${campaignId}/progress`);
      if (!stopped) onProgress(p);
    } catch (err) {
      if (!stopped) onError(err);
    }
    if (!stopped) timer = setTimeout(tick, POLL_MS);
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Why calls wait, as the progress's `waiting_for` says. */
const WAITING_FOR = { org_cap: "; waiting for a free call slot (the organization's limit)", engine_capacity: "; waiting for engine capacity" };

/** Each counter with a label and one plain sentence of what it counts (shown beside it, not only in a tooltip). */
const COUNTERS = [
  ["total", "Contacts", "Everyone in the campaign's file"],
  ["pending", "Waiting", "Not called yet, or waiting for the schedule"],
  ["in_progress", "On a call now", "Being dialed or talking right now"],
  ["retry_waiting", "To call again", "Not reached yet; another attempt is scheduled"],
  ["completed", "Reached", "Answered and a conversation took place: no more attempts"],
  ["answered_no_conversation", "Answered, no conversation", "Picked up, but they said nothing the agent understood (silence, a dead line)"],
  ["failed", "Not reached", "Every attempt allowed was used without reaching them"],
  ["failed_calls", "Failed calls", "Attempts that ended busy, no answer, voicemail, declined, failed or unknown"],
];

/** A line chart of (time, value) samples as inline SVG. */
function lineChart(samples, label, note = "while this page is open") {
  const W = 480;
  const H = 180;
  const P = 32;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": label });
  svg.append(s("title", {}, label));
  const maxV = Math.max(1, ...samples.map((p) => p.v));
  const t0 = samples[0]?.t ?? 0;
  const span = Math.max(1, (samples[samples.length - 1]?.t ?? 0) - t0);
  const x = (t) => P + ((t - t0) / span) * (W - 2 * P);
  const y = (v) => H - P - (v / maxV) * (H - 2 * P);
  svg.append(
    s("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: "#4a5562" }),
    s("line", { x1: P, y1: P, x2: P, y2: H - P, stroke: "#4a5562" }),
    s("text", { x: 4, y: P + 4 }, maxV),
    s("text", { x: 4, y: H - P + 4 }, 0),
    s("text", { x: P, y: H - 8 }, note),
    s("text", { x: W - P - 60, y: H - 8 }, `${Math.round(span / 1000)} s`),
  );
  if (samples.length > 1) {
    svg.append(s("polyline", { fill: "none", stroke: "#0b57d0", "stroke-width": 2, points: samples.map((p) => `${x(p.t)},${y(p.v)}`).join(" ") }));
  } else if (samples.length === 1) {
    svg.append(s("circle", { cx: P, cy: y(samples[0].v), r: 3, fill: "#0b57d0" }));
  }
  return svg;
}

/** A horizontal bar chart of counts per label as inline SVG. */
function barChart(counts, label) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const W = 480;
  const row = 24;
  const H = Math.max(1, entries.length) * row + 8;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": label });
  svg.append(s("title", {}, label));
  const max = Math.max(1, ...entries.map((e) => e[1]));
  if (!entries.length) svg.append(s("text", { x: 4, y: 18 }, "No calls yet"));
  entries.forEach(([name, n], i) => {
    const w = (n / max) * (W - 170);
    svg.append(
      s("text", { x: 4, y: i * row + 18 }, name),
      s("rect", { x: 110, y: i * row + 6, width: Math.max(1, w), height: row - 8, fill: name === "completed" ? "#146c2e" : "#0b57d0" }),
      s("text", { x: 116 + w, y: i * row + 18 }, n),
    );
  });
  return svg;
}

export async function campaignPage(id) {
  const heading = page("Campaign", h("p", {}, "Loading…"));
  let campaign = await load(`/campaign/${id}`);
  heading.textContent = campaign.name;
  document.title = `${campaign.name} · edgedial`;

  const stateEl = h("span", { class: "state", id: "campaign-state" }, campaign.state);
  const started = h("span", { id: "campaign-started" }, fmtTime(campaign.started_at));
  const facts = h(
    "dl",
    { class: "facts" },
    h("dt", {}, "State"),
    h("dd", { "aria-live": "polite" }, stateEl),
    h("dt", {}, "Agent"),
    h("dd", {}, campaign.workflow_name),
    h("dt", {}, "Created"),
    h("dd", {}, fmtTime(campaign.created_at)),
    h("dt", {}, "Started"),
    h("dd", {}, started),
    h("dt", {}, "Completed"),
    h("dd", { id: "campaign-completed" }, fmtTime(campaign.completed_at)),
  );
  const tools = h("div", { class: "tools" });
  const controls = h("div", { class: "controls", role: "group", "aria-label": "Campaign controls" });
  const counters = h("dl", { class: "counters", "aria-label": "Progress" });
  // Updated every tick, so not a live region; state changes are announced by the state's own (polite) region.
  const status = h("p", { class: "hint", id: "progress-note" });
  const overTime = h("figure", {}, h("figcaption", {}, "Processed contacts over time"));
  const outcomes = h("figure", {}, h("figcaption", {}, "Call outcomes"));
  // History from the calls' own records (when each ended), so it shows the campaign's past, not only this visit's.
  const history = h("figure", {}, h("figcaption", {}, "Calls finished over time, from their records"));
  const runsBody = h("tbody");
  const logBody = h("tbody");
  main.replaceChildren(
    heading,
    h("p", {}, h("a", { href: "#/campaigns" }, "← All campaigns")),
    facts,
    controls,
    tools,
    h("h2", {}, "Progress"),
    counters,
    status,
    h("div", { class: "charts" }, overTime, outcomes, history),
    h("h2", {}, "Calls"),
    h(
      "table",
      {},
      h("caption", {}, "The newest 100 calls"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Call", "Number", "Status", "Disposition", "Started"].map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      runsBody,
    ),
    h("h2", {}, "Log"),
    h(
      "table",
      { id: "log" },
      h("caption", {}, "Newest first"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Time", "Level", "Event", "Message"].map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      logBody,
    ),
  );

  const renderControls = (state) => {
    controls.replaceChildren(
      ...Object.entries(ACTIONS)
        .filter(([, a]) => a.states.includes(state))
        .map(([verb, a]) =>
          h(
            "button",
            {
              type: "button",
              class: a.danger ? "danger" : "primary",
              onclick: async () => {
                if (!(await confirmAction(a.label, a.text, a.danger))) return;
                try {
                  campaign = await api(`/campaign/${id}/${verb}`, { method: "POST" });
                  clearError();
                  refresh(true);
                } catch (err) {
                  showError(err);
                }
                controls.querySelector("button")?.focus();
              },
            },
            a.label,
          ),
        ),
    );
    if (!controls.childElementCount) controls.append(h("p", { class: "hint" }, `No operations in state ${state}.`));
  };

  const samples = [];
  let lastKey = "";
  const renderProgress = (p) => {
    counters.replaceChildren(
      ...COUNTERS.filter(([k]) => typeof p[k] === "number").map(([k, label, what]) =>
        h("div", { "data-counter": k }, h("dt", {}, label, h("span", { class: "hint counter-what" }, what)), h("dd", {}, p[k])),
      ),
    );
    status.textContent = `${p.processed} of ${p.total} contacts processed (${Math.round(p.completion_percentage ?? p.progress_percentage ?? 0)}%)${
      p.next_window_at ? `; outside the schedule until ${fmtTime(p.next_window_at)}` : ""
    }${WAITING_FOR[p.waiting_for] ?? ""}${
      p.waiting_for === "attempt_cap" && p.calling_rules?.attempt_cap_wait?.next_at
        ? `; ${p.calling_rules.attempt_cap_wait.contacts} waiting for the attempt cap until ${fmtTime(p.calling_rules.attempt_cap_wait.next_at)}`
        : ""
    }. Updated ${new Date().toLocaleTimeString()} (${source}).`;
    samples.push({ t: Date.now(), v: p.processed });
    if (samples.length > 900) samples.shift();
    overTime.replaceChildren(overTime.firstChild, lineChart(samples, `Processed contacts over time: ${p.processed} of ${p.total} now`));
    if (p.started_at) started.textContent = fmtTime(p.started_at);
    if (p.completed_at) document.getElementById("campaign-completed").textContent = fmtTime(p.completed_at);
    if (p.state !== stateEl.textContent) {
      stateEl.textContent = p.state;
      renderControls(p.state);
      // Redial appears once it has finished; contacts can no longer be added then.
      campaignTools(tools, { ...campaign, state: p.state });
    }
  };

  const loadRunsAndLog = async () => {
    const [runs, logs] = await Promise.all([api(`/campaign/${id}/runs?limit=100`), api(`/campaign/${id}/logs?limit=50`)]);
    const counts = {};
    // An answered call nobody spoke on is not shown as a conversation (the run's `conversation`).
    for (const r of runs.items) {
      const k = r.status === "completed" && r.conversation === false ? "no conversation" : r.status;
      counts[k] = (counts[k] ?? 0) + 1;
    }
    const ended = runs.items
      .map((r) => Date.parse(r.ended_at ?? ""))
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    history.replaceChildren(
      history.firstChild,
      lineChart(
        ended.map((t, i) => ({ t, v: i + 1 })),
        `Calls finished over time: ${ended.length} of the newest ${runs.items.length} calls${ended.length ? `, the last at ${new Date(ended.at(-1)).toLocaleTimeString()}` : ""}`,
        ended.length ? `from ${new Date(ended[0]).toLocaleTimeString()}` : "no call finished yet",
      ),
    );
    outcomes.replaceChildren(
      outcomes.firstChild,
      barChart(
        counts,
        `Call outcomes: ${
          Object.entries(counts)
            .map(([k, n]) => `${k} ${n}`)
            .join(", ") || "no calls yet"
        }`,
      ),
    );
    runsBody.replaceChildren(
      ...runs.items.map((r) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/runs/${r.workflow_id}/${r.id}` }, r.name)),
          h("td", {}, r.phone_number),
          h("td", {}, r.status),
          h("td", {}, r.disposition ?? "—"),
          h("td", {}, fmtTime(r.started_at ?? r.created_at)),
        ),
      ),
    );
    if (!runs.items.length) runsBody.append(h("tr", {}, h("td", { colspan: 5 }, "No calls yet.")));
    logBody.replaceChildren(
      ...logs.items.map((l) =>
        h("tr", {}, h("td", {}, fmtTime(l.ts)), h("td", { class: `level-${l.level}` }, l.level), h("td", {}, l.event), h("td", {}, l.message)),
      ),
    );
    if (!logs.items.length) logBody.append(h("tr", {}, h("td", { colspan: 4 }, "No log entries yet.")));
  };

  /** Calls and log are reloaded when the progress changed (or on demand), not on every tick. */
  const refresh = (force) => {
    if (force) {
      stateEl.textContent = campaign.state;
      renderControls(campaign.state);
    }
    loadRunsAndLog().catch(showError);
  };

  renderControls(campaign.state);
  campaignTools(tools, campaign);
  refresh(false);
  let source = "connecting";
  const stop = pushedProgressSource(
    id,
    (p) => {
      renderProgress(p);
      const key = `${p.state}/${p.processed}/${p.in_progress}/${p.completed}/${p.failed}`;
      if (key !== lastKey) {
        if (lastKey) refresh(false);
        lastKey = key;
      }
    },
    showError,
    (how) => {
      source = how;
    },
  );
  return stop;
}
