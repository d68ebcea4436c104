import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import schema31 from "../node_modules/@seriousme/openapi-schema-validator/schemas/v3.1/schema.json";
import { app, mountAllRouters } from "../src/app";
import { isPublicPath } from "../src/lib/auth";
import { call, createOrg } from "./helpers";

/**
 * The validator loads its bundled OpenAPI 3.1 JSON Schema from disk, which workerd does not have.
 * We compile that same bundled schema the way the validator does and hand it over; the validator's
 * own validate() (schema check, then its $ref check) runs unchanged.
 */
function openApiValidator(): Validator {
  const v = new Validator();
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addFormat("media-range", true);
  (v as unknown as { ajvValidators: Record<string, unknown> }).ajvValidators["3.1"] = ajv.compile(schema31);
  return v;
}

async function openapiDoc() {
  const res = await call("GET", "/api/v1/openapi.json");
  expect(res.status).toBe(200);
  return res.json;
}

describe("OpenAPI document", () => {
  // The routers are mounted when a request needs them (src/app.ts); these read the whole route table.
  beforeAll(mountAllRouters);

  it("is a valid OpenAPI 3.1 document according to an independent validator", async () => {
    const validator = openApiValidator();
    const result = await validator.validate(await openapiDoc());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("the validator really checks: a broken document and a dangling $ref are refused", async () => {
    const broken = structuredClone(await openapiDoc());
    broken.paths["/api/v1/health"].get.responses = "nope";
    expect((await openApiValidator().validate(broken)).valid).toBe(false);

    const dangling = structuredClone(await openapiDoc());
    dangling.paths["/api/v1/health"].get.responses["200"].content["application/json"].schema = { $ref: "#/components/schemas/Nope" };
    expect((await openApiValidator().validate(dangling)).valid).toBe(false);
  });

  it("lists the foundation's operations and the docs page is served", async () => {
    const doc = await openapiDoc();
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    expect(ops).toEqual(
      expect.arrayContaining([
        "GET /api/v1/health",
        "POST /api/v1/organizations/api-keys",
        "GET /api/v1/organizations/api-keys",
        "DELETE /api/v1/organizations/api-keys/{key_id}",
      ]),
    );
    const docs = await call("GET", "/api/v1/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
    expect(docs.text).toContain("/api/v1/openapi.json");
  });

  it("the docs page loads the reference from this origin only, with fonts, telemetry and Scalar's online helpers off", async () => {
    const docs = await call("GET", "/api/v1/docs");
    expect(docs.status).toBe(200);
    // The one script the page loads is the reference's build served from this Worker's static assets.
    const scripts = [...docs.text.matchAll(/<script[^>]*\bsrc="([^"]*)"|\bimport\s[^'"]*from\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]);
    expect(scripts).toEqual(["/api/v1/docs/assets/standalone.esm.js"]);
    expect(docs.text).not.toMatch(/https?:\/\//);
    for (const setting of ['"withDefaultFonts": false', '"telemetry": false', '"showDeveloperTools": "never"']) expect(docs.text).toContain(setting);
  });

  it("/ redirects to the reference", async () => {
    const res = await exports.default.fetch(new Request("http://edgedial.test/", { redirect: "manual" }));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/api/v1/docs");
  });

  it("documents every operation the app serves", async () => {
    const doc = await openapiDoc();
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`)),
    );
    const undocumentedByDesign = new Set(["GET /api/v1/openapi.json", "GET /api/v1/docs"]);
    const served = app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith("/api/v1/"))
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)(\{[^}]*\})?/g, "{$1}")}`)
      .filter((op) => !undocumentedByDesign.has(op));
    expect(served.length).toBeGreaterThan(3);
    // A path served with and without a trailing slash is one operation, documented once.
    expect(served.filter((op) => !documented.has(op) && !documented.has(`${op}/`))).toEqual([]);
  });

  it("documents a path once: no two paths differ only by a trailing slash", async () => {
    const paths = Object.keys((await openapiDoc()).paths);
    const bare = paths.map((p) => p.replace(/\/$/, ""));
    expect(bare.filter((p, i) => bare.indexOf(p) !== i)).toEqual([]);
    expect(paths).toContain("/api/v1/campaign/");
    // ... while both spellings are still served, as the same operation.
    const org = await createOrg();
    const [slash, bareList] = [await call("GET", "/api/v1/campaign/", { key: org.key }), await call("GET", "/api/v1/campaign", { key: org.key })];
    expect([slash.status, bareList.status]).toEqual([200, 200]);
    expect(bareList.json).toEqual(slash.json);
  });

  it("marks exactly the public operations as needing no API key, and says what authorizes the callbacks", async () => {
    const doc = await openapiDoc();
    expect(doc.security).toEqual([{ ApiKeyHeader: [] }, { BearerAuth: [] }]);
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[]; description?: string }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const documentedPublic = Array.isArray(op.security) && op.security.length === 0;
        // The server's own rule (lib/auth.ts) on a concrete URL of this path.
        const url = path
          .replace("{key}", "campaigns/1/x/c.csv")
          .replace("{provider}", "twilio")
          .replace(/\{[^}]+\}/g, "1");
        if (documentedPublic !== isPublicPath(url)) wrong.push(`${method.toUpperCase()} ${path}: documented ${documentedPublic ? "public" : "API key"}`);
        if (path.includes("/{token}") && !/per-run token/.test(op.description ?? "")) wrong.push(`${method.toUpperCase()} ${path}: no word on its token`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("what the document says about API keys is what the server does", async () => {
    const doc = await openapiDoc();
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const url = path
          .replace("{key}", "campaigns/1/x/c.csv")
          .replace("{provider}", "twilio")
          .replace(/\{[^}]+\}/g, "1");
        const res = await call(method.toUpperCase(), url, method === "get" || method === "delete" ? {} : { body: {} });
        const askedForKey = res.status === 401 && res.json?.detail === "Not authenticated";
        const documentedPublic = Array.isArray(op.security) && op.security.length === 0;
        if (askedForKey === documentedPublic) wrong.push(`${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
  it("documents 429 with Retry-After on every operation that takes an API key, and none on the public ones", async () => {
    const doc = await openapiDoc();
    const missing: string[] = [];
    const extra: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[]; responses: Record<string, any> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        const r = op.responses["429"];
        if (isPublic) {
          // Public call starts, and a web call's socket (it takes its slot of the concurrent-call cap when it opens).
          if (r && !path.startsWith("/api/v1/public/") && !path.startsWith("/api/v1/web-call/")) extra.push(`${method} ${path}`);
          continue;
        }
        if (!r?.headers?.["Retry-After"]?.schema || r.content?.["application/json"]?.schema?.$ref !== "#/components/schemas/Error")
          missing.push(`${method} ${path}`);
      }
    }
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    expect(doc.paths["/api/v1/organizations/api-keys"].get.responses["429"].headers["Retry-After"].schema).toMatchObject({ type: "integer", minimum: 1 });
  });

  it("states the limits the server enforces, and they hold", async () => {
    const doc = await openapiDoc();
    const org = await createOrg();
    type Param = { name: string; in: string; schema: Record<string, unknown>; description?: string };
    const param = (path: string, method: string, name: string) =>
      (doc.paths[path][method].parameters as Param[]).find((p) => p.name.toLowerCase() === name.toLowerCase())!;

    // Idempotency-Key: 1–255 visible ASCII characters, on every operation that takes it.
    for (const [path, method] of [
      ["/api/v1/campaign/create", "post"],
      ["/api/v1/public/agent/{uuid}", "post"],
      ["/api/v1/public/agent/workflow/{workflow_uuid}", "post"],
    ]) {
      const { schema } = param(path, method, "Idempotency-Key");
      expect(schema).toMatchObject({ minLength: 1, maxLength: 255 });
      const re = new RegExp(schema.pattern as string);
      expect(["order-7f3a9c", "x".repeat(255)].every((k) => re.test(k))).toBe(true);
      expect(["a b", "", "é", "x".repeat(256)].some((k) => re.test(k))).toBe(false);
    }

    // Cursors: what the server issues matches the documented pattern.
    await call("POST", "/api/v1/organizations/api-keys", { key: org.key, body: { name: "second" } });
    const page = await call("GET", "/api/v1/organizations/api-keys?limit=1", { key: org.key });
    const cursor = param("/api/v1/organizations/api-keys", "get", "cursor");
    expect(page.json.next_cursor).toMatch(new RegExp(cursor.schema.pattern as string));
    expect((await call("GET", "/api/v1/organizations/api-keys?cursor=not-ours", { key: org.key })).status).toBe(422);

    // Presigned upload: the documented size cap and content type are the server's.
    const presign = doc.components.schemas.PresignedUploadRequest.properties;
    const max = presign.file_size.maximum as number;
    const ask = (file_size: number, content_type = "text/csv") =>
      call("POST", "/api/v1/s3/presigned-upload-url", { key: org.key, body: { file_name: "c.csv", file_size, content_type } });
    expect((await ask(max)).status).toBe(200);
    expect((await ask(max + 1)).status).toBe(413);
    const type = new RegExp(presign.content_type.pattern as string);
    expect([" TEXT/CSV ", "text/csv"].every((t) => type.test(t))).toBe(true);
    expect((await ask(10, " TEXT/CSV ")).status).toBe(200);
    expect(type.test("application/json")).toBe(false);
    expect((await ask(10, "application/json")).status).toBe(422);

    // Ids in paths: digits, within the documented range.
    const id = param("/api/v1/campaign/{campaign_id}", "get", "campaign_id");
    expect(id.schema).toMatchObject({ type: "integer", minimum: 1 });
    expect((await call("GET", `/api/v1/campaign/${(id.schema.maximum as number) + 1}`, { key: org.key })).status).toBe(404);

    // The rules only words can carry.
    expect(doc.components.schemas.CreateCampaign.properties.source_url.description).toMatch(/One of `source_url` and its alias `source_id` is required/);
    expect(doc.components.schemas.UpdateCampaign.properties.schedule_config.description).toMatch(/merged field by field/);
  });
});
