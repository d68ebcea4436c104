// An organization with an agent and a ready ari configuration made over HTTP, and a draft campaign as create
// leaves it (the D1 summary row plus a filled object), for the tests that drive campaign routes.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/campaigns/settings";
import { call, createOrg, type Org } from "../helpers";
import { campaignStub, contacts } from "./engine-harness";

export type World = { org: Org; workflowId: number; configId: number };

export async function setupOrg(): Promise<World> {
  const org = await createOrg();
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: {
      name: `agent-${crypto.randomUUID()}`,
      workflow_definition: {
        nodes: [
          { id: "s", type: "startCall", data: { prompt: "Say hi" } },
          { id: "e", type: "endCall", data: { prompt: "Say bye" } },
        ],
        edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
      },
    },
  });
  expect(wf.status, wf.text).toBe(200);
  const cfg = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: {
      name: "pbx",
      is_default_outbound: true,
      config: { provider: "ari", ari_endpoint: "http://pbx.test:8088", app_name: "edgedial", app_password: "secret-pw" },
    },
  });
  expect(cfg.status, cfg.text).toBe(200);
  expect(cfg.json.setup_checklist.ready_for_outbound).toBe(true);
  return { org, workflowId: wf.json.id, configId: cfg.json.id };
}

/** A campaign's D1 row and its object holding `n` contacts, imported and (unless `finish` is false) finished. */
export async function seedCampaign(o: World, opts: { n?: number; name?: string; createdAt?: string; finish?: boolean } = {}) {
  const { n = 3, name = "route test", finish = true } = opts;
  const row = await env.DB.prepare(
    "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings) VALUES (?, ?, ?, ?, 'draft', 'campaigns/x.csv', ?) RETURNING id",
  )
    .bind(o.org.id, name, o.workflowId, o.configId, JSON.stringify(DEFAULT_SETTINGS))
    .first<{ id: number }>();
  const id = row!.id;
  if (opts.createdAt) await env.DB.prepare("UPDATE campaigns SET created_at = ? WHERE id = ?").bind(opts.createdAt, id).run();
  const stub = campaignStub(id);
  await stub.initialize({
    campaignId: id,
    orgId: o.org.id,
    name,
    workflowId: o.workflowId,
    telephonyConfigurationId: o.configId,
    sourceId: "campaigns/x.csv",
    settings: { ...DEFAULT_SETTINGS, rate_limit: 50 },
  });
  await stub.importContacts(contacts(n));
  if (finish) await stub.finishImport();
  return { id, stub };
}

export const draftCampaign = (o: World, n = 3, name = "route test") => seedCampaign(o, { n, name });
