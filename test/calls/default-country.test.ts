// Issue 10: a single call's phone_number that is not E.164 says so and shows the E.164 form when one can be
// derived; `default_country` (ISO 3166 alpha-2) reads a national number as that country's and dials it.
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { CONTEXT, runRow, setup } from "./support";

const start = (s: Awaited<ReturnType<typeof setup>>, body: Record<string, unknown>) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { initial_context: CONTEXT, ...body } });

describe("single call: national numbers", () => {
  it("with default_country a national number is dialed in E.164", async () => {
    const s = await setup("twilio");
    const res = await start(s, { phone_number: "(415) 555-0102", default_country: "US" });
    expect(res.status, res.text).toBe(200);
    expect((await runRow(res.json.workflow_run_id)).phoneNumber).toBe("+14155550102");
  });

  it("without default_country the 422 says E.164 and suggests the caller ID country's form", async () => {
    const s = await setup("twilio");
    const res = await start(s, { phone_number: "(415) 555-0102" });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({
      loc: ["body", "phone_number"],
      type: "value_error",
      input: "(415) 555-0102",
      ctx: { suggestion: "+14155550102", country: "US" },
    });
    expect(res.json.detail[0].msg).toMatch(/E\.164/);
    expect(res.json.detail[0].msg).toContain("did you mean +14155550102?");
  });

  it("an unknown default_country is a 422 at its loc, and a number invalid in the country says so", async () => {
    const s = await setup("twilio");
    for (const bad of ["XX", "USA", "1"]) {
      const res = await start(s, { phone_number: "4155550102", default_country: bad });
      expect(res.status, bad).toBe(422);
      expect(res.json.detail[0].loc, bad).toEqual(["body", "default_country"]);
    }
    const res = await start(s, { phone_number: "12", default_country: "US" });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].msg).toMatch(/E\.164.*not a valid US number/);
  });
});
