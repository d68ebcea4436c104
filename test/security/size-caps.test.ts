// Size caps: request bodies (413 before the body is read whole), initial_context, free text in agent
// definitions, and 422 items that echo at most a bounded piece of the rejected value.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { boundedInput, MAX_ECHOED_STRING } from "../../src/lib/errors";
import { MAX_JSON_BODY_BYTES } from "../../src/lib/body-limit";
import { call, createOrg } from "../helpers";
import { CALLEE, setup } from "../calls/support";
import { minimalDefinition } from "../workflows/fixtures";

const MB = 1024 * 1024;

/** A body streamed in chunks without Content-Length; counts how many chunks the server pulled. */
function chunked(total: number, chunk = 64 * 1024) {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (sent >= total) return ctrl.close();
      const n = Math.min(chunk, total - sent);
      sent += n;
      ctrl.enqueue(new TextEncoder().encode(" ".repeat(n)));
    },
  });
  return { stream, sent: () => sent };
}

describe("request body caps", () => {
  it("a declared Content-Length over 1 MB is a 413 at once", async () => {
    const org = await createOrg();
    const res = await call("POST", "/api/v1/organizations/api-keys", { key: org.key, raw: `{"name":"${"x".repeat(MB)}"}` });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ detail: `Request body too large (limit ${MAX_JSON_BODY_BYTES} bytes)` });
  });

  it("a chunked body without Content-Length is refused once it passes the cap, without reading the rest", async () => {
    const org = await createOrg();
    const body = chunked(10 * MB);
    const res = await exports.default.fetch(
      new Request("http://edgedial.test/api/v1/organizations/api-keys", {
        method: "POST",
        headers: { "X-API-Key": org.key, "Content-Type": "application/json", "Transfer-Encoding": "chunked" },
        body: body.stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(body.sent()).toBeLessThan(2 * MB);
  });

  it("a body at the cap is read normally (here: a 422 for the bad name, not a 413)", async () => {
    const org = await createOrg();
    const raw = `{"name":"${"x".repeat(MAX_JSON_BODY_BYTES - 20)}"}`;
    expect(raw.length).toBeLessThanOrEqual(MAX_JSON_BODY_BYTES);
    const res = await call("POST", "/api/v1/organizations/api-keys", { key: org.key, raw });
    expect(res.status).toBe(422);
    // The echoed input is cut to a bounded size with a marker.
    expect(res.text.length).toBeLessThan(2000);
    expect(res.json.detail[0].input).toBe(`${"x".repeat(MAX_ECHOED_STRING)}…[truncated; ${MAX_JSON_BODY_BYTES - 20} characters]`);
  });

  it("carrier callbacks are capped too (256 KB)", async () => {
    const res = await exports.default.fetch(
      new Request("http://edgedial.test/api/v1/telephony/twilio/status/1/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "a=" + "b".repeat(300 * 1024),
      }),
    );
    expect(res.status).toBe(413);
  });
});

describe("422 items echo a bounded input", () => {
  it("strings are cut at 200 characters; large objects and arrays are summarized", () => {
    expect(boundedInput("short")).toBe("short");
    expect(boundedInput("y".repeat(MAX_ECHOED_STRING))).toBe("y".repeat(MAX_ECHOED_STRING));
    expect(boundedInput("y".repeat(5000))).toBe(`${"y".repeat(200)}…[truncated; 5000 characters]`);
    expect(boundedInput({ a: 1 })).toEqual({ a: 1 });
    expect(boundedInput(Array.from({ length: 5000 }, (_, i) => i))).toBe("[array of 5000 items; truncated]");
    expect(boundedInput({ a: "z".repeat(5000), b: 1 })).toBe("{object with 2 keys; truncated}");
    expect(boundedInput(7)).toBe(7);
  });
});

describe("initial_context caps", () => {
  it("more than 100 keys or more than 16 KB is a 422 and nothing is stored; at the caps the call starts", async () => {
    const s = await setup("twilio");
    const path = `/api/v1/public/agent/${s.agent.workflow_uuid}`;
    const runs = async () => (await env.DB.prepare("SELECT count(*) AS n FROM workflow_runs WHERE org_id = ?").bind(s.org.id).first<{ n: number }>())!.n;
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

    const tooMany = await call("POST", path, { key: s.org.key, body: { phone_number: CALLEE, initial_context: keys(101) } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.json.detail[0]).toMatchObject({ loc: ["body", "initial_context"], msg: "At most 100 keys" });
    const tooBig = await call("POST", path, { key: s.org.key, body: { phone_number: CALLEE, initial_context: { note: "n".repeat(16 * 1024) } } });
    expect(tooBig.status).toBe(422);
    expect(tooBig.json.detail[0].msg).toBe("At most 16384 bytes as JSON");
    expect(tooBig.text.length).toBeLessThan(2000);
    expect(await runs()).toBe(0);

    const atCaps = await call("POST", path, { key: s.org.key, body: { phone_number: CALLEE, initial_context: { ...keys(99), first_name: "Ada" } } });
    expect(atCaps.status, atCaps.text).toBe(200);
    const big = await call("POST", path, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada", note: "n".repeat(16 * 1024 - 30) } },
    }); // exactly 16 KB as JSON
    expect(big.status, big.text).toBe(200);
  });
});

describe("free text in agent definitions", () => {
  it("a greeting over 10,000 characters or a prompt over 32,000 is a 422 located at the field", async () => {
    const org = await createOrg();
    const def = minimalDefinition();
    def.nodes[0].data.greeting = "g".repeat(10_001);
    const res = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "caps", workflow_definition: def } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({
      loc: ["body", "workflow_definition", "nodes", 0, "data", "greeting"],
      type: "string_too_long",
      ctx: { max_length: 10_000 },
    });
    def.nodes[0].data.greeting = "g".repeat(10_000);
    def.nodes[0].data.prompt = "p".repeat(32_001);
    const prompt = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "caps", workflow_definition: def } });
    expect(prompt.status).toBe(422);
    expect(prompt.json.detail[0].loc).toEqual(["body", "workflow_definition", "nodes", 0, "data", "prompt"]);
    def.nodes[0].data.prompt = "p".repeat(32_000);
    expect((await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "caps", workflow_definition: def } })).status).toBe(200);
  });
});
