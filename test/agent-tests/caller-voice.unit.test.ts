// A scripted caller's lines, spoken in their own "voice", are recognized as their words by the offline
// speech-to-text after the carriers' codecs and rates, and never as one another.
import { describe, expect, it } from "vitest";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { callerClip, callerVoice, VOICE_RATE } from "../../src/agent-tests/caller-voice";
import { g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { Resampler } from "../../src/lib/audio/resample";

const LINES = [
  "Sure, tell me more.",
  "We need twelve seats.",
  "No thanks, I'm not interested.",
  "Can I talk to a person?",
  "Yes.",
  "No.",
  "Hello?",
  "Stop talking, I have a question about the price.",
  "We need fourteen seats.",
];

/** What an 8 kHz μ-law carrier does to the line, heard back at 16 kHz by the agent. */
function overMulaw(samples: Int16Array): Int16Array {
  const narrow = new Resampler(VOICE_RATE, 8000).convert(samples);
  return new Resampler(8000, 16000).convert(g711Decode("mulaw", g711Encode("mulaw", narrow)));
}

describe("the caller's voice", () => {
  it("is the same for the same line and differs between lines", () => {
    expect(callerVoice("We need twelve seats.")).toEqual(callerVoice("We need twelve seats."));
    expect(callerVoice("We need twelve seats.")).not.toEqual(callerVoice("We need fourteen seats."));
  });

  it("is heard as its words through μ-law at 8 kHz and through 16 kHz PCM, and never as another line", async () => {
    const stt = new ClipSpeechToText(LINES.map(callerClip));
    for (const line of LINES) {
      expect(await stt.transcribe({ samples: overMulaw(callerVoice(line)), rate: 16000 })).toBe(line);
      expect(await stt.transcribe({ samples: callerVoice(line), rate: VOICE_RATE })).toBe(line);
    }
    // With a little silence around it (the turn is cut within the recognizer's ±200 ms of shift).
    const padded = new Int16Array(VOICE_RATE + callerVoice(LINES[1]).length);
    padded.set(callerVoice(LINES[1]), VOICE_RATE / 10);
    expect(await stt.transcribe({ samples: padded, rate: VOICE_RATE })).toBe(LINES[1]);
  });

  it("is not recognized when the line was not one the agent was given", async () => {
    const stt = new ClipSpeechToText(LINES.slice(0, 4).map(callerClip));
    for (const line of LINES.slice(4)) expect(await stt.transcribe({ samples: callerVoice(line), rate: VOICE_RATE })).toBe("");
  });
});
