// What the Worker-restart test (worker-restart.test.ts) needs outside edgedial: the Worker as a process it can kill
// and start again, Asterisk's REST interface and an application of its own there, and reading the agent's voice out
// of Asterisk's recording. Runs in Node.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readWav } from "../../../src/lib/audio/wav";

export const ARI = process.env.EDGEDIAL_ARI_ENDPOINT ?? "http://127.0.0.1:8088";
export const ARI_USER = "tester";
export const ARI_PASSWORD = "testpass";
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../../..");
const RUNNER = join(HERE, "worker-process.mjs");

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value (not undefined); past `ms` it fails saying what was awaited. */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>, every = 200): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A copy of the Worker's sources as they are now, for both starts: other work in the tree (a file half edited) must not
 * break the restart's build. The large, read-only parts (node_modules, the static assets) are linked, not copied.
 */
export function snapshotSources(dir: string): string {
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  for (const file of ["wrangler.jsonc", "package.json", "tsconfig.json"]) cpSync(join(ROOT, file), join(dir, file));
  for (const link of ["node_modules", "public"]) symlinkSync(join(ROOT, link), join(dir, link));
  return dir;
}

/**
 * The Worker in its own process group (worker-process.mjs): SIGKILL to the group stops wrangler and workerd at once,
 * as a crash does. Both runs write to one log file, shown when a start fails.
 */
export class WorkerProcess {
  private child: ChildProcess | null = null;
  readonly origin: string;

  /** `cwd`: the sources it runs (snapshotSources). */
  constructor(private readonly opts: { cwd: string; port: number; persist: string; bindings: Record<string, string>; logFile: string }) {
    this.origin = `http://127.0.0.1:${opts.port}`;
  }

  /** Starts it and waits until its health route answers; the time that took, in ms. */
  async start(ms = 90_000): Promise<number> {
    const t0 = Date.now();
    const out = openSync(this.opts.logFile, "a");
    const { port, persist, bindings } = this.opts;
    const child = spawn(process.execPath, [RUNNER], {
      cwd: this.opts.cwd,
      detached: true,
      stdio: ["ignore", out, out],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", EDGEDIAL_IT_WORKER: JSON.stringify({ port, persist, bindings }) },
    });
    closeSync(out);
    this.child = child;
    let exited: string | null = null;
    child.once("exit", (code, signal) => {
      exited = `exited (${signal ?? code})`;
    });
    let last = "no answer";
    try {
      await until(`the Worker on ${this.origin} to answer /api/v1/health`, ms, async () => {
        if (exited) throw new Error(`the Worker process ${exited} before it answered`);
        const res = await fetch(`${this.origin}/api/v1/health`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
        if (res) last = `HTTP ${res.status} ${(await res.text()).slice(0, 200)}`;
        return res?.status === 200 ? true : undefined;
      });
    } catch (err) {
      throw new Error(`${(err as Error).message} (last: ${last}); its log ends:\n${this.logTail()}`);
    }
    return Date.now() - t0;
  }

  /** Kills the whole process group and waits for the process to be gone. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
    await Promise.race([gone, sleep(10_000)]);
    this.child = null;
  }

  logTail(lines = 40): string {
    try {
      return readFileSync(this.opts.logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }
}

const ariAuth = `Basic ${Buffer.from(`${ARI_USER}:${ARI_PASSWORD}`).toString("base64")}`;

/** One ARI request; the reply's JSON (or null) and status. */
export async function ari(method: string, path: string): Promise<{ status: number; json: any; bytes: Uint8Array }> {
  const res = await fetch(`${ARI}/ari${path}`, { method, headers: { Authorization: ariAuth }, signal: AbortSignal.timeout(5000) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let json: any = null;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    // a file or an empty reply
  }
  return { status: res.status, json, bytes };
}

export async function ariAnswers(): Promise<boolean> {
  try {
    return (await ari("GET", "/asterisk/info")).status === 200;
  } catch {
    return false;
  }
}

/** An ARI channel's creation time in ms (Asterisk writes the zone as +0000). */
export const createdAt = (channel: any): number => Date.parse(String(channel?.creationtime ?? "").replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));

/**
 * An ARI application this test holds (its events WebSocket open), for the snoop channel that records what the call's
 * channel is sent: edgedial's own application is dropped and reopened by the restart, and sees nothing of ours.
 */
export class AriApp {
  private constructor(
    readonly name: string,
    private readonly ws: WebSocket,
  ) {}

  static async open(name: string, ms = 5000): Promise<AriApp> {
    const ws = new WebSocket(`${ARI.replace(/^http/, "ws")}/ari/events?${new URLSearchParams({ app: name, api_key: `${ARI_USER}:${ARI_PASSWORD}` })}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ARI events socket for ${name} did not open within ${ms} ms`)), ms);
      ws.addEventListener("open", () => (clearTimeout(timer), resolve()));
      ws.addEventListener("error", () => (clearTimeout(timer), reject(new Error(`the ARI events socket for ${name} failed`))));
    });
    return new AriApp(name, ws);
  }

  close(): void {
    this.ws.close();
  }
}

const RATE = 8000;
const FRAME = 160;
/** The scripted text-to-speech speaks a 330 Hz tone (src/agent/clip-speech.ts). */
const AGENT_HZ = 330;

/** Share of a frame's power at one frequency (Goertzel): near 1 for a pure tone. */
function share(frame: Int16Array, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let [a, b, total] = [0, 0, 0];
  for (const x of frame) {
    [a, b] = [x + k * a - b, a];
    total += x * x;
  }
  return total ? (2 * (a * a + b * b - k * a * b)) / (frame.length * total) : 0;
}

/** Which 20 ms frames of a recording carry the agent's voice (loud, and the scripted voice's tone). */
export function agentFrames(wav: Uint8Array): boolean[] {
  const { samples, rate, channels } = readWav(wav);
  if (rate !== RATE || channels !== 1) throw new Error(`expected 8 kHz mono from Asterisk, got ${rate} Hz x ${channels}`);
  const out: boolean[] = [];
  for (let at = 0; at + FRAME <= samples.length; at += FRAME) {
    const frame = samples.subarray(at, at + FRAME);
    const rms = Math.sqrt(frame.reduce((n, x) => n + x * x, 0) / FRAME);
    out.push(rms > 800 && share(frame, AGENT_HZ) > 0.6);
  }
  return out;
}

/** The first run of at least `min` voiced frames starting at or after `fromMs`: its start and length in ms. */
export function firstVoice(frames: boolean[], fromMs: number, toMs = Number.POSITIVE_INFINITY, min = 25): { atMs: number; ms: number } | null {
  const first = Math.max(0, Math.ceil(fromMs / 20));
  for (let i = first; i < frames.length && i * 20 < toMs; i++) {
    let n = 0;
    while (i + n < frames.length && frames[i + n]) n++;
    if (n >= min) return { atMs: i * 20, ms: n * 20 };
    i += n;
  }
  return null;
}
