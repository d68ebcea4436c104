// What the bundle gets for zod's locale index (wrangler.jsonc `alias` maps zod's own "../locales/index.js" here):
// English only, the one edgedial uses (zod configures it itself). The other 60-odd locales were 360 KiB, 14 % of
// the Worker's bundle, parsed and compiled by every new isolate for nothing. `z.locales.<other>` is undefined in
// the built Worker; nothing here uses it. Types still come from zod's own declarations.
export { default as en } from "zod/v4/locales/en.js";
