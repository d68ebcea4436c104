// An agent's Tests tab (docs/agent-tests.md): its scenarios (listed, created and edited as JSON that the API
// validates: a 422's items are shown at the name field or, by their path, under the JSON), a run of the suite or of
// one scenario with N repetitions, and the history of its test runs per agent version. A run's results have a page
// of their own (agent-test-run.js) that follows a running run to its end.
import {
  api,
  confirmAction,
  clearError,
  clearFieldErrors,
  field,
  fmtTime,
  h,
  load,
  main,
  nav,
  page,
  setFieldError,
  showError,
  stateBadge,
  table,
  ApiError,
} from "./core.js";
import { callerSummary, editableJson, pct, scenarioBody, splitProblems } from "./agent-test-logic.js";

/** The agent's pages as tabs: its overview (talk, editor, versions) and its tests. */
export function agentTabs(id, current) {
  const tab = (key, href, label) => h("li", {}, h("a", { href, "aria-current": key === current ? "page" : null }, label));
  return h(
    "nav",
    { class: "tabs", "aria-label": "Agent" },
    h("ul", {}, tab("overview", `#/agents/${id}`, "Overview"), tab("tests", `#/agents/${id}/tests`, "Tests")),
  );
}

const runHref = (id, runId) => `#/agents/${id}/tests/runs/${runId}`;

export async function agentTestsPage(id) {
  page("Tests", h("p", {}, "Loading…"));
  const agent = await load(`/workflow/fetch/${id}`);
  const scenariosBody = h("tbody");
  const runsBody = h("tbody");
  const editorRoot = h("div", { id: "scenario-editor" });
  const runStatus = h("p", { id: "test-run-status", role: "status" });
  const reps = h("input", { type: "number", min: 1, max: 10, value: 3, inputmode: "numeric" });
  let scenarios = [];

  const loadScenarios = async () => {
    scenarios = (await api(`/workflow/${id}/tests/scenarios`)).items;
    scenariosBody.replaceChildren(
      ...scenarios.map((s) =>
        h(
          "tr",
          {},
          h("td", {}, s.name),
          h("td", {}, s.protocol),
          h("td", {}, callerSummary(s.caller)),
          h("td", { class: "num" }, Object.keys(s.expectations ?? {}).length),
          h("td", { class: "num" }, `${s.revision} (v${s.agent_version})`),
          h(
            "td",
            {},
            h("div", { class: "row-actions" }, [
              h("button", { type: "button", onclick: () => openEditor(s) }, `Edit ${s.name}`),
              h("button", { type: "button", onclick: () => start(s.id, s.name) }, `Run ${s.name}`),
              h("button", { type: "button", class: "danger", onclick: () => remove(s) }, `Delete ${s.name}`),
            ]),
          ),
        ),
      ),
    );
    if (!scenarios.length) scenariosBody.append(h("tr", {}, h("td", { colspan: 6 }, "No scenarios yet: add one to start the suite.")));
  };

  const loadRuns = async () => {
    const list = await api(`/workflow/${id}/tests/runs?limit=20`);
    const nameOf = (sid) => scenarios.find((s) => s.id === sid)?.name ?? `scenario ${sid}`;
    runsBody.replaceChildren(
      ...list.items.map((r) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: runHref(id, r.id) }, `Run ${r.id}`)),
          h("td", { class: "num" }, r.version_number),
          h("td", {}, r.scenario_id ? nameOf(r.scenario_id) : "the suite"),
          h("td", { class: "num" }, r.repetitions),
          h("td", {}, stateBadge(r.status)),
          h("td", { class: "num" }, r.summary ? `${r.summary.passed} of ${r.summary.scenarios}` : "—"),
          h("td", { class: "num" }, r.summary ? pct(r.summary.pass_rate) : "—"),
          h("td", {}, fmtTime(r.created_at)),
        ),
      ),
    );
    if (!list.items.length) runsBody.append(h("tr", {}, h("td", { colspan: 8 }, "No test runs yet.")));
    return list.items;
  };

  const openEditor = (scenario) => {
    const name = h("input", { type: "text", value: scenario?.name ?? "", autocomplete: "off", required: true });
    const json = h("textarea", { rows: 18, spellcheck: "false", class: "code" }, editableJson(scenario));
    const verdict = h("div", { role: "status", id: "scenario-verdict" });
    const form = h(
      "form",
      {
        novalidate: true,
        class: "editor",
        onsubmit: async (e) => {
          e.preventDefault();
          clearFieldErrors(form);
          const made = scenarioBody(name.value, json.value);
          if (made.error) return setFieldError("scenario-json", made.error);
          try {
            const path = `/workflow/${id}/tests/scenarios${scenario ? `/${scenario.id}` : ""}`;
            const saved = await api(path, { method: scenario ? "PUT" : "POST", json: made.body });
            clearError();
            editorRoot.replaceChildren(h("p", { class: "ok", role: "status" }, `Saved ${saved.name} (revision ${saved.revision}).`));
            await loadScenarios();
          } catch (err) {
            if (!(err instanceof ApiError) || !Array.isArray(err.detail)) return showError(err);
            // The API's located problems: the name's at the name, every other by its path in the JSON.
            const problems = splitProblems(err.detail);
            if (problems.name.length) setFieldError("scenario-name", problems.name.join(" "));
            if (problems.json.length) setFieldError("scenario-json", problems.json.join("\n"));
            verdict.replaceChildren(h("p", { class: "bad" }, "Not saved: fix the fields marked above."));
          }
        },
      },
      h("h3", {}, scenario ? `Edit ${scenario.name}` : "New scenario"),
      field("scenario-name", "Name", name),
      field(
        "scenario-json",
        "Scenario (JSON)",
        json,
        "caller (a script of say, interrupt, press, pause and silence steps), variables, protocol, mock_tools and expectations: see docs/agent-tests.md.",
      ),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", class: "primary" }, scenario ? "Save scenario" : "Add scenario"),
        h("button", { type: "button", onclick: () => editorRoot.replaceChildren() }, "Cancel"),
      ),
      verdict,
    );
    editorRoot.replaceChildren(form);
    name.focus();
  };

  const remove = async (s) => {
    if (!(await confirmAction("Delete scenario", `Delete the scenario ${s.name}? Runs that used it keep their results.`, true))) return;
    try {
      await api(`/workflow/${id}/tests/scenarios/${s.id}`, { method: "DELETE", text: true });
      await loadScenarios();
    } catch (err) {
      showError(err);
    }
  };

  /**
   * Starts a run. The API answers at once (202, the run `running`: its own object carries the calls), so the page
   * opens the run's page, which follows it to its end.
   */
  const start = async (scenarioId, label) => {
    const repetitions = Number(reps.value);
    if (!Number.isInteger(repetitions) || repetitions < 1 || repetitions > 10) return setFieldError("test-repetitions", "Between 1 and 10 calls per scenario");
    setFieldError("test-repetitions", null);
    clearError();
    const mine = nav.count;
    runStatus.textContent = `Starting ${label} with ${repetitions} call${repetitions === 1 ? "" : "s"} per scenario…`;
    try {
      const run = await api(`/workflow/${id}/tests/runs`, { method: "POST", json: { scenario_id: scenarioId, repetitions } });
      if (nav.count === mine) location.hash = runHref(id, run.id);
    } catch (err) {
      if (nav.count === mine) runStatus.textContent = "The run did not start.";
      showError(err);
    }
  };

  const repsField = field("test-repetitions", "Calls per scenario", reps, "1 to 10: a scenario that passes some and fails others is flaky.");
  main.replaceChildren(
    page(`${agent.name}: tests`),
    agentTabs(id, "tests"),
    h(
      "p",
      {},
      `Version ${agent.version_number}. Each test call is a real call session of this version over the scenario's carrier protocol; nothing is dialed.`,
    ),
    h("h2", {}, "Scenarios"),
    table(h("caption", {}, "The agent's suite"), ["Name", "Protocol", "Caller", "Expectations", "Revision", ""], scenariosBody, [3, 4]),
    h("div", { class: "actions" }, h("button", { type: "button", onclick: () => openEditor(null) }, "New scenario")),
    editorRoot,
    h("h2", {}, "Run"),
    h(
      "form",
      { class: "filters", novalidate: true, onsubmit: (e) => (e.preventDefault(), start(null, "the suite")) },
      repsField,
      h("button", { type: "submit", class: "primary", id: "run-suite" }, "Run the suite"),
    ),
    runStatus,
    h("h2", {}, "Runs"),
    table(
      h("caption", {}, "Test runs, newest first, with the version each tested"),
      ["Run", "Version", "Tested", "Calls each", "Status", "Scenarios passed", "Pass rate", "Started"],
      runsBody,
      [1, 3, 5, 6],
    ),
  );
  await loadScenarios();
  await loadRuns();
}
