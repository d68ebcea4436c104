// Debian's headless Chromium, as every browser test launches it: a fresh profile, no network of its own (no QUIC,
// sync, updates or background fetches), and every URL the pages request noted so a test can check none left the
// Worker's origin.
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchChromium(profileDir: string, requested: Set<string>): Promise<BrowserContext> {
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
    ],
  });
  context.on("request", (r) => requested.add(r.url()));
  return context;
}
