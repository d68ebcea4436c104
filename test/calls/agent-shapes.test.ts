// What each carrier gets once the call is answered, for every shape of agent: no greeting or a greeting, the voice
// agent off (the carrier speaks) or on (the media path). Every document is the carrier's own (equal to its SDK's,
// and for Vonage valid against its NCCO schema); a call with nothing to say is hung up cleanly; with the voice agent
// on, the call's audio goes to its session (which listens when there is no greeting) and the carrier knows where to
// come back to if the socket drops.
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resumeUrl } from "../../src/calls/resume/resume";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import nccoSchema from "../fixtures/vonage/ncco-schema.json";
import { call } from "../helpers";
import type { MediaProvider } from "../../src/dev/simulator/media/callee";
import { liveFetch, untilAnswered } from "./resume-support";
import { nccoReference, nccoStreamReference, plivoReference, plivoStreamReference, twimlReference, twimlStreamReference } from "./sdk-docs";
import { agentWith, CALLEE, callbackRequest, deliver, drain, runRow, setup, simRequests, type Setup } from "./support";
import { parseXml } from "./xml";

const { $schema: _draft, ...schema } = nccoSchema as Record<string, unknown>;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const validNcco = ajv.compile(schema);

/** Starts the agent's call, through the deployed Worker (voice agent on) or the plain one. */
async function start(s: Setup, voiceAgent: boolean): Promise<{ runId: number; callId: string }> {
  const path = `/api/v1/public/agent/${s.agent.workflow_uuid}`;
  const body = { phone_number: CALLEE, initial_context: { first_name: "Ada" } };
  const res = voiceAgent
    ? await liveFetch(
        new Request(`http://edgedial.test${path}`, {
          method: "POST",
          headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        }),
      )
    : await call("POST", path, { key: s.org.key, body });
  expect(res.status, res.text).toBe(200);
  const runId = JSON.parse(res.text).workflow_run_id as number;
  return { runId, callId: (await runRow(runId)).providerCallId! };
}

/** The answered call's callbacks delivered (its scripted end left out): the answer document, when there is one. */
async function answer(provider: MediaProvider, callId: string, voiceAgent: boolean): Promise<string | null> {
  let doc: string | null = null;
  for (const cb of await untilAnswered(callId, provider)) {
    const r = voiceAgent ? await liveFetch(callbackRequest(cb)) : await deliver(cb);
    expect(r.status, r.text).toBeLessThan(300);
    if (cb.kind === "answer") doc = r.text;
  }
  return doc;
}

const SHAPES = [
  { shape: "no greeting", greeting: undefined, spoken: [] as string[] },
  { shape: "a greeting only", greeting: "Hello {{first_name}}", spoken: ["Hello Ada"] },
];

const DOCUMENTS = {
  twilio: { speak: twimlReference, media: twimlStreamReference },
  cloudonix: { speak: twimlReference, media: twimlStreamReference },
  plivo: { speak: plivoReference, media: plivoStreamReference },
  vobiz: { speak: plivoReference, media: plivoStreamReference },
} as const;

describe.each(Object.keys(DOCUMENTS) as Array<keyof typeof DOCUMENTS>)("%s", (provider) => {
  it.each(SHAPES)("$shape, no voice agent: the carrier speaks it (or nothing) and hangs up", async ({ greeting, spoken }) => {
    const s = await agentWith(await setup(provider), greeting);
    const { callId } = await start(s, false);
    expect(parseXml((await answer(provider, callId, false))!)).toEqual(parseXml(DOCUMENTS[provider].speak(spoken)));
  });

  it.each(SHAPES)("$shape, a voice agent: the call's audio to its session, then the resume URL", async ({ greeting }) => {
    const s = await agentWith(await setup(provider), greeting);
    const { runId, callId } = await start(s, true);
    const doc = (await answer(provider, callId, true))!;
    const stream = streamUrlIn(doc)!;
    expect(stream).toMatch(new RegExp(`^ws://edgedial\\.test/api/v1/telephony/${provider}/stream/${runId}/`));
    const resume = await resumeUrl(env.CALLBACK_SECRET, "http://edgedial.test", provider, runId);
    expect(parseXml(doc)).toEqual(parseXml(DOCUMENTS[provider].media(stream, resume)));
  });
});

describe("vonage", () => {
  it.each(SHAPES)("$shape, no voice agent: an NCCO Vonage's schema accepts, that talks it (or a moment of silence) and ends", async ({ greeting, spoken }) => {
    const s = await agentWith(await setup("vonage"), greeting);
    const { callId } = await start(s, false);
    const ncco = JSON.parse((await answer("vonage", callId, false))!);
    expect(validNcco(ncco), JSON.stringify(validNcco.errors)).toBe(true);
    expect(ncco).toEqual(nccoReference(spoken));
  });

  it.each(SHAPES)("$shape, a voice agent: a schema-valid connect to its session, whose synchronous events resume", async ({ greeting }) => {
    const s = await agentWith(await setup("vonage"), greeting);
    const { runId, callId } = await start(s, true);
    const ncco = JSON.parse((await answer("vonage", callId, true))!);
    expect(validNcco(ncco), JSON.stringify(validNcco.errors)).toBe(true);
    const stream = streamUrlIn(JSON.stringify(ncco))!;
    expect(ncco).toEqual(nccoStreamReference(stream, await resumeUrl(env.CALLBACK_SECRET, "http://edgedial.test", "vonage", runId)));
  });
});

describe("telnyx (commands, no document)", () => {
  const commands = async (s: Setup) => (await simRequests(s.acct)).filter((r) => r.path.includes("/actions/")).map((r) => r.path.split("/").at(-1));

  it("no greeting, no voice agent: the answered call gets a clean hang-up, and nothing else", async () => {
    const s = await agentWith(await setup("telnyx"), undefined);
    const { runId, callId } = await start(s, false);
    await answer("telnyx", callId, false);
    await drain(callId);
    expect(await commands(s)).toEqual(["hangup"]);
    expect((await runRow(runId)).status).toBe("completed");
  });

  it("a greeting only, no voice agent: spoken, then the hang-up", async () => {
    const s = await agentWith(await setup("telnyx"), "Hello {{first_name}}");
    const { callId } = await start(s, false);
    await answer("telnyx", callId, false);
    await drain(callId);
    expect(await commands(s)).toEqual(["speak", "hangup"]);
  });

  it.each(SHAPES)("$shape, a voice agent: the stream asked for on dial carries the call, no command follows the answer", async ({ greeting }) => {
    const s = await agentWith(await setup("telnyx"), greeting);
    const { runId, callId } = await start(s, true);
    const dial = (await simRequests(s.acct)).find((r) => r.path.endsWith("/v2/calls"))!;
    expect(JSON.parse(dial.body)).toMatchObject({
      stream_url: expect.stringMatching(/^ws:\/\//),
      stream_track: "inbound_track",
      stream_bidirectional_mode: "rtp",
    });
    await answer("telnyx", callId, true);
    expect(await commands(s)).toEqual([]);
    expect((await runRow(runId)).status).toBe("in_progress");
  });
});
