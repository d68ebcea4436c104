// edgedial dashboard: a small single-page app over the public API (/api/v1), served as static assets by the same
// Worker. No build step, no third-party code or requests. The API key lives in sessionStorage only.
import { agentPage } from "./talk.js";

const API = "/api/v1";
const KEY_STORAGE = "edgedial.apiKey";
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

const main = document.getElementById("main");
const alertBox = document.getElementById("alert");
const nav = document.getElementById("nav");

/** A DOM element: h("a", { href: "#" }, "text", child). Text is always set as text, never parsed as HTML. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : String(c));
  return el;
}

const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

// ---- API access and errors ----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
  }
}

const getKey = () => sessionStorage.getItem(KEY_STORAGE);

async function api(path, { method = "GET", key = getKey(), json } = {}) {
  const headers = { "X-API-Key": key ?? "", Accept: "application/json", ...(json === undefined ? {} : { "Content-Type": "application/json" }) };
  const res = await fetch(API + path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!res.ok) throw new ApiError(res.status, body && typeof body === "object" && "detail" in body ? body.detail : text || res.statusText);
  return body;
}

/** Shows an error in the API's contract shape: `detail` as a message, or a 422's list of located problems. */
function showError(err) {
  alertBox.replaceChildren();
  if (err instanceof ApiError) {
    alertBox.append(h("strong", {}, `Error ${err.status}: `));
    if (Array.isArray(err.detail)) {
      alertBox.append(
        "The request was not valid.",
        h(
          "ul",
          {},
          err.detail.map((d) => h("li", {}, `${(d.loc ?? []).join(".")}: ${d.msg ?? d.type ?? ""}`)),
        ),
      );
    } else alertBox.append(String(err.detail));
  } else alertBox.append(h("strong", {}, "Error: "), String(err?.message ?? err));
  alertBox.hidden = false;
}

function clearError() {
  alertBox.hidden = true;
  alertBox.replaceChildren();
}

// ---- confirmation dialog --------------------------------------------------------------------------------------

const dialog = document.getElementById("confirm");
function confirmAction(title, text, danger) {
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  const yes = document.getElementById("confirm-yes");
  yes.textContent = title;
  yes.className = danger ? "danger" : "primary";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    document.getElementById("confirm-no").focus();
  });
}

// ---- pages ----------------------------------------------------------------------------------------------------

/** Cleanup of the current page (stops its progress source). */
let leavePage = () => {};
/** Counts navigations: a page whose data arrives after the user went elsewhere does not render. */
let navigation = 0;
class Superseded extends Error {}
/** The API's answer for the page being shown; throws Superseded when another navigation happened meanwhile. */
async function load(path) {
  const mine = navigation;
  const body = await api(path);
  if (mine !== navigation) throw new Superseded();
  return body;
}

function page(title, ...children) {
  const heading = h("h1", { tabindex: "-1" }, title);
  main.replaceChildren(heading, ...children);
  document.title = `${title} · edgedial`;
  return heading;
}

function signInPage() {
  nav.hidden = true;
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
    "aria-describedby": "key-hint",
  });
  const form = h(
    "form",
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const key = input.value.trim();
        try {
          // Any authenticated read proves the key; the API's 401 message is shown as it is.
          await api("/campaign?limit=1", { key });
          sessionStorage.setItem(KEY_STORAGE, key);
          clearError();
          if (location.hash === "#/campaigns") route();
          else location.hash = "#/campaigns";
        } catch (err) {
          showError(err);
          input.focus();
        }
      },
    },
    h("label", { for: "api-key" }, "API key"),
    input,
    h(
      "p",
      { id: "key-hint", class: "hint" },
      "An edk_… key of your organization. It is kept in this browser tab only and forgotten when you sign out or close it.",
    ),
    h("button", { type: "submit", class: "primary" }, "Sign in"),
  );
  page("Sign in", form);
}

function stateBadge(state) {
  return h("span", { class: "state" }, state);
}

/**
 * A table body of one list's rows with a "Show more" button while the API has another page (next_cursor).
 * Returns [tbody, button or null]; the caption counts the rows shown.
 */
function pagedRows(list, path, rowOf, caption, noun) {
  const body = h("tbody", {}, list.items.map(rowOf));
  let shown = list.items.length;
  const count = () => {
    caption.textContent = `${shown} ${noun}${shown === 1 ? "" : "s"}${more.hidden ? "" : " shown"}, newest first`;
  };
  const more = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        try {
          const next = await api(`${path}&cursor=${encodeURIComponent(cursor)}`);
          body.append(...next.items.map(rowOf));
          shown += next.items.length;
          cursor = next.next_cursor;
          more.hidden = !cursor;
          count();
        } catch (err) {
          showError(err);
        }
      },
    },
    `Show more ${noun}s`,
  );
  let cursor = list.next_cursor;
  more.hidden = !cursor;
  count();
  return [body, more];
}

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

async function campaignsPage() {
  const heading = page("Campaigns", h("p", {}, "Loading…"));
  const path = "/campaign?limit=50";
  const list = await load(path);
  const caption = h("caption");
  const [body, more] = pagedRows(list, path, campaignRow, caption, "campaign");
  const table = h(
    "table",
    {},
    caption,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Name", "State", "Contacts", "Processed", "Failed", "Agent", "Created"].map((t, i) =>
          h("th", { scope: "col", class: i >= 2 && i <= 4 ? "num" : null }, t),
        ),
      ),
    ),
    body,
  );
  main.replaceChildren(
    heading,
    ...(list.items.length ? [table, more] : [h("p", {}, "No campaigns yet. Create one through the API (POST /api/v1/campaign/create).")]),
  );
}

const agentRow = (a) =>
  h(
    "tr",
    {},
    h("td", {}, h("a", { href: `#/agents/${a.id}` }, a.name)),
    h("td", {}, stateBadge(a.status)),
    h("td", { class: "num" }, a.version_number),
    h("td", { class: "num" }, a.total_runs),
    h("td", {}, fmtTime(a.updated_at)),
  );

async function agentsPage() {
  const heading = page("Agents", h("p", {}, "Loading…"));
  const path = "/workflow/fetch?limit=50";
  const list = await load(path);
  const caption = h("caption");
  const [body, more] = pagedRows(list, path, agentRow, caption, "agent");
  const table = h(
    "table",
    {},
    caption,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Name", "Status", "Version", "Total runs", "Updated"].map((t, i) => h("th", { scope: "col", class: i === 2 || i === 3 ? "num" : null }, t)),
      ),
    ),
    body,
  );
  main.replaceChildren(heading, ...(list.items.length ? [table, more] : [h("p", {}, "No agents yet.")]));
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

const COUNTERS = [
  ["total", "Contacts"],
  ["pending", "Pending"],
  ["in_progress", "In progress"],
  ["retry_waiting", "Retry waiting"],
  ["completed", "Reached"],
  ["failed", "Not reached"],
  ["failed_calls", "Failed calls"],
];

/** A line chart of (time, value) samples as inline SVG. */
function lineChart(samples, label) {
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
    s("text", { x: P, y: H - 8 }, "while this page is open"),
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

async function campaignPage(id) {
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
  );
  const controls = h("div", { class: "controls", role: "group", "aria-label": "Campaign controls" });
  const counters = h("dl", { class: "counters", "aria-label": "Progress" });
  // Updated every tick, so not a live region; state changes are announced by the state's own (polite) region.
  const status = h("p", { class: "hint", id: "progress-note" });
  const overTime = h("figure", {}, h("figcaption", {}, "Processed contacts over time"));
  const outcomes = h("figure", {}, h("figcaption", {}, "Call outcomes"));
  const runsBody = h("tbody");
  const logBody = h("tbody");
  main.replaceChildren(
    heading,
    h("p", {}, h("a", { href: "#/campaigns" }, "← All campaigns")),
    facts,
    controls,
    h("h2", {}, "Progress"),
    counters,
    status,
    h("div", { class: "charts" }, overTime, outcomes),
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
      ...COUNTERS.filter(([k]) => typeof p[k] === "number").map(([k, label]) => h("div", { "data-counter": k }, h("dt", {}, label), h("dd", {}, p[k]))),
    );
    status.textContent = `${p.processed} of ${p.total} contacts processed (${Math.round(p.completion_percentage ?? p.progress_percentage ?? 0)}%)${
      p.next_window_at ? `; outside the schedule until ${fmtTime(p.next_window_at)}` : ""
    }. Updated ${new Date().toLocaleTimeString()} (${source}).`;
    samples.push({ t: Date.now(), v: p.processed });
    if (samples.length > 900) samples.shift();
    overTime.replaceChildren(overTime.firstChild, lineChart(samples, `Processed contacts over time: ${p.processed} of ${p.total} now`));
    if (p.started_at) started.textContent = fmtTime(p.started_at);
    if (p.state !== stateEl.textContent) {
      stateEl.textContent = p.state;
      renderControls(p.state);
    }
  };

  const loadRunsAndLog = async () => {
    const [runs, logs] = await Promise.all([api(`/campaign/${id}/runs?limit=100`), api(`/campaign/${id}/logs?limit=50`)]);
    const counts = {};
    for (const r of runs.items) counts[r.status] = (counts[r.status] ?? 0) + 1;
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

function fact(dl, label, value) {
  dl.append(h("dt", {}, label), h("dd", {}, value ?? "—"));
}

async function runPage(workflowId, runId) {
  const heading = page("Call", h("p", {}, "Loading…"));
  const run = await load(`/workflow/${workflowId}/runs/${runId}`);
  heading.textContent = `Call ${run.name}`;
  document.title = `${run.name} · edgedial`;
  const facts = h("dl", { class: "facts" });
  fact(facts, "Status", stateBadge(run.status));
  // An inbound call's phone_number is the caller and from_number the organization's number they dialed.
  const inbound = run.direction === "inbound";
  fact(facts, "Direction", run.direction ?? "outbound");
  fact(facts, inbound ? "Caller" : "Number", run.phone_number);
  fact(facts, inbound ? "Dialed" : "From", run.from_number);
  fact(facts, "Created", fmtTime(run.created_at));
  fact(facts, "Started", fmtTime(run.started_at));
  fact(facts, "Answered", fmtTime(run.answered_at));
  fact(facts, "Ended", fmtTime(run.ended_at));
  fact(facts, "Duration", run.duration_seconds == null ? null : `${run.duration_seconds} s`);
  fact(facts, "Disposition", run.disposition);
  if (run.error) fact(facts, "Error", run.error);
  if (run.notes) fact(facts, "Notes", run.notes);

  const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const transcript = run.transcript?.length
    ? h(
        "ol",
        { class: "transcript" },
        run.transcript.map((t) =>
          h(
            "li",
            {},
            h("span", { class: "role" }, t.role === "agent" ? "Agent" : "Callee"),
            ` (${sec(t.start_ms)}–${sec(t.end_ms)})${t.interrupted ? " [interrupted]" : ""}: `,
            t.text,
          ),
        ),
      )
    : h("p", {}, "No transcript for this call.");

  const gathered = run.gathered_context && Object.keys(run.gathered_context).length;
  const gatheredEl = gathered
    ? h(
        "table",
        {},
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Variable"), h("th", { scope: "col" }, "Value"))),
        h(
          "tbody",
          {},
          Object.entries(run.gathered_context).map(([k, v]) =>
            h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, typeof v === "string" ? v : JSON.stringify(v))),
          ),
        ),
      )
    : h("p", {}, "Nothing gathered.");

  const recording = run.recording_url
    ? h("audio", { controls: true, preload: "none", src: run.recording_url, "aria-label": `Recording of ${run.name}` })
    : h("p", {}, "No recording.");

  const back = run.campaign_id ? h("a", { href: `#/campaigns/${run.campaign_id}` }, "← Campaign") : h("a", { href: "#/campaigns" }, "← Campaigns");
  main.replaceChildren(
    heading,
    h("p", {}, back),
    facts,
    h("h2", {}, "Recording"),
    recording,
    h("h2", {}, "Transcript"),
    transcript,
    h("h2", {}, "Gathered values"),
    gatheredEl,
  );
}

// ---- routing --------------------------------------------------------------------------------------------------

async function route() {
  navigation++;
  leavePage();
  leavePage = () => {};
  if (!getKey()) {
    signInPage();
    return;
  }
  nav.hidden = false;
  const path = location.hash.replace(/^#/, "") || "/campaigns";
  const campaign = /^\/campaigns\/(\d+)$/.exec(path);
  const run = /^\/runs\/(\d+)\/(\d+)$/.exec(path);
  const agent = /^\/agents\/(\d+)$/.exec(path);
  try {
    if (campaign) leavePage = (await campaignPage(Number(campaign[1]))) ?? leavePage;
    else if (run) await runPage(Number(run[1]), Number(run[2]));
    else if (agent) leavePage = (await agentPage(Number(agent[1]), { main, h, page, load, api, showError })) ?? leavePage;
    else if (path === "/agents") await agentsPage();
    else await campaignsPage();
  } catch (err) {
    if (err instanceof Superseded) return;
    showError(err);
    if (err instanceof ApiError && err.status === 401) {
      // The key stopped working (revoked): back to the sign-in form, the API's message stays visible.
      sessionStorage.removeItem(KEY_STORAGE);
      signInPage();
      return;
    }
  }
  main.querySelector("h1")?.focus();
}

document.getElementById("sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_STORAGE);
  clearError();
  leavePage();
  leavePage = () => {};
  if (location.hash && location.hash !== "#/campaigns") location.hash = "#/campaigns";
  else route();
});

window.addEventListener("hashchange", () => {
  clearError();
  route();
});
route();
