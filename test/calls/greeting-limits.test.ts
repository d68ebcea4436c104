// Greetings fitted to each carrier's text-to-speech limit: one table of limits (each provider's maxSpeakChars),
// long text spoken as several actions split at sentence (else word) boundaries, and an empty greeting that gives
// a valid document which just hangs up. Documents are compared with what the carriers' SDKs build.
import { describe, expect, it } from "vitest";
import { PROVIDER_LIST, getProvider } from "../../src/telephony/providers/registry";
import { speechChunks, speechLength } from "../../src/lib/speech";
import { agentWith, deliver, deliverAll, drain, flush, play, redeliver, runRow, setup, simRequests, startCall } from "./support";
import { parseXml, type XmlNode } from "./xml";
import { nccoReference, plivoReference, twimlReference } from "./sdk-docs";

/** ~10,000 characters of sentences of varying length. */
const LONG = Array.from({ length: 120 }, (_, i) => `Sentence number ${i + 1} tells the listener something${" quite".repeat(i % 7)} useful.`).join(" ");
const words = (s: string) => s.split(/\s+/).filter(Boolean);

describe("the table of limits", () => {
  it("each provider states its per-utterance limit; carriers without text-to-speech state none", () => {
    expect(Object.fromEntries(PROVIDER_LIST.map((p) => [p.name, p.calls!.maxSpeakChars]))).toEqual({
      twilio: 4096, // <Say>, basic voice
      telnyx: 3000, // speak.payload
      vonage: 1500, // NCCO talk.text
      plivo: 3000, // unconfirmed
      vobiz: 3000, // as Plivo (unconfirmed)
      cloudonix: 3000, // unconfirmed
      exotel: null, // no speech verb: audio over the media socket
      ari: null, // no text-to-speech
      sandbox: 4096, // Twilio's protocol, on the simulator
    });
  });
});

describe("speechChunks", () => {
  it("keeps a short text whole and gives nothing for blank text", () => {
    expect(speechChunks("  Hello there.  ", 100)).toEqual(["Hello there."]);
    expect(speechChunks("", 100)).toEqual([]);
    expect(speechChunks(" \n\t ", 100)).toEqual([]);
  });

  it("splits at sentence boundaries, each part within the limit, nothing lost", () => {
    const parts = speechChunks("One two three. Four five six. Seven eight nine.", 31);
    expect(parts).toEqual(["One two three. Four five six.", "Seven eight nine."]);
    const long = speechChunks(LONG, 1500);
    expect(long.length).toBeGreaterThan(6);
    for (const p of long) {
      expect(speechLength(p)).toBeLessThanOrEqual(1500);
      expect(p).toMatch(/useful\.$/); // every part ends at the end of a sentence
    }
    expect(words(long.join(" "))).toEqual(words(LONG));
  });

  it("a sentence longer than the limit is cut between words; a word longer than the limit anywhere", () => {
    expect(speechChunks("alpha beta gamma delta epsilon", 12)).toEqual(["alpha beta", "gamma delta", "epsilon"]);
    expect(speechChunks("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it("counts UTF-8 bytes (never fewer than characters) and never splits a character", () => {
    expect(speechLength("é中😀")).toBe(2 + 3 + 4);
    const parts = speechChunks("😀".repeat(5), 8);
    expect(parts).toEqual(["😀😀", "😀😀", "😀"]);
  });
});

const XML_PROVIDERS = [
  { provider: "twilio", verb: "Say", reference: twimlReference },
  { provider: "cloudonix", verb: "Say", reference: twimlReference },
  { provider: "plivo", verb: "Speak", reference: plivoReference },
  { provider: "vobiz", verb: "Speak", reference: plivoReference },
] as const;

describe.each(XML_PROVIDERS)("$provider answer document", ({ provider, verb, reference }) => {
  const calls = getProvider(provider).calls!;
  const max = calls.maxSpeakChars!;

  it("speaks a long greeting as several verbs, each within the carrier's limit, as the SDK builds them", () => {
    const text = `${LONG} ${LONG}`; // ~20,000 characters: beyond every carrier's limit
    const tree = parseXml(calls.answerDocument(text).body);
    const spoken = tree.children.filter((c): c is XmlNode => typeof c !== "string" && c.name === verb).map((c) => c.children.join(""));
    expect(spoken.length).toBeGreaterThan(1);
    for (const s of spoken) expect(speechLength(s)).toBeLessThanOrEqual(max);
    expect(words(spoken.join(" "))).toEqual(words(text));
    expect(tree).toEqual(parseXml(reference(speechChunks(text, max))));
    expect((tree.children.at(-1) as XmlNode).name).toBe("Hangup");
  });

  it("an empty (or blank) greeting is a valid document that just hangs up", () => {
    for (const text of ["", "   "]) {
      const tree = parseXml(calls.answerDocument(text).body);
      expect(tree).toEqual(parseXml(reference([])));
      expect(tree.children).toEqual([{ name: "Hangup", attributes: {}, children: [] }]);
    }
  });
});

describe("vonage NCCO", () => {
  const calls = getProvider("vonage").calls!;

  it("talks a long greeting as several talk actions of at most 1,500 characters (as Vonage's NCCO builder builds them)", () => {
    const ncco = JSON.parse(calls.answerDocument(LONG).body) as Array<{ action: string; text: string }>;
    expect(ncco.length).toBeGreaterThan(6);
    for (const a of ncco) {
      expect(a.action).toBe("talk");
      expect(speechLength(a.text)).toBeLessThanOrEqual(1500);
    }
    expect(ncco).toEqual(nccoReference(speechChunks(LONG, 1500)));
  });

  it("an empty greeting still has one action (0.1 s of SSML silence), so the call is answered and ends at once", () => {
    for (const text of ["", "  "]) expect(JSON.parse(calls.answerDocument(text).body)).toEqual(nccoReference([]));
    expect(nccoReference([])).toEqual([{ action: "talk", text: "<speak><break time='100ms'/></speak>" }]);
  });
});

describe("telnyx speaks the greeting in parts, then hangs up", () => {
  const commands = async (s: Awaited<ReturnType<typeof setup>>) =>
    (await simRequests(s.acct)).filter((r) => r.path.includes("/actions/")).map((r) => ({ action: r.path.split("/").at(-1), body: JSON.parse(r.body) }));

  it("a greeting longer than 3,000 characters: one speak command per part, in order, then the hang-up", async () => {
    // Greetings are capped at 4,000 characters when saved: the long text comes from the contact's data.
    const s = await agentWith(await setup("telnyx"), "Hello {{first_name}}");
    const runId = await startCall(s, { initial_context: { first_name: `Ada. ${LONG}` } });
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll(await play(callId, "answered"));
    await drain(callId);
    const sent = await commands(s);
    const parts = speechChunks(`Hello Ada. ${LONG}`, 3000);
    expect(parts.length).toBeGreaterThan(2);
    expect(sent.map((c) => c.action)).toEqual([...parts.map(() => "speak"), "hangup"]);
    expect(sent.slice(0, -1).map((c) => c.body.payload)).toEqual(parts);
    expect((await runRow(runId)).status).toBe("completed");
  });

  it("a redelivered speak.ended does not speak a part twice (command_id)", async () => {
    const s = await agentWith(await setup("telnyx"), "{{first_name}}");
    const runId = await startCall(s, { initial_context: { first_name: LONG } });
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll(await play(callId, "answered"));
    const firstEnded = await flush(callId);
    expect(firstEnded).toHaveLength(1);
    await deliverAll(firstEnded);
    await deliver(await redeliver(callId, firstEnded[0])); // the carrier redelivers it, re-signed as carriers do
    await drain(callId);
    const sent = await commands(s);
    // The redelivery is refused as a replay, or (if it gets through) asks for part 1 again under the same
    // command_id, which Telnyx ignores: either way each part is acted on once and the call hung up once.
    const ids = sent.map((c) => c.body.command_id).filter((id, k, all) => id !== all[k - 1]);
    const n = ids.length - 1;
    expect(n).toBeGreaterThan(1);
    expect(ids).toEqual([...Array.from({ length: n }, (_, k) => `greeting-${k}`), "greeting-hangup"]);
    expect((await runRow(runId)).status).toBe("completed");
  });

  it("no greeting at all: the answered call is hung up at once, without a speak command", async () => {
    const s = await agentWith(await setup("telnyx"), undefined);
    const runId = await startCall(s);
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll(await play(callId, "answered"));
    await drain(callId);
    expect((await commands(s)).map((c) => c.action)).toEqual(["hangup"]);
    expect((await runRow(runId)).status).toBe("completed");
  });
});
