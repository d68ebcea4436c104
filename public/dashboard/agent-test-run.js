// A test run's page: while it runs, it is read again every 1.5 s until it ends; then the suite's verdict, the pass
// rate per scenario and the flaky ones, each expectation's standing over the repetitions, and per repetition every
// verdict with what was expected, what happened and the evidence, what the caller did, the transcript, and a link to
// the test call's own page (its recording and timing).
import { api, fact, fmtTime, h, load, main, page, showError, stateBadge, table } from "./core.js";
import { enginesText, flakyOf, pct, standing, summaryText, valueText } from "./agent-test-logic.js";
import { agentTabs } from "./agent-tests.js";

const POLL_MS = 1500;

export async function agentTestRunPage(id, runId) {
  page(`Test run ${runId}`, h("p", {}, "Loading…"));
  const agent = await load(`/workflow/fetch/${id}`);
  const status = h("p", { id: "test-run-summary", role: "status" });
  const body = h("div", { id: "test-run-results" });
  const facts = h("dl", { class: "facts" });
  main.replaceChildren(
    page(`${agent.name}: test run ${runId}`),
    agentTabs(id, "tests"),
    h("p", {}, h("a", { href: `#/agents/${id}/tests` }, "← Scenarios and runs")),
    status,
    facts,
    body,
  );
  let stopped = false;
  let timer = null;
  const started = Date.now();
  const show = (run) => {
    status.className = run.status === "passed" ? "ok" : run.status === "running" ? "" : "bad";
    status.textContent = summaryText(run);
    facts.replaceChildren();
    fact(facts, "Agent version", String(run.version_number));
    fact(facts, "Tested", run.scenario_id ? `one scenario${run.scenarios[0] ? ` (${run.scenarios[0].name})` : ""}` : "the suite");
    fact(facts, "Calls per scenario", String(run.repetitions));
    fact(facts, "Started", fmtTime(run.created_at));
    fact(facts, "Finished", run.finished_at ? fmtTime(run.finished_at) : `not yet (${Math.round((Date.now() - started) / 1000)} s watched)`);
    if (run.status !== "running") body.replaceChildren(...results(id, run));
  };
  const poll = async () => {
    try {
      const run = await api(`/workflow/${id}/tests/runs/${runId}`);
      if (stopped) return;
      show(run);
      if (run.status === "running") timer = setTimeout(poll, POLL_MS);
    } catch (err) {
      if (!stopped) showError(err);
    }
  };
  show(await load(`/workflow/${id}/tests/runs/${runId}`));
  if (status.textContent.startsWith("Running")) timer = setTimeout(poll, POLL_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function results(id, run) {
  const flaky = flakyOf(run);
  const overview = h(
    "tbody",
    {},
    run.scenarios.map((s) =>
      h(
        "tr",
        {},
        h("td", {}, h("a", { href: `#scenario-${s.scenario_id}`, onclick: jumpTo(`scenario-${s.scenario_id}`) }, s.name)),
        h("td", {}, s.protocol),
        h("td", {}, stateBadge(s.status)),
        h("td", { class: "num" }, `${s.passed} of ${s.repetitions}`),
        h("td", { class: "num" }, pct(s.pass_rate)),
      ),
    ),
  );
  return [
    flaky.length
      ? h(
          "div",
          { id: "flaky" },
          h("h2", {}, "Flaky"),
          h(
            "ul",
            {},
            flaky.map((f) =>
              h("li", {}, `${f.name}: passed ${f.passed} of ${f.of} calls; sometimes failing: ${f.expectations.join(", ") || "the call itself"}`),
            ),
          ),
        )
      : null,
    h("h2", {}, "Scenarios"),
    table(h("caption", {}, "Pass rate per scenario"), ["Scenario", "Protocol", "Status", "Calls passed", "Pass rate"], overview, [3, 4]),
    ...run.scenarios.map((s) => scenarioSection(id, s)),
  ].filter(Boolean);
}

/** The hash routes pages: an in-page link scrolls to its section instead of changing the route. */
const jumpTo = (target) => (e) => {
  e.preventDefault();
  document.getElementById(target)?.scrollIntoView();
};

function scenarioSection(id, s) {
  const expectations = h(
    "tbody",
    {},
    s.expectations.map((e) =>
      h("tr", {}, h("td", {}, e.expectation), h("td", {}, stateBadge(standing(e))), h("td", { class: "num" }, `${e.passed} of ${e.of}`)),
    ),
  );
  return h(
    "section",
    { id: `scenario-${s.scenario_id}`, class: "card test-scenario", "aria-labelledby": `scenario-${s.scenario_id}-heading` },
    h("h3", { id: `scenario-${s.scenario_id}-heading` }, `${s.name}: ${s.status}`),
    h("p", {}, `Passed ${s.passed} of ${s.repetitions} calls (${pct(s.pass_rate)}) over ${s.protocol}, scenario revision ${s.revision}.`),
    s.expectations.length
      ? table(h("caption", {}, `Expectations of ${s.name} over its calls`), ["Expectation", "Standing", "Calls passed"], expectations, [2])
      : null,
    ...s.runs.map((r) => repetition(id, s, r)),
  );
}

function repetition(id, s, r) {
  const verdicts = h(
    "tbody",
    {},
    r.verdicts.map((v) =>
      h(
        "tr",
        { class: v.passed ? null : "bad-row" },
        h("td", {}, v.expectation),
        h("td", {}, h("span", { class: v.passed ? "ok" : "bad" }, v.passed ? "passed" : "failed")),
        h("td", {}, valueText(v.expected)),
        h("td", {}, valueText(v.actual)),
        h("td", { class: "evidence" }, v.evidence),
      ),
    ),
  );
  const label = `${s.name}, call ${r.repetition}`;
  return h(
    "div",
    { class: "repetition" },
    h("h4", {}, `Call ${r.repetition}: `, h("span", { class: r.passed ? "ok" : "bad" }, r.passed ? "passed" : "failed")),
    r.run_id ? h("p", {}, h("a", { href: `#/runs/${id}/${r.run_id}` }, `Call page of ${label}`), " (recording, timing, actions)") : null,
    enginesText(r) ? h("p", {}, enginesText(r)) : null,
    r.error ? h("p", { class: "bad" }, r.error) : null,
    r.verdicts.length ? table(h("caption", {}, `Verdicts of ${label}`), ["Expectation", "Result", "Expected", "Actual", "Evidence"], verdicts) : null,
    r.caller.length
      ? h(
          "details",
          {},
          h("summary", {}, `What the caller did (${label})`),
          h(
            "ol",
            {},
            r.caller.map((c) => h("li", {}, `${(c.at_ms / 1000).toFixed(1)} s: ${c.action}${c.detail ? ` ${c.detail}` : ""}`)),
          ),
        )
      : null,
    r.transcript.length
      ? h(
          "details",
          {},
          h("summary", {}, `Transcript (${label})`),
          h(
            "ol",
            { class: "transcript" },
            r.transcript.map((t) =>
              h(
                "li",
                { class: t.role === "agent" ? "agent" : "user" },
                h("span", { class: "role" }, t.role === "agent" ? "Agent" : t.role === "callee" ? "Caller" : t.role),
                ` ${(t.start_ms / 1000).toFixed(1)} s: ${t.text}${t.interrupted ? " (interrupted)" : ""}`,
              ),
            ),
          ),
        )
      : null,
  );
}
