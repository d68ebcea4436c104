// A client's mistake is never a 500: odd request bodies through the Worker.
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { setup, CALLEE } from "../calls/support";

const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

describe("deeply nested JSON bodies", () => {
  it("a public call with a deeply nested initial_context and an Idempotency-Key is a 422, not a 500", async () => {
    const s = await setup("twilio");
    for (const ctx of [`{"x":${deepArray(5000)}}`, deepObject(5000)]) {
      const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
        key: s.org.key,
        raw: `{"phone_number":"${CALLEE}","initial_context":${ctx}}`,
        headers: { "Idempotency-Key": `deep-${crypto.randomUUID()}` },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_too_deep" });
    }
  });

  it("a workflow whose definition is nested 50,000 deep is refused (422) and nothing is stored", async () => {
    const s = await setup("twilio");
    const name = `deep-${crypto.randomUUID()}`;
    const def = `{"nodes":[{"id":"s","type":"startCall","data":{"prompt":"p","x":${deepArray(50000)}}},{"id":"e","type":"endCall","data":{"prompt":"p"}}],"edges":[{"id":"e1","source":"s","target":"e","data":{"label":"l","condition":"c"}}]}`;
    const res = await call("POST", "/api/v1/workflow/create", { key: s.org.key, raw: `{"name":"${name}","workflow_definition":${def}}` });
    expect(res.status, res.text).toBe(422);
    const list = await call("GET", "/api/v1/workflow/fetch?limit=100", { key: s.org.key });
    expect(JSON.stringify(list.json)).not.toContain(name);
  });

  it("ordinary nesting and brackets inside strings still pass", async () => {
    const s = await setup("twilio");
    const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada", note: "[[[[{{{{".repeat(100), nested: JSON.parse(deepArray(20)) } },
      headers: { "Idempotency-Key": `ok-${crypto.randomUUID()}` },
    });
    expect(res.status, res.text).toBe(200);
  });
});
