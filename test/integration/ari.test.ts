// ARI against a real Asterisk 22 (../shared/tools/peers): real originates to its dialplan targets and to a
// sipp UAS over PJSIP, with outcomes arriving through the real events WebSocket held by the ARI object.
import { describe, expect, inject, it } from "vitest";
import { dial, finalStatus, setupAri } from "./ari-support";

describe("ARI against Asterisk", () => {
  it("answered: Local/100@default answers, hangs up after 3 s -> completed", async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/100@default");
    expect(await finalStatus(runId, 15_000)).toBe("completed");
  });

  it("busy: Local/300@default -> busy", async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/300@default");
    expect(await finalStatus(runId, 15_000)).toBe("busy");
  });

  it("no answer: Local/200@default rings out -> no_answer", { timeout: 60_000 }, async () => {
    const s = await setupAri();
    const runId = await dial(s, "Local/200@default");
    expect(await finalStatus(runId, 50_000)).toBe("no_answer");
  });

  it.runIf(inject("sipp"))("PJSIP to a sipp UAS answers -> completed", { timeout: 30_000 }, async () => {
    const s = await setupAri();
    const runId = await dial(s, "PJSIP/100@sipp");
    expect(await finalStatus(runId, 25_000)).toBe("completed");
  });
});
