import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import schema31 from "../node_modules/@seriousme/openapi-schema-validator/schemas/v3.1/schema.json";
import { app } from "../src/app";
import { call } from "./helpers";

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
    expect(served.filter((op) => !documented.has(op))).toEqual([]);
  });
});
