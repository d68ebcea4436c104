// A reply's measured stages in words (pure: the call page shows them, the unit tests read them).

/** The stages in the order a reply reaches them, with their short names. */
export const STAGES = [
  ["end_of_turn_ms", "end of turn"],
  ["stt_final_ms", "transcript"],
  ["model_first_token_ms", "model's first token"],
  ["first_sentence_ms", "first sentence"],
  ["voice_first_byte_ms", "voice's first audio"],
  ["first_audio_sent_ms", "sent to the carrier"],
  ["first_audio_heard_ms", "heard by the caller"],
];

/** The gap the caller heard, measured after the call on its recording (not a stage on the agent's clocks). */
export const HEARD = ["heard_gap_ms", "on the recording: the caller's voice → the agent's"];

/**
 * One reply's stages in words ("end of turn 700 · … · heard by the caller 1180 ms"), the gap its recording shows
 * ("; on the recording: the caller's voice → the agent's 1140 ms") and what a barge-in cut.
 */
export function stagesText(timing) {
  if (!timing) return "—";
  const parts = STAGES.filter(([k]) => typeof timing[k] === "number").map(([k, name]) => `${name} ${timing[k]}`);
  let text = parts.length ? `${parts.join(" · ")} ms` : "—";
  if (typeof timing.heard_gap_ms === "number") text += `; ${HEARD[1]} ${timing.heard_gap_ms} ms`;
  return typeof timing.cut_ms === "number" ? `${text}; cut: ${(timing.cut_ms / 1000).toFixed(1)} s not heard ("${timing.cut_words ?? ""}")` : text;
}
