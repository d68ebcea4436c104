// The release gate: a campaign of an agent that requires passing tests refuses to start while its version has no
// passing suite run (none, or a failed one), and starts once the suite passed.
import { describe, expect, it } from "vitest";
import suite from "../fixtures/seats-suite.json";
import { call } from "../helpers";
import { CAMPAIGNS, createCampaign, goodCsv, upload, world } from "../campaigns/support";

describe("require_passing_tests", () => {
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

    const failed = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key: w.key, body: { repetitions: 1 } });
    expect(failed.json.status).toBe("failed");
    const refused = await start();
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain("version 1 failed its newest test suite run");

    const fixed = await call("PUT", `/api/v1/workflow/${id}/tests/scenarios/${scenario.json.id}`, { key: w.key, body: notInterested });
    expect(fixed.status, fixed.text).toBe(200);
    const passed = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key: w.key, body: { repetitions: 1 } });
    expect(passed.json.status, JSON.stringify(passed.json.scenarios[0]?.runs[0]?.verdicts)).toBe("passed");
    const started = await start();
    expect(started.status, started.text).toBe(200);
    expect(started.json.state).not.toBe("draft");
    await call("POST", `${CAMPAIGNS}/${campaign.json.id}/cancel`, { key: w.key });
  }, 120_000);
});
