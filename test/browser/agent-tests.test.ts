// The agent's Tests tab in headless Chromium against `wrangler dev` (offline engines; the test calls run in the
// Worker over a carrier's media protocol, nothing dialed): a scenario written as JSON with an empty step, then a taken
// name, each shown where the API's 422 locates it (a step by its path under the JSON, the name at its field); one
// scenario run twice and followed to its end (passed, every verdict with its evidence, a link to each call's page);
// the suite run with a wrong expectation (failed, expected and actual side by side); a flaky result shown as flaky.
// A screenshot at each step, each checked for WCAG AA contrast; no request leaves the Worker's origin.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import suite from "../fixtures/seats-suite.json";
import { localOrganization, plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium, watchedPage } from "./chromium";
import { contrastProblems } from "./contrast";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const ARTIFACTS = join(process.cwd(), "test-artifacts");
let worker: Worker | null = null;
let context: BrowserContext;
let origin: string;
let key: string;
const scratch = mkdtempSync(join(tmpdir(), "edgedial-agent-tests-"));
const requested = new Set<string>();
const consoleErrors: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return res.json();
}

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Agent tests");
  ({ worker: worker, origin } = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    bindings: plain({ ...localBindings("d1"), PUBLIC_BASE_URL: at, VOICE_AGENT: "conversation", OFFLINE_ENGINES: "true" }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  })));
  context = await launchChromium(join(scratch, "profile"), requested);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await worker?.dispose().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

async function step(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `agent-tests-${name}.png`), fullPage: true });
  expect(await contrastProblems(page), name).toEqual([]);
}

const scenario = (name: string) => {
  const s = suite.scenarios.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario ${name}`);
  return s;
};

describe("the agent's Tests tab", () => {
  it("writes a scenario (the API's problems at their place), runs it and the suite, and shows every verdict with its evidence", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const agent = await api("POST", "/workflow/create", suite.agent);
    // A second scenario made over the API, with a wrong expectation: the agent marks a refusal not_interested.
    const { name: _, ...notInterested } = scenario("not interested");
    await api("POST", `/workflow/${agent.id}/tests/scenarios`, { ...notInterested, name: "not interested", expectations: { disposition: "interested" } });

    const page = await watchedPage(context, requested, consoleErrors);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);
    await page.goto(`${origin}/dashboard/#/agents/${agent.id}`);
    await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Tests" }).click();
    await expect.poll(() => page.getByRole("heading", { name: `${suite.agent.name}: tests`, level: 1 }).isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Tests" }).getAttribute("aria-current")).toBe("page");
    await expect.poll(() => page.getByRole("button", { name: "Run not interested" }).isVisible()).toBe(true);

    // An empty line, then a taken name: each problem where the API's 422 puts it (the JSON's path, the name field).
    await page.getByRole("button", { name: "New scenario" }).click();
    const { name: __, ...happy } = scenario("happy path");
    const broken = { ...happy, caller: { type: "script", steps: [{ action: "say", text: " " }, ...happy.caller.steps] } };
    await page.locator("#scenario-name").fill("not interested");
    await page.locator("#scenario-json").fill(JSON.stringify(broken, null, 2));
    await page.getByRole("button", { name: "Add scenario" }).click();
    await expect.poll(() => page.locator("#scenario-json-error").textContent()).toContain("caller.steps[0].text:");
    expect(await page.locator("#scenario-json").getAttribute("aria-invalid")).toBe("true");
    await step(page, "1-scenario-problem");
    await page.locator("#scenario-json").fill(JSON.stringify(happy, null, 2));
    await page.getByRole("button", { name: "Add scenario" }).click();
    await expect.poll(() => page.locator("#scenario-name-error").textContent()).toContain("distinct names");
    expect(await page.locator("#scenario-json-error").isVisible()).toBe(false);
    await step(page, "2-name-taken");
    await page.locator("#scenario-name").fill("happy path");
    await page.locator("#scenario-json").fill(JSON.stringify(happy, null, 2));
    await page.getByRole("button", { name: "Add scenario" }).click();
    await expect.poll(() => page.locator("#scenario-editor").textContent()).toContain("Saved happy path (revision 1)");

    // One scenario, two calls: the page opens the run and follows it to its end.
    await page.locator("#test-repetitions").fill("2");
    await page.getByRole("button", { name: "Run happy path" }).click();
    await expect.poll(() => page.url(), { timeout: 30_000 }).toMatch(/#\/agents\/\d+\/tests\/runs\/\d+$/);
    const summary = page.locator("#test-run-summary");
    await expect.poll(() => summary.textContent(), { timeout: 120_000, interval: 1000 }).toMatch(/^(Passed|Failed)/);
    expect(await summary.textContent()).toBe("Passed: the scenario passed in every repetition.");
    const results = page.locator("#test-run-results");
    expect(await results.getByRole("table", { name: "Pass rate per scenario" }).textContent()).toContain("2 of 2");
    const verdicts = results.getByRole("table", { name: "Verdicts of happy path, call 1" });
    expect(await verdicts.getByRole("row", { name: /^extraction\.seats passed 12 12/ }).textContent()).toContain('gathered {"seats":12}');
    expect(await verdicts.getByRole("row", { name: /^disposition passed/ }).textContent()).toContain("interested");
    await step(page, "3-run-passed");
    await results.getByRole("link", { name: "Call page of happy path, call 2" }).click();
    await expect.poll(() => page.url()).toMatch(/#\/runs\/\d+\/\d+$/);
    await expect.poll(() => page.locator("main").textContent(), { timeout: 20_000 }).toContain("twelve seats");

    // The suite, once each: the wrong expectation fails with what was expected and what happened.
    await page.goto(`${origin}/dashboard/#/agents/${agent.id}/tests`);
    await expect.poll(() => page.getByRole("button", { name: "Run the suite" }).isVisible()).toBe(true);
    await page.locator("#test-repetitions").fill("1");
    await page.getByRole("button", { name: "Run the suite" }).click();
    await expect.poll(() => summary.textContent(), { timeout: 120_000, interval: 1000 }).toMatch(/^(Passed|Failed)/);
    expect(await summary.textContent()).toBe("Failed: 1 of 2 scenarios passed (1 failed); 50% of the test calls passed.");
    const failed = results.getByRole("table", { name: "Verdicts of not interested, call 1" }).getByRole("row", { name: /^disposition failed/ });
    expect(await failed.locator("td").nth(2).textContent()).toBe("interested");
    expect(await failed.locator("td").nth(3).textContent()).toBe("not_interested");
    await step(page, "4-suite-failed");
    const runId = Number(/runs\/(\d+)$/.exec(page.url())![1]);

    // The history: both runs, the version each tested.
    await page.getByRole("link", { name: "← Scenarios and runs" }).click();
    const history = page.getByRole("table", { name: /^Test runs/ });
    await expect.poll(() => history.getByRole("row").count()).toBe(3);
    expect(await history.getByRole("row", { name: new RegExp(`^Run ${runId} 1 the suite 1 failed 1 of 2 50%`) }).count()).toBe(1);

    // A flaky result (a scenario passing one call of two) is named with the expectation that wavered. The run's
    // own answer is reshaped in the browser: offline test calls are deterministic, so none is flaky by itself.
    const real = await api("GET", `/workflow/${agent.id}/tests/runs/${runId - 1}`);
    const s = real.scenarios[0];
    s.runs[1].passed = false;
    s.runs[1].verdicts[0].passed = false;
    Object.assign(s, { passed: 1, pass_rate: 0.5, status: "flaky" });
    s.expectations[0].passed = 1;
    Object.assign(real, { status: "failed", summary: { ...real.summary, status: "failed", passed: 0, flaky: 1, pass_rate: 0.5 } });
    await page.route(`**/api/v1/workflow/${agent.id}/tests/runs/${runId - 1}`, (route) => route.fulfill({ json: real }));
    await page.goto(`${origin}/dashboard/#/agents/${agent.id}/tests/runs/${runId - 1}`);
    await expect
      .poll(() => page.locator("#flaky").textContent())
      .toBe(`Flakyhappy path: passed 1 of 2 calls; sometimes failing: ${s.expectations[0].expectation}`);
    expect(await summary.textContent()).toBe("Failed: 0 of 1 scenario passed (1 flaky); 50% of the test calls passed.");

    const host = new URL(origin).host;
    // Nothing left the Worker's origin (the call page plays its recording from memory: a blob: URL of this origin).
    expect([...requested].filter((u) => !(u.startsWith("data:") || u.startsWith(`blob:${origin}/`) || new URL(u).host === host))).toEqual([]);
    expect(consoleErrors.filter((m) => !m.includes("status of 422"))).toEqual([]);
  });
});
