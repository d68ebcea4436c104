// Answer documents as the carriers read them: well-formed for their format whatever the contact data holds
// (characters XML 1.0 forbids are replaced), equal to what each carrier's own SDK builds for the same speech, and (NCCOs)
// valid against Vonage's published NCCO schema (test/fixtures/vonage).
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import nccoSchema from "../fixtures/vonage/ncco-schema.json";
import { getProvider } from "../../src/telephony/providers/registry";
import { speakable } from "../../src/telephony/providers/kit";
import { deliverAll, drain, play, runRow, setup, simRequests, startCall } from "./support";
import { parseXml } from "./xml";
import { nccoReference, nccoStreamReference, plivoReference, plivoStreamReference, twimlReference, twimlStreamReference } from "./sdk-docs";

/** Contact data with what XML 1.0 forbids: a vertical tab, NUL, ESC, U+FFFE and a lone surrogate; plus markup. */
const DIRTY = "Ada\u000bBob\u0000 <b>&amp;\u001b\ufffe \ud800 \"q\" 'a' 😀";
/** Compared as JSON text: a lone surrogate in a failure message would break the test runner's reporting. */
const j = (v: unknown) => JSON.stringify(v);
/** The same text as every carrier must receive it. */
const CLEAN = "Ada Bob  <b>&amp;     \"q\" 'a' 😀";

const XML_PROVIDERS = [
  { provider: "twilio", reference: twimlReference },
  { provider: "cloudonix", reference: twimlReference }, // CXML is TwiML-compatible: twilio's builder is the reference
  { provider: "plivo", reference: plivoReference },
  { provider: "vobiz", reference: plivoReference }, // Vobiz answers with Plivo XML
] as const;

describe("the one sanitizer", () => {
  it("replaces every character XML 1.0 forbids (and lone surrogates) with a space, keeping the rest", () => {
    expect(j(speakable(DIRTY))).toBe(j(CLEAN));
    expect(speakable("tab\tLF\nCR\r ok é 中 😀")).toBe("tab\tLF\nCR\r ok é 中 😀");
    expect(j(speakable("\ud83d"))).toBe(j(" ")); // a high surrogate alone
    expect(j(speakable("\ude00x"))).toBe(j(" x")); // a low surrogate alone
  });
});

describe.each(XML_PROVIDERS)("$provider answer document", ({ provider, reference }) => {
  const calls = getProvider(provider).calls!;

  it("is well-formed XML whatever the greeting holds, and equals the SDK's document for the sanitized text", () => {
    const doc = calls.answerDocument(`Hello ${DIRTY}`);
    expect(() => parseXml(doc.body)).not.toThrow();
    expect(parseXml(doc.body)).toEqual(parseXml(reference([`Hello ${CLEAN}`])));
  });
});

describe("JSON speech payloads carry the sanitized text too", () => {
  it("vonage: the NCCO talks the sanitized text (as Vonage's NCCO builder builds it)", () => {
    const doc = getProvider("vonage").calls!.answerDocument(`Hello ${DIRTY}`);
    expect(j(JSON.parse(doc.body))).toBe(j(nccoReference([`Hello ${CLEAN}`])));
  });

  it("telnyx: the speak command's payload is the sanitized greeting", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s, { initial_context: { first_name: DIRTY } });
    await deliverAll(await play((await runRow(runId)).providerCallId!, "answered"));
    await drain((await runRow(runId)).providerCallId!);
    const speak = (await simRequests(s.acct)).find((r) => r.path.endsWith("/actions/speak"))!;
    expect(j(JSON.parse(speak.body).payload)).toBe(j(`Hello ${CLEAN}, this is Edgedial & co.`));
  });
});

describe.each(XML_PROVIDERS)("$provider, end to end", ({ provider, reference }) => {
  it("a control character in initial_context still yields a well-formed answer document", async () => {
    const s = await setup(provider);
    const runId = await startCall(s, { initial_context: { first_name: "Ada\u000bBob" } });
    const delivered = await deliverAll(await play((await runRow(runId)).providerCallId!, "answered"));
    const answers = delivered.filter((d) => d.cb.kind === "answer");
    expect(answers).toHaveLength(1);
    expect(parseXml(answers[0].text)).toEqual(parseXml(reference(["Hello Ada Bob, this is Edgedial & co."])));
  });
});

describe("media answer documents (a voice agent on the media path)", () => {
  const URL = "wss://edgedial.test/api/v1/telephony/x/stream/7/ab&cd";
  const RESUME = "https://edgedial.test/api/v1/telephony/x/resume/7/ab&cd";
  it.each([
    ["twilio", twimlStreamReference],
    ["cloudonix", twimlStreamReference],
    ["plivo", plivoStreamReference],
    ["vobiz", plivoStreamReference],
  ] as const)("%s: connects the call's audio to our socket, then redirects to the resume URL, as the carrier's SDK writes it", (provider, reference) => {
    const calls = getProvider(provider).calls!;
    expect(parseXml(calls.mediaDocument!(URL).body)).toEqual(parseXml(reference(URL)));
    const doc = calls.mediaDocument!(URL, RESUME);
    expect(parseXml(doc.body)).toEqual(parseXml(reference(URL, RESUME)));
    // The Redirect is the verb after the stream: what the carrier runs once the socket closes.
    expect(doc.body).toMatch(provider === "plivo" || provider === "vobiz" ? /<\/Stream><Redirect method="POST">/ : /<\/Connect><Redirect method="POST">/);
  });

  it("vonage: an NCCO connect to our WebSocket at 16 kHz, with the synchronous event URL to resume from, as @vonage/voice builds it", () => {
    const calls = getProvider("vonage").calls!;
    expect(JSON.parse(calls.mediaDocument!(URL).body)).toEqual(nccoStreamReference(URL));
    const doc = calls.mediaDocument!(URL, RESUME);
    expect(doc.contentType).toBe("application/json");
    expect(JSON.parse(doc.body)).toEqual(nccoStreamReference(URL, RESUME));
  });
});

describe("every NCCO edgedial answers with is valid against Vonage's published NCCO schema", () => {
  // Draft-04, whose keywords here read the same in Ajv's default draft: the meta-schema reference is left out.
  const { $schema: _draft, ...schema } = nccoSchema as Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const valid = ajv.compile(schema);
  const calls = getProvider("vonage").calls!;
  const URL = "wss://edgedial.test/api/v1/telephony/vonage/stream/7/1893456000.00112233445566778899aabbccddeeff.ab";
  const RESUME = "https://edgedial.test/api/v1/telephony/vonage/resume/7/ab";

  it.each([
    ["no greeting, no voice agent", () => calls.answerDocument("")],
    ["a greeting, no voice agent", () => calls.answerDocument("Hello Ada, this is Edgedial.")],
    ["a greeting over the talk limit, no voice agent", () => calls.answerDocument("Hello. ".repeat(600))],
    ["a voice agent (any greeting)", () => calls.mediaDocument!(URL, RESUME)],
  ])("%s", (_shape, doc) => {
    const ncco = JSON.parse(doc().body);
    expect(valid(ncco), JSON.stringify(valid.errors)).toBe(true);
  });

  it("the schema really checks: the old `wait` NCCO and an empty one are refused", () => {
    expect(valid([{ action: "wait", timeout: 0.1 }])).toBe(false);
    expect(valid([])).toBe(false);
    expect(valid([{ action: "connect", endpoint: [{ type: "websocket", uri: "https://not-a-socket" }] }])).toBe(false);
  });
});
