// Global setup (runs in Node): a stand-in for Deepgram's and ElevenLabs' speech APIs on 127.0.0.1, for
// test/calls/speech-providers.test.ts. It checks each request's shape as the providers document it, answers in their
// shapes, and records what it got under the API key, which the tests read back at GET /_standin/log?key=...
// The key also picks the behaviour: "deny…" (401), "fail…" (500), "slow…" (no answer for 2 s), "mute…" (the live
// socket never answers the end of the turn); anything else is served normally. Deepgram Flux (v2 listen) speaks its
// turn events with the words a test scripted for its key (test/calls/flux-standin.ts).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type { TestProject } from "vitest/node";
import { type FluxScript, fluxRefusal, serveFlux } from "./flux-standin";

// ws has no type declarations in this project.
const { WebSocketServer } = createRequire(import.meta.url)("ws");

type Seen = { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; [more: string]: unknown };
const log = new Map<string, Seen[]>();
const fluxScripts = new Map<string, FluxScript>();
const note = (key: string, r: Seen) => {
  if (!log.has(key)) log.set(key, []);
  log.get(key)?.push(r);
  return r;
};

/** Deterministic speech-like bytes for a text (even length). */
function pcmFor(text: string): Buffer {
  const out = Buffer.alloc(2 * (400 + text.length * 13));
  for (let i = 0; i < out.length; i++) out[i] = (i * 31 + text.length * 7) & 0xff;
  return out;
}

/** What the stand-in "heard" in 16-bit audio: the byte count and the runs of equal sample values, in order. */
function heard(audio: Buffer): string {
  const runs: number[] = [];
  for (let i = 0; i + 1 < audio.length; i += 2) {
    const v = audio.readInt16LE(i);
    if (runs[runs.length - 1] !== v) runs.push(v);
  }
  return `${audio.length} bytes: ${runs.join(",")}`;
}

/** The RMS of 16-bit audio (the agent's gate calls 500 and over voice). */
function rms(audio: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < audio.length; i += 2) sum += audio.readInt16LE(i) ** 2;
  return Math.sqrt(sum / Math.max(1, audio.length >> 1));
}

const body = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(value));
}

/** Streams `pcm` in uneven pieces (one of odd length), with pauses so they arrive as separate chunks. */
async function streamPcm(res: ServerResponse, pcm: Buffer, rec: Seen) {
  res.writeHead(200, { "Content-Type": "application/octet-stream" });
  res.on("close", () => {
    rec.cut = !res.writableFinished;
  });
  const cuts = [0, 1, 8, 301, 302, 1001, pcm.length];
  for (let i = 0; i + 1 < cuts.length && !res.destroyed; i++) {
    res.write(pcm.subarray(cuts[i], cuts[i + 1]));
    await sleep(25);
  }
  res.end();
  rec.sent = pcm.toString("base64");
}

const DG_ERRORS = {
  deny: (key: string) => [401, { err_code: "INVALID_AUTH", err_msg: `Invalid credentials (${key}).`, request_id: "dg-req-1" }],
  fail: () => [500, { err_code: "INTERNAL_SERVER_ERROR", err_msg: "The model is unavailable.", request_id: "dg-req-2" }],
} as const;
const EL_ERRORS = {
  deny: (key: string) => [401, { detail: { status: "invalid_api_key", message: `Invalid API key: ${key}` } }],
  fail: () => [500, { detail: "Voice generation failed." }],
} as const;

/** The stand-in's verdict on a request's key: an error to answer, a delay, or nothing. */
async function behaviour(key: string, errors: typeof DG_ERRORS | typeof EL_ERRORS): Promise<[number, unknown] | null> {
  if (key.startsWith("slow")) await sleep(2000);
  if (key.startsWith("deny")) return errors.deny(key) as [number, unknown];
  if (key.startsWith("fail")) return errors.fail() as [number, unknown];
  return null;
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "http://standin");
  const query = Object.fromEntries(url.searchParams);
  const headers = { "content-type": req.headers["content-type"] ?? "", authorization: req.headers.authorization ?? "" };
  if (url.pathname === "/_standin/log") return json(res, 200, log.get(query.key ?? "") ?? []);
  if (url.pathname === "/_standin/flux" && req.method === "POST") {
    fluxScripts.set(query.key ?? "", JSON.parse((await body(req)).toString()));
    return json(res, 200, {});
  }

  // Deepgram: Authorization: Token <key>.
  const dgKey = /^Token (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (url.pathname === "/v1/listen" && req.method === "POST") {
    if (!dgKey) return json(res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials.", request_id: "dg-req-0" });
    const audio = await body(req);
    const rec = note(dgKey, { method: "POST", path: url.pathname, query, headers, bytes: audio.length });
    const err = await behaviour(dgKey, DG_ERRORS);
    if (err) return json(res, err[0], err[1]);
    if (query.encoding !== "linear16" || !query.sample_rate || query.channels !== "1" || audio.length % 2)
      return json(res, 400, { err_code: "Bad Request", err_msg: "Bad Request: failed to process audio: corrupt or unsupported data", request_id: "x" });
    const transcript = heard(audio);
    rec.answered = transcript;
    return json(res, 200, {
      metadata: { request_id: "dg-req-3", channels: 1, duration: audio.length / 2 / Number(query.sample_rate), models: [query.model] },
      results: { channels: [{ alternatives: [{ transcript, confidence: 0.99, words: [] }] }] },
    });
  }
  if (url.pathname === "/v1/speak" && req.method === "POST") {
    if (!dgKey) return json(res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials.", request_id: "dg-req-0" });
    const sent = JSON.parse((await body(req)).toString() || "null");
    const rec = note(dgKey, { method: "POST", path: url.pathname, query, headers, body: sent });
    const err = await behaviour(dgKey, DG_ERRORS);
    if (err) return json(res, err[0], err[1]);
    if (typeof sent?.text !== "string" || Object.keys(sent).length !== 1)
      return json(res, 400, { category: "INVALID_JSON", message: "Invalid JSON submitted.", request_id: "x" });
    return streamPcm(res, pcmFor(sent.text), rec);
  }

  // An OpenAI-compatible chat-completions endpoint: Authorization: Bearer <key>; the reply streamed as server-sent
  // events in uneven pieces (text, then a tool call whose arguments arrive in fragments, then usage).
  if (url.pathname === "/v1/chat/completions" && req.method === "POST") {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const sent = JSON.parse((await body(req)).toString() || "null");
    note(`chat:${bearer}`, { method: "POST", path: url.pathname, query, headers, body: sent });
    if (bearer.startsWith("deny")) return json(res, 401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error" } });
    if (bearer.startsWith("fail")) return json(res, 503, { error: { message: "The server is overloaded.", type: "server_error" } });
    if (bearer.startsWith("slow")) await sleep(2000);
    if (!sent?.model || !Array.isArray(sent.messages) || sent.stream !== true) return json(res, 400, { error: { message: "bad request" } });
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    const chunk = (delta: unknown, extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }], ...extra })}\n\n`;
    const events = [
      chunk({ role: "assistant", content: "Hello " }),
      chunk({ content: "there. How " }),
      chunk({ content: "are you?" }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "interested", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"sea' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ts": 12}' } }] }),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 42, completion_tokens: 7 } })}\n\n`,
      "data: [DONE]\n\n",
    ].join("");
    // Cut anywhere, events split across writes.
    for (let i = 0; i < events.length && !res.destroyed; i += 37) {
      res.write(events.slice(i, i + 37));
      await sleep(5);
    }
    return res.end();
  }

  // ElevenLabs: xi-api-key.
  const elKey = String(req.headers["xi-api-key"] ?? "");
  const voice = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname)?.[1];
  if ((voice || url.pathname === "/v1/speech-to-text") && req.method === "POST") {
    if (!elKey) return json(res, 401, { detail: { status: "needs_authorization", message: "Neither authorization header nor xi-api-key received." } });
    const raw = await body(req);
    if (voice) {
      const sent = JSON.parse(raw.toString() || "null");
      const rec = note(elKey, { method: "POST", path: url.pathname, query, headers, voice: decodeURIComponent(voice), body: sent });
      const err = await behaviour(elKey, EL_ERRORS);
      if (err) return json(res, err[0], err[1]);
      if (typeof sent?.text !== "string" || typeof sent?.model_id !== "string" || !/^pcm_\d+$/.test(query.output_format ?? ""))
        return json(res, 422, { detail: [{ loc: ["body", "text"], msg: "Field required", type: "missing" }] });
      return streamPcm(res, pcmFor(sent.text), rec);
    }
    // Multipart, read as the platform reads it.
    const form = await new Request("http://standin/", { method: "POST", headers: { "content-type": headers["content-type"] }, body: raw }).formData();
    const file = form.get("file");
    const fields = Object.fromEntries([...form].filter(([, v]) => typeof v === "string"));
    const wav = file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0);
    const rec = note(elKey, {
      method: "POST",
      path: url.pathname,
      query,
      headers,
      fields,
      file: file instanceof File ? { name: file.name, type: file.type, bytes: wav.length } : null,
    });
    const err = await behaviour(elKey, EL_ERRORS);
    if (err) return json(res, err[0], err[1]);
    if (!fields.model_id || wav.subarray(0, 4).toString() !== "RIFF" || wav.subarray(8, 12).toString() !== "WAVE")
      return json(res, 400, { detail: { status: "invalid_content", message: "The file is not audio." } });
    const text = `${wav.readUInt32LE(24)} Hz, ${heard(wav.subarray(44))}`;
    rec.answered = text;
    return json(res, 200, { language_code: "en", language_probability: 0.98, text, words: [] });
  }
  json(res, 404, { detail: "Not Found" });
}

/** Deepgram Flux: its turn events, with the words scripted for the key. */
function flux(ws: any, req: IncomingMessage, key: string) {
  const url = new URL(req.url ?? "/", "http://standin");
  const rec = note(key, {
    method: "GET",
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { authorization: req.headers.authorization ?? "" },
    events: [] as string[],
    controls: [] as string[],
    closed: null as number | null,
  });
  if (!fluxScripts.has(key)) fluxScripts.set(key, { words: [] });
  serveFlux(ws, url.searchParams, fluxScripts.get(key)!, rec as Seen & { events: string[]; controls: string[]; closed: number | null });
}

/** Deepgram live: a Results message for the audio not yet finalized, then what the message asked for. */
function live(ws: any, req: IncomingMessage, key: string) {
  const url = new URL(req.url ?? "/", "http://standin");
  const rate = Number(url.searchParams.get("sample_rate"));
  const rec = note(key, {
    method: "GET",
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: {},
    frames: [] as number[],
    controls: [] as string[],
    closed: null as number | null,
  });
  let pending: Buffer[] = [];
  let start = 0;
  // A key with scripted words (POST /_standin/flux): each socket says the next entry, in its interim results once 200
  // ms of its audio were voice (none before: noise or quiet has no words) and in its first final result.
  const scripted = fluxScripts.get(key);
  const says = scripted ? (scripted.words[scripted.next ?? 0] ?? "") : null;
  if (scripted) scripted.next = (scripted.next ?? 0) + 1;
  let voicedFrames = 0;
  let saidFinal = false;
  const results = (fromFinalize: boolean) => {
    const audio = Buffer.concat(pending);
    pending = [];
    const duration = audio.length / 2 / rate;
    const msg = { type: "Results", channel_index: [0, 1], duration, start, is_final: true, speech_final: false, from_finalize: fromFinalize };
    start += duration;
    const transcript = says === null ? heard(audio) : saidFinal ? "" : says;
    saidFinal = true;
    ws.send(JSON.stringify({ ...msg, channel: { alternatives: [{ transcript, confidence: 0.99, words: [] }] } }));
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      (rec.frames as number[]).push(data.length);
      pending.push(data);
      // Interim results as the audio comes (the client must not keep them); a final one after each second of audio.
      if (rms(data) >= 500) voicedFrames++;
      const interim = says === null ? "interim guess" : voicedFrames >= 10 ? says : "";
      ws.send(JSON.stringify({ type: "Results", is_final: false, channel: { alternatives: [{ transcript: interim }] } }));
      if (Buffer.concat(pending).length >= rate * 2) results(false);
      return;
    }
    const type = JSON.parse(data.toString())?.type;
    (rec.controls as string[]).push(type);
    if (key.startsWith("mute")) return;
    if (type === "Finalize" && pending.length) results(true);
    if (type === "CloseStream") {
      if (pending.length) results(false);
      ws.send(JSON.stringify({ type: "Metadata", request_id: "dg-req-4", duration: start, channels: 1 }));
      ws.close(1000);
    }
  });
  ws.on("close", (code: number) => {
    rec.closed = code;
  });
}

declare module "vitest" {
  export interface ProvidedContext {
    speechStandinPort: number;
  }
}

export default async function setup(project: TestProject) {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => json(res, 500, { detail: String(err) }));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://standin");
    const key = /^Token (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const v2 = url.pathname === "/v2/listen";
    const bad = v2 ? fluxRefusal(url.searchParams) : null;
    const refusal =
      url.pathname !== "/v1/listen" && !v2
        ? [404, { detail: "Not Found" }]
        : !key
          ? [401, {}]
          : key.startsWith("deny")
            ? DG_ERRORS.deny(key)
            : bad
              ? [400, { err_code: "Bad Request", err_msg: bad, request_id: "dg-req-5" }]
              : null;
    if (refusal) {
      const text = JSON.stringify(refusal[1]);
      socket.end(
        `HTTP/1.1 ${refusal[0]} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: any) => (v2 ? flux : live)(ws, req, key as string));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("speechStandinPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    wss.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
