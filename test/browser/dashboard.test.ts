// The dashboard (public/dashboard/, static assets of the same Worker) in headless Chromium against `wrangler dev`,
// with the carrier simulator (src/dev/simulator, as `npm run demo` uses it) answering the campaign's calls. Signs in
// by keyboard (a wrong key first: the API's 401 message is shown), lists campaigns and agents, starts a campaign
// through its button and confirmation dialog, watches the counters, log and outcome chart until it completes, opens
// a call, and signs out. No console error beyond the deliberate 401, and no request leaves the Worker's origin.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localOrganization, plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium, watchedPage } from "./chromium";
import { contrastProblems } from "./contrast";
import { localBindings } from "../../scripts/lib/local-bindings.ts";

const ARTIFACTS = join(process.cwd(), "test-artifacts");

const workers: Worker[] = [];
let context: BrowserContext;
let origin: string;
let simUrl: string;
let key: string;
let accountId: string;
let campaignId: number;
const scratch = mkdtempSync(join(tmpdir(), "edgedial-dashboard-"));
const requested = new Set<string>();
const consoleErrors: string[] = [];
/** WebSockets the pages opened (CDP's requestWillBeSent does not see them). */
const sockets: string[] = [];

async function http(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { ...(typeof body === "object" ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

const api = (method: string, path: string, body?: unknown) => http(method, `${origin}/api/v1${path}`, body, { "X-API-Key": key });

beforeAll(async () => {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const state = join(scratch, "state");
  key = localOrganization(state, "Dashboard");

  const sim = await startLocalWorker("the carrier simulator", (_at, port) => ({
    config: "src/dev/simulator/wrangler.toml",
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: join(scratch, `sim-${port}`), watch: false, logLevel: "warn" },
  }));
  workers.push(sim.worker);
  simUrl = sim.origin;

  const started = await startLocalWorker("edgedial", (at, port) => ({
    config: "wrangler.jsonc",
    // Calling rules' defaults off: the test's Los Angeles numbers must be callable at any hour CI runs.
    bindings: plain({
      ...localBindings("d1"),
      PUBLIC_BASE_URL: at,
      CARRIER_BASE_URLS: JSON.stringify({ twilio: `${simUrl}/twilio` }),
      CALLING_RULES_DEFAULTS: "off",
    }),
    // remote: false: Workers AI (remote only) stays off; the agent on calls is VOICE_AGENT's local choice.
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: state, watch: false, logLevel: "warn", remote: false },
  }));
  workers.push(started.worker);
  origin = started.origin;

  // An agent, a configuration on the simulator with a caller ID, and a draft campaign of three contacts.
  const agent = await api("POST", "/workflow/create", {
    name: "Reminder agent",
    workflow_definition: {
      nodes: [
        { id: "start", type: "startCall", data: { prompt: "Remind {{first_name}}", greeting: "Hi {{first_name}}, this is a reminder." } },
        { id: "end", type: "endCall", data: { prompt: "Say goodbye" } },
      ],
      edges: [{ id: "e", source: "start", target: "end", data: { label: "done", condition: "always" } }],
    },
  });
  const account = await http("POST", `${simUrl}/_sim/accounts`, { provider: "twilio" });
  accountId = account.id;
  const config = await api("POST", "/organizations/telephony-configs", {
    name: "Simulated Twilio",
    is_default_outbound: true,
    config: { provider: "twilio", ...account.credentials },
  });
  await api("POST", `/organizations/telephony-configs/${config.id}/phone-numbers`, { address: "+14155550100", is_default_caller_id: true });
  const csv = "phone_number,first_name\n+14155552001,Ada\n+14155552002,Grace\n+14155552003,Alan\n";
  const presign = await api("POST", "/s3/presigned-upload-url", { file_name: "dashboard.csv", file_size: Buffer.byteLength(csv), content_type: "text/csv" });
  await http("PUT", presign.upload_url, csv, { "Content-Type": "text/csv" });
  const campaign = await api("POST", "/campaign/create", {
    name: "Dashboard reminders",
    workflow_id: agent.id,
    source_url: presign.file_key,
    max_concurrency: 3,
  });
  campaignId = campaign.id;

  context = await launchChromium(join(scratch, "profile"), requested);
}, 180_000);

afterAll(async () => {
  await context?.close();
  for (const w of workers.reverse()) await w.dispose().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

async function openPage(): Promise<Page> {
  const page = await watchedPage(context, requested, consoleErrors);
  page.on("websocket", (ws) => sockets.push(ws.url()));
  return page;
}

/** Presses Tab until the element with this id has focus (at most `max` times); true when it got there. */
async function tabTo(page: Page, id: string, max = 10): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if ((await page.evaluate("document.activeElement?.id || document.activeElement?.textContent?.trim()")) === id) return true;
  }
  return false;
}

/** Plays the carrier's side: every call the simulator holds is answered (the greeting is spoken, then it hangs up). */
async function answerCalls(played: Set<string>): Promise<void> {
  const calls = (await http("GET", `${simUrl}/_sim/accounts/${accountId}/calls`)) as { id: string; state: string }[];
  for (const call of calls) {
    if (played.has(call.id) || call.state === "ended") continue;
    played.add(call.id);
    await http("POST", `${simUrl}/_sim/calls/${encodeURIComponent(call.id)}/outcome`, { outcome: "answered", deliver: true });
  }
}

describe("dashboard in a browser", () => {
  it("signs in by keyboard, lists campaigns and agents, starts a campaign with confirmation, follows it to the end, opens a call, signs out", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const page = await openPage();
    const res = await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.getByRole("heading", { name: "Sign in", level: 1 }).isVisible()).toBe(true);
    // The contrast check sees what falls short: grey #999 on white is 2.85:1.
    // (Styled through the CSSOM: the page's Content-Security-Policy ignores inline style attributes.)
    await page.evaluate(
      `const p = document.createElement("p"); p.id = "faint"; p.textContent = "faint"; p.style.color = "#999"; p.style.background = "#fff"; document.body.append(p);`,
    );
    expect(await contrastProblems(page)).toEqual([expect.objectContaining({ text: "faint", ratio: 2.85, needed: 4.5 })]);
    await page.evaluate(`document.getElementById("faint").remove()`);
    expect(await contrastProblems(page)).toEqual([]);

    // Keyboard: Tab reaches the key field; a wrong key shows the API's 401 message in the alert region.
    expect(await tabTo(page, "api-key")).toBe(true);
    // Keyboard focus is visible (:focus-visible outline).
    expect(await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")).toBe("solid");
    await page.keyboard.type("edk_wrong");
    await page.keyboard.press("Enter");
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("Invalid API key");
    expect(await alert.getAttribute("aria-live")).toBe("assertive");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-sign-in-error.png") });
    expect(await contrastProblems(page)).toEqual([]);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);

    await page.getByLabel("API key").fill(key);
    expect(await tabTo(page, "Sign in")).toBe(true);
    await page.keyboard.press("Enter");

    // The campaigns list.
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);
    const link = page.getByRole("link", { name: "Dashboard reminders" });
    await expect.poll(() => link.isVisible()).toBe(true);
    expect(await page.getByRole("row", { name: /Dashboard reminders/ }).textContent()).toContain("draft");
    expect(await alert.isHidden()).toBe(true);
    // The key is in this tab's session only: nothing in localStorage, no cookie.
    expect(await page.evaluate('[sessionStorage.getItem("edgedial.apiKey"), localStorage.length, document.cookie]')).toEqual([key, 0, ""]);
    expect(await context.cookies()).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-campaigns.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);

    // The campaign page: counters, controls for a draft (start and cancel, not pause or resume).
    await link.click();
    await expect.poll(() => page.getByRole("heading", { name: "Dashboard reminders", level: 1 }).isVisible()).toBe(true);
    const counter = (name: string) => page.locator(`[data-counter="${name}"] dd`);
    await expect.poll(() => counter("pending").textContent()).toBe("3");
    // The progress comes pushed over the campaign's events WebSocket (same origin, the key as a subprotocol).
    await expect.poll(() => page.locator("#progress-note").textContent()).toContain("pushed live");
    expect(sockets).toContain(`${origin.replace(/^http/, "ws")}/api/v1/campaign/${campaignId}/events`);
    expect(await counter("retry_waiting").textContent()).toBe("0");
    expect(await counter("total").textContent()).toBe("3");
    const controls = page.getByRole("group", { name: "Campaign controls" });
    expect(await controls.getByRole("button").allTextContents()).toEqual(["Start", "Cancel campaign"]);
    await expect.poll(() => page.locator("#log").textContent()).toContain("campaign_created");

    // Start: the confirmation dialog first; "Keep as it is" changes nothing, Confirm starts it.
    await controls.getByRole("button", { name: "Start" }).click();
    const dialog = page.getByRole("dialog");
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-confirm-start.png") });
    expect(await contrastProblems(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await api("GET", `/campaign/${campaignId}`)).state).toBe("draft");
    await controls.getByRole("button", { name: "Start" }).click();
    await dialog.getByRole("button", { name: "Start" }).click();
    await expect.poll(() => page.locator("#campaign-state").textContent()).toBe("running");
    expect(await controls.getByRole("button").allTextContents()).toEqual(["Pause", "Cancel campaign"]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-campaign-running.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);

    // The simulator answers every call; the page follows the campaign by polling until it completes.
    const played = new Set<string>();
    await expect
      .poll(
        async () => {
          await answerCalls(played);
          return page.locator("#campaign-state").textContent();
        },
        { timeout: 90_000, interval: 1000 },
      )
      .toBe("completed");
    await expect.poll(() => counter("completed").textContent(), { timeout: 10_000 }).toBe("3");
    expect(await counter("pending").textContent()).toBe("0");
    await expect.poll(() => page.getByRole("img", { name: /Call outcomes: completed 3/ }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByRole("img", { name: /Processed contacts over time/ }).isVisible()).toBe(true);
    await expect.poll(() => page.locator("#log").textContent()).toContain("campaign_completed");
    expect(await page.locator("#log").textContent()).toContain("campaign_started");
    expect(await controls.getByRole("button").count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-campaign-completed.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);

    // A call: status, times, no transcript or recording (the greeting was spoken by the carrier).
    await page
      .getByRole("link", { name: /^WR-\d+$/ })
      .first()
      .click();
    await expect.poll(() => page.getByRole("heading", { name: /^Call WR-\d+$/, level: 1 }).isVisible()).toBe(true);
    const facts = await page.locator("dl.facts").textContent();
    expect(facts).toContain("completed");
    expect(facts).toMatch(/\+1415555200[123]/);
    expect(await page.getByText("No transcript for this call.").isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-run.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);

    // Agents.
    await page.getByRole("link", { name: "Agents" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Agents", level: 1 }).isVisible()).toBe(true);
    const agentRow = await page.getByRole("row", { name: /Reminder agent/ }).textContent();
    expect(agentRow).toContain("active");
    expect(agentRow).toContain("3");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-agents.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);

    // Sign out by keyboard: the key is gone and the sign-in form is back.
    await page.getByRole("button", { name: "Sign out" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("heading", { name: "Sign in", level: 1 }).isVisible()).toBe(true);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);

    await page.waitForLoadState("networkidle");
    // The one console error is Chromium's note of the deliberate 401 of the wrong key.
    expect(consoleErrors.filter((m) => !m.includes("status of 401"))).toEqual([]);
    expect(sockets.every((url) => url.startsWith(`${origin.replace(/^http/, "ws")}/`))).toBe(true);
    const offOrigin = [...requested].filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"));
    expect(offOrigin).toEqual([]);
    await page.close();
  });

  it("pause, resume and cancel are each confirmed and offered only in the states that allow them (progress polled when no WebSocket connects)", async () => {
    const page = await openPage();
    // No pushed progress on this page: the events WebSocket is closed at once, and the page falls back to polling.
    await page.routeWebSocket(/\/events$/, (ws) => ws.close());
    await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);
    const first = await api("GET", `/campaign/${campaignId}`);
    const csv = "phone_number,first_name\n+14155553001,Radia\n";
    const presign = await api("POST", "/s3/presigned-upload-url", { file_name: "second.csv", file_size: Buffer.byteLength(csv), content_type: "text/csv" });
    await http("PUT", presign.upload_url, csv, { "Content-Type": "text/csv" });
    const second = await api("POST", "/campaign/create", { name: "Paused reminders", workflow_id: first.workflow_id, source_url: presign.file_key });
    await api("POST", `/campaign/${second.id}/start`);

    // Paging: with the list's page size cut to 1 (the request rewritten in the browser), "Show more" fetches the next page.
    await page.route("**/api/v1/campaign?limit=50*", (route) => route.continue({ url: route.request().url().replace("limit=50", "limit=1") }));
    await page.reload();
    await expect.poll(() => page.getByRole("link", { name: "Paused reminders" }).isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Dashboard reminders" }).count()).toBe(0);
    await page.getByRole("button", { name: "Show more campaigns" }).click();
    await expect.poll(() => page.getByRole("link", { name: "Dashboard reminders" }).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Show more campaigns" }).isHidden()).toBe(true);
    expect(await page.locator("caption").textContent()).toBe("2 campaigns, newest first");

    await page.goto(`${origin}/dashboard/#/campaigns/${second.id}`);
    const controls = page.getByRole("group", { name: "Campaign controls" });
    const dialog = page.getByRole("dialog");
    const state = page.locator("#campaign-state");
    const act = async (label: string, next: string) => {
      await controls.getByRole("button", { name: label }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      // The dialog's focus starts on the harmless choice.
      expect(await page.evaluate("document.activeElement?.id")).toBe("confirm-no");
      await dialog.getByRole("button", { name: label }).click();
      await expect.poll(() => state.textContent()).toBe(next);
    };
    await expect.poll(() => state.textContent()).toBe("running");
    await expect.poll(() => page.locator("#progress-note").textContent()).toContain("polled every 2 s");
    await act("Pause", "paused");
    expect(await controls.getByRole("button").allTextContents()).toEqual(["Resume", "Cancel campaign"]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-campaign-paused.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);
    await act("Resume", "running");
    await act("Cancel campaign", "cancelled");
    expect(await controls.getByRole("button").count()).toBe(0);
    expect((await api("GET", `/campaign/${second.id}`)).state).toBe("cancelled");
    await expect.poll(() => page.locator("#log").textContent()).toContain("campaign_cancelled");

    // An unknown campaign: the API's 404 detail in the alert region.
    await page.goto(`${origin}/dashboard/#/campaigns/999999`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Campaign not found");
    await page.close();
  });

  it("a run page shows the transcript, gathered values, disposition and a recording player (run answer stubbed in the browser)", async () => {
    // The calls above have no conversation (the carrier spoke the greeting), so the run's answer is replaced in the
    // browser by one with every field the contract allows, to check how the page renders them.
    const page = await openPage();
    const run = {
      id: 4242,
      name: "WR-4242",
      workflow_id: 7,
      workflow_uuid: "00000000-0000-4000-8000-000000000007",
      campaign_id: campaignId,
      phone_number: "+14155559999",
      from_number: "+14155550100",
      initial_context: { first_name: "Ada" },
      telephony_configuration_id: 1,
      provider: "twilio",
      provider_call_id: "CA123",
      status: "completed",
      answered_by: "human",
      amd_class: "call_screening",
      error: null,
      notes: null,
      created_at: "2026-11-25T09:00:00.000Z",
      started_at: "2026-11-25T09:00:01.000Z",
      answered_at: "2026-11-25T09:00:05.000Z",
      ended_at: "2026-11-25T09:00:35.000Z",
      duration_seconds: 30,
      transcript: [
        { role: "agent", text: "Hi Ada, how many seats do you need?", start_ms: 0, end_ms: 2500, interrupted: true },
        { role: "callee", text: "We need twelve seats.", start_ms: 2100, end_ms: 3900, interrupted: false },
      ],
      gathered_context: { seats: 12 },
      disposition: "interested",
      usage: null,
      recording_url: `${origin}/api/v1/recordings/4242?sig=stub`,
      created_by_key_id: 1,
    };
    await page.route("**/api/v1/workflow/7/runs/4242", (route) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(run) }));
    await page.goto(`${origin}/dashboard/`, { waitUntil: "networkidle" });
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Campaigns", level: 1 }).isVisible()).toBe(true);
    await page.goto(`${origin}/dashboard/#/runs/7/4242`);
    await expect.poll(() => page.getByRole("heading", { name: "Call WR-4242", level: 1 }).isVisible()).toBe(true);
    // Each turn with its start, length, (for the agent after the callee) how long the agent took to answer, and for
    // an agent's reply its measured stages ("—": this stubbed run has none).
    const items = await page
      .getByRole("table", { name: /Each turn/ })
      .locator("tbody tr")
      .allTextContents();
    expect(items).toEqual(["Agent0.0 s2.5 s—Hi Ada, how many seats do you need? [interrupted]—", "Callee2.1 s1.8 s—We need twelve seats."]);
    expect(await page.getByRole("row", { name: /^seats/ }).textContent()).toContain("12");
    expect(await page.locator("dl.facts").textContent()).toContain("interested");
    expect(await page.locator("dl.facts").textContent()).toContain("Answered bycall screening");
    const audio = page.locator("audio");
    // The stub's link answers 403, so the player falls back to streaming the link itself.
    await expect.poll(() => audio.getAttribute("src")).toBe(run.recording_url);
    expect(await audio.getAttribute("controls")).not.toBeNull();
    expect(await page.getByRole("link", { name: "← Campaign" }).getAttribute("href")).toBe(`#/campaigns/${campaignId}`);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-run-transcript.png"), fullPage: true });
    expect(await contrastProblems(page)).toEqual([]);
    await page.close();
  });

  it("serves the dashboard's files as static assets and leaves the API's routes to the Worker", async () => {
    const index = await fetch(`${origin}/dashboard/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toContain("text/html");
    // public/_headers: the dashboard may load and ask only its own origin.
    expect(index.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(index.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await fetch(`${origin}/_headers`)).status).not.toBe(200);
    const redirect = await fetch(`${origin}/dashboard`, { redirect: "manual" });
    expect([301, 307, 308]).toContain(redirect.status);
    expect(new URL(redirect.headers.get("location") ?? "", origin).pathname).toBe("/dashboard/");
    expect((await fetch(`${origin}/dashboard/app.js`)).headers.get("content-type")).toContain("javascript");
    const health = await fetch(`${origin}/api/v1/health`);
    expect(health.status).toBe(200);
    expect((await fetch(`${origin}/api/v1/campaign`)).status).toBe(401);
  });
});
