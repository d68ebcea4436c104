// Global setup (runs in Node): what the Plivo and Vonage SDKs send to place one call, and for a live call's commands
// (a cold transfer, keys pressed), captured at their transport, for test/calls/sdk-originate.test.ts and
// test/calls/sdk-commands.test.ts. These SDKs cannot load inside workerd (axios, a Node-only guard), so they run
// here on the test's fixed inputs and hand the requests over with `provide`.
import { createRequire } from "node:module";
import { generateKeyPairSync } from "node:crypto";
import type { TestProject } from "vitest/node";

export const SDK_CALL = {
  from: "+14155550101",
  to: "+14155550100",
  answerUrl: "https://edgedial.test/api/v1/telephony/x/answer/1/tok",
  statusUrl: "https://edgedial.test/api/v1/telephony/x/status/1/tok",
  timeoutSeconds: 45,
  applicationId: "aaaaaaaa-0000-4000-8000-000000000001",
};

export type SdkRequest = { method: string; url: string; body: unknown };

const require = createRequire(import.meta.url);

/** A live call's command, the same inputs on both sides (what edgedial's transfer leg and DTMF command carry). */
export const SDK_COMMAND = {
  callId: "c0ffee00-0000-4000-8000-000000000001",
  person: "+14155550199",
  from: "+14155550100",
  timeoutSeconds: 20,
  documentUrl: "https://edgedial.test/api/v1/telephony/plivo/transfer/1/tok",
  digits: "12w#",
};

async function plivoRequest(): Promise<SdkRequest> {
  const c = SDK_CALL;
  return plivoCapture((client) =>
    client.calls.create(c.from.slice(1), c.to.slice(1), c.answerUrl, {
      answerMethod: "POST",
      ringUrl: c.statusUrl,
      ringMethod: "POST",
      hangupUrl: c.statusUrl,
      hangupMethod: "POST",
      ringTimeout: c.timeoutSeconds,
    }),
  );
}

/** What plivo's client sends for `send`, caught at its transport (nothing leaves the process). */
async function plivoCapture(send: (client: any) => Promise<unknown>, resource: "calls" | "applications" = "calls"): Promise<SdkRequest> {
  const plivo = require("plivo");
  const client = new plivo.Client("MA0000000000000000000", "token-0001");
  const calls = client[resource];
  // The resource's transport is a function behind a symbol: replaced to see (method, action, params) unsent.
  const key = Object.getOwnPropertySymbols(calls).find((s) => s.description === undefined && typeof calls[s] === "function");
  if (!key) throw new Error("plivo SDK: transport not found");
  let seen: SdkRequest | null = null;
  // Wrapped the way the SDK wraps its own transport, so parameter names are renamed exactly as they are sent.
  const { camelCaseRequestWrapper } = require("plivo/dist/rest/utils");
  calls[key] = camelCaseRequestWrapper(async (method: string, action: string, params: Record<string, unknown>) => {
    const { is_voice_request: _, ...body } = params;
    seen = { method, url: action, body };
    return { body: { request_uuid: "r-1", message: "call fired", api_id: "a-1" } };
  });
  await send(client);
  if (!seen) throw new Error("plivo SDK: no request");
  return seen;
}

async function vonageRequest(): Promise<SdkRequest> {
  const c = SDK_CALL;
  return vonageCapture((voice) =>
    voice.createOutboundCall({
      to: [{ type: "phone", number: c.to.slice(1) }],
      from: { type: "phone", number: c.from.slice(1) },
      answerUrl: [c.answerUrl],
      answerMethod: "GET",
      eventUrl: [c.statusUrl],
      eventMethod: "POST",
      ringingTimer: c.timeoutSeconds,
    }),
  );
}

/** What @vonage/voice sends for `send`, after its own preparation (auth, headers, body encoding), unsent. */
async function vonageCapture(send: (voice: any) => Promise<unknown>): Promise<SdkRequest> {
  const { Voice } = require("@vonage/voice");
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const voice = new Voice({ applicationId: SDK_CALL.applicationId, privateKey });
  let seen: SdkRequest | null = null;
  // The client's one transport method, replaced after its own preparation (auth, headers, body encoding).
  voice.sendRequest = async (request: Record<string, unknown>) => {
    const prepared = await voice.prepareRequest(request);
    const body = voice.prepareBody(prepared);
    seen = { method: String(prepared.method), url: String(prepared.url), body: body ? JSON.parse(String(body)) : null };
    return { data: { uuid: "u-1", status: "started", direction: "outbound", conversation_uuid: "CON-1" }, status: 201, headers: {} };
  };
  await send(voice);
  if (!seen) throw new Error("vonage SDK: no request");
  return seen;
}

/** The live-call commands: Plivo's calls.transfer and calls.sendDigits, Vonage's transferCallWithNCCO and playDTMF. */
async function commandRequests() {
  const c = SDK_COMMAND;
  const digits = (n: string) => n.slice(1);
  return {
    plivoTransfer: await plivoCapture((client) => client.calls.transfer(c.callId, { legs: "aleg", alegUrl: c.documentUrl, alegMethod: "POST" })),
    plivoDtmf: await plivoCapture((client) => client.calls.sendDigits(c.callId, c.digits)),
    vonageTransfer: await vonageCapture((voice) =>
      voice.transferCallWithNCCO(c.callId, [
        { action: "connect", from: digits(c.from), timeout: c.timeoutSeconds, endpoint: [{ type: "phone", number: digits(c.person) }] },
      ]),
    ),
    // Vonage's digits: our `w` (half a second) is its `p`.
    vonageDtmf: await vonageCapture((voice) => voice.playDTMF(c.callId, c.digits.replace(/w/g, "p"))),
  };
}

/** Placeholders the inbound test puts in place of its own values before comparing (the SDK runs here, the call there). */
export const SDK_APPLICATION = { id: "APP_ID", name: "APP_NAME", url: "INBOUND_URL", publicKey: "PUBLIC_KEY", rtcUrl: "RTC_URL" };

/** What @vonage/applications sends to point an application's voice webhooks at a URL (attaching an inbound agent). */
async function vonageApplicationUpdate(): Promise<SdkRequest> {
  const { Applications } = require("@vonage/applications");
  const a = SDK_APPLICATION;
  const apps = new Applications({ apiKey: "KEY", apiSecret: "SECRET" });
  let seen: SdkRequest | null = null;
  apps.sendRequest = async (request: Record<string, unknown>) => {
    const prepared = await apps.prepareRequest(request);
    const body = apps.prepareBody(prepared);
    seen = { method: String(prepared.method), url: String(prepared.url), body: body ? JSON.parse(String(body)) : null };
    return { data: {}, status: 200, headers: {} };
  };
  const hook = { address: a.url, httpMethod: "POST" };
  await apps.updateApplication({
    id: a.id,
    name: a.name,
    keys: { publicKey: a.publicKey },
    capabilities: { voice: { webhooks: { answerUrl: hook, eventUrl: hook } }, rtc: { webhooks: { eventUrl: { address: a.rtcUrl, httpMethod: "POST" } } } },
  });
  if (!seen) throw new Error("vonage applications SDK: no request");
  return seen;
}

/** What plivo's client sends to point an application's answer and hangup URLs at a URL (Vobiz takes the same body). */
const plivoApplicationUpdate = () =>
  plivoCapture(
    (client) =>
      client.applications.update(SDK_APPLICATION.id, {
        answerUrl: SDK_APPLICATION.url,
        answerMethod: "POST",
        hangupUrl: SDK_APPLICATION.url,
        hangupMethod: "POST",
      }),
    "applications",
  );

declare module "vitest" {
  export interface ProvidedContext {
    sdkApplicationUpdate: SdkRequest;
    sdkPlivoApplicationUpdate: SdkRequest;
    sdkRequests: { plivo: SdkRequest; vonage: SdkRequest };
    sdkCommands: Record<"plivoTransfer" | "plivoDtmf" | "vonageTransfer" | "vonageDtmf", SdkRequest>;
  }
}

export default async function setup(project: TestProject) {
  project.provide("sdkRequests", { plivo: await plivoRequest(), vonage: await vonageRequest() });
  project.provide("sdkCommands", await commandRequests());
  project.provide("sdkApplicationUpdate", await vonageApplicationUpdate());
  project.provide("sdkPlivoApplicationUpdate", await plivoApplicationUpdate());
}
