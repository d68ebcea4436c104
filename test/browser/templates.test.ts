// "Start from a template" in headless Chromium against `wrangler dev` on the offline engines (npm run dev without
// --workers-ai): the New agent page lists the three starters with their test values; one click creates the lead
// qualification agent with its scripted model and opens its page; "Talk to this agent" then runs it offline: the
// microphone's committed clip ("Sure, tell me more.") is understood and the agent answers along its graph.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWav, wavFile } from "../../src/lib/audio/wav";
import { localOrganization, plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium } from "./chromium";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const scratch = mkdtempSync(join(tmpdir(), "edgedial-templates-"));
const ARTIFACTS = join(process.cwd(), "test-artifacts");
let app: Worker;
let context: BrowserContext;
let origin: string;
let key: string;
const SURE = "Sure, tell me more.";

async function api(method: string, path: string, body?: Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(`${origin}/api/v1${path}`, { method, headers: { "X-API-Key": key, ...headers }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Templates");
  ({ worker: app, origin } = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    // As npm run dev runs without --workers-ai: the agent's engines are the offline ones.
    bindings: plain({ ...localBindings("d1"), PUBLIC_BASE_URL: at, VOICE_AGENT: "conversation", OFFLINE_ENGINES: "true" }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  })));
  // As npm run dev does: the offline speech-to-text knows this clip by its sound (a recording of the organization).
  const clip = readFileSync("test/fixtures/audio/callee-sure-8k.wav");
  await api("POST", `/greeting-recordings?name=${encodeURIComponent(SURE)}`, new Uint8Array(clip), { "Content-Type": "audio/wav" });

  // 3 s of silence, then the words: the greeting plays first.
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

describe("Start from a template", () => {
  it("creates the lead qualification agent from the dashboard, and it answers offline", async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${origin}/dashboard/`);
    await page.evaluate((k) => sessionStorage.setItem("edgedial.apiKey", k), key);
    await page.goto(`${origin}/dashboard/#/agents`);
    await page.reload();
    await page.getByRole("link", { name: "Start from a template" }).click();
    const cards = page.locator("#templates article.template");
    await expect.poll(() => cards.count(), { timeout: 20_000 }).toBe(3);
    const lead = page.locator('article[data-template="lead-qualification"]');
    expect(await lead.textContent()).toContain("first_name = Alex");
    expect(await page.locator('article[data-template="appointment-booking"]').textContent()).toContain("tools[book_appointment].url");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "templates.png"), fullPage: true });

    await lead.getByRole("button", { name: "Use “Lead qualification”" }).click();
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash), { timeout: 20_000 })
      .toMatch(/^#\/agents\/\d+$/);
    const id = Number((await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)).split("/").pop());
    const agent = await api("GET", `/workflow/fetch/${id}`);
    expect(agent).toMatchObject({ name: "Lead qualification", template_context_variables: { first_name: "Alex", company_name: "Northwind Solar" } });
    // npm run dev's offline engines: the template's scripted model was stored with it.
    expect(agent.workflow_configurations.voice_agent.llm.provider).toBe("scripted");

    // Talk to it: the greeting with the test values, the caller's words understood, the scripted reply of the next node.
    await page.getByRole("button", { name: "Talk to this agent" }).click();
    const transcript = page.locator("#talk-transcript");
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain("Hi Alex, this is Sam from Northwind Solar.");
    await expect.poll(() => transcript.textContent(), { timeout: 40_000 }).toContain(SURE);
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain("When would you like to get started");
    await page.screenshot({ path: join(ARTIFACTS, "templates-talk.png"), fullPage: true });
    await page.getByRole("button", { name: "Hang up" }).click();
    await expect.poll(() => page.locator("#talk-status").textContent(), { timeout: 20_000 }).toContain("Call ended");
    expect(errors).toEqual([]);
  });
});
