// One key press reported by two sources (a carrier's media stream and its webhook) reaches the agent once when the
// reports are within 2 s of each other (docs/keypad.md); further apart they are two presses. The reports here are
// 1-2 s apart, where a webhook trailing its stream really lands under load, and the bound is the documented 2 s.
import { describe, expect, it } from "vitest";
import type { VoiceAgent } from "../../src/agent/voice-agent";
import { Keypad, type KeypadCall } from "../../src/calls/session/keypad";
import type { MediaLoop } from "../../src/calls/session/media-loop";

function call() {
  const heard: string[] = [];
  const agent = { onDtmf: (d: string) => void heard.push(d) } as unknown as VoiceAgent;
  const c: KeypadCall = { started: true, agent, loop: { clockMs: 0 } as MediaLoop, lastActivityWall: 0 };
  return { c, heard, keypad: new Keypad() };
}

describe("a press reported by the stream and by the carrier's callback", () => {
  for (const apart of [1001, 1500, 1999]) {
    it(`reports ${apart} ms apart are one press`, async () => {
      const { c, heard, keypad } = call();
      expect(await keypad.press(c, "5", "stream", 10_000)).toBe(true);
      expect(await keypad.press(c, "5", "callback", 10_000 + apart)).toBe(false);
      expect(heard).toEqual(["5"]);
      // The callback's late report still counts as the callee's activity.
      expect(c.lastActivityWall).toBe(10_000 + apart);
    });
  }

  it("the callback may come first: the stream's report 1.5 s later is the same press", async () => {
    const { c, heard, keypad } = call();
    expect(await keypad.press(c, "#", "callback", 0)).toBe(true);
    expect(await keypad.press(c, "#", "stream", 1500)).toBe(false);
    expect(heard).toEqual(["#"]);
  });

  it("reports more than 2 s apart are two presses", async () => {
    const { c, heard, keypad } = call();
    await keypad.press(c, "5", "stream", 0);
    expect(await keypad.press(c, "5", "callback", 2001)).toBe(true);
    expect(heard).toEqual(["5", "5"]);
  });

  it("a report pairs with one press only: the same key pressed twice 1.2 s apart, each reported twice, is two presses", async () => {
    const { c, heard, keypad } = call();
    await keypad.press(c, "1", "stream", 0);
    await keypad.press(c, "1", "stream", 1200);
    await keypad.press(c, "1", "callback", 1300);
    await keypad.press(c, "1", "callback", 2500);
    expect(heard).toEqual(["1", "1"]);
  });
});
