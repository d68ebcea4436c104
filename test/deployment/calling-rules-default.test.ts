// The calling rules a deployment applies to organizations that set none, as wrangler.jsonc deploys it: on (the
// recipient's local hours 08:00–21:00, at most 3 dials a number in 24 hours). The test pool turns them off for every
// other test (CALLING_RULES_DEFAULTS=off); here the Worker and the campaign's object run with the deployment's own
// vars in place of the pool's, and no organization overrides anything.
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { parse } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import config from "../../wrangler.jsonc?raw";
import worker from "../../src/index";
import { clock } from "../../src/lib/clock";
import { createOrg } from "../helpers";
import { type CampaignStub, type FakeCarrier, T0, advance, makeCampaign, phone, resetWorld, sqlOf, tick } from "../campaigns/engine-harness";
import { unwrap } from "../../src/campaigns/errors";

const vars = (parse(config) as { vars: Record<string, string> }).vars;
/** The pool's bindings with the deployment's vars in place of the pool's overrides (those wrangler.jsonc lacks are unset). */
const DEPLOYED = (() => {
  const e: Record<string, unknown> = { ...env, ...vars, PUBLIC_BASE_URL: "https://dial.example.com", LOCAL_DEV: "" };
  if (!("CALLING_RULES_DEFAULTS" in vars)) delete e.CALLING_RULES_DEFAULTS;
  return e as unknown as Env;
})();

/** The campaign's object as deployed: the same object, with the deployment's bindings (before its first round reads the rules). */
async function asDeployed(stub: CampaignStub): Promise<void> {
  await runInDurableObject(stub, (instance) => {
    // The engine reads the rules' defaults from the env its rules cache was built with (engine/rules-cache.ts).
    const o = instance as unknown as { env: Env; dispatch: { rules: { env: Env } } };
    o.env = DEPLOYED;
    o.dispatch.rules.env = DEPLOYED;
  });
}

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});
afterEach(() => clock.set(null));

describe("the deployment's default calling rules", () => {
  it("the organization's calling policy shows them in force: local hours 08:00–21:00 and the attempt cap, on", async () => {
    const org = await createOrg();
    const res = await worker.fetch(
      new Request("https://dial.example.com/api/v1/organizations/calling-policy", { headers: { "X-API-Key": org.key } }),
      DEPLOYED,
      createExecutionContext(),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { local_hours: unknown; attempt_cap: unknown; effective: Record<string, unknown> };
    expect(body).toMatchObject({ local_hours: null, attempt_cap: null });
    expect(body.effective).toMatchObject({
      local_hours: { enabled: true, start: "08:00", end: "21:00" },
      attempt_cap: { enabled: true, max_attempts: 3, window_hours: 24 },
    });
  });

  it("a campaign holds a contact outside its local hours and dials it when they open", async () => {
    // T0 is 10:00 UTC on a Monday: 02:00 in San Francisco (+1 415), whose hours open at 16:00 UTC.
    const org = await createOrg();
    const { id, stub } = await makeCampaign({ contacts: 1, orgId: org.id, settings: { rate_limit: 10, max_concurrency: 1 } });
    await asDeployed(stub);
    await stub.start();
    await tick(stub);
    await advance(60_000, stub);
    expect(carrier.dialsOf(id, phone(0))).toEqual([]);
    const progress = unwrap(await stub.progress());
    expect(progress.calling_rules).toMatchObject({ held_local_hours: 1 });
    expect(unwrap(await stub.snapshot()).logs.map((l) => l.event)).toContain("local_hours_wait");

    const opens = Date.parse("2030-01-07T16:00:00Z");
    await advance(opens - 1000 - clock.now(), stub);
    expect(carrier.dialsOf(id, phone(0))).toEqual([]);
    await advance(2000, stub);
    const dials = carrier.dialsOf(id, phone(0));
    expect(dials).toHaveLength(1);
    expect(dials[0].at).toBeGreaterThanOrEqual(opens);
    expect(dials[0].at).toBeLessThan(opens + 2000);
  });

  it("the attempt cap holds a fourth dial to one number within 24 hours", async () => {
    // Inside the hours (17:00 UTC = 09:00 in San Francisco): three busy calls and their retries, then a wait.
    clock.set(T0 + 7 * 3600_000);
    const org = await createOrg();
    const retry = { enabled: true, max_retries: 5, retry_delay_seconds: 60, retry_on_busy: true };
    const { id, stub } = await makeCampaign({ contacts: 1, orgId: org.id, settings: { rate_limit: 10, max_concurrency: 1, retry_config: retry } });
    await asDeployed(stub);
    await stub.start();
    for (let i = 0; i < 4; i++) {
      await advance(61_000, stub);
      for (const s of carrier.open(id)) await carrier.report(s, "busy");
    }
    expect(carrier.dialsOf(id, phone(0)).map((s) => s.req.attempt)).toEqual([1, 2, 3]);
    const skipped = unwrap(await stub.snapshot()).logs.filter((l) => l.event === "dial_skipped");
    expect(skipped[0]).toMatchObject({ details: { reason: "attempt_cap", phone_number: phone(0) } });
    expect(await sqlOf(stub, "SELECT status, attempts FROM contacts")).toEqual([{ status: "waiting", attempts: 3 }]);
  });
});
