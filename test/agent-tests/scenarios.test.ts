// Test scenarios over the API: stored under the agent, stamped with its version, validated by their schema (422 at
// the field), and invisible to another organization (404).
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import seats from "../fixtures/seats-agent.json";

async function agent(key: string) {
  const res = await call("POST", "/api/v1/workflow/create", { key, body: { name: "seats", workflow_definition: seats.definition } });
  expect(res.status, res.text).toBe(200);
  return res.json.id as number;
}

const HAPPY = {
  name: "happy path",
  caller: {
    type: "script",
    steps: [
      { action: "say", text: "Sure, tell me more." },
      { action: "say", text: "We need twelve seats." },
    ],
  },
  variables: { first_name: "Ada" },
  protocol: "vonage",
  expectations: { nodes_reached: { nodes: ["start", "pitch", "bye"], in_order: true }, extraction: { seats: 12 }, disposition: "interested" },
};

describe("test scenarios", () => {
  it("are created, listed, read, replaced (a new revision at the agent's version) and deleted", async () => {
    const org = await createOrg();
    const id = await agent(org.key);
    const made = await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, { key: org.key, body: HAPPY });
    expect(made.status, made.text).toBe(200);
    expect(made.json).toMatchObject({ name: "happy path", workflow_id: id, revision: 1, agent_version: 1, protocol: "vonage", mock_tools: [] });
    expect(made.json.caller.steps).toHaveLength(2);
    // A scenario with no protocol runs on Twilio's.
    const silent = await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, {
      key: org.key,
      body: { name: "stays silent", caller: { type: "script", steps: [{ action: "silence", ms: 20000 }] }, expectations: { end_reason: "callee_silent" } },
    });
    expect(silent.status, silent.text).toBe(200);
    expect(silent.json.protocol).toBe("twilio");

    const listed = await call("GET", `/api/v1/workflow/${id}/tests/scenarios`, { key: org.key });
    expect(listed.json.items.map((s: { name: string }) => s.name)).toEqual(["happy path", "stays silent"]);

    // The agent moves to version 2; the replaced scenario says so.
    const def = structuredClone(seats.definition);
    def.nodes[1].data.prompt = "Ask how many seats they need, politely.";
    expect((await call("PUT", `/api/v1/workflow/${id}`, { key: org.key, body: { workflow_definition: def } })).json.version_number).toBe(2);
    const put = await call("PUT", `/api/v1/workflow/${id}/tests/scenarios/${made.json.id}`, { key: org.key, body: { ...HAPPY, protocol: "telnyx" } });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ revision: 2, agent_version: 2, protocol: "telnyx" });
    expect((await call("GET", `/api/v1/workflow/${id}/tests/scenarios/${made.json.id}`, { key: org.key })).json.protocol).toBe("telnyx");

    expect((await call("DELETE", `/api/v1/workflow/${id}/tests/scenarios/${made.json.id}`, { key: org.key })).status).toBe(204);
    expect((await call("GET", `/api/v1/workflow/${id}/tests/scenarios/${made.json.id}`, { key: org.key })).status).toBe(404);
  });

  it("refuses bad scenarios with a located 422", async () => {
    const org = await createOrg();
    const id = await agent(org.key);
    const post = (body: unknown) => call("POST", `/api/v1/workflow/${id}/tests/scenarios`, { key: org.key, body });
    const bad = await post({ ...HAPPY, protocol: "skype" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "protocol"]);
    const keys = await post({ ...HAPPY, caller: { type: "script", steps: [{ action: "press", digits: "12a" }] } });
    expect(keys.status).toBe(422);
    expect(keys.json.detail[0].loc).toEqual(["body", "caller", "steps", 0, "digits"]);
    const empty = await post({ ...HAPPY, caller: { type: "script", steps: [] } });
    expect(empty.status).toBe(422);
    expect(empty.json.detail[0].loc).toEqual(["body", "caller", "steps"]);
    const unknown = await post({ ...HAPPY, expectations: { sentiment: "happy" } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail[0].loc.slice(0, 2)).toEqual(["body", "expectations"]);
    expect((await post(HAPPY)).status).toBe(200);
    const twice = await post(HAPPY);
    expect(twice.status).toBe(422);
    expect(twice.json.detail[0].loc).toEqual(["body", "name"]);
  });

  it("are another organization's 404", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const id = await agent(a.key);
    const made = await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, { key: a.key, body: HAPPY });
    expect(made.status).toBe(200);
    const path = `/api/v1/workflow/${id}/tests/scenarios`;
    expect((await call("GET", path, { key: b.key })).status).toBe(404);
    expect((await call("POST", path, { key: b.key, body: { ...HAPPY, name: "theirs" } })).status).toBe(404);
    expect((await call("GET", `${path}/${made.json.id}`, { key: b.key })).status).toBe(404);
    expect((await call("PUT", `${path}/${made.json.id}`, { key: b.key, body: HAPPY })).status).toBe(404);
    expect((await call("DELETE", `${path}/${made.json.id}`, { key: b.key })).status).toBe(404);
    // Their own agent's path does not reach a's scenario either.
    const theirs = await agent(b.key);
    expect((await call("GET", `/api/v1/workflow/${theirs}/tests/scenarios/${made.json.id}`, { key: b.key })).status).toBe(404);
    expect((await call("GET", `${path}/${made.json.id}`, { key: a.key })).status).toBe(200);
  });
});
