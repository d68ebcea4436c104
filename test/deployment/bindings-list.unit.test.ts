// The settings a Worker needs besides wrangler.jsonc are listed once (REQUIRED_SECRETS, scripts/lib/local-bindings.ts);
// .dev.vars.example, which `npm run dev` copies, must name exactly those.
import { describe, expect, it } from "vitest";
import example from "../../.dev.vars.example?raw";
import { localBindings, OPTIONAL_R2_SETTINGS } from "../../scripts/lib/local-bindings";
import { REQUIRED_SECRETS } from "../../src/lib/settings";

const namesIn = (text: string) =>
  text
    .split("\n")
    .map((l) => /^([A-Z][A-Z0-9_]*)=/.exec(l.trim())?.[1])
    .filter((n): n is string => !!n);

describe("the list of local bindings", () => {
  it(".dev.vars.example names every required secret, LOCAL_DEV and the optional R2 settings, and nothing else", () => {
    expect(namesIn(example).sort()).toEqual(Object.keys(localBindings()).sort());
  });

  it("local runners get every required secret, freshly generated, and the optional settings empty", () => {
    const a = localBindings("x1");
    const b = localBindings("x1");
    for (const name of REQUIRED_SECRETS) {
      expect(a[name], name).toBeTruthy();
      expect(a[name], name).not.toBe(b[name]);
    }
    for (const name of OPTIONAL_R2_SETTINGS) expect(a[name]).toBe("");
    expect(a.ENCRYPTION_KEYS).toMatch(/^x1:[A-Za-z0-9+/]{43}=$/);
  });
});
