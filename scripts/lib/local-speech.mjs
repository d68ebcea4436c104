// The agent's voice in local development: eSpeak NG (the npm devDependency `espeak-ng`, compiled to WebAssembly) behind
// a small HTTP server on 127.0.0.1, which `npm run dev` and `npm run demo` start and name to the Worker as
// LOCAL_SPEECH_URL (src/agent/local-speech.ts). It runs here, in Node, and never in the Worker: eSpeak NG is GPL-3.0,
// so it is a development tool beside the service, not part of what is deployed.
//
//   POST /speak  {"text": "...", "rate": 8000 | 16000 | 24000}  →  200, 16-bit little-endian mono PCM at that rate
//                                                                    (Content-Type audio/pcm; X-Sample-Rate: rate)
//
// The WebAssembly is compiled once and each utterance instantiates it afresh (eSpeak's command line keeps state in
// its globals, so an instance is not reused): about 0.2 s an utterance on a busy 2-core machine, most of it the
// instantiation of its 18 MB of voice data.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";

export const SPEAK_RATES = [8000, 16000, 24000];
/** eSpeak NG's own output rate. */
export const ESPEAK_RATE = 22050;
/** Longer texts are refused: one reply's sentence is far shorter. */
export const MAX_TEXT = 2000;

let compiled = null;
let factory = null;

/** The compiled module and eSpeak's loader, once per process (compiling takes a few hundred ms on a busy machine). */
function engine() {
  compiled ??= (async () => {
    const require = createRequire(import.meta.url);
    const wasmPath = require.resolve("espeak-ng/dist/espeak-ng.wasm");
    const [module, loader] = await Promise.all([WebAssembly.compile(readFileSync(wasmPath)), import("espeak-ng")]);
    factory = loader.default;
    return module;
  })();
  return compiled;
}

/** eSpeak NG's WAV for `text` (22050 Hz, 16-bit mono), as its command line writes it. */
async function espeakWav(text) {
  const module = await engine();
  // The text from a file, never the command line: a text starting with "-" would be read as an option.
  const instance = await factory({
    arguments: ["-v", "en-us", "-w", "/out.wav", "-f", "/in.txt"],
    preRun: [(m) => m.FS.writeFile("/in.txt", text)],
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(module, imports).then((inst) => done(inst, module));
      return {};
    },
    print() {},
    printErr() {},
  });
  return instance.FS.readFile("/out.wav");
}

/** The 16-bit samples of a WAV's data chunk. */
export function wavSamples(wav) {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (at) => String.fromCharCode(wav[at], wav[at + 1], wav[at + 2], wav[at + 3]);
  for (let at = 12; at + 8 <= wav.length; at += 8 + view.getUint32(at + 4, true) + (view.getUint32(at + 4, true) & 1)) {
    if (tag(at) !== "data") continue;
    const bytes = Math.min(view.getUint32(at + 4, true), wav.length - at - 8) & ~1;
    const out = new Int16Array(bytes / 2);
    for (let i = 0; i < out.length; i++) out[i] = view.getInt16(at + 8 + 2 * i, true);
    return out;
  }
  throw new Error("eSpeak NG wrote no data chunk");
}

/**
 * Converts 16-bit samples between rates by windowed-sinc interpolation: the kernel is widened when going down, so it
 * also low-passes what the lower rate cannot hold (else it would fold back into the speech band as hiss).
 */
export function resample(samples, from, to) {
  if (from === to) return samples;
  const gcd = (a, b) => (b ? gcd(b, a % b) : a);
  const g = gcd(from, to);
  const up = to / g; // output sample i sits at input position i * down / up: `up` distinct fractional phases
  const down = from / g;
  const cutoff = Math.min(1, to / from) * 0.95; // of the input's Nyquist frequency
  const half = Math.ceil(8 / cutoff); // taps each side, in input samples
  // The kernel of each phase, computed once (2·half taps each).
  const kernel = new Float64Array(up * 2 * half);
  for (let p = 0; p < up; p++) {
    const frac = p / up;
    for (let j = 0; j < 2 * half; j++) {
      const x = frac - (j - half + 1); // distance from tap k = c - half + 1 + j
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
      const w = 0.42 + 0.5 * Math.cos((Math.PI * x) / half) + 0.08 * Math.cos((2 * Math.PI * x) / half); // Blackman
      kernel[p * 2 * half + j] = cutoff * sinc * w;
    }
  }
  const out = new Int16Array(Math.floor((samples.length * up) / down));
  for (let i = 0; i < out.length; i++) {
    const c = Math.floor((i * down) / up);
    const base = ((i * down) % up) * 2 * half;
    let acc = 0;
    for (let j = 0; j < 2 * half; j++) {
      const k = c - half + 1 + j;
      if (k >= 0 && k < samples.length) acc += samples[k] * kernel[base + j];
    }
    out[i] = Math.max(-32768, Math.min(32767, Math.round(acc)));
  }
  return out;
}

/** `text` spoken by eSpeak NG (US English), as 16-bit PCM at `rate`. */
export async function speak(text, rate) {
  const key = `${rate}:${text}`;
  const hit = recent.get(key);
  if (hit) {
    recent.delete(key); // most recently used last
    recent.set(key, hit);
    return hit;
  }
  const pcm = resample(wavSamples(await espeakWav(text)), ESPEAK_RATE, rate);
  recent.set(key, pcm);
  if (recent.size > RECENT) recent.delete(recent.keys().next().value);
  return pcm;
}

/** The last utterances spoken: a campaign's calls say the same lines again and again. */
const RECENT = 64;
const recent = new Map();

function refuse(res, status, code, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: { code, message } }));
}

/**
 * Starts the speech server on 127.0.0.1 (a free port unless `port`); returns its origin and `close`. It answers at
 * once, and the WebAssembly compiles in the background (`warm`; else at the first request), so it does not hold up
 * `npm run dev`'s start.
 */
export async function startLocalSpeech({ port = 0, warm = true } = {}) {
  const server = createServer((req, res) => {
    if (req.method !== "POST" || new URL(req.url ?? "/", "http://x").pathname !== "/speak")
      return refuse(res, 404, "not_found", "POST /speak is the only route");
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      let input;
      try {
        input = JSON.parse(body);
      } catch {
        return refuse(res, 400, "invalid_json", 'the body must be JSON: {"text": "...", "rate": 16000}');
      }
      const { text, rate } = input ?? {};
      if (typeof text !== "string" || !text.trim() || text.length > MAX_TEXT)
        return refuse(res, 422, "invalid_text", `text must be a non-empty string of at most ${MAX_TEXT} characters`);
      if (!SPEAK_RATES.includes(rate)) return refuse(res, 422, "invalid_rate", `rate must be one of ${SPEAK_RATES.join(", ")}`);
      try {
        const pcm = await speak(text, rate);
        res.writeHead(200, { "Content-Type": "audio/pcm", "X-Sample-Rate": String(rate), "Content-Length": pcm.byteLength });
        res.end(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
      } catch (err) {
        refuse(res, 500, "synthesis_failed", String(err?.message ?? err));
      }
    });
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  if (warm) engine().catch(() => {}); // compile now, off the request path; a failure is answered per request
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    url: origin,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the Worker's kept-alive connections would hold the close
      }),
    server,
  };
}
