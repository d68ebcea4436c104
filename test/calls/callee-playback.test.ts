// The simulator's carriers play the service's audio out as the real ones do: in real time on the callee's clock
// (each 20 ms frame the callee sends is 20 ms passing), a mark answered only once the audio queued before it has
// played, and a clear dropping what has not played, with the pending marks sent back at once or never, as each
// carrier documents. The service's side speaks through edgedial's own media adapters, so both ends must agree.
import { describe, expect, it } from "vitest";
import { CALLEE_PROTOCOLS, CalleeStream, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { getProvider } from "../../src/telephony/providers/registry";
import type { MediaEvent } from "../../src/telephony/providers/types";

/** Carriers whose clear sends the pending marks back (Twilio and Telnyx document it; Cloudonix and Exotel copy Twilio). */
const CLEAR_ECHOES: MediaProvider[] = ["twilio", "cloudonix", "exotel", "telnyx"];

function pair(provider: MediaProvider) {
  const [service, carrier] = Object.values(new WebSocketPair());
  service.accept();
  carrier.accept();
  const callee = new CalleeStream(carrier, CALLEE_PROTOCOLS[provider]);
  const media = getProvider(provider).calls!.media!;
  const heard: MediaEvent[] = [];
  service.addEventListener("message", (e) => heard.push(...media.parse(e.data as string | ArrayBuffer)));
  const frame = new Uint8Array((CALLEE_PROTOCOLS[provider].format.rate / 50) * (media.format.codec === "pcm16" ? 2 : 1));
  const say = (frames: number) => {
    for (let i = 0; i < frames; i++) service.send(media.audio(frame, callee.streamId));
  };
  const mark = (name: string) => service.send(media.mark!(name, callee.streamId));
  const clear = () => service.send(media.clear!(callee.streamId));
  // Lets messages sent so far reach the other side.
  const settle = () => new Promise((r) => setTimeout(r, 10));
  const marksBack = () => heard.filter((e) => e.kind === "mark").map((e) => (e as { name: string }).name);
  return { callee, say, mark, clear, settle, marksBack, heard };
}

describe.each(Object.keys(CALLEE_PROTOCOLS) as MediaProvider[])("%s, as the simulator plays it", (provider) => {
  it("a mark is answered once the audio before it has played by the callee's clock, not when it arrives", async () => {
    const p = pair(provider);
    p.say(5);
    p.mark("m1");
    await p.callee.until(() => p.callee.marks.length === 1);
    expect(p.callee.unplayedMs).toBe(100);
    expect(p.callee.echoed).toEqual([]);
    for (let i = 0; i < 4; i++) p.callee.silence(20);
    await p.settle();
    expect(p.callee.echoed).toEqual([]);
    expect(p.marksBack()).toEqual([]);
    p.callee.silence(20);
    expect(p.callee.echoed).toEqual([{ name: "m1", atMs: 100, cleared: false }]);
    await p.settle();
    // edgedial's adapter reads the carrier's answer as the mark it sent.
    expect(p.marksBack()).toEqual(["m1"]);
    // Nothing left to play: the next mark is answered at once.
    p.mark("m2");
    await p.callee.until(() => p.callee.echoed.length === 2);
    expect(p.callee.echoed[1]).toEqual({ name: "m2", atMs: 100, cleared: false });
  });

  it("audio queued ahead of the clock plays at 1x after what is queued, whenever it arrived", async () => {
    const p = pair(provider);
    p.say(3);
    await p.callee.until(() => p.callee.received.length === 3);
    p.callee.silence(40);
    // Arrives with 20 ms of the first still to play: it plays after that, not from now.
    p.say(2);
    p.mark("m");
    await p.callee.until(() => p.callee.marks.length === 1);
    expect(p.callee.unplayedMs).toBe(60);
    p.callee.silence(40);
    expect(p.callee.echoed).toEqual([]);
    p.callee.silence(20);
    expect(p.callee.echoed).toEqual([{ name: "m", atMs: 100, cleared: false }]);
  });

  it(`a clear drops what has not played; the pending marks ${CLEAR_ECHOES.includes(provider) ? "come back at once" : "are never answered"}`, async () => {
    const p = pair(provider);
    p.say(5);
    p.mark("m");
    await p.callee.until(() => p.callee.marks.length === 1);
    p.callee.silence(40);
    p.clear();
    await p.callee.until(() => p.callee.clears === 1);
    expect(p.callee.droppedMs).toBe(60);
    expect(p.callee.unplayedMs).toBe(0);
    const back = CLEAR_ECHOES.includes(provider) ? [{ name: "m", atMs: 40, cleared: true }] : [];
    expect(p.callee.echoed).toEqual(back);
    // The clock passing the dropped audio's time answers nothing more.
    p.callee.silence(100);
    await p.settle();
    expect(p.callee.echoed).toEqual(back);
    expect(p.marksBack()).toEqual(back.map((b) => b.name));
    expect(p.callee.played).toEqual([]);
  });
});
