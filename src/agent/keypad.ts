// The callee's key presses as input: digits are gathered until `#`, a pause, or a string one of the node's edges waits
// for (and that no longer one begins with), then handed on as one turn. Pure: wall-clock times passed in.

/** The pause after the last key that ends a string of presses. */
export const KEYPAD_PAUSE_MS = 1500;
const MAX_KEYS = 32;

export class Keypad {
  private digits = "";
  private lastAt = 0;

  constructor(private readonly pauseMs = KEYPAD_PAUSE_MS) {}

  get pending(): boolean {
    return this.digits.length > 0;
  }

  /** A key was pressed; the keys to hand on now, or null while more may follow. `choices`: the node's edges' keys. */
  press(digit: string, wallMs: number, choices: readonly string[]): string | null {
    this.digits += digit;
    this.lastAt = wallMs;
    const d = this.digits;
    const exact = choices.includes(d);
    const longer = choices.some((c) => c.length > d.length && c.startsWith(d));
    if (digit === "#" || (exact && !longer) || d.length >= MAX_KEYS) return this.take();
    return null;
  }

  /** The wall clock moved: after a pause the keys so far are handed on. */
  tick(wallMs: number): string | null {
    return this.digits && wallMs - this.lastAt >= this.pauseMs ? this.take() : null;
  }

  private take(): string {
    const d = this.digits;
    this.digits = "";
    return d;
  }
}
