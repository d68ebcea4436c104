// A run a person talked on is never voicemail: Telnyx's answering-machine verdict arrives after call.answered, while
// the callee is already talking with the agent; the agent goes on (its own judgment stands), and the carrier's
// final status then ends the run completed, answered by a person, its end not before its answer.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Callback } from "../../src/dev/simulator/types";
import { conversationCall, listen, listenUntil, SEATS, SURE } from "./conversation-support";
import { flush, play, runRow, setup } from "./support";

// The Worker as deployed: answered calls run the conversation agent.
const live = { ...env, VOICE_AGENT: "conversation" } as Env;

async function deliverLive(cbs: Callback[]) {
  for (const cb of cbs.filter((c) => c.kind === "status")) {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(cb.url, { method: cb.method, headers: cb.headers, body: cb.body }), live, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBeLessThan(300);
  }
}

describe("what a run says of a conversation", () => {
  it("a machine verdict during the conversation does not make it voicemail: completed, answered by a person", async () => {
    const s = await setup("telnyx");
    const { runId, callee } = await conversationCall(s, undefined, { provider: "telnyx" });
    const callId = (await runRow(runId)).providerCallId!;
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    await deliverLive(await play(callId, "voicemail"));
    expect((await runRow(runId)).answeredBy).toBe("machine");

    // The conversation goes on to the agent's goodbye and hang-up; Telnyx's call.hangup follows the command.
    await listen(callee, 300);
    callee.speak(SEATS.samples);
    await listenUntil(callee, () => callee.closed !== null);
    await deliverLive(await flush(callId));

    const run = await runRow(runId);
    expect(run.status).toBe("completed");
    expect(run.answeredBy).toBe("human");
    expect(Date.parse(run.endedAt!)).toBeGreaterThanOrEqual(Date.parse(run.answeredAt!));
  });

  it("an answering machine the agent never talked with stays voicemail", async () => {
    const s = await setup("telnyx");
    const { runId, callee } = await conversationCall(s, undefined, { provider: "telnyx" });
    const callId = (await runRow(runId)).providerCallId!;
    await listenUntil(callee, () => callee.received.length >= 5);
    await deliverLive(await play(callId, "voicemail"));
    await listenUntil(callee, () => callee.closed !== null, 5000);
    await deliverLive(await flush(callId));
    const run = await runRow(runId);
    expect(run.status).toBe("voicemail");
    expect(run.answeredBy).toBe("machine");
  });
});
