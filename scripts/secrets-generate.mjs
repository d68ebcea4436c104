// npm run secrets:generate: fresh values for the Worker's three required secrets, in the formats it expects.
// Nothing is stored or sent anywhere; set them with `wrangler secret put NAME` (or as CI secrets for `npm run deploy`).
import { freshSecrets } from "./lib/deploy-plan.ts";

const secrets = freshSecrets();
for (const [name, value] of Object.entries(secrets)) console.log(`${name}=${value}`);
console.error(`
Set each on the deployed Worker (paste the value when asked):
${Object.keys(secrets)
  .map((n) => `  npx wrangler secret put ${n}`)
  .join("\n")}
or give them to \`npm run deploy\` in its environment (CI secrets); they are uploaded with the version.
Keep ENCRYPTION_KEYS safe: telephony credentials stored under it cannot be read without it.`);
