// Debian's headless Chromium, as every browser test launches it: a fresh profile, no network of its own (no QUIC,
// sync, updates or background fetches), and every URL the pages request noted so a test can check none left the
// Worker's origin.
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** `extraArgs`: a test's own switches (autoplay, a fake microphone) beside the closed-network ones every test gets. */
export async function launchChromium(profileDir: string, requested: Set<string> = new Set(), extraArgs: string[] = []): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
  context.on("request", (r) => requested.add(r.url()));
  return context;
}

/** A new page whose every request (seen by Chromium itself, sockets included) and console error are noted. */
export async function watchedPage(context: BrowserContext, requested: Set<string>, consoleErrors: string[]): Promise<Page> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  cdp.on("Network.requestWillBeSent", (e) => requested.add(e.request.url));
  page.on("console", (m) => {
    // A failed load's message names no URL: the location does.
    if (m.type() === "error") consoleErrors.push(`${m.text()}${m.location().url ? ` (${m.location().url})` : ""}`);
  });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  return page;
}
