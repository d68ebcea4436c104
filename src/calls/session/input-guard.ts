// What a media socket may send: a message-rate and byte-rate limit per socket (token buckets far above any
// carrier's real rate: 50 frames a second of at most 1,280 bytes), and a count of messages that could not be read.
// Excess and unreadable messages are dropped and counted before any parsing; only a socket that keeps flooding, or
// whose messages keep failing, is given up on. Pure: the session passes the time.
import { refill, type BucketLimit, type BucketState } from "../../lib/token-bucket";

/** Messages a second a socket may send (four times a carrier's 50), and how many at once (6 s of audio after a stall). */
export const MESSAGE_LIMIT: BucketLimit = { rate: 1000, burst: 1000 };
/** Bytes a second (24 kHz linear audio is 48 kB/s), and how many at once. */
export const BYTE_LIMIT: BucketLimit = { rate: 256 * 1024, burst: 1024 * 1024 };
/** A socket still over its limit this long after it first was is flooding: it is closed. */
export const FLOOD_MS = 3000;
/** Within its limit this long, a socket that went over it is calm again. */
const CALM_MS = 1000;
/** Unreadable messages in a row (10 s of frames) after which the stream counts as broken. */
export const MAX_BAD_IN_A_ROW = 500;

export type Verdict = "ok" | "drop" | "flood";

export class InputGuard {
  private messages: BucketState | undefined;
  private bytes: BucketState | undefined;
  /** When the socket went over its limit, and when it last was: a second within the limit ends the episode. */
  private overSince: number | null = null;
  private lastOver = 0;
  private badInARow = 0;
  dropped = 0;
  bad = 0;

  constructor(
    private readonly messageLimit = MESSAGE_LIMIT,
    private readonly byteLimit = BYTE_LIMIT,
    private readonly floodMs = FLOOD_MS,
  ) {}

  /** Whether a message of `size` bytes arriving at `now` is let through, dropped, or the socket is flooding. */
  admit(size: number, now: number): Verdict {
    const m = refill(this.messages, this.messageLimit, now);
    const b = refill(this.bytes, this.byteLimit, now);
    if (m.tokens >= 1 && b.tokens >= size) {
      this.messages = { tokens: m.tokens - 1, at: m.at };
      this.bytes = { tokens: b.tokens - size, at: b.at };
      if (this.overSince !== null && now - this.lastOver >= CALM_MS) this.overSince = null;
      return "ok";
    }
    this.messages = m;
    this.bytes = b;
    this.dropped++;
    this.overSince ??= now;
    this.lastOver = now;
    return now - this.overSince >= this.floodMs ? "flood" : "drop";
  }

  /** A message that could not be read; true once so many came in a row that the stream is broken. */
  unreadable(): boolean {
    this.bad++;
    return ++this.badInARow >= MAX_BAD_IN_A_ROW;
  }

  /** A message read fine: the run of unreadable ones is over. */
  readable(): void {
    this.badInARow = 0;
  }
}
