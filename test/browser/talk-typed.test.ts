// "Talk to this agent" offline, in headless Chromium against `wrangler dev` (no Workers AI: the offline engines, which
// understand no speech): the page asks for the agent's {{first_name}} before the call, says it is in typing mode, a
// typed turn gets a spoken answer (audio frames reach the page) and a written one, and Hang up ends the run. Then the
// text-only playground, on the same web call, shows the node change, the gathered value and the end of the call.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localOrganization, plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium } from "./chromium";
import { contrastProblems } from "./contrast";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const scratch = mkdtempSync(join(tmpdir(), "edgedial-talk-typed-"));
const ARTIFACTS = join(process.cwd(), "test-artifacts");
let app: Worker;
let context: BrowserContext;
let origin: string;
let key: string;
let agentId: number;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

const talkFrames = (page: Page) => page.evaluate(() => (globalThis as { edgedialTalk?: { frames: number } }).edgedialTalk?.frames ?? 0);
const items = (page: Page, list: string) => page.locator(`${list} li`).allTextContents();

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Talk typed");
  ({ worker: app, origin } = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    // As `npm run dev` without --workers-ai: the conversation agent on the offline engines.
    bindings: plain({ ...localBindings("d1"), PUBLIC_BASE_URL: at, VOICE_AGENT: "conversation", OFFLINE_ENGINES: "true" }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  })));

  // The seats agent with its scripted model only (its speech on the offline engines), and no default for first_name.
  const seats = JSON.parse(readFileSync("test/fixtures/seats-agent.json", "utf8"));
  const agent = await api("POST", "/workflow/create", {
    name: "Seats offer",
    workflow_definition: seats.definition,
    call_disposition_codes: { disposition_codes: seats.disposition_codes },
    workflow_configurations: { voice_agent: { llm: { provider: "scripted", script: seats.script } } },
  });
  agentId = agent.id;
  context = await launchChromium(join(scratch, "profile"), undefined, ["--autoplay-policy=no-user-gesture-required"]);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await app?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe("Talk to this agent, typing", () => {
  it("asks for the variable, answers a typed turn in voice and text, and Hang up ends the run", async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${origin}/dashboard/`);
    await page.evaluate((k) => sessionStorage.setItem("edgedial.apiKey", k), key);
    await page.goto(`${origin}/dashboard/#/agents/${agentId}`);
    await page.reload();

    const variable = page.getByLabel("first_name");
    await expect.poll(() => variable.count(), { timeout: 20_000 }).toBe(1);
    expect(await variable.inputValue()).toBe("");
    expect(await page.locator("#talk-mode").textContent()).toContain("typing (offline engines don't understand speech)");
    // Without the value the call is not made: the field says what it needs.
    await page.getByRole("button", { name: "Talk to this agent" }).click();
    await expect.poll(() => page.locator("#var-first_name-error").textContent()).toContain("{{first_name}}");
    expect(await api("GET", `/workflow/${agentId}/runs`)).toMatchObject({ items: [] });

    await variable.fill("Ada");
    await page.getByRole("button", { name: "Talk to this agent" }).click();
    await expect.poll(() => page.locator("#talk-status").textContent(), { timeout: 20_000 }).toContain("Connected");
    await expect.poll(() => items(page, "#talk-transcript"), { timeout: 30_000 }).toEqual(["Agent Hi Ada!"]);

    const before = await talkFrames(page);
    await page.getByLabel("Your turn (typed)").fill("Sure, tell me more.");
    await page.getByLabel("Your turn (typed)").press("Enter");
    await expect.poll(() => items(page, "#talk-transcript"), { timeout: 30_000 }).toHaveLength(3);
    const [, said, answer] = await items(page, "#talk-transcript");
    expect(said).toBe("You Sure, tell me more.");
    expect(answer).toMatch(/^Agent \S/);
    // The answer was spoken too: its audio reached the page after the typed turn.
    expect(await talkFrames(page)).toBeGreaterThan(before + 10);

    await page.getByRole("button", { name: "Hang up" }).click();
    await expect.poll(() => page.locator("#talk-status").textContent()).toContain("Call ended");
    const runs = async () => (await api("GET", `/workflow/${agentId}/runs`)).items;
    await expect.poll(async () => (await runs())[0]?.status, { timeout: 20_000 }).toBe("completed");
    const [run] = await runs();
    const details = await api("GET", `/workflow/${agentId}/runs/${run.id}`);
    expect(details).toMatchObject({ direction: "web", end_reason: "callee_hangup", initial_context: { first_name: "Ada" } });
    expect(details.transcript.map((t: { text: string }) => t.text).slice(0, 2)).toEqual(["Hi Ada!", "Sure, tell me more."]);
    expect(errors).toEqual([]);
  });

  it("the playground shows the node change, the gathered value and the end, with the last test values", async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${origin}/dashboard/`);
    await page.evaluate((k) => sessionStorage.setItem("edgedial.apiKey", k), key); // the key is per tab; the values are not
    await page.goto(`${origin}/dashboard/#/agents/${agentId}`);
    await page.reload();
    await expect.poll(() => page.getByLabel("first_name").count(), { timeout: 20_000 }).toBe(1);
    expect(await page.getByLabel("first_name").inputValue()).toBe("Ada"); // the last values used, kept in this browser

    await page.getByRole("button", { name: "Start the playground" }).click();
    const node = page.locator("#playground-node");
    await expect.poll(() => node.textContent(), { timeout: 30_000 }).toBe("start");
    await expect.poll(() => items(page, "#playground-chat"), { timeout: 30_000 }).toEqual(["Agent Hi Ada!"]);

    const message = page.getByLabel("Your message");
    await message.fill("Sure, tell me more.");
    await message.press("Enter");
    await expect.poll(() => node.textContent(), { timeout: 30_000 }).toBe("pitch");
    expect(await page.locator("#playground-path").textContent()).toBe("start → pitch");
    await expect.poll(() => items(page, "#playground-chat"), { timeout: 30_000 }).toHaveLength(3);

    await message.fill("We need twelve seats.");
    await message.press("Enter");
    await expect.poll(() => node.textContent(), { timeout: 30_000 }).toBe("bye");
    await expect.poll(() => items(page, "#playground-gathered"), { timeout: 30_000 }).toEqual(["seats: 12"]);
    await expect.poll(() => page.locator("#playground-status").textContent(), { timeout: 30_000 }).toContain("Ended (agent hangup)");
    expect(await page.locator("#playground-disposition").textContent()).toBe("interested");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "talk-playground.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
