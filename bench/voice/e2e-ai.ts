// bench/voice --e2e: Workers AI stood in for at the AI binding, at the engines' published latencies, speaking the
// same protocols the product reads (as test/calls/flux-turns.test.ts fakes them): Deepgram Flux's WebSocket (TurnInfo
// EagerEndOfTurn 110 ms and EndOfTurn 260 ms after the caller's last voiced frame reached it: eager mode is documented
// to save about 150-250 ms, and the low end is taken), the chat model's server-sent events (first token 300 ms after
// the request, then a token every 15 ms) and Aura's PCM (the whole sentence 150 ms after the request).
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import { isVoiced } from "../../src/lib/audio/level";

export const FLUX = "@cf/deepgram/flux";
/**
 * `smartTurn`: smart-turn's verdict (Pipecat reports ~12 ms of inference on a GPU; the rest is the request's own round
 * trip); `novaFinal`: Deepgram Nova's final result after `Finalize` (it flushes what it holds at once).
 */
export const STUB_MS = { eagerEndOfTurn: 110, endOfTurn: 260, firstToken: 300, voiceFirstByte: 150, smartTurn: 100, novaFinal: 50 };
/** Where the agents of BENCH_STT=deepgram-flux and smart-turn reach "Deepgram" (e2e-worker.ts answers it in the isolate). */
export const DEEPGRAM_BENCH_HOST = "deepgram.bench.example";
/** Two sentences, so a reply's audio crosses a sentence boundary (where a stall would be heard as a gap). */
const REPLY = ["Sure, ", "I ", "can ", "help ", "with ", "that. ", "It ", "runs ", "for ", "three ", "days ", "in ", "Lisbon."];
const CALLER_WORDS = "I have a question about the conference.";
/** Milliseconds of synthesized audio per character of text. */
const MS_PER_CHAR = 45;

/**
 * How late each stub's wait fired, in ms (the isolate busy with other calls): what the client measures as edgedial's
 * own share includes it, so the bench reports it beside (read through /bench/timings). `pathLateness`: per call
 * session, for each reply, how late the three waits on its path (EagerEndOfTurn, the first token, the first voice)
 * fired together.
 */
export const stubLateness: number[] = [];
export const pathLateness = new Map<string, number[]>();
const timer = (ms: number, fn: (lateMs: number) => void) => {
  const due = Date.now() + ms;
  return setTimeout(() => {
    const late = Date.now() - due;
    stubLateness.push(late);
    fn(late);
  }, ms);
};
const sleep = (ms: number) => new Promise<number>((r) => timer(ms, r));

export class BenchAi {
  /** The current reply's waits so far (from its EagerEndOfTurn), until its first voice. */
  private path: number[] | null = null;

  /** `session`: the call session's id, under which its replies' path lateness is kept. */
  constructor(private readonly session = "") {}

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) return this.chat(inputs.messages as { role: string; content: unknown }[]);
    if (model === WORKERS_AI_TTS_MODEL) {
      const rate = Number(inputs.sample_rate) || 16000;
      const late = await sleep(STUB_MS.voiceFirstByte);
      if (this.path?.length === 2) {
        const sum = this.path.reduce((a, b) => a + b, late);
        pathLateness.set(this.session, [...(pathLateness.get(this.session) ?? []), sum]);
        this.path = null;
      }
      const n = Math.round((rate * MS_PER_CHAR * String(inputs.text).length) / 1000);
      return new Uint8Array(new Int16Array(n).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    }
    if (model === FLUX && options?.websocket) return this.flux(Number(inputs.sample_rate) || 16000);
    if (model === WORKERS_AI_TURN_MODEL) {
      await sleep(STUB_MS.smartTurn);
      return { is_complete: true, probability: 0.95 };
    }
    throw new Error(`bench: no such model: ${model}`);
  }

  /**
   * Deepgram's own API as the agent's key reaches it (Token auth, the documented query): Flux on v2 listen (the same
   * stub as Workers AI's), or Nova on v1 live: an interim result with the words after 200 ms of audio, its final
   * result STUB_MS.novaFinal after `Finalize`, then the close.
   */
  deepgram(url: URL, headers: Headers): Response {
    if (headers.get("Authorization") !== "Token bench") return new Response("{}", { status: 401 });
    const rate = Number(url.searchParams.get("sample_rate")) || 16000;
    if (url.pathname === "/v2/listen" && url.searchParams.get("model") === "flux-general-en") return this.flux(rate);
    if (url.pathname !== "/v1/listen" || url.searchParams.get("interim_results") !== "true") return new Response("{}", { status: 400 });
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    // The agent may close first (a turn dropped): nothing is sent after.
    const send = (msg: unknown) => {
      try {
        server.send(JSON.stringify(msg));
      } catch {
        // closed
      }
    };
    let chunks = 0;
    server.addEventListener("message", (e) => {
      // Interim results (asked for): the caller's words once 200 ms of their audio came, as the stream's words so far.
      if (typeof e.data !== "string") {
        if (++chunks === 10) send({ type: "Results", is_final: false, channel: { alternatives: [{ transcript: CALLER_WORDS }] } });
        return;
      }
      const type = JSON.parse(e.data).type;
      if (type === "Finalize")
        timer(STUB_MS.novaFinal, () =>
          send({ type: "Results", is_final: true, from_finalize: true, channel: { alternatives: [{ transcript: CALLER_WORDS }] } }),
        );
      // The close after the final result (timers fire in order).
      if (type === "CloseStream")
        timer(STUB_MS.novaFinal, () => {
          try {
            server.close(1000, "done");
          } catch {
            // closed
          }
        });
    });
    return new Response(null, { status: 101, webSocket: client });
  }

  /** The greeting (no caller words yet) answers at once; a reply's first token comes after STUB_MS.firstToken. */
  private chat(messages: { role: string; content: unknown }[]): ReadableStream<Uint8Array> {
    const caller = messages.some((m) => m.role === "user" && m.content);
    const tokens = caller ? REPLY : ["Hi Ada!"];
    const enc = new TextEncoder();
    const path = this.path;
    return new ReadableStream({
      async start(c) {
        const late = await sleep(caller ? STUB_MS.firstToken : 0);
        if (caller && path?.length === 1) path.push(late);
        for (const [i, t] of tokens.entries()) {
          if (i) await new Promise((r) => setTimeout(r, 15));
          c.enqueue(enc.encode(`data: ${JSON.stringify({ response: t })}\n\n`));
        }
        c.enqueue(enc.encode(`data: ${JSON.stringify({ response: "", usage: { prompt_tokens: 5, completion_tokens: tokens.length } })}\n\ndata: [DONE]\n\n`));
        c.close();
      },
    });
  }

  /**
   * Flux: EagerEndOfTurn STUB_MS.eagerEndOfTurn and EndOfTurn STUB_MS.endOfTurn after the last voiced frame it received
   * (timers reset by every voiced one; a voiced frame after the eager one is TurnResumed, as Flux's state machine has it).
   */
  private flux(rate: number): Response {
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const frame = rate / 50;
    let turn = 0;
    let stage: "idle" | "speaking" | "eager" = "idle";
    let lastVoicedEnd = 0;
    // One timer, re-armed when it finds its deadline moved (a timer set and cleared per voiced frame would itself
    // load the isolate that the bench measures).
    let pending: ReturnType<typeof setTimeout> | null = null;
    const send = (event: string, transcript: string) =>
      server.send(JSON.stringify({ type: "TurnInfo", event, turn_index: turn, transcript, end_of_turn_confidence: 0.9 }));
    const due = () => lastVoicedEnd + (stage === "speaking" ? STUB_MS.eagerEndOfTurn : STUB_MS.endOfTurn);
    const check = () => {
      pending = null;
      const now = Date.now();
      if (stage === "idle") return;
      if (now < due()) return arm();
      const late = now - due();
      stubLateness.push(late);
      if (stage === "speaking") {
        stage = "eager";
        this.path = [late];
        send("EagerEndOfTurn", CALLER_WORDS);
        return arm();
      }
      send("EndOfTurn", CALLER_WORDS);
      [stage, turn] = ["idle", turn + 1];
    };
    const arm = () => {
      if (pending === null) pending = setTimeout(check, Math.max(0, due() - Date.now()));
    };
    let chain = Promise.resolve();
    server.addEventListener("message", (e) => {
      const data = e.data;
      chain = chain.then(async () => {
        if (typeof data === "string") {
          if (JSON.parse(data).type === "CloseStream") {
            if (pending !== null) clearTimeout(pending);
            server.close(1000, "done");
          }
          return;
        }
        const chunk = new Int16Array(data instanceof ArrayBuffer ? data : await (data as Blob).arrayBuffer());
        const frames = Math.floor(chunk.length / frame);
        let last = -1;
        for (let i = 0; i < frames; i++) if (isVoiced(chunk.subarray(i * frame, (i + 1) * frame))) last = i;
        if (last < 0) return;
        if (stage === "idle") send("StartOfTurn", "");
        if (stage === "eager") send("TurnResumed", "");
        stage = "speaking";
        // The chunk arrived as its last frame ended: the last voiced frame ended (frames - 1 - last) frames earlier.
        lastVoicedEnd = Date.now() - (frames - 1 - last) * 20;
        arm();
      });
    });
    return new Response(null, { status: 101, webSocket: client });
  }
}
