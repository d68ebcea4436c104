// Organization isolation and "no 500 for a client's mistake", swept across the route families.
import { describe, it, expect } from "vitest";
import { call, createOrg } from "../helpers";
import { setup, startCall, CALLEE, CONTEXT } from "../calls/support";
import { upload, goodCsv } from "../campaigns/support";

describe("isolation and odd inputs", () => {
  it("another organization's ids are 404 everywhere, and odd ids, bodies, content types and queries are never a 500", async () => {
    const a = await setup("twilio");
    const b = await createOrg();
    const runId = await startCall(a);
    const key = await upload(a.org, goodCsv(3));
    const camp = await call("POST", "/api/v1/campaign/create", { key: a.org.key, body: { name: "c1", workflow_id: a.agent.id, source_url: key } });
    expect(camp.status, camp.text).toBe(200);
    const cid = camp.json?.id;
    const nums = await call("GET", `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers`, { key: a.org.key });
    const nid = nums.json.items[0].id;
    const reqs: [string, string, any?][] = [
      ["GET", `/api/v1/organizations/telephony-configs/${a.configId}`],
      ["PUT", `/api/v1/organizations/telephony-configs/${a.configId}`, { name: "x" }],
      ["DELETE", `/api/v1/organizations/telephony-configs/${a.configId}`],
      ["GET", `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers`],
      ["POST", `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers`, { address: "+14155550199" }],
      ["PUT", `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers/${nid}`, { label: "x" }],
      ["DELETE", `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers/${nid}`],
      ["GET", `/api/v1/workflow/fetch/${a.agent.id}`],
      ["PUT", `/api/v1/workflow/${a.agent.id}`, { name: "x" }],
      ["PUT", `/api/v1/workflow/${a.agent.id}/status`, { status: "archived" }],
      ["POST", `/api/v1/workflow/${a.agent.id}/validate`, {}],
      ["GET", `/api/v1/workflow/${a.agent.id}/versions`],
      ["GET", `/api/v1/workflow/${a.agent.id}/versions/1`],
      ["GET", `/api/v1/workflow/${a.agent.id}/runs`],
      ["GET", `/api/v1/workflow/${a.agent.id}/runs/${runId}`],
      ["POST", `/api/v1/public/agent/${a.agent.workflow_uuid}`, { phone_number: CALLEE, initial_context: CONTEXT }],
      ["POST", `/api/v1/public/agent/workflow/${a.agent.workflow_uuid}`, { phone_number: CALLEE, initial_context: CONTEXT }],
      ["POST", `/api/v1/public/agent/${a.agent.workflow_definition.nodes[2].data.trigger_path}`, { phone_number: CALLEE, initial_context: CONTEXT }],
      ["GET", `/api/v1/campaign/${cid}`],
      ["PATCH", `/api/v1/campaign/${cid}`, { name: "zz" }],
      ["POST", `/api/v1/campaign/${cid}/start`],
      ["POST", `/api/v1/campaign/${cid}/pause`],
      ["POST", `/api/v1/campaign/${cid}/resume`],
      ["POST", `/api/v1/campaign/${cid}/cancel`],
      ["POST", `/api/v1/campaign/${cid}/redial`, {}],
      ["GET", `/api/v1/campaign/${cid}/progress`],
      ["GET", `/api/v1/campaign/${cid}/logs`],
      ["GET", `/api/v1/campaign/${cid}/runs`],
      ["POST", `/api/v1/campaign/create`, { name: "c2", workflow_id: a.agent.id, source_url: key }],
      ["DELETE", `/api/v1/organizations/api-keys/1`],
    ];
    for (const [m, p, body] of reqs) {
      const r = await call(m, p, { key: b.key, body });
      expect(r.status, `${m} ${p}: ${r.text}`).toBe(404);
      expect(r.json.detail).toMatch(/ not found$/);
    }
    // B with own workflow using A's file/config
    const bs = await setup("twilio", {}, b);
    for (const body of [
      { name: "c3", workflow_id: bs.agent.id, source_url: key },
      { name: "c4", workflow_id: bs.agent.id, source_url: key.replace(`campaigns/${a.org.id}/`, `campaigns/${b.id}/`) },
      { name: "c5", workflow_id: bs.agent.id, source_url: `campaigns/${b.id}/../${a.org.id}/x.csv` },
      { name: "c6", workflow_id: bs.agent.id, source_url: key, telephony_configuration_id: a.configId },
    ]) {
      const r = await call("POST", "/api/v1/campaign/create", { key: b.key, body });
      expect([404, 422], r.text).toContain(r.status);
      expect(r.text).not.toContain('"id":');
    }
    const r6 = await call("POST", `/api/v1/public/agent/workflow/${bs.agent.workflow_uuid}`, {
      key: b.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: a.configId },
    });
    expect(r6.status, r6.text).toBe(404);

    // odd inputs
    const odd = ["1e20", "9007199254740993", "-1", "0", "abc", "1.5", "%20", "99999999999999999999999999"];
    const templ = [
      "/api/v1/organizations/telephony-configs/X",
      "/api/v1/organizations/telephony-configs/X/phone-numbers",
      "/api/v1/workflow/fetch/X",
      "/api/v1/workflow/X/runs",
      "/api/v1/workflow/X/runs/X",
      "/api/v1/workflow/X/versions/X",
      "/api/v1/campaign/X",
      "/api/v1/campaign/X/progress",
      "/api/v1/campaign/X/logs",
      "/api/v1/public/agent/X",
      "/api/v1/public/agent/workflow/X",
    ];
    for (const t of templ)
      for (const o of odd) {
        const r = await call(t.includes("public") ? "POST" : "GET", t.replaceAll("X", o), {
          key: a.org.key,
          body: t.includes("public") ? { phone_number: CALLEE, initial_context: CONTEXT } : undefined,
        });
        expect(r.status, `${t} ${o}: ${r.text}`).toBeLessThan(500);
        expect(r.status, `${t} ${o}`).not.toBe(200);
      }
    const bodies: any[] = [
      [],
      [1],
      "str",
      1e20,
      null,
      { name: "x".repeat(100000) },
      // biome-ignore lint/correctness/noPrecisionLoss: an id past 2^53 is the point of the probe
      { workflow_id: 9007199254740993 },
      { workflow_id: -1, name: "a", source_url: "x" },
      { workflow_id: 1e20, name: "a", source_url: key },
      { telephony_configuration_id: 1e20, phone_number: CALLEE },
      { phone_number: CALLEE, initial_context: [] },
      { phone_number: "x".repeat(100000) },
    ];
    const posts = [
      "/api/v1/organizations/telephony-configs",
      `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers`,
      "/api/v1/workflow/create",
      `/api/v1/workflow/${a.agent.id}`,
      `/api/v1/workflow/${a.agent.id}/status`,
      `/api/v1/workflow/${a.agent.id}/validate`,
      "/api/v1/campaign/create",
      `/api/v1/campaign/${cid}`,
      `/api/v1/campaign/${cid}/redial`,
      "/api/v1/s3/presigned-upload-url",
      `/api/v1/public/agent/${a.agent.workflow_uuid}`,
      `/api/v1/public/agent/workflow/${a.agent.workflow_uuid}`,
      "/api/v1/organizations/api-keys",
      `/api/v1/organizations/telephony-configs/${a.configId}`,
      `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers/${nid}`,
    ];
    for (const p of posts) {
      const m =
        p.endsWith("create") ||
        p.includes("public") ||
        p.endsWith("validate") ||
        p.endsWith("redial") ||
        p.endsWith("url") ||
        p.endsWith("api-keys") ||
        p.endsWith("phone-numbers") ||
        p.endsWith("configs")
          ? "POST"
          : p.includes("campaign")
            ? "PATCH"
            : "PUT";
      for (const body of bodies) {
        const r = await call(m, p, { key: a.org.key, body });
        expect(r.status, `${m} ${p} ${JSON.stringify(body).slice(0, 80)}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      }
      for (const [ct, raw] of [
        ["text/plain", "{}"],
        ["application/x-www-form-urlencoded", "a=b"],
        ["application/json", "{"],
        ["application/json", ""],
        ["multipart/form-data", "x"],
      ]) {
        const r = await call(m, p, { key: a.org.key, raw, headers: { "Content-Type": ct } });
        expect(r.status, `${m} ${p} ${ct}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      }
    }
    for (const q of [
      "limit=0",
      "limit=1e20",
      "limit=abc",
      "cursor=%%%",
      "cursor=MWUyMA",
      "cursor=" + btoa("9007199254740993"),
      "cursor=" + btoa("-5"),
      "state=bogus",
    ]) {
      for (const p of [
        "/api/v1/campaign/",
        `/api/v1/campaign/${cid}/logs`,
        `/api/v1/campaign/${cid}/runs`,
        "/api/v1/workflow/fetch",
        `/api/v1/workflow/${a.agent.id}/runs`,
        "/api/v1/organizations/telephony-configs",
        "/api/v1/organizations/api-keys",
        `/api/v1/organizations/telephony-configs/${a.configId}/phone-numbers`,
        `/api/v1/workflow/${a.agent.id}/versions`,
      ]) {
        const r = await call("GET", `${p}?${q}`, { key: a.org.key });
        expect(r.status, `${p}?${q}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      }
    }
    // callbacks odd
    for (const p of [
      `/api/v1/telephony/twilio/status/1e20/${"a".repeat(64)}`,
      `/api/v1/telephony/twilio/status/9007199254740993/${"a".repeat(64)}`,
      `/api/v1/telephony/bogus/status/1/x`,
      `/api/v1/telephony/twilio/status/-1/x`,
      "/api/v1/uploads/campaigns/1/../2/x.csv?sig=a",
      "/api/v1/uploads/%2e%2e?x",
      "/api/v1/telephony/twilio/inbound",
    ]) {
      const r = await call(p.includes("uploads") ? "PUT" : "POST", p, { raw: "a=b", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
      expect(r.status, `${p}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
    }
  }, 120000);
});
