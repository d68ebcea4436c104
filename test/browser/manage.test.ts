// The dashboard doing the work, in headless Chromium against `wrangler dev` with the sandbox carrier (LOCAL_DEV) and
// the carrier simulator as its far end: an agent made in the editor (a validation problem shown at its field, then
// fixed), a sandbox telephony configuration and a number, a campaign from a CSV with one bad row (the problem shown at
// its row, fixed in the page), started and watched to completion, a call opened and its recording played (finite
// duration equal to the file's, seekable), results.csv downloaded. A screenshot at each step, each checked for WCAG
// AA contrast; no request leaves the Worker's origin.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localOrganization, plain, setupStep, startLocalWorker, type Worker } from "./local-service";
import { launchChromium, watchedPage } from "./chromium";
import { contrastProblems } from "./contrast";
import { readmeScreenshot } from "./readme-screenshot";
// @ts-expect-error: a plain JavaScript helper of the local scripts (no type declarations)
import { CALLEE_CLIPS, clip, startSandboxSimulator } from "../../scripts/lib/sandbox-sim.mjs";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const ARTIFACTS = join(process.cwd(), "test-artifacts");

const workers: Worker[] = [];
let context: BrowserContext;
let origin: string;
let key: string;
/** What the first test made, for the second. */
const made = { agentId: 0, campaignId: 0 };
const scratch = mkdtempSync(join(tmpdir(), "edgedial-manage-"));
const requested = new Set<string>();
const consoleErrors: string[] = [];

async function api(method: string, path: string): Promise<any> {
  const res = await fetch(`${origin}/api/v1${path}`, { method, headers: { "X-API-Key": key } });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return res.json();
}

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Manage");
  const sim = await setupStep(
    "the carrier simulator",
    { ms: 90_000, attempts: 2, dispose: (late: { worker: Worker; origin: string }) => late.worker.dispose() },
    (n) => startSandboxSimulator({ persist: join(scratch, `sim-${n}`) }),
  );
  workers.push(sim.worker);
  const started = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    // The sandbox dials the simulator; the agent runs on the local deterministic engines; calling rules' defaults off
    // so the test's numbers are callable at any hour CI runs.
    bindings: plain({
      ...localBindings("d1"),
      PUBLIC_BASE_URL: at,
      CARRIER_BASE_URLS: JSON.stringify({ sandbox: `${sim.origin}/twilio` }),
      CALLING_RULES_DEFAULTS: "off",
      VOICE_AGENT: "conversation",
      OFFLINE_ENGINES: "true",
    }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  }));
  const app = started.worker;
  origin = started.origin;
  workers.push(app);
  // As npm run dev does: the offline speech-to-text knows the sandbox callee's lines by their sound.
  for (const c of CALLEE_CLIPS as { file: string; text: string }[]) {
    const res = await fetch(`${origin}/api/v1/greeting-recordings?name=${encodeURIComponent(c.text)}`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "audio/wav" },
      body: clip(c.file),
    });
    if (!res.ok) throw new Error(`greeting ${res.status} ${await res.text()}`);
  }
  context = await launchChromium(join(scratch, "profile"), requested);
}, 180_000);

afterAll(async () => {
  await context?.close();
  for (const w of workers.reverse()) await w.dispose().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

/** A screenshot of the step, and the page's text meets WCAG AA contrast. */
async function step(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `manage-${name}.png`), fullPage: true });
  expect(await contrastProblems(page), name).toEqual([]);
}

/** The seconds of audio in a WAV file, from its header and data chunk. */
function wavSeconds(wav: Buffer): number {
  const channels = wav.readUInt16LE(22);
  const rate = wav.readUInt32LE(24);
  const bits = wav.readUInt16LE(34);
  for (let at = 12; at + 8 <= wav.length; at += 8 + wav.readUInt32LE(at + 4)) {
    if (wav.toString("latin1", at, at + 4) === "data") return wav.readUInt32LE(at + 4) / (rate * channels * (bits / 8));
  }
  throw new Error("no data chunk");
}

describe("the dashboard does the work", () => {
  it("makes an agent, a sandbox carrier and number, a campaign from a CSV, runs it, plays a call, downloads the results", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const page = await watchedPage(context, requested, consoleErrors);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);

    // The agent: saved with an empty start prompt, the validate answer is shown at that field.
    await page.goto(`${origin}/dashboard/#/agents/new`);
    await expect.poll(() => page.getByRole("heading", { name: "New agent", level: 1 }).isVisible()).toBe(true);
    await page.locator("#agent-name").fill("Browser reminder agent");
    await page.locator("#node-0-greeting").fill("Hi {{first_name}}, this is a reminder about your booking.");
    expect(await page.locator("#agent-diagram").getAttribute("aria-label")).toContain("2 steps, 1 transitions");
    await page.getByRole("button", { name: "Create agent" }).click();
    await expect.poll(() => page.url(), { timeout: 20_000 }).toMatch(/#\/agents\/\d+$/);
    const agentId = Number(/#\/agents\/(\d+)$/.exec(page.url())![1]);
    made.agentId = agentId;
    const promptError = page.locator("#node-0-prompt-error");
    await expect.poll(() => promptError.textContent(), { timeout: 20_000 }).toContain("data.prompt");
    expect(await promptError.isVisible()).toBe(true);
    expect(await page.locator("#node-0-prompt").getAttribute("aria-invalid")).toBe("true");
    await expect.poll(() => page.locator("#agent-validation").textContent()).toContain("problem");
    await step(page, "1-agent-invalid");
    await page.locator("#node-0-prompt").fill("Remind {{first_name}} of the booking and ask whether they will come.");
    await page.getByRole("button", { name: "Save a new version" }).click();
    await expect.poll(() => page.locator("#agent-validation").textContent(), { timeout: 20_000 }).toContain("The agent is valid");
    expect(await promptError.isHidden()).toBe(true);
    expect((await api("GET", `/workflow/fetch/${agentId}`)).version_number).toBe(2);
    await step(page, "2-agent-valid");

    // A sandbox telephony configuration from the provider field table, and a number as its caller ID.
    await page.goto(`${origin}/dashboard/#/telephony`);
    await expect.poll(() => page.getByRole("heading", { name: "Telephony", level: 1 }).isVisible()).toBe(true);
    await page.locator("#cfg-provider").selectOption("sandbox");
    await expect.poll(() => page.locator("#cfg-callee").inputValue()).toBe("answered");
    await page.locator("#cfg-name").fill("Sandbox");
    await page.locator("#cfg-default").check();
    await page.getByRole("button", { name: "Create configuration" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Sandbox (sandbox)" }).isVisible(), { timeout: 20_000 }).toBe(true);
    await page.locator('input[id$="-address"]').fill("+14155550100");
    await page.locator('select[id$="-inbound"]').selectOption({ label: "Browser reminder agent" });
    await page.getByRole("button", { name: "Add number" }).click();
    await expect.poll(() => page.getByRole("row", { name: /\+14155550100/ }).textContent(), { timeout: 20_000 }).toContain("Caller ID");
    await expect.poll(() => page.getByText("Ready for outbound calls.").isVisible()).toBe(true);
    const [config] = (await api("GET", "/organizations/telephony-configs")).items;
    expect(config).toMatchObject({ provider: "sandbox", is_default_outbound: true });
    const [number] = (await api("GET", `/organizations/telephony-configs/${config.id}/phone-numbers`)).items;
    expect(number).toMatchObject({ address: "+14155550100", is_default_caller_id: true, inbound_workflow_id: agentId });
    await step(page, "3-telephony");

    // A campaign from a CSV with one bad row: the 422 is shown at that row; fixed in the page, it is created.
    await page.goto(`${origin}/dashboard/#/campaigns/new`);
    await expect.poll(() => page.getByRole("heading", { name: "New campaign", level: 1 }).isVisible()).toBe(true);
    await page.locator("#camp-name").fill("Browser reminders");
    await page.locator("#camp-config").selectOption({ label: "Sandbox (sandbox)" });
    const csv = "phone_number,first_name\n+14155552001,Ada\n12ab,Grace\n+14155552003,Alan\n";
    await page.locator("#camp-csv-file").setInputFiles({ name: "reminders.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await expect.poll(() => page.locator("#camp-csv-text").inputValue()).toBe(csv);
    await page.getByRole("button", { name: "Create campaign" }).click();
    // Rows as a spreadsheet numbers them (the header is row 1): the bad number is on row 3.
    const badRow = page.locator("#camp-csv-row-3");
    await expect.poll(() => badRow.getAttribute("class"), { timeout: 20_000 }).toBe("bad-row");
    expect(await badRow.textContent()).toContain("12ab");
    expect((await badRow.locator("td.field-error").textContent())?.length).toBeGreaterThan(5);
    expect(await page.locator("tr.bad-row").count()).toBe(1);
    expect((await api("GET", "/campaign")).items).toEqual([]);
    await step(page, "4-csv-row-error");
    await page.locator("#camp-csv-text").fill(csv.replace("12ab", "+14155552002"));
    expect(await page.locator("tr.bad-row").count()).toBe(0);
    await page.getByRole("button", { name: "Create campaign" }).click();
    await expect.poll(() => page.url(), { timeout: 20_000 }).toMatch(/#\/campaigns\/\d+$/);
    const campaignId = Number(/#\/campaigns\/(\d+)$/.exec(page.url())![1]);
    made.campaignId = campaignId;
    await expect.poll(() => page.locator("#campaign-state").textContent()).toBe("draft");
    await expect.poll(() => page.locator('[data-counter="total"] dd').textContent()).toBe("3");
    expect(await page.locator('[data-counter="pending"] dt').textContent()).toContain("Not called yet");
    await step(page, "5-campaign-draft");

    // Start it on the sandbox and watch it complete.
    await page.getByRole("group", { name: "Campaign controls" }).getByRole("button", { name: "Start" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Start" }).click();
    await expect.poll(() => page.locator("#campaign-state").textContent(), { timeout: 150_000, interval: 1000 }).toBe("completed");
    // The sandbox's callee says its lines, which the offline speech-to-text knows by their sound (above): each call
    // was a conversation, none counted as answered with no conversation (issue 39).
    await expect.poll(() => page.locator('[data-counter="completed"] dd').textContent()).toBe("3");
    expect(await page.locator('[data-counter="answered_no_conversation"] dd').textContent()).toBe("0");
    await expect.poll(() => page.locator("#campaign-completed").textContent()).not.toBe("—");
    await expect.poll(() => page.locator('a[href^="#/runs/"]').count(), { timeout: 20_000 }).toBe(3);
    await expect.poll(() => page.getByRole("img", { name: /Calls finished over time: 3 of the newest 3 calls/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole("button", { name: "Redial the contacts not reached" }).isVisible()).toBe(true);
    expect(await page.getByText("Add contacts").count()).toBe(0);
    await step(page, "6-campaign-completed");
    // Down to the charts: counters, calls finished over time and the outcomes.
    await readmeScreenshot(page, "dashboard", 1420);

    // results.csv: one row per contact.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download results.csv" }).click()]);
    expect(download.suggestedFilename()).toBe(`campaign-${campaignId}-results.csv`);
    const results = readFileSync((await download.path())!, "utf8")
      .trim()
      .split(/\r?\n/);
    expect(results[0]).toContain("phone_number");
    expect(results.slice(1).map((l) => l.split(",").find((c) => c.replace(/"/g, "").startsWith("+1415555200")))).toHaveLength(3);
    expect(results.join("\n")).toContain("+14155552002");

    // A call's page: the recording plays from memory with the file's own duration and seeks.
    await page.locator('a[href^="#/runs/"]').first().click();
    await expect.poll(() => page.getByRole("heading", { name: /^Call / }).isVisible()).toBe(true);
    await expect.poll(() => page.locator("#recording-note").textContent(), { timeout: 20_000 }).toMatch(/^\d+\.\d s, two channels/);
    const runPath = /#\/runs\/(\d+)\/(\d+)$/.exec(page.url())!;
    const run = await api("GET", `/workflow/${runPath[1]}/runs/${runPath[2]}`);
    expect(run.status).toBe("completed");
    const fileSeconds = wavSeconds(Buffer.from(await (await fetch(run.recording_url)).arrayBuffer()));
    const audio = page.locator("#recording");
    const duration = Number(await audio.evaluate((a: any) => a.duration));
    expect(Number.isFinite(duration)).toBe(true);
    expect(Math.abs(duration - fileSeconds)).toBeLessThan(0.05);
    await audio.evaluate((a: any) => a.play());
    await expect.poll(() => audio.evaluate((a: any) => a.currentTime), { timeout: 10_000 }).toBeGreaterThan(0);
    const target = Math.min(duration - 0.5, duration / 2);
    await audio.evaluate(
      (a: any, at: number) =>
        new Promise((r) => {
          a.addEventListener("seeked", r, { once: true });
          a.currentTime = at;
        }),
      target,
    );
    expect(Math.abs(Number(await audio.evaluate((a: any) => a.currentTime)) - target)).toBeLessThan(0.5);
    await audio.evaluate((a: any) => a.pause());
    expect(await page.locator("#usage").textContent()).toContain("Estimated cost");
    expect(await page.getByRole("table", { name: /Each turn/ }).textContent()).toContain("Agent");
    await step(page, "7-call");

    // Nothing left the Worker's origin (recordings played from memory are blob: URLs of this origin).
    const host = new URL(origin).host;
    const outside = [...requested].filter((u) => !(u.startsWith("data:") || u.startsWith(`blob:${origin}/`) || new URL(u).host === host));
    expect(outside).toEqual([]);
    // The browser logs the deliberate 422 (the CSV's bad row) and nothing else.
    expect(consoleErrors, consoleErrors.join("\n")).toEqual([expect.stringContaining("status of 422")]);
  }, 400_000);
  it("manages keys, webhooks, the calling policy, suppressions, lists calls by filter, archives an agent and deletes a campaign", async () => {
    const page = await watchedPage(context, requested, consoleErrors);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);
    const confirm = async () => page.getByRole("dialog").locator("#confirm-yes").click();

    // Settings: a key shown once and revoked; a webhook endpoint and its (empty) delivery log; the policy; suppressions.
    await page.goto(`${origin}/dashboard/#/settings`);
    await expect.poll(() => page.getByRole("heading", { name: "Settings", level: 1 }).isVisible()).toBe(true);
    await page.locator("#key-name").fill("CI key");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => page.locator("#new-key").textContent()).toMatch(/^edk_/);
    const newKey = (await page.locator("#new-key").textContent())!;
    expect((await fetch(`${origin}/api/v1/campaign`, { headers: { "X-API-Key": newKey } })).status).toBe(200);
    await page.getByRole("button", { name: "Revoke CI key" }).click();
    await confirm();
    await expect.poll(() => page.getByRole("button", { name: "Revoke CI key" }).count()).toBe(0);
    expect((await api("GET", "/organizations/api-keys")).items.map((k: { name: string }) => k.name)).not.toContain("CI key");

    await page.locator("#hook-url").fill("ftp://example.com/hook");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => page.locator("#hook-url-error").textContent()).not.toBe("");
    await page.locator("#hook-url").fill("http://127.0.0.1:9/edgedial");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => page.getByText(/^whsec_/).isVisible()).toBe(true);
    await page.getByText("http://127.0.0.1:9/edgedial (on)").click();
    await expect.poll(() => page.getByText("Nothing delivered yet.").isVisible()).toBe(true);

    await page.locator("#pol-countries").fill("us, ca");
    await page.getByRole("button", { name: "Save calling policy" }).click();
    await expect.poll(() => page.getByText("Saved.", { exact: true }).isVisible()).toBe(true);
    expect((await api("GET", "/organizations/calling-policy")).allowed_countries).toEqual(["CA", "US"]);

    await page.locator("#sup-number").fill("+14155559999");
    await page.getByRole("button", { name: "Add to the list" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Remove +14155559999" }).isVisible()).toBe(true);
    await page.locator("#sup-file").setInputFiles({ name: "dnc.csv", mimeType: "text/csv", buffer: Buffer.from("phone_number,reason\n+14155559998,asked\n") });
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await expect.poll(() => page.getByRole("button", { name: "Remove +14155559998" }).isVisible()).toBe(true);
    await step(page, "8-settings");
    await page.getByRole("button", { name: "Remove +14155559999" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Remove +14155559999" }).count()).toBe(0);
    expect((await api("GET", "/organizations/suppressions")).items.map((s: { phone_number: string }) => s.phone_number)).toEqual(["+14155559998"]);

    // A carrier's missing credentials are shown at their fields, from the create's 422.
    await page.goto(`${origin}/dashboard/#/telephony`);
    await expect.poll(() => page.locator("#cfg-provider").inputValue()).toBe("sandbox");
    await page.locator("#cfg-provider").selectOption("twilio");
    await page.locator("#cfg-name").fill("Twilio without credentials");
    await page.getByRole("button", { name: "Create configuration" }).click();
    await expect.poll(() => page.locator("#cfg-account_sid-error").textContent()).not.toBe("");
    expect(await page.locator("#cfg-account_sid").getAttribute("aria-invalid")).toBe("true");
    expect((await api("GET", "/organizations/telephony-configs")).items).toHaveLength(1);

    // Calls: the campaign's three, one by a number's digits, none among single calls.
    await page.goto(`${origin}/dashboard/#/calls`);
    const caption = page.getByRole("table").locator("caption");
    await expect.poll(() => caption.textContent()).toBe("0 call(s), newest first");
    await page.locator("#f-source").selectOption("campaign");
    await page.locator("#f-status").selectOption("completed");
    await page.getByRole("button", { name: "Show calls" }).click();
    await expect.poll(() => caption.textContent()).toBe("3 call(s), newest first");
    await page.locator("#f-number").fill("2002");
    await page.getByRole("button", { name: "Show calls" }).click();
    await expect.poll(() => caption.textContent()).toBe("1 call(s), newest first");
    expect(await page.getByRole("table").locator("tbody").textContent()).toContain("+14155552002");
    // Who answered (answering-machine detection's class): the simulated callee talked, so no call is a machine's.
    await page.locator("#f-amd").selectOption("machine_greeting");
    await page.getByRole("button", { name: "Show calls" }).click();
    await expect.poll(() => caption.textContent()).toBe("0 call(s), newest first");
    await page.locator("#f-amd").selectOption("");
    await step(page, "9-calls");

    // The agent: two versions listed; archived and restored, each confirmed.
    await page.goto(`${origin}/dashboard/#/agents/${made.agentId}`);
    await expect
      .poll(() =>
        page
          .getByRole("table", { name: /Every saved version/ })
          .locator("tbody tr")
          .count(),
      )
      .toBe(2);
    await page.getByRole("button", { name: "Archive agent" }).click();
    await confirm();
    await expect.poll(() => page.getByRole("button", { name: "Restore agent" }).isVisible()).toBe(true);
    expect((await api("GET", `/workflow/fetch/${made.agentId}`)).status).toBe("archived");
    await step(page, "10-agent-archived");
    await page.getByRole("button", { name: "Restore agent" }).click();
    await confirm();
    await expect.poll(() => page.getByRole("button", { name: "Archive agent" }).isVisible()).toBe(true);

    // Engines and voice: Deepgram without a key is refused, the API's 422 shown at the key's field; back to the default.
    await page.locator("#voice-stt-provider").selectOption("deepgram");
    expect(await page.locator("#agent-config").inputValue()).toContain('"deepgram"');
    await page.getByRole("button", { name: "Save a new version" }).click();
    await expect.poll(() => page.locator("#voice-stt-api_key-error").textContent()).not.toBe("");
    await step(page, "11-agent-voice-error");
    await page.locator("#voice-stt-provider").selectOption("");
    await page.getByRole("button", { name: "Save a new version" }).click();
    await expect.poll(() => page.locator("#agent-validation").textContent()).toContain("The agent is valid");
    expect((await api("GET", `/workflow/fetch/${made.agentId}`)).workflow_configurations.voice_agent).toBeUndefined();

    // The finished campaign: deleted after confirmation.
    await page.goto(`${origin}/dashboard/#/campaigns/${made.campaignId}`);
    await page.getByRole("button", { name: "Delete campaign" }).click();
    await confirm();
    await expect.poll(() => page.url()).toMatch(/#\/campaigns$/);
    expect((await api("GET", "/campaign")).items).toEqual([]);
    // The deliberate 422 of the first test and the refused webhook URL; nothing else.
    expect(
      consoleErrors.filter((m) => !m.includes("status of 422")),
      consoleErrors.join("\n"),
    ).toEqual([]);
  }, 200_000);
});
