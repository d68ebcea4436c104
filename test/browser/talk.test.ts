// "Talk to this agent" in headless Chromium against `wrangler dev`: Chromium's fake microphone plays a committed
// espeak-ng clip (after 3 s of silence, so it follows the greeting), the dashboard's agent page connects a web call,
// the agent's greeting is played (the page's playback tap sees its energy), the clip's words appear in the live
// transcript, the agent replies, and Hang up ends the run (completed, direction web, with its transcript).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWav, wavFile } from "../../src/lib/audio/wav";
import { localOrganization, plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium } from "./chromium";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const scratch = mkdtempSync(join(tmpdir(), "edgedial-talk-"));
let app: Worker;
let context: BrowserContext;
let origin: string;
let key: string;
let agentId: number;
const SURE = "Sure, tell me more.";
const REPLY = "Great. How many seats do you need?";

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body && !(body instanceof Uint8Array) ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Talk");
  ({ worker: app, origin } = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    // VOICE_AGENT conversation: the agent's own (scripted) engines, as `--workers-ai` would pick Workers AI.
    bindings: plain({ ...localBindings("d1"), PUBLIC_BASE_URL: at, VOICE_AGENT: "conversation" }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  })));

  // The clip the microphone plays, as a recording the agent's scripted speech-to-text knows.
  const clip = readFileSync("test/fixtures/audio/callee-sure-8k.wav");
  const rec = await api("POST", `/greeting-recordings?name=${encodeURIComponent(SURE)}`, new Uint8Array(clip), { "Content-Type": "audio/wav" });
  const seats = JSON.parse(readFileSync("test/fixtures/seats-agent.json", "utf8"));
  const agent = await api("POST", "/workflow/create", {
    name: "Seats offer",
    workflow_definition: seats.definition,
    template_context_variables: { first_name: "Ada" },
    call_disposition_codes: { disposition_codes: seats.disposition_codes },
    workflow_configurations: {
      voice_agent: {
        llm: { provider: "scripted", script: seats.script },
        stt: { provider: "scripted", clips: [{ text: SURE, recording_id: rec.recording_id }] },
        tts: { provider: "scripted" },
      },
    },
  });
  agentId = agent.id;

  // 3 s of silence, then the words: the greeting plays first, as a caller listens before answering.
  const w = readWav(new Uint8Array(clip));
  const padded = new Int16Array(w.rate * 3 + w.samples.length);
  padded.set(w.samples, w.rate * 3);
  const mic = join(scratch, "mic.wav");
  writeFileSync(mic, wavFile(padded, w.rate));
  context = await launchChromium(join(scratch, "profile"), undefined, [
    "--autoplay-policy=no-user-gesture-required",
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
    `--use-file-for-fake-audio-capture=${mic}%noloop`,
  ]);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await app?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe("Talk to this agent", () => {
  it("connects, plays the greeting, shows the caller's words and the reply, and hangs up", async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${origin}/dashboard/`);
    await page.evaluate((k) => sessionStorage.setItem("edgedial.apiKey", k), key);
    await page.goto(`${origin}/dashboard/#/agents/${agentId}`);
    await page.reload();
    const talk = page.getByRole("button", { name: "Talk to this agent" });
    await talk.click();
    await expect.poll(() => page.locator("#talk-status").textContent(), { timeout: 20_000 }).toContain("Connected");

    const transcript = page.locator("#talk-transcript");
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain("Hi Ada!");
    // The greeting was played: the page's playback tap saw a tone well above silence.
    expect(await page.evaluate(() => (globalThis as { edgedialTalk?: { peak: number } }).edgedialTalk?.peak ?? 0)).toBeGreaterThan(0.05);
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain(SURE);
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain(REPLY);

    await page.getByRole("button", { name: "Hang up" }).click();
    await expect.poll(() => page.locator("#talk-status").textContent()).toContain("Call ended");
    const runs = async () => (await api("GET", `/workflow/${agentId}/runs`)).items;
    await expect.poll(async () => (await runs())[0]?.status, { timeout: 20_000 }).toBe("completed");
    const [run] = await runs();
    const details = await api("GET", `/workflow/${agentId}/runs/${run.id}`);
    expect(details).toMatchObject({ direction: "web", end_reason: "callee_hangup" });
    expect(details.transcript.map((t: { text: string }) => t.text)).toEqual(expect.arrayContaining(["Hi Ada!", SURE, REPLY]));
    expect(errors).toEqual([]);
  });
});
