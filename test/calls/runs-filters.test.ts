// The calls list's filters (GET /workflow/{id}/runs): status, single or campaign calls, a number's digits, a creation
// time range (any offset, compared in UTC), combined with direction and paging; a bad filter is a located 422; another organization's agent is 404.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createOrg, type Org } from "../helpers";

let org: Org;
let workflowId: number;

const DEF = {
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Hello" } },
    { id: "end", type: "endCall", data: { prompt: "Bye" } },
  ],
  edges: [{ id: "e", source: "start", target: "end" }],
};

async function run(phone: string, status: string, createdAt: string, campaignId: number | null, direction = "outbound") {
  await env.DB.prepare(
    "INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, created_at, campaign_id, direction) VALUES (?, ?, ?, 'u', ?, ?, ?, ?, ?)",
  )
    .bind(org.id, `WR-${phone.slice(-4)}`, workflowId, phone, status, createdAt, campaignId, direction)
    .run();
}

const names = async (query: string) => {
  const res = await call("GET", `/api/v1/workflow/${workflowId}/runs?${query}`, { key: org.key });
  expect(res.status, res.text).toBe(200);
  return res.json.items.map((r: { name: string }) => r.name);
};

beforeAll(async () => {
  org = await createOrg();
  const made = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "Filters", workflow_definition: DEF } });
  workflowId = made.json.id;
  await run("+14155550101", "completed", "2026-01-01T10:00:00.000Z", null);
  await run("+14155550102", "failed", "2026-01-02T10:00:00.000Z", null);
  await run("+442071234567", "completed", "2026-01-03T10:00:00.000Z", 7);
  await run("+14155550104", "completed", "2026-01-04T10:00:00.000Z", null, "inbound");
});

describe("the calls list's filters", () => {
  it("narrows by status, source, number digits and time, and combines them", async () => {
    expect(await names("status=completed")).toEqual(["WR-0104", "WR-4567", "WR-0101"]);
    expect(await names("source=single")).toEqual(["WR-0104", "WR-0102", "WR-0101"]);
    expect(await names("source=campaign")).toEqual(["WR-4567"]);
    expect(await names("phone_number=%2B4420")).toEqual(["WR-4567"]);
    expect(await names("phone_number=5550")).toEqual(["WR-0104", "WR-0102", "WR-0101"]);
    expect(await names("created_after=2026-01-02T00:00:00Z&created_before=2026-01-04T00:00:00Z")).toEqual(["WR-4567", "WR-0102"]);
    expect(await names("status=completed&source=single&direction=outbound")).toEqual(["WR-0101"]);
    // A time with an offset is that instant: 01:00+02:00 on the 2nd is 23:00Z on the 1st, 12:00-02:00 on the 3rd is 14:00Z.
    expect(await names("created_after=2026-01-02T01:00:00%2B02:00&created_before=2026-01-03T12:00:00-02:00")).toEqual(["WR-4567", "WR-0102"]);
    expect(await names("created_after=2026-01-01T11:00:00%2B02:00&created_before=2026-01-01T11:00:01%2B01:00")).toEqual(["WR-0101"]);
    // Paging keeps the filter: one a page, then the next.
    const first = await call("GET", `/api/v1/workflow/${workflowId}/runs?source=single&limit=1`, { key: org.key });
    expect(first.json.items.map((r: { name: string }) => r.name)).toEqual(["WR-0104"]);
    expect(await names(`source=single&limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`)).toEqual(["WR-0102"]);
  });

  it("refuses a bad filter with a located 422, and another organization's agent is 404", async () => {
    for (const [q, field] of [
      ["status=talking", "status"],
      ["phone_number=55%25", "phone_number"],
      ["created_after=yesterday", "created_after"],
      ["created_before=2026-01-01T00:00:00%2B2", "created_before"],
      ["cursor=", "cursor"],
      ["source=all", "source"],
    ]) {
      const res = await call("GET", `/api/v1/workflow/${workflowId}/runs?${q}`, { key: org.key });
      expect(res.status, q).toBe(422);
      expect(res.json.detail[0].loc).toEqual(["query", field]);
    }
    const other = await createOrg();
    expect((await call("GET", `/api/v1/workflow/${workflowId}/runs?status=completed`, { key: other.key })).status).toBe(404);
  });
});
