// The call session's side of a hand-over to a person. The calls module asks the carrier (through the ports); a cold
// transfer is settled by the carrier's acceptance, a warm one by the carrier's later word on the person's leg (the
// transfer's status route hands it to the session, `settle`), or by the session's own deadline when no word comes.
// While the carrier is being asked, the call's stream may stop: that is the hand-over, not the caller hanging up, so
// the session waits for the answer (`inFlight`) before reading a stop as the caller's.
import type { TransferOutcome, TransferRequest } from "../../agent/voice-agent";
import { log } from "../../lib/log";
import type { CallPorts, TransferSettled } from "./ports";

/** How long past the person's ring time the session waits for the carrier's word before giving the leg up. */
export const TRANSFER_GRACE_SECONDS = 15;
/** How long a report on the person's leg may hold the caller's stream end for the carrier's move (then it counts). */
const HOLD_MS = 10_000;

export type DeskOf = {
  ports(): Pick<CallPorts, "transfer" | "transferGiveUp">;
  record(): { orgId: number; runId: number | null };
  /** Whether the call has begun to end (no new transfer then). */
  ending(): boolean;
  /** Ends the call as `transferred`: edgedial has left it, the caller is with the person (no hang-up). */
  leave(): void;
};

type Waiting = { resolve(o: TransferOutcome): void; timer: ReturnType<typeof setTimeout> };

export class TransferDesk {
  private waiting: Waiting | null = null;
  /** The carrier request under way (the stream stopping meanwhile is the transfer's doing). */
  inFlight: Promise<unknown> | null = null;
  private held: (() => void) | null = null;

  constructor(private readonly of: DeskOf) {}

  /** Whether a warm transfer waits for the person (the caller's silence is then not the end of the call). */
  get ringing(): boolean {
    return this.waiting !== null;
  }

  /** Whether the carrier took the call, once the request under way (if any) is answered: a stream's end is then the hand-over. */
  async tookCall(): Promise<boolean> {
    await this.inFlight?.catch(() => {});
    return this.of.ending();
  }

  async request(req: TransferRequest): Promise<TransferOutcome> {
    if (this.waiting || this.inFlight || this.of.ending()) return "failed";
    const { orgId, runId: id } = this.of.record();
    const runId = id ?? 0;
    const asked = this.of.ports().transfer(orgId, runId, req);
    this.inFlight = asked;
    let started: Awaited<typeof asked>;
    try {
      started = await asked;
    } catch (err) {
      log("error", "transfer_failed", { run_id: runId, error: String(err) });
      started = { state: "failed", message: String((err as Error)?.message ?? err) };
    } finally {
      this.inFlight = null;
    }
    if (started.state === "connected") {
      this.of.leave();
      return "connected";
    }
    if (started.state !== "ringing") return started.state;
    const seconds = started.timeoutSeconds;
    return new Promise<TransferOutcome>((resolve) => {
      const timer = setTimeout(() => void this.giveUp("no_answer", `Nobody answered within ${seconds} s`), (seconds + TRANSFER_GRACE_SECONDS) * 1000);
      this.waiting = { resolve, timer };
    });
  }

  /**
   * A report on the person's leg arrived and the carrier may now move the caller (on answer): until it is settled
   * (`settle`), a stop of the caller's stream is the hand-over's, not the caller's. False when no transfer waits.
   */
  hold(): boolean {
    if (!this.waiting) return false;
    if (!this.held) {
      let release = () => {};
      this.inFlight = new Promise<void>((r) => (release = r));
      const timer = setTimeout(() => this.unhold(), HOLD_MS);
      this.held = () => {
        clearTimeout(timer);
        release();
      };
    }
    return true;
  }

  /** The carrier's word on the person's leg (already recorded on the run), or null: nothing settled, the hold ends. */
  settle(outcome: TransferSettled | null): boolean {
    const w = outcome ? this.take() : null;
    if (w && outcome) {
      w.resolve(outcome);
      if (outcome === "connected") this.of.leave();
    }
    this.unhold();
    return w !== null;
  }

  private unhold(): void {
    const h = this.held;
    this.held = null;
    this.inFlight = null;
    h?.();
  }

  /** No word in time, or the call ends while the person's phone rings: their leg is hung up and the run says why. */
  async giveUp(outcome: "no_answer" | "failed", message: string): Promise<void> {
    const w = this.take();
    if (!w) return;
    const { orgId, runId: id } = this.of.record();
    const runId = id ?? 0;
    try {
      await this.of.ports().transferGiveUp(orgId, runId, outcome, message);
    } catch (err) {
      log("error", "transfer_give_up_failed", { run_id: runId, error: String(err) });
    }
    w.resolve(outcome);
  }

  private take(): Waiting | null {
    const w = this.waiting;
    if (w) clearTimeout(w.timer);
    this.waiting = null;
    return w;
  }
}
