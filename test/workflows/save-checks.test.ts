// What an agent save refuses, as the documents say (issue 39, item 8): HTTP tools sent under workflow_configurations
// (where they would be kept as plain settings with their header secret in clear), a webhook node's url at an address
// the service must not call, a tool's or a webhook node's url at this service itself, a tool at a special-use name,
// and an empty page cursor. Each a 422 at the field, nothing stored, no secret echoed.
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createOrg, type Org } from "../helpers";
import { minimalDefinition } from "./fixtures";

let org: Org;
beforeAll(async () => {
  org = await createOrg();
});

const SECRET = "Bearer sk-never-echoed-5c1e";
const tool = (url: string) => ({ name: "lookup", url, method: "POST", headers: { Authorization: SECRET } });
const withHook = (url: string) => {
  const d = minimalDefinition();
  d.nodes.push({ id: "hook", type: "webhook", data: { url } });
  return d;
};
const create = (body: Record<string, unknown>) =>
  call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "checks", workflow_definition: minimalDefinition(), ...body } });
const count = async () => (await env.DB.prepare("SELECT count(*) AS n FROM workflows WHERE org_id = ?").bind(org.id).first<{ n: number }>())!.n;

describe("an agent save refuses what the API must not keep", () => {
  it("HTTP tools under workflow_configurations: a 422 pointing at workflow_definition.tools, the header not echoed", async () => {
    const before = await count();
    const res = await create({ workflow_configurations: { tools: [tool("https://api.example.com/x")] } });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "workflow_configurations", "tools"], type: "value_error" })]);
    expect(res.json.detail[0].msg).toMatch(/workflow_definition\.tools/);
    expect(res.text).not.toContain("sk-never-echoed");
    expect(await count()).toBe(before);

    // Where the docs put them, they are tools: offered, validated, the header sealed and shown masked.
    const ok = await create({ workflow_definition: { ...minimalDefinition(), tools: [tool("https://api.example.com/x")] } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).not.toContain("sk-never-echoed");
    expect(ok.json.workflow_definition.tools[0].headers.Authorization).not.toBe(SECRET);
    const put = await call("PUT", `/api/v1/workflow/${ok.json.id}`, { key: org.key, body: { workflow_configurations: { tools: [] } } });
    expect(put.status).toBe(422);
    expect(put.json.detail[0].loc).toEqual(["body", "workflow_configurations", "tools"]);
  });

  it("a webhook node at a loopback, private or metadata address is refused at save, as the docs say; a public one saves", async () => {
    const before = await count();
    for (const url of [
      "http://127.0.0.1:8080/x",
      "http://localhost/hook",
      "http://[::1]/",
      "http://10.0.0.5/x",
      "http://169.254.169.254/",
      "ftp://example.com/x",
    ]) {
      const res = await create({ workflow_definition: withHook(url) });
      expect(res.status, url).toBe(422);
      expect(res.json.detail, url).toEqual([expect.objectContaining({ loc: ["body", "workflow_definition", "nodes", 2, "data", "url"] })]);
    }
    expect(await count()).toBe(before);
    const made = await create({ workflow_definition: withHook("https://hooks.example.com/crm") });
    expect(made.status, made.text).toBe(200);
    // An update is checked the same way, and the stored version stays.
    const bad = await call("PUT", `/api/v1/workflow/${made.json.id}`, { key: org.key, body: { workflow_definition: withHook("http://127.0.0.1/x") } });
    expect(bad.status).toBe(422);
    const now = await call("GET", `/api/v1/workflow/fetch/${made.json.id}`, { key: org.key });
    expect(now.json.version_number).toBe(1);
  });

  it("a tool or a webhook node at this service itself (PUBLIC_BASE_URL or the request's origin) is refused", async () => {
    // The suites' PUBLIC_BASE_URL is a .test name, which a tool may not use anyway; a webhook node names it alone.
    const own = `${new URL(env.PUBLIC_BASE_URL).origin}/api/v1/organizations/api-keys`;
    const t = await create({ workflow_definition: { ...minimalDefinition(), tools: [tool(own)] } });
    expect(t.status, t.text).toBe(422);
    expect(t.json.detail[0].loc).toEqual(["body", "workflow_definition", "tools", 0, "url"]);
    const h = await create({ workflow_definition: withHook(own) });
    expect(h.status).toBe(422);
    expect(h.json.detail[0]).toMatchObject({
      loc: ["body", "workflow_definition", "nodes", 2, "data", "url"],
      msg: expect.stringMatching(/this service itself/),
    });

    // Reached at another name (a custom domain beside PUBLIC_BASE_URL): the request's own origin is refused too.
    const viaOtherName = (url: string) =>
      exports.default.fetch(
        new Request("https://agents.customer-edge.com/api/v1/workflow/create", {
          method: "POST",
          headers: { "X-API-Key": org.key, "Content-Type": "application/json" },
          body: JSON.stringify({ name: "self", workflow_definition: { ...minimalDefinition(), tools: [tool(url)] } }),
        }),
      );
    const self = await viaOtherName("https://agents.customer-edge.com/api/v1/workflow/fetch");
    expect(self.status).toBe(422);
    expect(((await self.json()) as any).detail[0]).toMatchObject({
      loc: ["body", "workflow_definition", "tools", 0, "url"],
      msg: "Must not point at this service itself (https://agents.customer-edge.com)",
    });
    expect((await viaOtherName("https://api.customer-edge.com/orders")).status).toBe(200);
  });

  it("a tool at a special-use name (RFC 6761) is refused at save", async () => {
    for (const url of ["https://api.test/x", "https://shop.example/x", "https://x.invalid/"]) {
      const res = await create({ workflow_definition: { ...minimalDefinition(), tools: [tool(url)] } });
      expect(res.status, url).toBe(422);
      expect(res.json.detail[0].loc, url).toEqual(["body", "workflow_definition", "tools", 0, "url"]);
    }
  });

  it("an empty cursor is a 422 at query.cursor, not the first page", async () => {
    for (const path of ["/api/v1/workflow/fetch", "/api/v1/organizations/api-keys", "/api/v1/organizations/suppressions"]) {
      const res = await call("GET", `${path}?cursor=`, { key: org.key });
      expect(res.status, path).toBe(422);
      expect(res.json.detail[0].loc, path).toEqual(["query", "cursor"]);
    }
    expect((await call("GET", "/api/v1/workflow/fetch", { key: org.key })).status).toBe(200);
  });
});
