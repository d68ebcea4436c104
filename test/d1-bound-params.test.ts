// D1 binds at most 100 parameters per statement (Durable Object SQLite the same). Every query whose list grows with
// the input sends it as one JSON parameter (json_each); each is exercised here at and past 100 items.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createOrg } from "./helpers";
import { minimalDefinition } from "./workflows/fixtures";
import { makeCampaign, resetWorld, tick, type FakeCarrier } from "./campaigns/engine-harness";
import { unwrap } from "../src/campaigns/errors";

/** `n` ari configurations written straight to D1 (fast), each with one active number. */
async function seedConfigs(orgId: number, n: number) {
  const stmts = [];
  for (let i = 0; i < n; i++) {
    stmts.push(
      env.DB.prepare(`INSERT INTO telephony_configs (org_id, name, provider, config, secrets) VALUES (?, ?, 'ari', ?, '{}')`).bind(
        orgId,
        `cfg-${i}`,
        JSON.stringify({ ari_endpoint: "http://pbx.test:8088", app_name: "edgedial" }),
      ),
    );
  }
  await env.DB.batch(stmts);
  await env.DB.prepare(
    `INSERT INTO phone_numbers (org_id, config_id, address) SELECT org_id, id, '+1415555' || printf('%04d', id % 10000) FROM telephony_configs WHERE org_id = ?`,
  )
    .bind(orgId)
    .run();
}

describe("D1's 100 bound parameters", () => {
  it("lists 100 configurations with limit=100 (and pages past them), each with its numbers", async () => {
    const org = await createOrg();
    await seedConfigs(org.id, 101);
    const page = await call("GET", "/api/v1/organizations/telephony-configs?limit=100", { key: org.key });
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.json.items).toHaveLength(100);
    expect(page.json.items.every((c: { credentials: { from_numbers: string[] } }) => c.credentials.from_numbers.length === 1)).toBe(true);
    const rest = await call("GET", `/api/v1/organizations/telephony-configs?limit=100&cursor=${encodeURIComponent(page.json.next_cursor)}`, { key: org.key });
    expect(rest.status).toBe(200);
    expect(rest.json.items).toHaveLength(1);
    expect(rest.json.next_cursor).toBeNull();
  });

  it("lists 100 agents with limit=100 (run counts per agent in one statement)", async () => {
    const org = await createOrg();
    const stmts = [];
    for (let i = 0; i < 101; i++) {
      stmts.push(env.DB.prepare(`INSERT INTO workflows (org_id, uuid, name) VALUES (?, ?, ?)`).bind(org.id, crypto.randomUUID(), `agent-${i}`));
    }
    await env.DB.batch(stmts);
    const page = await call("GET", "/api/v1/workflow/fetch?limit=100", { key: org.key });
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.json.items).toHaveLength(100);
  });

  it("saves an agent with 150 API trigger paths (claims and releases in one statement each)", async () => {
    const org = await createOrg();
    const def = minimalDefinition();
    for (let i = 0; i < 150; i++) def.nodes.push({ id: `t${i}`, type: "apiTrigger", data: { trigger_path: `p-${i}-${crypto.randomUUID()}` } });
    const made = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "many triggers", workflow_definition: def } });
    expect(made.status, made.text.slice(0, 300)).toBe(200);
    const n = await env.DB.prepare(`SELECT count(*) AS n FROM workflow_triggers WHERE workflow_id = ?`).bind(made.json.id).first<{ n: number }>();
    expect(n!.n).toBe(150);
    def.nodes = def.nodes.filter((x) => x.type !== "apiTrigger" || Number(x.id.slice(1)) % 2 === 0);
    const saved = await call("PUT", `/api/v1/workflow/${made.json.id}`, { key: org.key, body: { workflow_definition: def } });
    expect(saved.status, saved.text.slice(0, 300)).toBe(200);
    const left = await env.DB.prepare(`SELECT count(*) AS n FROM workflow_triggers WHERE workflow_id = ?`).bind(made.json.id).first<{ n: number }>();
    expect(left!.n).toBe(75);
  });

  it("a redial plan asked for 150 outcomes (repeats included) binds them as one parameter", async () => {
    const carrier: FakeCarrier = resetWorld();
    const { id, stub } = await makeCampaign({ contacts: 2, settings: { retry_config: { enabled: false }, rate_limit: 50 }, start: true });
    await tick(stub);
    for (const s of carrier.open(id)) await carrier.report(s, "busy");
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
    const outcomes = Array.from({ length: 150 }, (_, i) => (i % 2 ? "busy" : "no_answer"));
    expect(unwrap(await stub.redialPlan(outcomes)).count).toBe(2);
    expect(unwrap(await stub.redialContacts(outcomes, 0, 10)).contacts).toHaveLength(2);
  });
});
