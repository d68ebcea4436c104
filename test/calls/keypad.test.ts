// The keypad under the agent on every carrier, with the simulator as the carrier and its callee: keys the callee
// presses, in the carrier's own stream message (and Telnyx's call.dtmf.received webhook too), reach the agent once
// each; keys the agent presses go out as the carrier's documented DTMF command (Telnyx, Vonage, Plivo, Vobiz), and
// elsewhere as in-band tones that a Goertzel receiver reads back from the audio the callee heard.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, fromWire, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { dtmfString } from "../../src/lib/audio/goertzel";
import { connect } from "./media-support";
import { deliverAll, eventually, play, runRow, setup, sim, simRequests, startCall, type Recorded } from "./support";

const PROVIDERS = Object.keys(CALLEE_PROTOCOLS) as MediaProvider[];

/** The DTMF command each carrier documents, as the simulator recorded it; none where the session plays tones. */
const COMMAND: Partial<Record<MediaProvider, (r: Recorded) => string | null>> = {
  telnyx: (r) => (r.method === "POST" && r.path.endsWith("/actions/send_dtmf") ? JSON.parse(r.body).digits : null),
  vonage: (r) => (r.method === "PUT" && /\/v1\/calls\/[^/]+\/dtmf$/.test(r.path) ? JSON.parse(r.body).digits : null),
  plivo: (r) => (r.method === "POST" && /\/Call\/[^/]+\/DTMF\/$/.test(r.path) ? JSON.parse(r.body).digits : null),
  vobiz: (r) => (r.method === "POST" && /\/Call\/[^/]+\/DTMF\/$/.test(r.path) ? JSON.parse(r.body).digits : null),
  ari: (r) => (r.method === "POST" && /\/channels\/[^/]+\/dtmf$/.test(r.path) ? (r.query.dtmf?.[0] ?? null) : null),
};

/** An answered call whose session runs the keypad agent, with its callee on the carrier's stream. */
async function keypadCall(provider: MediaProvider, pickUp = true) {
  const s = await setup(provider);
  const runId = await startCall(s);
  const callId = (await runRow(runId)).providerCallId!;
  // Telnyx's answered call stays up (the application ends it by command); the other carriers' scripts play a whole
  // call, so their callee just picks up and stays on the line.
  if (provider === "telnyx") await deliverAll(await play(callId, "answered"));
  // Plivo and Vobiz name the call (CallUUID, which their DTMF API takes) in the answer request.
  else if (pickUp && (provider === "plivo" || provider === "vobiz")) await deliverAll((await play(callId, "answered")).filter((c) => c.kind === "answer"));
  if (provider !== "telnyx" && pickUp) await sim("POST", `/calls/${encodeURIComponent(callId)}/pick-up`, {});
  await callSessionStub(env, runId).prepare({ agent: "keypad" });
  const callee = await connect(provider, runId);
  callee.silence(100);
  const turns = async () => (await callSessionStub(env, runId).snapshot()).turns.map((t) => t.text);
  return { s, runId, callId, callee, turns };
}

/** The keys in what the callee heard, once `ms` of the agent's audio arrived (or the callee's clock ran 3 s on). */
async function heardTones(callee: Awaited<ReturnType<typeof connect>>, ms: number): Promise<string> {
  const f = callee.protocol.format;
  const bytes = ((f.rate * ms) / 1000) * (f.codec === "pcm16" ? 2 : 1);
  for (let i = 0; i < 150 && callee.receivedWire().length < bytes; i++) {
    callee.silence(20);
    await new Promise((r) => setTimeout(r, 5));
  }
  return dtmfString(fromWire(f, callee.receivedWire()), f.rate);
}

describe.each(PROVIDERS)("%s keypad", (provider) => {
  it("keys pressed on the stream reach the agent, each once; the agent's keys go out as the carrier's command or as tones", async () => {
    const { s, callee, turns } = await keypadCall(provider);
    callee.press("159*#");
    callee.silence(100);
    const heard = await eventually(turns, (t) => t.includes("pressed 159*#"));
    expect(heard).toEqual(["key 1", "key 5", "key 9", "key *", "key #", "pressed 159*#"]);
    // Tones are paced out by the callee's clock: 5 keys of 200 ms, and the pacer's lead.
    const received = await heardTones(callee, 1000);
    const command = COMMAND[provider];
    const sent = (await simRequests(s.acct)).map((r) => command?.(r) ?? null).filter((d) => d !== null);
    if (command) {
      expect(sent).toEqual(["159*#"]);
      expect(received).toBe("");
    } else {
      expect(received).toBe("159*#");
    }
    callee.hangup();
  });
});

describe("keys reported twice, and keys the carrier refuses", () => {
  it("telnyx: a press on the stream and in call.dtmf.received is heard once; the same key pressed again is heard again", async () => {
    const { callId, callee, turns } = await keypadCall("telnyx");
    callee.press("7");
    await eventually(turns, (t) => t.includes("key 7"));
    const webhooks = (await sim<{ callbacks: Parameters<typeof deliverAll>[0] }>("POST", `/calls/${encodeURIComponent(callId)}/press`, { digits: "7" }))
      .callbacks;
    expect(webhooks.map((c) => JSON.parse(c.body).data.event_type)).toContain("call.dtmf.received");
    await deliverAll(webhooks);
    // A key only the webhook reports (its stream message lost) still reaches the agent.
    await deliverAll(
      (await sim<{ callbacks: Parameters<typeof deliverAll>[0] }>("POST", `/calls/${encodeURIComponent(callId)}/press`, { digits: "3" })).callbacks,
    );
    callee.press("3");
    callee.press("7");
    const heard = await eventually(turns, (t) => t.filter((x) => x === "key 7").length === 2);
    expect(heard).toEqual(["key 7", "key 3", "key 7"]);
    callee.hangup();
  });

  it("ari: a key in chan_websocket's DTMF_END reaches the agent; the channel's dtmf command refused (not in Stasis), the keys go as tones", async () => {
    const { s, callee, turns } = await keypadCall("ari", false);
    callee.press("42#");
    callee.silence(100);
    await eventually(turns, (t) => t.includes("pressed 42#"));
    const tones = await heardTones(callee, 600);
    const tried = (await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith("/dtmf"));
    expect(tried.map((r) => r.query.dtmf?.[0])).toEqual(["42#"]);
    expect(tones).toBe("42#");
    callee.hangup();
  });

  it("vonage: A-D, which Vonage's command does not play, go as tones", async () => {
    const { s, callee, turns } = await keypadCall("vonage");
    callee.press("A#");
    callee.silence(100);
    await eventually(turns, (t) => t.includes("pressed A#"));
    const tones = await heardTones(callee, 400);
    expect((await simRequests(s.acct)).filter((r) => r.path.endsWith("/dtmf"))).toEqual([]);
    expect(tones).toBe("A#");
    callee.hangup();
  });
});
