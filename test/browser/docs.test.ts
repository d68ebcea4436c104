// The API reference in a real browser: /api/v1/docs under `wrangler dev` (static assets included) in headless
// Chromium. Every operation of the document renders, nothing is logged as an error, and no request leaves the
// Worker's origin (fonts, CDN, telemetry, registry and proxy hosts would all show up here).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plain, startLocalWorker, type Worker } from "./local-service";
import { launchChromium, watchedPage } from "./chromium";

const ARTIFACTS = join(process.cwd(), "test-artifacts");

type Operation = { method: string; path: string; tag: string; summary: string };

let worker: Worker;
let context: BrowserContext;
let origin: string;
const scratch = mkdtempSync(join(tmpdir(), "edgedial-browser-"));
/** Every URL the browser asked for, from Playwright and from the DevTools protocol (which also sees favicons). */
const requested = new Set<string>();
const consoleErrors: string[] = [];

beforeAll(async () => {
  // wrangler would otherwise fetch the `Request.cf` placeholder from workers.cloudflare.com (no network in CI).
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  ({ worker, origin } = await startLocalWorker("edgedial", (_at, port) => ({
    config: "wrangler.jsonc",
    bindings: plain({
      ENCRYPTION_KEYS: `b1:${Buffer.alloc(32, 7).toString("base64")}`,
      CALLBACK_SECRET: "browser-test",
      UPLOAD_SIGNING_SECRET: "browser-test",
    }),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist: join(scratch, "state"), watch: false, logLevel: "warn", remote: false },
  })));

  context = await launchChromium(join(scratch, "profile"), requested);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await worker?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const openPage = (): Promise<Page> => watchedPage(context, requested, consoleErrors);

async function operations(): Promise<Operation[]> {
  const doc = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { tags?: string[]; summary?: string }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, tag: op.tags?.[0] ?? "", summary: op.summary ?? "" })),
  );
}

/** Scalar's anchor for an operation (its default slugs: the tag lower-cased with dashes, then method and path). */
const anchorOf = (op: Operation) => `tag/${op.tag.toLowerCase().replace(/\s+/g, "-")}/${op.method}${op.path}`;

describe("API reference in a browser", () => {
  it("/ redirects to the reference, which renders every operation with no console error and no request off the origin", async () => {
    const page = await openPage();
    const res = await page.goto(`${origin}/`, { waitUntil: "networkidle" });
    expect(res?.status()).toBe(200);
    expect(page.url()).toBe(`${origin}/api/v1/docs`);
    await expect.poll(() => page.getByRole("heading", { name: "edgedial API", exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "docs-top.png") });

    const ops = await operations();
    expect(ops.length).toBeGreaterThan(30);
    const missing: string[] = [];
    for (const op of ops) {
      // Following the operation's anchor makes the reference render its (lazily rendered) section.
      await page.evaluate(`window.location.hash = ${JSON.stringify(anchorOf(op))}`);
      const section = page.locator(`section[id$="/${op.method}${op.path}"]`);
      try {
        await section.first().waitFor({ state: "visible", timeout: 10_000 });
        const title = await section.first().locator(".section-header-label").first().textContent();
        if (title?.trim() !== op.summary.trim()) missing.push(`${op.method} ${op.path}: title ${JSON.stringify(title)}`);
      } catch {
        missing.push(`${op.method} ${op.path}: not rendered`);
      }
    }
    await page.screenshot({ path: join(ARTIFACTS, "docs-last-operation.png") });
    expect(missing).toEqual([]);

    await page.waitForLoadState("networkidle");
    expect(consoleErrors).toEqual([]);
    const offOrigin = [...requested].filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"));
    expect(offOrigin).toEqual([]);
    // The reference's script came from the Worker's own static assets.
    expect([...requested].some((url) => url.startsWith(`${origin}/api/v1/docs/assets/`))).toBe(true);
    await page.close();
  });

  it("introduces the whole service and offers an empty key box with a hint, not a key-like placeholder", async () => {
    const page = await openPage();
    await page.goto(`${origin}/api/v1/docs`, { waitUntil: "networkidle" });
    await expect.poll(() => page.locator("body").textContent(), { timeout: 30_000 }).toContain("Voice agents on phone calls");
    const text = (await page.locator("body").textContent()) ?? "";
    for (const part of ["Carriers", "Campaigns", "inbound", "web calls", "X-API-Key"]) expect(text).toContain(part);
    expect(text).not.toContain("Outbound calling for voice agents");
    const key = page.locator("input.scalar-password-input").first();
    await key.waitFor({ state: "visible", timeout: 30_000 });
    expect(await key.inputValue()).toBe("");
    expect(await key.getAttribute("placeholder")).toMatch(/^Paste your API key/);
    await page.close();
  });
});
