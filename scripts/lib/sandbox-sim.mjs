// The carrier simulator behind the sandbox provider of `npm run dev`: started beside edgedial as a Worker of its own,
// its sandbox callee given the committed espeak-ng clips to say, so a sandbox call is answered and talks back.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** What the sandbox's callee says, one clip per turn (16-bit PCM at 8 kHz). */
export const CALLEE_CLIPS = [
  { file: "callee-sure-8k.wav", text: "Sure, tell me more." },
  { file: "callee-seats-8k.wav", text: "We need twelve seats." },
];

export function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The samples of a WAV's data chunk. */
export function pcmOf(wav) {
  for (let at = 12; at + 8 <= wav.length; at += 8 + wav.readUInt32LE(at + 4)) {
    if (wav.toString("latin1", at, at + 4) === "data") return wav.subarray(at + 8, at + 8 + wav.readUInt32LE(at + 4));
  }
  throw new Error("no data chunk");
}

export const clip = (name) => readFileSync(`${ROOT}test/fixtures/audio/${name}`);

/** Starts the simulator on a free local port and gives the sandbox's callee its lines; returns its origin and the Worker. */
export async function startSandboxSimulator({ persist } = {}) {
  const { unstable_startWorker } = await import("wrangler");
  const worker = await unstable_startWorker({
    config: `${ROOT}src/dev/simulator/wrangler.toml`,
    dev: { inspector: false, server: { hostname: "127.0.0.1", port: await freePort() }, watch: false, logLevel: "error", ...(persist ? { persist } : {}) },
  });
  await worker.ready;
  const origin = String(await worker.url).replace(/\/$/, "");
  const lines = CALLEE_CLIPS.map((c) => pcmOf(clip(c.file)).toString("base64"));
  const res = await fetch(`${origin}/_sim/sandbox`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ callee_lines: lines }),
  });
  if (!res.ok) throw new Error(`the simulator refused the sandbox's lines: ${res.status}`);
  return { origin, worker };
}
