// The carriers' own SDKs (devDependencies, loaded in workerd like the Worker) build the reference answer documents
// and command bodies the tests compare ours against: twilio's VoiceResponse (TwiML, and Cloudonix's TwiML-compatible
// CXML), plivo's Response (Plivo XML, which Vobiz speaks too), Vonage's NCCO builder, and the telnyx client.
import VoiceResponse from "twilio/lib/twiml/VoiceResponse";
import { Response as PlivoResponse } from "plivo/dist/utils/plivoxml";
import Telnyx from "telnyx";
// The package's `browser` export condition (which the test bundler picks) only throws; its Node ESM build loads in workerd.
import { NCCOBuilder } from "../../node_modules/@vonage/voice/dist/esm/classes/NCCO/NCCOBuilder.mjs";
import { Talk } from "../../node_modules/@vonage/voice/dist/esm/classes/NCCO/Talk.mjs";
import { Connect } from "../../node_modules/@vonage/voice/dist/esm/classes/NCCO/Connect.mjs";

/** TwiML (and CXML) that says each utterance in turn, then hangs up. */
export function twimlReference(utterances: string[]): string {
  const r = new VoiceResponse();
  for (const u of utterances) r.say(u);
  r.hangup();
  return r.toString();
}

/** Plivo XML that speaks each utterance in turn, then hangs up. */
export function plivoReference(utterances: string[]): string {
  const r = new PlivoResponse();
  for (const u of utterances) r.addSpeak(u, {});
  r.addHangup({});
  return r.toXML();
}

/**
 * An NCCO that talks each utterance in turn; with none, a tenth of a second of silence in SSML (Vonage's `break` tag in a
 * talk action's text), since an NCCO needs at least one action and the NCCO schema knows no `wait`.
 */
export function nccoReference(utterances: string[]): unknown {
  const b = new NCCOBuilder();
  for (const u of utterances) b.addAction(new Talk(u));
  if (!utterances.length) b.addAction(new Talk("<speak><break time='100ms'/></speak>"));
  return JSON.parse(JSON.stringify(b.build()));
}

/** TwiML (and CXML) that connects the call's audio to a bidirectional stream, then (the socket closed) redirects. */
export function twimlStreamReference(url: string, resumeUrl?: string): string {
  const r = new VoiceResponse();
  r.connect().stream({ url });
  if (resumeUrl) r.redirect({ method: "POST" }, resumeUrl);
  return r.toString();
}

/** Plivo XML with a bidirectional μ-law stream that keeps the call up while the socket is open, then redirects. */
export function plivoStreamReference(url: string, resumeUrl?: string): string {
  const r = new PlivoResponse();
  // The package's type declarations predate <Stream>; its builder has addStream.
  const builder = r as unknown as { addStream(body: string, attributes: Record<string, unknown>): void };
  builder.addStream(url, { bidirectional: true, keepCallAlive: true, contentType: "audio/x-mulaw;rate=8000" });
  if (resumeUrl) r.addRedirect(resumeUrl, { method: "POST" });
  return r.toXML();
}

/**
 * An NCCO connecting the call to a WebSocket at 16 kHz linear PCM. The NCCO reference names the audio format
 * `content-type`; the SDK's endpoint type calls it contentType but writes the object as given, so the documented key
 * goes in.
 */
export function nccoStreamReference(uri: string, resumeUrl?: string): unknown {
  const b = new NCCOBuilder();
  const endpoint = { type: "websocket", uri, "content-type": "audio/l16;rate=16000", headers: {} };
  type Args = ConstructorParameters<typeof Connect>;
  // With a resume URL: the synchronous eventType, whose `disconnected` event is answered with the next NCCO.
  const at = endpoint as Args[0];
  const sync = "synchronous" as Args[3];
  const post = "POST" as Args[8];
  b.addAction(resumeUrl ? new Connect(at, undefined, undefined, sync, undefined, undefined, undefined, resumeUrl, post) : new Connect(at));
  return JSON.parse(JSON.stringify(b.build()));
}

/** The path and body the telnyx SDK sends for a call command (nothing leaves the test: its fetch is ours). */
export async function telnyxSdkCommand(callControlId: string, action: "speak" | "hangup", body: Record<string, unknown>) {
  let sent: { path: string; body: unknown } | null = null;
  const client = new Telnyx({
    apiKey: "KEY-test",
    baseURL: "https://api.telnyx.test/v2",
    maxRetries: 0,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      sent = { path: new URL(String(url)).pathname.replace(/^\/v2/, ""), body: init?.body ? JSON.parse(String(init.body)) : null };
      return new Response(JSON.stringify({ data: { result: "ok" } }), { headers: { "Content-Type": "application/json" } });
    }) as typeof fetch,
  });
  if (action === "speak") await client.calls.actions.speak(callControlId, body as never);
  else await client.calls.actions.hangup(callControlId, body as never);
  return sent!;
}
