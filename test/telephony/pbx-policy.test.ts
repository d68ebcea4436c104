// Asterisk destinations under the calling policy, over HTTP against the simulator: the number inside an
// international-prefix digit string, a dial string or a SIP URI is judged like any carrier's, and a dial string
// reaches the PBX only in a form its configuration names (dial_string_template, allowed_dial_strings).
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { setup, simRequests, type Setup } from "../calls/support";
import { createCampaign, upload } from "../campaigns/support";

const POLICY = "/api/v1/organizations/calling-policy";
const endpoints = async (s: Setup) =>
  (await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith("/ari/channels")).map((r) => r.query.endpoint?.[0]);
const single = (s: Setup, phone_number: string) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number, initial_context: { first_name: "Ada" } } });

describe("an Asterisk destination under the calling policy", () => {
  it("refuses an international number behind 011, a dial string of another trunk or context, and a premium number inside an allowed form", async () => {
    // The caller ID is a US number: by default only US numbers may be dialed.
    const s = await setup("ari", { dial_string_template: "Local/{number}@from-internal", allowed_dial_strings: ["PJSIP/{number}@trunk-b"] });
    const refusals: [string, string][] = [
      ["011442079460000", "country_not_allowed"],
      ["PJSIP/+442079460000@other-trunk", "dial_string_not_allowed"],
      ["Local/100@any-context", "dial_string_not_allowed"],
      ["PJSIP/+19005550100@trunk-b", "number_type_blocked"],
      ["sip:+442079460000@gw.example", "country_not_allowed"],
      ["4155550123", "number_not_classifiable"],
    ];
    for (const [number, reason] of refusals) {
      const res = await single(s, number);
      expect(res.status, `${number}: ${res.text}`).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({ loc: ["body", "phone_number"], type: "destination_not_allowed", ctx: expect.objectContaining({ reason }) }),
      ]);
    }
    expect(await endpoints(s)).toEqual([]);

    // Allowed: an extension, a US number in the template's form or an allowed one, and GB once the policy allows it.
    for (const ok of ["1001", "01114155550123", "PJSIP/+14155550123@trunk-b"]) expect((await single(s, ok)).status, ok).toBe(200);
    expect((await call("PUT", POLICY, { key: s.org.key, body: { allowed_countries: ["US", "GB"] } })).status).toBe(200);
    expect((await single(s, "011442079460000")).status).toBe(200);
    expect(await endpoints(s)).toEqual([
      "Local/1001@from-internal",
      "Local/01114155550123@from-internal",
      "PJSIP/+14155550123@trunk-b",
      "Local/011442079460000@from-internal",
    ]);
  });

  it("a campaign's CSV row whose dial string or number the policy refuses is a located 422 at create", async () => {
    const s = await setup("ari");
    const file = ["phone_number,first_name", "1001,Ada", "Local/100@any-context,Bo", "00442079460000,Cy"].join("\n");
    const res = await createCampaign({ ...s.org, workflowId: s.agent.id, configId: s.configId }, { source_url: await upload(s.org, file) });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([
      expect.objectContaining({
        loc: ["body", "source_url", 3, "phone_number"],
        type: "destination_not_allowed",
        ctx: expect.objectContaining({ reason: "dial_string_not_allowed" }),
      }),
      expect.objectContaining({
        loc: ["body", "source_url", 4, "phone_number"],
        type: "destination_not_allowed",
        ctx: expect.objectContaining({ reason: "country_not_allowed" }),
      }),
    ]);
  });
});
