// The release gate: a campaign of an agent that requires passing tests refuses to start while its version has no
// passing suite run (none, or a failed one), and starts once the suite passed; a campaign's own
// require_passing_tests does the same for any agent; an inbound number's attachment that requires passing tests is
// refused at attach and puts no call through to a version that has not passed.
import { describe, expect, it } from "vitest";
import suite from "../fixtures/seats-suite.json";
import { call } from "../helpers";
import { CAMPAIGNS, createCampaign, goodCsv, upload, world } from "../campaigns/support";
import { callbackRequest, CALLER, setup, sim } from "../calls/support";
import { ECHO_WORKER, fetchWorker } from "../calls/media-support";
import { dial, runsOf } from "../calls/inbound-support";
import { runTests } from "./run-helpers";

// Concurrent: each test has its own organization and agent.
describe.concurrent("require_passing_tests", () => {
  it("refuses a campaign's start on a version without a passing suite, and starts it on one that passed", async () => {
    const w = await world();
    // A caller ID, so the configuration is ready and only the tests decide.
    const num = await call("POST", `/api/v1/organizations/telephony-configs/${w.configId}/phone-numbers`, {
      key: w.key,
      body: { address: "+14155550100", is_default_caller_id: true },
    });
    expect(num.status, num.text).toBe(200);
    const agent = structuredClone(suite.agent) as any;
    agent.workflow_configurations.require_passing_tests = true;
    const made = await call("POST", "/api/v1/workflow/create", { key: w.key, body: agent });
    expect(made.status, made.text).toBe(200);
    const id = made.json.id as number;
    const notInterested = suite.scenarios[1];
    // Wrong on purpose: the agent is right to mark this caller not interested.
    const scenario = await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, {
      key: w.key,
      body: { ...notInterested, expectations: { ...notInterested.expectations, disposition: "interested" } },
    });
    expect(scenario.status, scenario.text).toBe(200);

    const campaign = await createCampaign({ ...w, workflowId: id }, { source_url: await upload(w, goodCsv(2)) });
    expect(campaign.status, campaign.text).toBe(200);
    const start = () => call("POST", `${CAMPAIGNS}/${campaign.json.id}/start`, { key: w.key });

    const never = await start();
    expect(never.status).toBe(409);
    expect(never.json.detail).toContain("version 1 has no finished test suite run");

    const failed = await runTests(w.key, id, { repetitions: 1 });
    expect(failed.status).toBe("failed");
    const refused = await start();
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain("version 1 failed its newest test suite run");

    const fixed = await call("PUT", `/api/v1/workflow/${id}/tests/scenarios/${scenario.json.id}`, { key: w.key, body: notInterested });
    expect(fixed.status, fixed.text).toBe(200);
    const passed = await runTests(w.key, id, { repetitions: 1 });
    expect(passed.status, JSON.stringify(passed.scenarios[0]?.runs[0]?.verdicts)).toBe("passed");
    // Two test runs of the agent's calls are nowhere in its campaign's progress.
    const progress = await call("GET", `${CAMPAIGNS}/${campaign.json.id}/progress`, { key: w.key });
    expect(progress.json).toMatchObject({ processed: 0, total: 2 });
    const started = await start();
    expect(started.status, started.text).toBe(200);
    expect(started.json.state).not.toBe("draft");
    await call("POST", `${CAMPAIGNS}/${campaign.json.id}/cancel`, { key: w.key });
  }, 120_000);

  it("a campaign's own require_passing_tests refuses its start for an agent that does not ask it; PATCHed off, it starts", async () => {
    const w = await world();
    await call("POST", `/api/v1/organizations/telephony-configs/${w.configId}/phone-numbers`, {
      key: w.key,
      body: { address: "+14155550100", is_default_caller_id: true },
    });
    const made = await call("POST", "/api/v1/workflow/create", { key: w.key, body: suite.agent });
    expect(made.status, made.text).toBe(200);
    const id = made.json.id as number;
    const campaign = await createCampaign({ ...w, workflowId: id }, { source_url: await upload(w, goodCsv(2)), require_passing_tests: true });
    expect(campaign.status, campaign.text).toBe(200);
    expect(campaign.json.require_passing_tests).toBe(true);
    const refused = await call("POST", `${CAMPAIGNS}/${campaign.json.id}/start`, { key: w.key });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toBe(
      `The campaign requires passing tests (require_passing_tests) and the agent's version 1 has no finished test suite run: run POST /api/v1/workflow/${id}/tests/runs`,
    );
    const patched = await call("PATCH", `${CAMPAIGNS}/${campaign.json.id}`, { key: w.key, body: { require_passing_tests: false } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.require_passing_tests).toBe(false);
    const started = await call("POST", `${CAMPAIGNS}/${campaign.json.id}/start`, { key: w.key });
    expect(started.status, started.text).toBe(200);
    await call("POST", `${CAMPAIGNS}/${campaign.json.id}/cancel`, { key: w.key });
  }, 60_000);

  it("an inbound number's attachment: refused at attach until the version passed, then each call to a version that has not is refused", async () => {
    const s = await setup("twilio");
    await sim("POST", `/accounts/${s.acct.id}/numbers`, { number: CALLER });
    const made = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { ...suite.agent, template_context_variables: { first_name: "Ada" } } });
    expect(made.status, made.text).toBe(200);
    const id = made.json.id as number;
    expect((await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, { key: s.org.key, body: suite.scenarios[0] })).status).toBe(200);
    const numbers = `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`;
    const number = (await call("GET", numbers, { key: s.org.key })).json.items[0];
    const put = (body: Record<string, unknown>) => call("PUT", `${numbers}/${number.id}`, { key: s.org.key, body });

    const untested = await put({ inbound_workflow_id: id, require_passing_tests: true });
    expect(untested.status).toBe(409);
    expect(untested.json.detail).toBe(
      `The number's agent attachment requires passing tests (require_passing_tests) and the agent's version 1 has no finished test suite run: run POST /api/v1/workflow/${id}/tests/runs`,
    );
    expect((await call("GET", numbers, { key: s.org.key })).json.items[0]).toMatchObject({ inbound_workflow_id: null, require_passing_tests: false });
    // Attached without the requirement, then asked to require it: refused the same way.
    expect((await put({ inbound_workflow_id: id })).status).toBe(200);
    expect((await put({ require_passing_tests: true })).status).toBe(409);

    expect((await runTests(s.org.key, id, { repetitions: 1 })).status).toBe("passed");
    const gated = await put({ require_passing_tests: true });
    expect(gated.status, gated.text).toBe(200);
    expect(gated.json).toMatchObject({ inbound_workflow_id: id, require_passing_tests: true });
    const answer = async () => fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER);
    const put_through = await answer();
    expect(put_through.text).toContain("<Connect><Stream");
    const calls = (await runsOf(s.org.id)).filter((r) => !r.is_test).length;
    expect(calls).toBe(1);

    // A new version has no test result: its callers hear the number's polite message and no run is made.
    const def = structuredClone(suite.agent.workflow_definition);
    def.nodes[0].data.greeting = "Hello {{first_name}}! Press 1 or say yes to hear about our offer.";
    expect((await call("PUT", `/api/v1/workflow/${id}`, { key: s.org.key, body: { workflow_definition: def } })).json.version_number).toBe(2);
    const refused = await answer();
    expect(refused.text).toMatch(/^<\?xml[^>]*><Response><Say>Sorry, no one can take your call at this number right now\.[^<]*<\/Say><Hangup\/><\/Response>$/);
    expect((await runsOf(s.org.id)).filter((r) => !r.is_test)).toHaveLength(calls);
  }, 120_000);
});
