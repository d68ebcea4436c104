// Copies the API reference's browser build (@scalar/api-reference, from node_modules) into public/, which
// wrangler serves as static assets (assets in wrangler.jsonc), so /api/v1/docs needs no CDN. Runs on
// `npm install` / `npm ci` (the `prepare` script); public/api/ is generated, never committed (public/dashboard/ is source).
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Where the files are served: /api/v1/docs/assets/ (see DOCS_ASSETS in src/lib/openapi.ts). */
const TARGET = join(ROOT, "public/api/v1/docs/assets");

// The package's exports do not list its browser build, so it is read from the package's folder.
const browser = join(ROOT, "node_modules/@scalar/api-reference/dist/browser");

rmSync(TARGET, { recursive: true, force: true });
mkdirSync(join(TARGET, "chunks"), { recursive: true });
// The ESM build loads only the chunks a page needs; source maps are left out (18 MB nobody's browser asks for).
copyFileSync(join(browser, "standalone.esm.js"), join(TARGET, "standalone.esm.js"));
// Scalar shows a made-up token as the placeholder of its key box, which reads like a key already filled in: the box
// gets a hint instead. Its source is Scalar's compiled bundle, so the script fails should an upgrade change it.
const SCALAR_PLACEHOLDER = "placeholder:`QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT`";
const KEY_HINT = "placeholder:`Paste your API key (edk_…)`";
let hinted = 0;
let count = 1;
for (const name of readdirSync(join(browser, "chunks"))) {
  if (!name.endsWith(".js")) continue;
  const text = readFileSync(join(browser, "chunks", name), "utf8");
  if (text.includes(SCALAR_PLACEHOLDER)) {
    writeFileSync(join(TARGET, "chunks", name), text.replaceAll(SCALAR_PLACEHOLDER, KEY_HINT));
    hinted++;
  } else copyFileSync(join(browser, "chunks", name), join(TARGET, "chunks", name));
  count++;
}
if (!hinted) throw new Error("docs-assets: the reference's key box placeholder was not found in @scalar/api-reference (changed build?)");
console.log(`API reference assets: ${count} files in ${TARGET.slice(ROOT.length)}`);
