// ARI against a real Asterisk 22 (../shared/tools/peers): real originates to its dialplan targets and to a
// sipp UAS over PJSIP, with outcomes arriving through the real events WebSocket held by the ARI object.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call, createOrg, type Org } from "../helpers";

const ARI = process.env.EDGEDIAL_ARI_ENDPOINT ?? "http://127.0.0.1:8088";
const ARI_USER = "tester";
const ARI_PASSWORD = "testpass";

async function setupAri(): Promise<{ org: Org; agentUuid: string }> {
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
        app_name: `edgedial-it-${crypto.randomUUID().slice(0, 8)}`,
        app_password: ARI_PASSWORD,
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
  return { org, agentUuid: agent.json.workflow_uuid };
}

async function dial(s: { org: Org; agentUuid: string }, number: string): Promise<number> {
  const res = await call("POST", `/api/v1/public/agent/${s.agentUuid}`, { key: s.org.key, body: { phone_number: number } });
  expect(res.status, res.text).toBe(200);
  return res.json.workflow_run_id;
}

async function finalStatus(runId: number, ms: number): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const run = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, runId)).get();
    if (run && ["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"].includes(run.status)) return run.status;
    if (Date.now() > until) return run?.status ?? "missing";
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("ARI against Asterisk", () => {
  it("answered: Local/100@default answers, hangs up after 3 s -> completed", async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/100@default");
    expect(await finalStatus(runId, 15_000)).toBe("completed");
  });

  it("busy: Local/300@default -> busy", async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/300@default");
    expect(await finalStatus(runId, 15_000)).toBe("busy");
  });

  it("no answer: Local/200@default rings out -> no_answer", { timeout: 60_000 }, async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/200@default");
    expect(await finalStatus(runId, 50_000)).toBe("no_answer");
  });

  it.runIf(inject("sipp"))("PJSIP to a sipp UAS answers -> completed", { timeout: 30_000 }, async () => {
    const s = await setupAri();
    const runId = await dial(s, "PJSIP/100@sipp");
    expect(await finalStatus(runId, 25_000)).toBe("completed");
  });
});
