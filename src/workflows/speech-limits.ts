// The carriers' per-utterance speech limits, for the validator's greeting warnings. The figures belong to the
// telephony providers (each calls module's `maxSpeakChars`, the one table); the provider registry hands them over
// here when it loads, since agents sit below telephony and may not import it.
import type { SpeechLimit } from "./validate";

let registered: readonly SpeechLimit[] = [];

export function registerSpeechLimits(limits: readonly SpeechLimit[]): void {
  registered = limits;
}

/** The registered limits (none before the provider registry has loaded). */
export const speechLimits = (): readonly SpeechLimit[] => registered;
