import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import schema31 from "../node_modules/@seriousme/openapi-schema-validator/schemas/v3.1/schema.json";
import { app } from "../src/app";
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
        const url = path.replace("{key}", "campaigns/1/x/c.csv").replace("{provider}", "twilio").replace(/\{[^}]+\}/g, "1");
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
        const url = path.replace("{key}", "campaigns/1/x/c.csv").replace("{provider}", "twilio").replace(/\{[^}]+\}/g, "1");
        const res = await call(method.toUpperCase(), url, method === "get" || method === "delete" ? {} : { body: {} });
        const askedForKey = res.status === 401 && res.json?.detail === "Not authenticated";
        const documentedPublic = Array.isArray(op.security) && op.security.length === 0;
        if (askedForKey === documentedPublic) wrong.push(`${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
