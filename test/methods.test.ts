// 405 Method Not Allowed with `Allow` for a path that exists under other methods; unknown paths stay 404.
import { describe, expect, it } from "vitest";
import { call, createOrg } from "./helpers";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** A concrete URL for a documented path template: ids are 1, the provider is twilio, the upload key has slashes. */
function concrete(template: string): string {
  return template
    .replace("{provider}", "twilio")
    .replace("{key}", "campaigns/1/x/contacts.csv")
    .replace(/\{[^}]+\}/g, "1");
}

/** Whether a documented template matches a concrete path (parameters as wildcards; the upload key spans segments). */
const matches = (template: string, path: string) => new RegExp(`^${template.replace(/\{key\}/g, ".+").replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path);

describe("methods a path does not support", () => {
  it("answer 405 with Allow listing the supported methods, in the contract's error shape", async () => {
    const org = await createOrg();
    const res = await call("DELETE", "/api/v1/campaign/create", { key: org.key });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.json).toEqual({ detail: "Method Not Allowed" });

    const health = await call("POST", "/api/v1/health");
    expect(health.status).toBe(405);
    expect(health.headers.get("allow")).toBe("GET, HEAD");

    const campaign = await call("PUT", "/api/v1/campaign/1", { key: org.key, body: {} });
    expect(campaign.status).toBe(405);
    expect(campaign.headers.get("allow")).toBe("DELETE, GET, HEAD, PATCH");
  });

  it("every documented path answers 405 for each method it does not document, with Allow matching the document", async () => {
    const org = await createOrg();
    const doc = (await call("GET", "/api/v1/openapi.json")).json as { paths: Record<string, Record<string, unknown>> };
    const wrong: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      const expected = [...documented, ...(documented.includes("GET") ? ["HEAD"] : [])].sort().join(", ");
      const url = concrete(template);
      // Skipped: another path's template with this method also matches (PUT /workflow/create hits PUT /workflow/{id});
      // what a non-numeric id answers is the id rule's business, not this one's.
      const caught = (m: string) => Object.entries(doc.paths).some(([t, i]) => t !== template && m.toLowerCase() in i && matches(t, url));
      for (const method of METHODS.filter((m) => !documented.includes(m) && !caught(m))) {
        const res = await call(method, url, { key: org.key });
        if (res.status !== 405 || res.headers.get("allow") !== expected) {
          wrong.push(`${method} ${template}: ${res.status} Allow ${res.headers.get("allow")} (expected ${expected})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("unknown paths stay 404, and a supported method is unaffected", async () => {
    const org = await createOrg();
    for (const method of METHODS) {
      const res = await call(method, "/api/v1/no-such-thing", { key: org.key });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "Not Found" });
      expect(res.headers.get("allow")).toBeNull();
    }
    expect((await call("GET", "/api/v1/campaign/999999999", { key: org.key })).status).toBe(404);
    expect((await call("GET", "/api/v1/health")).status).toBe(200);
  });
});
