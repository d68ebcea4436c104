// The screenshots the README shows, taken by the browser tests on the pages they have just checked, so a picture
// cannot drift from what the dashboard draws. Written only with UPDATE_SCREENSHOTS=1, so CI leaves the tree clean:
//   UPDATE_SCREENSHOTS=1 npm run test:browser -- test/browser/manage.test.ts
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { expect } from "vitest";

export const SCREENSHOTS = join(process.cwd(), "docs/images");

/** The page's top `height` pixels, as docs/images/<name>.png; the README must show that file. */
export async function readmeScreenshot(page: Page, name: string, height = 900): Promise<void> {
  const file = `docs/images/${name}.png`;
  expect(readFileSync(join(process.cwd(), "README.md"), "utf8"), `README.md shows ${file}`).toContain(`](${file})`);
  if (process.env.UPDATE_SCREENSHOTS !== "1") return;
  await page.evaluate("window.scrollTo(0, 0)");
  // The focus ring of the last button pressed is not part of the picture.
  await page.evaluate("document.activeElement instanceof HTMLElement && document.activeElement.blur()");
  const width = page.viewportSize()?.width ?? 1280;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true, clip: { x: 0, y: 0, width, height } });
}
