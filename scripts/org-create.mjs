// npm run org:create -- --name NAME [--remote]: creates an organization and prints its first API key (shown once).
import { parseArgs } from "node:util";
import { createOrganization } from "./lib/wrangler.mjs";

const { values } = parseArgs({ options: { name: { type: "string" }, remote: { type: "boolean", default: false } } });
if (!values.name?.trim()) {
  console.error("usage: npm run org:create -- --name NAME [--remote]");
  process.exit(2);
}
const { orgId, key } = createOrganization(values.name.trim(), { remote: values.remote });
console.log(`organization ${orgId} created (${values.remote ? "remote" : "local"} D1)`);
console.log(`API key (store it now; it is not shown again): ${key}`);
