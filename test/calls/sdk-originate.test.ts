// The originate request edgedial sends, next to the one each carrier's SDK sends for the same call: Twilio's client
// in-process (its transport replaced), Plivo's and Vonage's captured in Node (sdk-requests.global.ts). Compared
// decoded, field by field; Telnyx's commands are compared in carrier-commands.test.ts.
import twilio from "twilio";
import { describe, expect, inject, it } from "vitest";
import { originateBody } from "../../src/telephony/providers/plivo-family";
import { originateForm } from "../../src/telephony/providers/twilio/calls";
import type { ConfigContext, OriginateRequest } from "../../src/telephony/providers/types";
import { vonageCalls } from "../../src/telephony/providers/vonage/calls";
import { SDK_CALL } from "./sdk-requests.global";
import * as sim from "../../src/dev/simulator/sign";

const req: OriginateRequest = {
  runId: 1,
  to: SDK_CALL.to,
  from: SDK_CALL.from,
  answerUrl: SDK_CALL.answerUrl,
  statusUrl: SDK_CALL.statusUrl,
  timeoutSeconds: SDK_CALL.timeoutSeconds,
};
const ctx = (config: Record<string, unknown>): ConfigContext => ({ id: 1, orgId: 1, config, state: {}, activeNumbers: [] });
const sorted = (entries: [string, string][]) => [...entries].sort(([a, x], [b, y]) => (a === b ? x.localeCompare(y) : a.localeCompare(b)));

describe("originate bodies against the carriers' SDKs", () => {
  it("Twilio: the form edgedial posts is what twilio's calls.create posts for the same call", async () => {
    for (const amd of [false, true]) {
      const seen: { method: string; uri: string; data: Record<string, string | string[]> }[] = [];
      const httpClient = {
        request: async (o: { method: string; uri: string; data: Record<string, string | string[]> }) => (
          seen.push(o), { statusCode: 201, body: { sid: "CA1" }, headers: {} }
        ),
      };
      const client = twilio("AC00000000000000000000000000000001", "token-0001", { httpClient } as never);
      await client.calls.create({
        to: req.to,
        from: req.from!,
        url: req.answerUrl,
        method: "POST",
        statusCallback: req.statusUrl,
        statusCallbackMethod: "POST",
        statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
        timeout: req.timeoutSeconds,
        ...(amd ? { machineDetection: "Enable" } : {}),
      });
      expect(seen[0].method.toUpperCase()).toBe("POST");
      expect(new URL(seen[0].uri).pathname).toBe("/2010-04-01/Accounts/AC00000000000000000000000000000001/Calls.json");
      const theirs = Object.entries(seen[0].data).flatMap(([k, v]) =>
        Array.isArray(v) ? v.map((x) => [k, String(x)] as [string, string]) : [[k, String(v)] as [string, string]],
      );
      const ours = [...originateForm(ctx({ amd_enabled: amd }), req).entries()];
      expect(sorted(ours)).toEqual(sorted(theirs));
    }
  });

  it("Plivo (and Vobiz, the same body): the JSON edgedial posts is what plivo's calls.create posts", () => {
    const { plivo } = inject("sdkRequests");
    expect(plivo.method).toBe("POST");
    expect(plivo.url).toBe("Call/");
    expect(originateBody(req)).toEqual(plivo.body);
  });

  it("Vonage: the JSON edgedial posts is what @vonage/voice's createOutboundCall posts", async () => {
    const { vonage } = inject("sdkRequests");
    expect(vonage.method).toBe("POST");
    expect(new URL(vonage.url).pathname).toBe("/v1/calls");
    // Ours, captured at fetch with a key of our own.
    const { pkcs8 } = await sim.rsaKeyPair();
    const pem = sim.pem("PRIVATE KEY", pkcs8);
    let ours: unknown = null;
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      ours = JSON.parse(String(init?.body));
      return new Response(JSON.stringify({ uuid: "u-1" }), { status: 201, headers: { "Content-Type": "application/json" } });
    }) as typeof fetch;
    try {
      const placed = await vonageCalls.originate(
        ctx({ application_id: SDK_CALL.applicationId, private_key: pem }),
        { baseUrls: {}, carrierTimeoutMs: 1000 } as never,
        req,
      );
      expect(placed).toEqual({ ok: true, providerCallId: "u-1" });
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(ours).toEqual(vonage.body);
  });
});
