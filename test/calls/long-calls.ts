// Long calls' transcripts for the latency column's tests: plausible, cumulative stage timings per reply (one model
// answer in ten slow, a barge-in in about one reply in seven), from a seeded generator so every run sees the same.

export const turn = (role: string, timing?: Record<string, number | string>) => ({
  role,
  text: "",
  start_ms: 0,
  end_ms: 0,
  interrupted: false,
  ...(timing ? { timing } : {}),
});

/** A deterministic stream of numbers in [0, 1). */
export function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/** A call of `replies` agent replies (each after a callee turn). */
export function longCall(replies: number, rnd: () => number) {
  const around = (mid: number, spread: number) => Math.max(0, Math.round(mid + spread * (rnd() + rnd() + rnd() - 1.5)));
  const turns = [];
  for (let i = 0; i < replies; i++) {
    const end = around(600, 160);
    const stt = end + around(120, 80);
    const token = stt + around(450, 400) * (rnd() < 0.1 ? 4 : 1);
    const sentence = token + around(300, 200);
    const voice = sentence + around(250, 160);
    const sent = voice + around(20, 20);
    const heard = sent + around(90, 60);
    const timing: Record<string, number | string> = {
      end_of_turn_ms: end,
      stt_final_ms: stt,
      model_first_token_ms: token,
      first_sentence_ms: sentence,
      voice_first_byte_ms: voice,
      first_audio_sent_ms: sent,
      first_audio_heard_ms: heard,
    };
    if (rnd() < 0.15) Object.assign(timing, { cut_ms: around(1200, 1200), cut_words: "the rest" });
    turns.push(turn("callee"), turn("agent", timing));
  }
  return turns;
}

/** The largest relative error of a histogram at `level` (2 % at level 0; each level squares the bucket ratio). */
export function errorAtLevel(level: number, relativeError: number): number {
  const g = ((1 + relativeError) / (1 - relativeError)) ** (2 ** level);
  return (g - 1) / (g + 1);
}
