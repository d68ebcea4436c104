// Debian's headless Chromium, as every browser test launches it: a fresh profile, no network of its own (no QUIC,
// sync, updates or background fetches), and every URL the pages request noted so a test can check none left the
// Worker's origin.
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * `extraArgs`: a test's own switches (autoplay, a fake microphone) beside the closed-network ones every test gets.
 * A launch is bounded at 60 s (Playwright's default is 180 s, a browser file's whole setup) and tried once more with a
 * fresh profile, so a stalled start names itself instead of timing out the file's hook.
 */
export async function launchChromium(profileDir: string, requested: Set<string> = new Set(), extraArgs: string[] = []): Promise<BrowserContext> {
  const started = Date.now();
  let context: BrowserContext;
  try {
    context = await launch(profileDir, extraArgs);
  } catch (err) {
    process.stderr.write(`browser setup: Chromium did not start (${String(err).split("\n")[0]}); trying once more\n`);
    context = await launch(`${profileDir}-again`, extraArgs);
  }
  process.stderr.write(`browser setup: Chromium started in ${Date.now() - started} ms\n`);
  context.on("request", (r) => requested.add(r.url()));
  return context;
}

function launch(profileDir: string, extraArgs: string[]): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    timeout: 60_000,
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
