// What the ARI integration tests share: an organization with a configuration for the real Asterisk of
// ../shared/tools/peers, an agent, a call through the public API, and waiting for the run's final status.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call, createOrg, type Org } from "../helpers";

export const ARI = process.env.EDGEDIAL_ARI_ENDPOINT ?? "http://127.0.0.1:8088";
export const ARI_USER = "tester";
export const ARI_PASSWORD = "testpass";

export type AriSetup = { org: Org; agentUuid: string; agentId: number; app: string };

/** `app`: the Stasis application (default a unique one; the peers' dialplan sends calls into `dialer`). */
export async function setupAri(app = `edgedial-it-${crypto.randomUUID().slice(0, 8)}`): Promise<AriSetup> {
  const org = await createOrg();
  const u = new URL(ARI);
  u.username = ARI_USER; // the ari.conf user differs from the (unique) app name
  // The PBX is on loopback: the organization must allow private PBX addresses (SSRF guard).
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } });
  expect(policy.status, policy.text).toBe(200);
  const cfg = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: {
      name: "asterisk",
      is_default_outbound: true,
      config: {
        provider: "ari",
        ari_endpoint: u.toString().replace(/\/$/, ""),
        app_name: app,
        app_password: ARI_PASSWORD,
        // The dialplan targets the tests dial whole (any other dial string is refused: docs/carriers.md).
        allowed_dial_strings: ["Local/{number}@default", "PJSIP/{number}@sipp", "PJSIP/sipp/sip:{number}@127.0.0.1:5071"],
      },
    },
  });
  expect(cfg.status, cfg.text).toBe(200);
  const agent = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: {
      name: "it",
      workflow_definition: {
        nodes: [
          { id: "s", type: "startCall", data: { prompt: "hi", greeting: "Hello" } },
          { id: "e", type: "endCall", data: { prompt: "bye" } },
        ],
        edges: [{ id: "se", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
      },
    },
  });
  expect(agent.status, agent.text).toBe(200);
  return { org, agentUuid: agent.json.workflow_uuid, agentId: agent.json.id, app };
}

export async function dial(s: AriSetup, number: string): Promise<number> {
  const res = await call("POST", `/api/v1/public/agent/${s.agentUuid}`, { key: s.org.key, body: { phone_number: number } });
  expect(res.status, res.text).toBe(200);
  return res.json.workflow_run_id;
}

export async function finalStatus(runId: number, ms: number): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const run = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, runId)).get();
    if (run && ["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"].includes(run.status)) return run.status;
    if (Date.now() > until) return run?.status ?? "missing";
    await new Promise((r) => setTimeout(r, 100));
  }
}
