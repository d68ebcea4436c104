// The README tour's agent (no model named: local development's offline model runs it, as `npm run dev` does) with its
// starter suite (test/fixtures/tour-suite.json, the scenarios the tour adds), run offline over Twilio's and Vonage's
// protocols: it passes. Offline as `npm run dev` is (OFFLINE_ENGINES: the pool's AI binding would be the agent's
// Workers AI model otherwise).
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import tour from "../fixtures/tour-suite.json";
import { call, createOrg } from "../helpers";
import { runTests } from "./run-helpers";

const e = env as { OFFLINE_ENGINES?: string };
const offline = e.OFFLINE_ENGINES;
beforeEach(() => {
  e.OFFLINE_ENGINES = "true";
});
afterEach(() => {
  e.OFFLINE_ENGINES = offline;
});

describe("the README tour's starter suite", () => {
  it("passes on the tour's agent, which names no model", async () => {
    const org = await createOrg();
    const made = await call("POST", "/api/v1/workflow/create", { key: org.key, body: tour.agent });
    expect(made.status, made.text).toBe(200);
    for (const s of tour.scenarios)
      expect((await call("POST", `/api/v1/workflow/${made.json.id}/tests/scenarios`, { key: org.key, body: s })).status).toBe(200);
    const run = await runTests(org.key, made.json.id, { repetitions: 1 });
    const failed = run.scenarios.flatMap((s: any) =>
      s.runs.flatMap((r: any) => [
        ...(r.error ? [r.error] : []),
        ...r.verdicts.filter((v: any) => !v.passed).map((v: any) => `${s.name}: ${v.expectation}: ${v.evidence}`),
      ]),
    );
    expect(failed).toEqual([]);
    expect(run).toMatchObject({ status: "passed", summary: { scenarios: 2, passed: 2 } });
    expect(run.scenarios.flatMap((s: any) => s.runs.map((r: any) => r.agent_model))).toEqual(["offline", "offline"]);
    // The offline model walked the graph from the caller's words: it asked about the seats.
    expect(run.scenarios[0].runs[0].transcript.map((t: any) => t.text).join(" ")).toMatch(/seats/i);
  }, 120_000);
});
