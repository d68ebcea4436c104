// Ids in paths: decimal digits only. Hex, exponents, decimals, signs and spaces never alias a real id,
// anything that is not an id is the resource's 404 (not a 422 "expected number"), and ids past 2^53 are 404, not 500.
import { describe, expect, it } from "vitest";
import { call, createOrg } from "./helpers";
import { createCampaign, goodCsv, upload, world } from "./campaigns/support";

const KEYS = "/api/v1/organizations/api-keys";

/** Spellings of `id` that JavaScript's Number() would accept, plus junk and out-of-range values. */
const aliases = (id: number) => [`0x${id.toString(16)}`, `${id}e0`, `${id}.0`, `+${id}`, `%20${id}`, `${id}%20`, `0b${id.toString(2)}`, `${id / 10}e1`];
const JUNK = ["abc", "NaN", "-1", "0", "1.5", "Infinity", "9007199254740992", "99999999999999999999", "18446744073709551616", "1%00"];

describe("ids in paths", () => {
  it("another spelling of a real agent id is 404, the plain id works", async () => {
    const w = await world();
    const id = w.workflowId;
    expect((await call("GET", `/api/v1/workflow/fetch/${id}`, { key: w.key })).status).toBe(200);
    for (const bad of [...aliases(id), ...JUNK]) {
      const res = await call("GET", `/api/v1/workflow/fetch/${bad}`, { key: w.key });
      expect(res.status, bad).toBe(404);
      expect(res.json, bad).toEqual({ detail: "Workflow not found" });
    }
  });

  it("DELETE /organizations/api-keys/0x10 does not revoke key 16: a hex id revokes nothing", async () => {
    const org = await createOrg();
    const made = await call("POST", KEYS, { key: org.key, body: { name: "victim" } });
    expect(made.status).toBe(200);
    const id = made.json.id as number;
    for (const bad of aliases(id)) {
      const res = await call("DELETE", `${KEYS}/${bad}`, { key: org.key });
      expect(res.status, bad).toBe(404);
      expect(res.json).toEqual({ detail: "API key not found" });
    }
    // Still valid.
    expect((await call("GET", KEYS, { key: made.json.key })).status).toBe(200);
  });

  it("every operation with an id in its path answers a malformed id with 404 and a detail string", async () => {
    const w = await world();
    const key = await upload(w, goodCsv(1));
    const campaign = await createCampaign(w, { source_url: key });
    expect(campaign.status, campaign.text).toBe(200);
    const doc = (await call("GET", "/api/v1/openapi.json")).json;
    const failures: string[] = [];
    let checked = 0;
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        const ids = (op.parameters ?? []).filter((p: any) => p.in === "path" && p.schema?.type === "integer").map((p: any) => p.name as string);
        if (!ids.length) continue;
        for (const target of ids) {
          for (const bad of ["0x1", "1e0", "+1", "abc", "99999999999999999999"]) {
            const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
              name === target ? bad : name === "token" ? "t" : name === "provider" ? "twilio" : "1",
            );
            const res = await call(method.toUpperCase(), url, { key: w.key, body: method === "get" || method === "delete" ? undefined : {} });
            checked++;
            if (res.status !== 404 || typeof res.json?.detail !== "string")
              failures.push(`${method.toUpperCase()} ${url} -> ${res.status} ${res.text.slice(0, 120)}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(failures).toEqual([]);
  });

  it("the document gives the id's form: an integer from 1 to 2^53 - 1", async () => {
    const doc = (await call("GET", "/api/v1/openapi.json")).json;
    const param = doc.paths["/api/v1/campaign/{campaign_id}"].get.parameters.find((p: any) => p.name === "campaign_id");
    expect(param.schema).toMatchObject({ type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  });
});
