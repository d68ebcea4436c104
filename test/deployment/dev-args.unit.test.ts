// npm run dev keeps a user's own --var CARRIER_BASE_URLS (it adds the sandbox's simulator to it in scripts/dev.mjs)
// instead of overriding it with its own --var after theirs.
import { describe, expect, it } from "vitest";
import { planDev } from "../../scripts/lib/dev-args";

const URLS = '{"twilio":"http://127.0.0.1:9999/twilio"}';

describe("npm run dev -- --var CARRIER_BASE_URLS:…", () => {
  it.each([[["--var", `CARRIER_BASE_URLS:${URLS}`]], [[`--var=CARRIER_BASE_URLS:${URLS}`]]])("%j is taken out of wrangler's flags and kept", (argv) => {
    const plan = planDev([...argv, "--log-level", "warn"]);
    expect(plan.carrierBaseUrls).toBe(URLS);
    expect(plan.wranglerArgs.some((a) => a.includes("CARRIER_BASE_URLS"))).toBe(false);
    expect(plan.wranglerArgs).toContain("--log-level");
  });

  it("other --vars pass through untouched, and no CARRIER_BASE_URLS means none kept", () => {
    const plan = planDev(["--var", "FOO:bar"]);
    expect(plan.carrierBaseUrls).toBeUndefined();
    expect(plan.wranglerArgs.join(" ")).toContain("--var FOO:bar");
  });
});
