// The Worker under test as both test configs (vitest.config.ts, vitest.integration.config.ts) run it: the
// wrangler config, the D1 migrations and the test-only secrets, plus what each suite adds. Imported by the
// configs, so this runs in Node, not in workerd.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";

type PoolOptions = Exclude<Parameters<typeof cloudflareTest>[0], (...args: never[]) => unknown>;
type MiniflareOptions = NonNullable<PoolOptions["miniflare"]>;

// Secrets for the test runtime only (never real values).
export const TEST_SECRETS = {
  ENCRYPTION_KEYS: "t1:3q2+7wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGho=",
  CALLBACK_SECRET: "test-callback-secret",
  UPLOAD_SIGNING_SECRET: "test-upload-secret",
};

// Rate limits far above anything a test does, so no test trips them by accident; the rate-limit tests set their
// own organization's limits low (OrganizationObject.setRateLimits).
export const TEST_RATE_LIMITS = {
  RATE_LIMIT_CALL_STARTS_PER_ORG: "1000,100000",
  RATE_LIMIT_CALL_STARTS_PER_KEY: "1000,100000",
  RATE_LIMIT_REQUESTS_PER_KEY: "1000,100000",
};

/** The cloudflareTest plugin with the shared bindings; `bindings` and `miniflare` are the suite's own. */
export async function testWorker(bindings: Record<string, string>, miniflare: Omit<MiniflareOptions, "bindings"> = {}) {
  const migrations = await readD1Migrations("./migrations");
  return cloudflareTest({
    wrangler: { configPath: "./wrangler.jsonc" },
    // Workers AI is remote only: the suites fake it at the binding boundary, never reach Cloudflare.
    remoteBindings: false,
    // LOCAL_DEV: the suites' Worker is local development (an http:// PUBLIC_BASE_URL is allowed; see src/lib/settings.ts).
    // CALLING_RULES_DEFAULTS off: the suites' clocks run at any hour and dial the same numbers again and again; the
    // calling-rules tests turn the rules on through the organization's calling policy. VOICE_AGENT empty: each
    // media test prepares the agent its call gets (the deployed default, conversation, needs Workers AI).
    miniflare: {
      bindings: {
        TEST_MIGRATIONS: migrations,
        ...TEST_SECRETS,
        ...TEST_RATE_LIMITS,
        LOCAL_DEV: "true",
        CALLING_RULES_DEFAULTS: "off",
        VOICE_AGENT: "",
        ...bindings,
      },
      ...miniflare,
    },
  });
}
