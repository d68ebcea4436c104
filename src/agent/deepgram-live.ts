// A turn transcribed on Deepgram's live protocol while it is spoken: binary 16-bit PCM in, `Results` out, ended by
// `Finalize` and `CloseStream`. Deepgram's own API and Workers AI's Deepgram models (the binding's WebSocket) speak it;
// each provides the socket. Flux, Deepgram's conversational model, speaks its turn protocol instead (`TurnInfo`
// events: the turn so far on each update, the whole of it at `EndOfTurn`; `CloseStream` ends it).
import { pcm16ToBytes } from "../lib/audio/pcm";
import { jsonMessage } from "../lib/helpers";
import { ProviderCall } from "./provider-call";
import type { SpeechStream, TurnEvent } from "./speech";

/** Opens the socket (a 101 Response carrying it) under the handshake's signal; refusals are the call's errors. */
export type LiveOpener = (call: ProviderCall, signal: AbortSignal) => Promise<Response>;

/** Flux's TurnInfo events that tell the agent about the turn (`Update` and `StartOfTurn` tell it nothing new). */
const FLUX_TURN_EVENTS: Record<string, TurnEvent> = { EndOfTurn: "end", EagerEndOfTurn: "eager", TurnResumed: "resumed" };

/** What Deepgram says in an error body. */
export const deepgramSays = (body: any) => body?.err_msg ?? body?.message;

/**
 * One turn on Deepgram's live API. Audio pushed before the socket opens waits in order; at the end `Finalize` flushes
 * what Deepgram still holds and `CloseStream` makes it send the last results and close, so the close is the answer.
 */
export class DeepgramLive implements SpeechStream {
  private ws: WebSocket | null = null;
  private waiting: Uint8Array[] = [];
  private finals: string[] = [];
  /** Flux: the words of the turn it has not ended yet (each update carries the turn so far). Nova: the latest interim result. */
  private ongoing = "";
  readonly words?: () => string;
  private ending = false;
  private done = false;
  private failure: unknown = null;
  private settle: { resolve(text: string): void; reject(err: unknown): void } | null = null;
  private readonly call: ProviderCall;
  private readonly onAbort = () => this.abort();
  onTurn: ((event: TurnEvent, words?: string) => void) | null = null;

  constructor(
    what: string,
    settings: { apiKey: string; timeoutMs?: number },
    private readonly openSocket: LiveOpener,
    private readonly signal?: AbortSignal,
    private readonly protocol: "live" | "flux" = "live",
    /** Live protocol: interim results were asked for, so the words so far are known while the caller speaks. */
    interim = false,
  ) {
    this.call = new ProviderCall(what, settings, deepgramSays, signal);
    signal?.addEventListener("abort", this.onAbort, { once: true });
    // Flux's turn updates carry the words as they are spoken (the live protocol's final results come too late).
    // Nova's interim results do the same where they were asked for.
    if (protocol === "flux" || interim) this.words = () => [...this.finals, this.ongoing].filter(Boolean).join(" ");
    this.connect().catch((err) => this.fail(err));
  }

  private async connect(): Promise<void> {
    // The opener's signal would cut the open socket too (a close 1006), so it is only the handshake's: it follows
    // the call's until the answer.
    const handshake = new AbortController();
    const stop = () => handshake.abort(this.call.signal.reason);
    this.call.signal.addEventListener("abort", stop, { once: true });
    let res: Response;
    try {
      res = await this.openSocket(this.call, handshake.signal);
    } finally {
      this.call.signal.removeEventListener("abort", stop);
    }
    const ws = res.webSocket;
    if (!ws) throw await this.call.refusal(res);
    ws.accept();
    if (this.done) return ws.close(1000, "aborted");
    this.ws = ws;
    ws.addEventListener("message", (e) => this.onMessage(e.data));
    ws.addEventListener("close", (e) => this.onClose(e.code, e.reason));
    ws.addEventListener("error", () => this.fail(this.call.error("the stream failed")));
    for (const bytes of this.waiting) this.send(bytes);
    this.waiting = [];
    if (this.ending) this.sendEnd();
  }

  push(samples: Int16Array): void {
    if (this.done || this.ending) return;
    const bytes = pcm16ToBytes(samples);
    if (this.ws) this.send(bytes);
    else this.waiting.push(bytes);
  }

  finish(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new Error("finish() was already called"));
    this.ending = true;
    const answer = new Promise<string>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // The connection's own limit covered the handshake; this one covers Deepgram's last answer.
    const timer = setTimeout(() => this.fail(this.call.error(`timed out after ${this.call.timeoutMs} ms`)), this.call.timeoutMs);
    answer.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    if (this.ws) this.sendEnd();
    return answer;
  }

  abort(): void {
    if (this.done) return;
    this.fail(this.signal?.aborted ? this.signal.reason : new DOMException("The transcription was aborted", "AbortError"));
  }

  private sendEnd(): void {
    if (this.protocol === "live") this.send(JSON.stringify({ type: "Finalize" }));
    this.send(JSON.stringify({ type: "CloseStream" }));
  }

  /** Sends on the open socket; a socket that went away fails the turn (push never throws). */
  private send(data: Uint8Array | string): void {
    try {
      this.ws?.send(data);
    } catch (err) {
      this.fail(this.call.error(`the stream failed: ${(err as Error)?.message ?? err}`));
    }
  }

  private onMessage(data: unknown): void {
    const msg = jsonMessage(data);
    if (msg?.type === "TurnInfo") {
      // Flux: our end of the callee's turn may come before its own, so the turn so far counts too.
      const words = typeof msg.transcript === "string" ? msg.transcript.trim() : "";
      if (msg.event !== "EndOfTurn") this.ongoing = words;
      else {
        if (words) this.finals.push(words);
        this.ongoing = "";
      }
      // Flux's own turn detection: the agent ends the turn on EndOfTurn rather than waiting for silence.
      const event = FLUX_TURN_EVENTS[msg.event as string];
      if (event && !this.ending) this.onTurn?.(event, [...this.finals, this.ongoing].filter(Boolean).join(" "));
      return;
    }
    // Interim results are revised later: they are the words so far (`words`), and only final ones make the turn's text.
    const text = msg?.type === "Results" ? msg.channel?.alternatives?.[0]?.transcript : undefined;
    if (typeof text !== "string") return;
    if (!msg?.is_final) this.ongoing = text.trim();
    else {
      if (text.trim()) this.finals.push(text.trim());
      this.ongoing = "";
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.done) return;
    this.ws = null;
    // A close after CloseStream is the answer; any other (Deepgram's DATA-/NET- errors, a close before the turn
    // ended) is a failure.
    if (this.ending && (code === 1000 || code === 1005)) {
      this.done = true;
      this.signal?.removeEventListener("abort", this.onAbort);
      // Flux's turn so far counts (our end of the turn may come before its own); a Nova interim result does not.
      this.settle?.resolve([...this.finals, this.protocol === "flux" ? this.ongoing : ""].filter(Boolean).join(" "));
      return;
    }
    this.fail(this.call.error(`closed the stream (${code}${reason ? ` ${reason}` : ""})`));
  }

  private fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failure = err;
    this.waiting = [];
    this.signal?.removeEventListener("abort", this.onAbort);
    try {
      this.ws?.close(1000, "done");
    } catch {
      // already closing
    }
    this.ws = null;
    this.settle?.reject(err);
  }
}
