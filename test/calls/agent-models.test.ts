// The chat model providers against their documented wire shapes: an OpenAI-compatible endpoint (a stand-in that
// checks the request and streams server-sent events cut at awkward places) and Workers AI faked at the binding.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatRequest } from "../../src/agent/chat";
import { ModelError, sseData } from "../../src/agent/chat-stream";
import { OpenAiModel } from "../../src/agent/openai-model";
import { WorkersAiModel } from "../../src/agent/workers-ai-model";
import { WorkersAiSpeechToText, WorkersAiTextToSpeech } from "../../src/agent/workers-ai-speech";
import { DEFAULT_TURN_SETTINGS } from "../../src/agent/conversation-agent";
import { DeepgramSpeechToText, DeepgramTextToSpeech } from "../../src/agent/deepgram-speech";
import { ElevenLabsSpeechToText, ElevenLabsTextToSpeech } from "../../src/agent/elevenlabs-speech";
import { enginesFor } from "../../src/agent/engines";
import { allowsPrivatePbx } from "../../src/telephony/calling-policy";
import { getDb } from "../../src/lib/db";
import { ScriptedModel } from "../../src/agent/scripted-model";
import { LocalModel } from "../../src/agent/local-model";
import { pcm16ToBytes } from "../../src/lib/audio/pcm";
import { readWav, wavFile } from "../../src/lib/audio/wav";
import { inPieces } from "../streams";

/** The organization's network policy, as the calls module hands it to the agent's engines. */
const privacy = (e: Env, orgId: number) => () => allowsPrivatePbx(getDb(e), orgId);

const REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "assistant", content: "Hi Ada!" },
    { role: "user", content: "Tell me more." },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "interested", arguments: {} }] },
    { role: "tool", toolCallId: "c1", content: "Moved to pitch." },
  ],
  tools: [{ name: "done", description: "They said how many", parameters: { type: "object", properties: { seats: { type: "number" } }, required: [] } }],
};

/** A body that sends `text` in pieces of `size` bytes (events split anywhere, even inside a character). */
function pieces(text: string, size: number): ReadableStream<Uint8Array> {
  return inPieces(new TextEncoder().encode(text), size);
}

async function all(it: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const sse = (chunks: unknown[], eol = "\n") => chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}${eol}${eol}`).join("");

describe("OpenAI-compatible chat completions", () => {
  const STREAM = sse(
    [
      { choices: [{ index: 0, delta: { role: "assistant", content: "Gr" } }] },
      { choices: [{ index: 0, delta: { content: "eat — " } }] },
      { choices: [{ index: 0, delta: { content: "thanks." } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_9", type: "function", function: { name: "done", arguments: "" } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"se' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'ats": 12}' } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      { choices: [], usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 } },
      "[DONE]",
    ],
    "\r\n",
  );

  it("sends the chat, tools and streaming options; reads text pieces, a tool call sent in fragments, and usage", async () => {
    let seen: { url: string; init: RequestInit } | null = null;
    const model = new OpenAiModel({ baseUrl: "http://llm.test/v1/", apiKey: "sk-test", model: "small-model" }, (async (url: string, init: RequestInit) => {
      seen = { url, init };
      return new Response(pieces(STREAM, 7), { headers: { "Content-Type": "text/event-stream" } });
    }) as typeof fetch);
    const events = await all(model.stream(REQUEST));
    expect(events).toEqual([
      { type: "text", text: "Gr" },
      { type: "text", text: "eat — " },
      { type: "text", text: "thanks." },
      { type: "usage", inputTokens: 120, outputTokens: 9 },
      { type: "tool_call", call: { id: "call_9", name: "done", arguments: { seats: 12 } } },
    ]);
    expect(seen!.url).toBe("http://llm.test/v1/chat/completions");
    expect(new Headers(seen!.init.headers).get("authorization")).toBe("Bearer sk-test");
    expect(JSON.parse(String(seen!.init.body))).toEqual({
      model: "small-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "assistant", content: "Hi Ada!" },
        { role: "user", content: "Tell me more." },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "interested", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "Moved to pitch." },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "done",
            description: "They said how many",
            parameters: { type: "object", properties: { seats: { type: "number" } }, required: [] },
          },
        },
      ],
      tool_choice: "auto",
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("a refusal is a ModelError with the endpoint's message; an unreachable or silent endpoint too", async () => {
    const refusing = new OpenAiModel({ baseUrl: "http://llm.test/v1", apiKey: "bad", model: "m" }, (async () =>
      Response.json({ error: { message: "Invalid API key" } }, { status: 401 })) as unknown as typeof fetch);
    const err = await all(refusing.stream(REQUEST)).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ message: "The model endpoint answered HTTP 401: Invalid API key", status: 401 });

    const down = new OpenAiModel({ baseUrl: "http://llm.test/v1", apiKey: "", model: "m" }, (async () => {
      throw new TypeError("connection refused");
    }) as unknown as typeof fetch);
    await expect(all(down.stream(REQUEST))).rejects.toThrow("The model endpoint could not be reached: connection refused");

    const silent = new OpenAiModel(
      { baseUrl: "http://llm.test/v1", apiKey: "", model: "m", timeoutMs: 50 },
      ((_u: string, init: RequestInit) =>
        new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))) as unknown as typeof fetch,
    );
    await expect(all(silent.stream(REQUEST))).rejects.toThrow("The model endpoint could not be reached: timed out");
  });
});

describe("Workers AI (faked at the binding)", () => {
  it("streams the reply: response text pieces, whole tool calls in its legacy shape, usage", async () => {
    let asked: { model: string; inputs: Record<string, unknown> } | null = null;
    const ai = {
      async run(model: string, inputs: Record<string, unknown>) {
        asked = { model, inputs };
        return pieces(
          sse([
            { response: "Sure", p: "abc" },
            { response: ", one moment." },
            { response: "", tool_calls: [{ name: "done", arguments: { seats: 3 } }] },
            { response: "", usage: { prompt_tokens: 50, completion_tokens: 4, total_tokens: 54 } },
            "[DONE]",
          ]),
          11,
        );
      },
    };
    const events = await all(new WorkersAiModel(ai).stream(REQUEST));
    expect(events).toEqual([
      { type: "text", text: "Sure" },
      { type: "text", text: ", one moment." },
      { type: "tool_call", call: { id: "call_1", name: "done", arguments: { seats: 3 } } },
      { type: "usage", inputTokens: 50, outputTokens: 4 },
    ]);
    expect(asked!.model).toBe("@cf/meta/llama-3.3-70b-instruct-fp8-fast");
    expect(asked!.inputs).toMatchObject({ stream: true, tools: [{ type: "function", function: { name: "done" } }] });
    expect((asked!.inputs.messages as unknown[]).length).toBe(5);
  });

  it("a model that answers at once (OpenAI's tool call shape, arguments as a string); a failing binding is a ModelError", async () => {
    const once = {
      run: async () => ({ response: "Okay.", tool_calls: [{ id: "t1", type: "function", function: { name: "done", arguments: '{"seats":"4"}' } }] }),
    };
    expect(await all(new WorkersAiModel(once, "@cf/other/model").stream(REQUEST))).toEqual([
      { type: "text", text: "Okay." },
      { type: "tool_call", call: { id: "t1", name: "done", arguments: { seats: "4" } } },
    ]);
    const failing = {
      run: async () => {
        throw new Error("3040: Capacity temporarily exceeded");
      },
    };
    await expect(all(new WorkersAiModel(failing).stream(REQUEST))).rejects.toThrow("Workers AI failed: 3040: Capacity temporarily exceeded");
  });
});

describe("server-sent events", () => {
  it("joins multi-line data, skips comments and other fields, and takes a last event without a blank line", async () => {
    const out: string[] = [];
    for await (const d of sseData(pieces(": keep-alive\nevent: x\ndata: a\ndata: b\n\nid: 3\ndata: c", 3))) out.push(d);
    expect(out).toEqual(["a\nb", "c"]);
  });
});

describe("Workers AI speech (faked at the binding)", () => {
  it("speech-to-text sends the utterance as a 16-bit WAV to Nova-3 and reads its transcript", async () => {
    let asked: { model: string; inputs: any } | null = null;
    const ai = {
      async run(model: string, inputs: any) {
        asked = { model, inputs };
        return { results: { channels: [{ alternatives: [{ transcript: "We need twelve seats.", confidence: 0.98 }] }] } };
      },
    };
    const samples = Int16Array.from({ length: 1600 }, (_, i) => (i % 50) * 100);
    expect(await new WorkersAiSpeechToText(ai).transcribe({ samples, rate: 8000 })).toBe("We need twelve seats.");
    expect(asked!.model).toBe("@cf/deepgram/nova-3");
    expect(asked!.inputs.audio.contentType).toBe("audio/wav");
    const sent = readWav(asked!.inputs.audio.body);
    expect(sent).toMatchObject({ rate: 8000, channels: 1 });
    expect(sent.samples).toEqual(samples);
    // Nothing heard is an empty transcript; a failing binding is an error that names the step.
    expect(await new WorkersAiSpeechToText({ run: async () => ({ results: { channels: [] } }) }).transcribe({ samples, rate: 8000 })).toBe("");
    await expect(
      new WorkersAiSpeechToText({
        run: async () => {
          throw new Error("5xx");
        },
      }).transcribe({ samples, rate: 8000 }),
    ).rejects.toThrow("Workers AI speech-to-text failed: 5xx");
  });

  it("text-to-speech asks Aura for raw 16-bit PCM at the rate wanted, whatever shape the audio comes back in", async () => {
    const samples = Int16Array.from([0, 1000, -1000, 32767, -32768]);
    const raw = pcm16ToBytes(samples);
    const wav = wavFile(samples, 24000);
    const b64 = btoa(String.fromCharCode(...raw));
    const shapes: Array<[string, unknown, number]> = [
      ["a stream", new Response(raw).body, 16000],
      ["bytes", raw, 16000],
      ["base64 text", b64, 16000],
      ["{ audio: base64 }", { audio: b64 }, 16000],
      ["a WAV after all", wav, 24000],
    ];
    for (const [what, out, rate] of shapes) {
      let asked: any = null;
      const tts = new WorkersAiTextToSpeech({
        async run(model: string, inputs: any) {
          asked = { model, inputs };
          return out;
        },
      });
      const speech = await tts.synthesize("Hello there.");
      expect(speech.samples, what).toEqual(samples);
      expect(speech.rate, what).toBe(rate);
      expect(asked).toEqual({
        model: "@cf/deepgram/aura-1",
        inputs: { text: "Hello there.", speaker: "asteria", encoding: "linear16", container: "none", sample_rate: 16000 },
      });
    }
    await expect(new WorkersAiTextToSpeech({ run: async () => ({}) }).synthesize("x")).rejects.toThrow("Workers AI text-to-speech answered no audio");
  });
});

describe("Workers AI live transcription (the binding's WebSocket, Deepgram's live protocol)", () => {
  /** A binding whose Deepgram models answer `websocket: true` with a socket that speaks Deepgram's live protocol. */
  function liveAi() {
    const asked: Array<{ model: string; inputs: any; options: any }> = [];
    const ai = {
      async run(model: string, inputs: any, options?: any) {
        asked.push({ model, inputs, options });
        const pair = new WebSocketPair();
        const [client, server] = Object.values(pair);
        server.accept();
        let bytes = 0;
        server.addEventListener("message", (e) => {
          if (typeof e.data !== "string") bytes += (e.data as { byteLength?: number; size?: number }).byteLength ?? (e.data as Blob).size;
          else if (JSON.parse(e.data).type === "CloseStream") {
            server.send(JSON.stringify({ type: "Results", is_final: true, channel: { alternatives: [{ transcript: `heard ${bytes} bytes` }] } }));
            server.close(1000, "done");
          }
        });
        return new Response(null, { status: 101, webSocket: client });
      },
    };
    return { ai, asked };
  }

  it("streams the turn's audio as it is pushed and answers with the final results; only Deepgram's models stream", async () => {
    const { ai, asked } = liveAi();
    const stt = new WorkersAiSpeechToText(ai);
    const live = stt.open!(8000);
    for (let i = 0; i < 3; i++) live.push(new Int16Array(160));
    expect(await live.finish()).toBe("heard 960 bytes");
    expect(asked).toEqual([
      {
        model: "@cf/deepgram/nova-3",
        inputs: { encoding: "linear16", sample_rate: "8000", punctuate: "true", smart_format: "true" },
        options: { websocket: true },
      },
    ]);
    expect(new WorkersAiSpeechToText(ai, "@cf/openai/whisper-large-v3-turbo").open).toBeUndefined();
  });

  it("Flux: its turn protocol (the turn so far on each update, the whole at EndOfTurn), ended by CloseStream alone", async () => {
    const asked: Array<{ model: string; inputs: any }> = [];
    const controls: string[] = [];
    const ai = {
      async run(model: string, inputs: any, options?: any) {
        asked.push({ model, inputs });
        if (!options?.websocket) return { results: { channels: [{ alternatives: [{ transcript: "whole" }] }] } };
        const [client, server] = Object.values(new WebSocketPair());
        server.accept();
        const turn = (event: string, transcript: string, turn_index: number) => JSON.stringify({ type: "TurnInfo", event, turn_index, transcript });
        server.addEventListener("message", (e) => {
          if (typeof e.data !== "string") return;
          const type = JSON.parse(e.data).type;
          controls.push(type);
          if (type !== "CloseStream") return;
          server.send(turn("StartOfTurn", "", 0));
          server.send(turn("Update", "hello", 0));
          server.send(turn("EndOfTurn", "Hello there.", 0));
          server.send(turn("StartOfTurn", "", 1));
          server.send(turn("Update", "we need twelve", 1));
          server.close(1000, "done");
        });
        return new Response(null, { status: 101, webSocket: client });
      },
    };
    const stt = new WorkersAiSpeechToText(ai, "@cf/deepgram/flux");
    const live = stt.open!(16000);
    live.push(new Int16Array(320));
    // Flux ended one turn; the callee's words since (its turn not ended yet) still belong to ours.
    expect(await live.finish()).toBe("Hello there. we need twelve");
    expect(controls).toEqual(["CloseStream"]);
    // Flux is asked for its early end-of-turn events too (the speculative reply starts on them).
    expect(asked).toEqual([{ model: "@cf/deepgram/flux", inputs: { encoding: "linear16", sample_rate: "16000", eager_eot_threshold: "0.4" } }]);
    // A whole utterance (the fallback) goes to Nova-3: Flux only streams.
    expect(await stt.transcribe({ samples: new Int16Array(160), rate: 8000 })).toBe("whole");
    expect(asked[1].model).toBe("@cf/deepgram/nova-3");
    // An agent's own confidences go as Deepgram takes them; eager mode off sends no eager threshold.
    for (const [flux, inputs] of [
      [
        { eotThreshold: 0.8, eagerEotThreshold: 0.5 },
        { eot_threshold: "0.8", eager_eot_threshold: "0.5" },
      ],
      [{ eagerEotThreshold: null }, {}],
    ] as const) {
      const own = new WorkersAiSpeechToText(ai, "@cf/deepgram/flux", flux);
      await own.open!(16000).finish();
      expect(asked.at(-1)).toEqual({ model: "@cf/deepgram/flux", inputs: { encoding: "linear16", sample_rate: "16000", ...inputs } });
    }
  });

  it("a binding that answers no socket is a provider error, not a hang", async () => {
    const stt = new WorkersAiSpeechToText({ run: async () => ({ text: "not a socket" }) });
    const live = stt.open!(8000);
    live.push(new Int16Array(160));
    await expect(live.finish()).rejects.toThrow("Workers AI live speech-to-text answered no WebSocket");
  });
});

describe("an agent's engines (workflow_configurations.voice_agent)", () => {
  const asked: Array<{ model: string; inputs: any }> = [];
  const ai = {
    async run(model: string, inputs: any) {
      asked.push({ model, inputs });
      if (model.includes("nova") || model.includes("whisper")) return { results: { channels: [{ alternatives: [{ transcript: "hi" }] }] } };
      if ("text" in inputs) return new Uint8Array(4);
      return { response: "ok" };
    },
  };
  const withAi = { ...env, AI: ai } as unknown as Env;
  const engines = async (configurations: unknown, e: Env = withAi) => {
    const choice = await enginesFor(e, 1, configurations, privacy(e, 1));
    if (!choice.ok) throw new Error(choice.reason);
    return choice;
  };

  it("Workers AI by default; the first form of the settings (flat model names) still names the models and the voice", async () => {
    asked.length = 0;
    const e = (
      await engines({
        voice_agent: { llm_model: "@cf/qwen/qwen3-30b-a3b-fp8", stt_model: "@cf/openai/whisper-large-v3-turbo", tts_voice: "luna" },
        other: true,
      })
    ).engines;
    await all(e.model.stream(REQUEST));
    await e.stt.transcribe({ samples: new Int16Array(160), rate: 8000 });
    await e.tts.synthesize("Hello.");
    expect(asked.map((a) => a.model)).toEqual(["@cf/qwen/qwen3-30b-a3b-fp8", "@cf/openai/whisper-large-v3-turbo", "@cf/deepgram/aura-1"]);
    expect(asked[2].inputs.speaker).toBe("luna");
    // None, or settings that no longer read as settings: the defaults.
    for (const none of [undefined, null, {}, { voice_agent: "x" }, { voice_agent: { llm_model: 7 } }, { voice_agent: { tts_model: "rm -rf /; x" } }]) {
      asked.length = 0;
      const d = (await engines(none)).engines;
      await all(d.model.stream(REQUEST));
      await d.tts.synthesize("Hi.");
      expect(asked.map((a) => [a.model, a.inputs.speaker])).toEqual([
        ["@cf/meta/llama-3.3-70b-instruct-fp8-fast", undefined],
        ["@cf/deepgram/aura-1", "asteria"],
      ]);
    }
  });

  it("an OpenAI-compatible model, Deepgram and ElevenLabs as chosen; turn settings over the defaults", async () => {
    const chosen = await engines({
      voice_agent: {
        llm: { provider: "openai", base_url: "https://llm.example.com/v1", model: "m" },
        stt: { provider: "deepgram", api_key: "k" },
        tts: { provider: "elevenlabs", api_key: "k", voice: "v1" },
        turn: { end_of_turn_ms: 500, max_wait_ms: 4000, filler_text: "Hmm." },
      },
    });
    expect(chosen.engines.model).toBeInstanceOf(OpenAiModel);
    expect(chosen.engines.stt).toBeInstanceOf(DeepgramSpeechToText);
    expect(chosen.engines.tts).toBeInstanceOf(ElevenLabsTextToSpeech);
    expect(chosen.turn).toEqual({ ...DEFAULT_TURN_SETTINGS, endOfTurnMs: 500, maxWaitMs: 4000, fillerText: "Hmm." });
    const other = await engines({ voice_agent: { stt: { provider: "elevenlabs", api_key: "k" }, tts: { provider: "deepgram", api_key: "k" } } });
    expect(other.engines.model).toBeInstanceOf(WorkersAiModel);
    expect(other.engines.stt).toBeInstanceOf(ElevenLabsSpeechToText);
    expect(other.engines.tts).toBeInstanceOf(DeepgramTextToSpeech);
  });

  it("the scripted engines (local development): a scripted model, stored recordings as the clips it recognizes, tones", async () => {
    const scripted = { voice_agent: { llm: { provider: "scripted", script: [{ say: "Hello." }] }, tts: { provider: "scripted" } } };
    const chosen = await engines(scripted);
    expect(chosen.engines.model).toBeInstanceOf(ScriptedModel);
    expect((await chosen.engines.tts.synthesize("Hi!")).samples.length).toBeGreaterThan(0);
    // Never on a deployment: LOCAL_DEV is only set in local development.
    const deployed = await enginesFor({ ...withAi, LOCAL_DEV: "" } as Env, 1, scripted, privacy(withAi, 1));
    expect(deployed).toMatchObject({ ok: false, reason: "The model is scripted, which only local development (LOCAL_DEV) runs" });
    const missing = await enginesFor(
      withAi,
      1,
      { voice_agent: { stt: { provider: "scripted", clips: [{ text: "Hi", recording_id: "rec_nope" }] } } },
      privacy(withAi, 1),
    );
    expect(missing).toMatchObject({ ok: false, reason: "Speech-to-text's clip rec_nope is not a stored recording" });
  });

  it("says why there are no engines: Workers AI without the binding, an endpoint the organization's network policy refuses", async () => {
    // A deployment whose wrangler config lost the binding (the suites' own env has a local stand-in for it).
    const noAi = { ...env, AI: undefined, LOCAL_DEV: "" } as unknown as Env;
    expect(await enginesFor(noAi, 1, {}, privacy(noAi, 1))).toEqual({
      ok: false,
      reason: "The model is Workers AI, and this deployment has no AI binding",
      turn: DEFAULT_TURN_SETTINGS,
    });
    // Local development without a cloud account runs the offline engines in Workers AI's place.
    const offline = { ...env, AI: undefined } as unknown as Env;
    const local = await enginesFor(offline, 1, {}, privacy(offline, 1));
    expect(local.ok && local.engines.model).toBeInstanceOf(LocalModel);
    // npm run dev without --workers-ai: the binding exists but reaches nothing, and says so.
    const devOffline = { ...env, OFFLINE_ENGINES: "true" } as unknown as Env;
    const dev = await enginesFor(devOffline, 1, {}, privacy(devOffline, 1));
    expect(dev.ok && dev.engines.model).toBeInstanceOf(LocalModel);
    const ollama = { voice_agent: { llm: { provider: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3" } } };
    const refused = await enginesFor(withAi, 999_999, ollama, privacy(withAi, 999_999));
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toMatch(/^The model endpoint refused/);
  });
});
