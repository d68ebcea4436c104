// A test run survives its request: the POST answers 202 with the run `running` before any call ended, and the run's
// own Durable Object carries the calls to the end; a client that gives up on `?wait=true` does not stop the run; a
// runner restarted in the middle ends its run `error` instead of leaving it `running`.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testRunStub } from "../../src/agent-tests/run-object";
import { organizationStub } from "../../src/organizations/organization-object";
import { newRun } from "../../src/agent-tests/suite";
import suite from "../fixtures/seats-suite.json";
import { call, createOrg } from "../helpers";
import { finishedRun } from "./run-helpers";

async function agentWithHappyPath() {
  const org = await createOrg();
  const made = await call("POST", "/api/v1/workflow/create", { key: org.key, body: suite.agent });
  expect(made.status, made.text).toBe(200);
  const scenario = await call("POST", `/api/v1/workflow/${made.json.id}/tests/scenarios`, { key: org.key, body: suite.scenarios[0] });
  expect(scenario.status, scenario.text).toBe(200);
  return { org, id: made.json.id as number };
}

// Concurrent: each test has its own organization, agent and run object.
describe.concurrent("a test run carried by its own object", () => {
  it("answers 202 before the calls end, and the run finishes without the request", async () => {
    const { org, id } = await agentWithHappyPath();
    const res = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key: org.key, body: { repetitions: 1 } });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ status: "running", summary: null, scenarios: [], finished_at: null });
    // A call of this scenario lasts seconds: the run is still going when the client looks.
    const soon = await call("GET", `/api/v1/workflow/${id}/tests/runs/${res.json.id}`, { key: org.key });
    expect(soon.json.status).toBe("running");
    // Its calls take no place under the organization's concurrent-call cap, however long they last.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await organizationStub(env, org.id).usage()).inUse).toBe(0);
    const done = await finishedRun(org.key, id, res.json.id);
    expect(done).toMatchObject({ status: "passed", summary: { scenarios: 1, passed: 1 } });
    expect(done.scenarios[0].runs[0].run_id).toEqual(expect.any(Number));
  }, 120_000);

  it("goes on when a client waiting with ?wait=true gives up", async () => {
    const { org, id } = await agentWithHappyPath();
    const { exports } = await import("cloudflare:workers");
    const cut = exports.default.fetch(
      new Request(`http://edgedial.test/api/v1/workflow/${id}/tests/runs?wait=true`, {
        method: "POST",
        headers: { "X-API-Key": org.key, "Content-Type": "application/json" },
        body: JSON.stringify({ repetitions: 1 }),
        signal: AbortSignal.timeout(1500),
      }),
    );
    await expect(cut).rejects.toThrow();
    const listed = await call("GET", `/api/v1/workflow/${id}/tests/runs`, { key: org.key });
    expect(listed.json.items).toHaveLength(1);
    expect(listed.json.items[0].status).toBe("running");
    expect((await finishedRun(org.key, id, listed.json.items[0].id)).status).toBe("passed");
  }, 120_000);

  it("ends the run in error, saying why, when its runner restarted in the middle of the calls", async () => {
    const { org, id } = await agentWithHappyPath();
    const { run, job } = await newRun(env, org.id, id, { repetitions: 1 });
    const stub = testRunStub(env, run.id);
    await runInDurableObject(stub, async (object, state) => {
      await state.storage.put("job", job);
      await state.storage.put("begun", true); // what a runner that was restarted mid-run finds
      await (object as unknown as { alarm(): Promise<void> }).alarm();
      expect(await state.storage.list()).toEqual(new Map());
    });
    const ended = (await call("GET", `/api/v1/workflow/${id}/tests/runs/${run.id}`, { key: org.key })).json;
    expect(ended).toMatchObject({
      status: "error",
      summary: null,
      error: "The test run was interrupted (its runner restarted before the calls ended): run it again",
    });
    expect(ended.finished_at).toEqual(expect.any(String));
  }, 60_000);
});
