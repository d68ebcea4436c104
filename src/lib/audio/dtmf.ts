// Keypad tones (DTMF) as audio: the ITU-T Q.23 dual-tone pairs, for pressing keys in-band on a carrier that has no
// DTMF command of its own (or none usable while its media stream runs, like Twilio's). Each key is a low (row) and a
// high (column) sine played together; receivers (Q.24) want at least ~40 ms of tone and ~40 ms of gap, so 100 ms and
// 100 ms is safely above what any IVR needs while still quick. `w` waits half a second and `W` a second, the pause
// characters Telnyx's and Plivo's DTMF commands take.

/** The row (low) and column (high) frequencies, Hz. */
export const DTMF_ROWS = [697, 770, 852, 941] as const;
export const DTMF_COLS = [1209, 1336, 1477, 1633] as const;
/** The keypad, row by row, as Q.23 lays it out. */
export const DTMF_KEYS = ["123A", "456B", "789C", "*0#D"] as const;

export const DTMF_TONE_MS = 100;
export const DTMF_GAP_MS = 100;
export const DTMF_PAUSES: Record<string, number> = { w: 500, W: 1000 };

/** What `sendDtmf` takes: keys (lower-case a-d read as A-D) and pauses, 1 to 64 characters. */
export const DTMF_PATTERN = /^[0-9*#A-Dw]{1,64}$/i;

/** The digits as one canonical string (A-D upper case, `w`/`W` kept as given), or null when any character is not a key. */
export function dtmfDigits(input: string): string | null {
  if (!DTMF_PATTERN.test(input)) return null;
  return [...input].map((c) => (c === "w" || c === "W" ? c : c.toUpperCase())).join("");
}

/** The two frequencies of a key, or null for a character that is not one. */
export function dtmfPair(key: string): [number, number] | null {
  for (let r = 0; r < 4; r++) {
    const c = DTMF_KEYS[r].indexOf(key.toUpperCase());
    if (c >= 0 && key.length === 1) return [DTMF_ROWS[r], DTMF_COLS[c]];
  }
  return null;
}

/** Each tone's peak, about -9 dBFS: the pair peaks near -3 dBFS, loud and clear, never clipping. */
const TONE_PEAK = 11_500;
/** A short fade in and out, so a tone starts and stops without a click (energy outside its two frequencies). */
const RAMP_MS = 3;

/**
 * The tones of `digits` (as `dtmfDigits` reads them) as 16-bit samples at `rate`: each key `toneMs` of its pair then
 * `gapMs` of silence, each pause its silence. Throws on a character that is neither a key nor a pause.
 */
export function dtmfTones(digits: string, rate: number, toneMs = DTMF_TONE_MS, gapMs = DTMF_GAP_MS): Int16Array {
  const ms = (n: number) => Math.round((rate * n) / 1000);
  let total = 0;
  for (const ch of digits) total += ch in DTMF_PAUSES ? ms(DTMF_PAUSES[ch]) : ms(toneMs) + ms(gapMs);
  const out = new Int16Array(total);
  const tone = ms(toneMs);
  const ramp = Math.max(1, ms(RAMP_MS));
  let at = 0;
  for (const ch of digits) {
    if (ch in DTMF_PAUSES) {
      at += ms(DTMF_PAUSES[ch]);
      continue;
    }
    const pair = dtmfPair(ch);
    if (!pair) throw new Error(`not a DTMF key: ${JSON.stringify(ch)}`);
    const [lo, hi] = pair.map((f) => (2 * Math.PI * f) / rate);
    for (let i = 0; i < tone; i++) {
      const edge = Math.min(1, (i + 1) / ramp, (tone - i) / ramp);
      out[at + i] = Math.round(TONE_PEAK * edge * (Math.sin(lo * i) + Math.sin(hi * i)));
    }
    at += tone + ms(gapMs);
  }
  return out;
}
