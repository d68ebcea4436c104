// A client generated from the served document (openapi-typescript types, openapi-fetch) runs the README tour over
// the Worker: a sandbox configuration and caller ID, an agent, its validation, a public call followed to its end,
// a presigned upload, a campaign created, started and read. Every JSON body it sends that the server accepts must
// pass the document's request schema (the same check test/helpers.ts `call` makes).
import { exports } from "cloudflare:workers";
import createClient from "openapi-fetch";
import { describe, expect, it } from "vitest";
import { deliverAll, eventually, play, runRow } from "../calls/support";
import { createOrg } from "../helpers";
import { documentRefuses } from "../openapi-bodies";
import type { paths } from "./edgedial-api";

const ORIGIN = "http://edgedial.test";
const servedDocument = async () => (await exports.default.fetch(new Request(`${ORIGIN}/api/v1/openapi.json`))).json<any>();

/** The Worker as the client's fetch, refusing (as a failed test) any accepted JSON body the document would refuse. */
async function checkedFetch(request: Request): Promise<Response> {
  const body = request.body ? await request.clone().text() : "";
  const res = await exports.default.fetch(request);
  if (res.ok && body && /json/i.test(request.headers.get("content-type") ?? "")) {
    const refused = await documentRefuses(request.method, request.url, JSON.parse(body), servedDocument);
    if (refused) throw new Error(`The server accepted a body its OpenAPI document refuses: ${refused}`);
  }
  return res;
}

const clientFor = (key: string) => createClient<paths>({ baseUrl: ORIGIN, fetch: checkedFetch, headers: { "X-API-Key": key } });

describe("a client generated from /api/v1/openapi.json", () => {
  it("is generated from the document the Worker serves (refresh: `npx vitest run test/api/generated-client.test.ts --update`, then `npm run api:types`)", async () => {
    await expect(`${JSON.stringify(await servedDocument(), null, 1)}\n`).toMatchFileSnapshot("./openapi.snapshot.json");
  });

  it("runs the README tour: sandbox carrier, agent, a call to its end, an upload and a campaign", async () => {
    const org = await createOrg();
    const api = clientFor(org.key);

    const health = await api.GET("/api/v1/health");
    expect(health.data?.status).toBe("ok");

    const config = await api.POST("/api/v1/organizations/telephony-configs", {
      body: { name: `Sandbox ${crypto.randomUUID()}`, is_default_outbound: true, config: { provider: "sandbox" } },
    });
    expect(config.error, JSON.stringify(config.error)).toBeUndefined();
    const configId = config.data!.id;
    const number = await api.POST("/api/v1/organizations/telephony-configs/{config_id}/phone-numbers", {
      params: { path: { config_id: configId } },
      body: { address: "+14155550100", is_default_caller_id: true },
    });
    expect(number.data?.is_default_caller_id).toBe(true);
    const ready = await api.GET("/api/v1/organizations/telephony-configs/{config_id}", { params: { path: { config_id: configId } } });
    expect(ready.data?.setup_checklist.ready_for_outbound).toBe(true);

    const agent = await api.POST("/api/v1/workflow/create", {
      body: {
        name: "Tour",
        workflow_definition: {
          nodes: [
            {
              id: "start",
              type: "startCall",
              data: { prompt: "Ask {{first_name}} about the conference.", greeting: "Hi {{first_name}}, do you have a minute?" },
            },
            { id: "ask", type: "agentNode", data: { prompt: "Ask how many seats they need." } },
            { id: "end", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
          ],
          edges: [
            { id: "e1", source: "start", target: "ask", data: { label: "interested", condition: "They have a minute" } },
            { id: "e2", source: "ask", target: "end", data: { label: "done", condition: "They answered" } },
          ],
        },
      },
    });
    expect(agent.error, JSON.stringify(agent.error)).toBeUndefined();
    const { id: agentId, workflow_uuid: agentUuid } = agent.data!;
    const valid = await api.POST("/api/v1/workflow/{workflow_id}/validate", { params: { path: { workflow_id: agentId } } });
    expect(valid.data?.is_valid).toBe(true);

    // The call by Agent UUID, as the tour places it, followed to its end through the sandbox's callbacks.
    const started = await api.POST("/api/v1/public/agent/{uuid}", {
      params: { path: { uuid: agentUuid } },
      body: { phone_number: "+14155550103", initial_context: { first_name: "Alan" } },
    });
    expect(started.error, JSON.stringify(started.error)).toBeUndefined();
    const runId = started.data!.workflow_run_id;
    const placed = await eventually(
      () => runRow(runId),
      (r) => r.providerCallId != null,
    );
    await deliverAll(await play(placed.providerCallId!, "answered"));
    const ended = await eventually(
      async () => (await api.GET("/api/v1/workflow/{workflow_id}/runs/{run_id}", { params: { path: { workflow_id: agentId, run_id: runId } } })).data,
      (r) => r?.status === "completed",
    );
    expect(ended?.status).toBe("completed");

    // The route whose body the document used to make unsatisfiable: a generated client can call it now.
    const routed = await api.POST("/api/v1/public/agent/workflow/{workflow_uuid}", {
      params: { path: { workflow_uuid: agentUuid } },
      body: { phone_number: "+14155550104", telephony_configuration_id: configId, initial_context: { first_name: "Grace" } },
    });
    expect(routed.error, JSON.stringify(routed.error)).toBeUndefined();
    expect(routed.data?.status).toBe("initiated");

    // The campaign: recipients' hours off (fictional numbers), a CSV through the presigned URL, create, start, progress.
    const policy = await api.PUT("/api/v1/organizations/calling-policy", { body: { local_hours: { enabled: false } } });
    expect(policy.error, JSON.stringify(policy.error)).toBeUndefined();
    const csv = "phone_number,first_name\n+14155550101,Ada\n+14155550102,Grace\n+14155550105,Barbara\n";
    const presigned = await api.POST("/api/v1/s3/presigned-upload-url", {
      body: { file_name: "contacts.csv", file_size: new TextEncoder().encode(csv).length, content_type: "text/csv" },
    });
    expect(presigned.error, JSON.stringify(presigned.error)).toBeUndefined();
    // The upload URL is used as given (as curl does): its key holds slashes a path template would encode.
    const put = await checkedFetch(new Request(presigned.data!.upload_url, { method: "PUT", headers: { "Content-Type": "text/csv" }, body: csv }));
    expect(put.status).toBe(200);
    const slots = [0, 1, 2, 3, 4, 5, 6].map((day_of_week) => ({ day_of_week, start_time: "00:00", end_time: "23:59" }));
    const campaign = await api.POST("/api/v1/campaign/create", {
      body: {
        name: "Tour campaign",
        workflow_id: agentId,
        source_url: presigned.data!.file_key,
        max_concurrency: 3,
        schedule_config: { timezone: "UTC", slots },
      },
    });
    expect(campaign.error, JSON.stringify(campaign.error)).toBeUndefined();
    const campaignId = campaign.data!.id;
    const start = await api.POST("/api/v1/campaign/{campaign_id}/start", { params: { path: { campaign_id: campaignId } } });
    expect(start.data?.state).toBe("running");
    const progress = await api.GET("/api/v1/campaign/{campaign_id}/progress", { params: { path: { campaign_id: campaignId } } });
    expect(progress.data).toMatchObject({ total: 3 });
  });
});
