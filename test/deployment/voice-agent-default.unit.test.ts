// What a plain `wrangler deploy` of wrangler.jsonc runs on answered calls: the conversation agent, on Workers AI
// through the AI binding (the default engines when an agent names none). Local runs turn it off in their own
// bindings (.dev.vars, the runners), never in the deployed configuration.
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import config from "../../wrangler.jsonc?raw";
import example from "../../.dev.vars.example?raw";
import { liveAgent } from "../../src/calls/session/agents";
import { localBindings } from "../../scripts/lib/local-bindings";
import { planDev } from "../../scripts/lib/dev-args";

describe("the deployed voice agent", () => {
  const c = parse(config) as { ai?: { binding?: string }; vars: Record<string, string> };

  it("is the conversation agent, with the AI binding its default engines use", () => {
    expect(liveAgent(c.vars)).toBe("conversation");
    expect(c.ai?.binding).toBe("AI");
  });

  it("is off in the local runners that drive the carrier themselves; npm run dev turns it on (the offline engines)", () => {
    expect(example).toMatch(/^VOICE_AGENT=$/m);
    expect(liveAgent(localBindings())).toBeNull();
    expect(planDev([]).wranglerArgs.join(" ")).toContain("--var VOICE_AGENT:conversation");
  });
});
