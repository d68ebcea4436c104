// A deploy in the middle of a call: the call session is reset mid-conversation (storage kept, sockets dropped), the
// carrier comes back through its own documented mechanism (the simulator follows the same documents), the new stream
// reaches the same session and the conversation goes on where it was.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import type { MediaProvider } from "../../src/dev/simulator/media/callee";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import { listenUntil, SEATS, SURE } from "./conversation-support";
import { answeredLiveCall, calleeAt, deliverLive, hearAgent, mediaEnded, resetSession, say, simCall } from "./resume-support";
import { runRow, setup, simRequests } from "./support";

const TRANSCRIPT = ["Hi Ada!", "Sure, tell me more.", "Great. How many seats do you need?", "We need twelve seats.", "Thank you, goodbye!"];

describe.each(["twilio", "cloudonix", "plivo", "vobiz", "vonage", "telnyx"] as MediaProvider[])(
  "%s: a call whose session is reset mid-conversation",
  (provider) => {
    it("comes back through the carrier's mechanism to the same session, and the transcript goes on", async () => {
      const s = await setup(provider);
      const { runId, callId, callee, document, streamUrl } = await answeredLiveCall(s, provider);
      await hearAgent(callee);
      say(callee, SURE);
      await hearAgent(callee);

      await resetSession(runId);
      await callee.until(() => callee.closed !== null);
      expect(callee.closed?.code).toBe(1006);

      // The carrier's next step once its stream socket closed with the call up, as its documentation says.
      let next: string | null = null;
      for (const cb of await mediaEnded(callId, document)) {
        const r = await deliverLive(cb);
        if (cb.kind === "answer") next = r.text;
      }
      const fresh = provider === "telnyx" ? String((await simCall(callId)).streamUrl) : streamUrlIn(next ?? "");
      expect(fresh, `a new stream in ${next}`).toMatch(/^wss?:\/\//);
      expect(fresh).not.toBe(streamUrl);
      if (provider === "telnyx") {
        const start = (await simRequests(s.acct)).find((r) => r.path.endsWith("/actions/streaming_start"));
        expect(JSON.parse(start!.body)).toMatchObject({ stream_url: fresh, stream_track: "inbound_track", stream_bidirectional_mode: "rtp" });
      } else {
        // The new document says again how to come back: a second deploy during the same call resumes too.
        expect(next).toBe(document.replace(streamUrl, fresh!));
      }

      const again = await calleeAt(provider, runId, callId, fresh!);
      await hearAgent(again, 400, 2000);
      say(again, SEATS);
      await listenUntil(again, () => again.closed !== null);

      const snap = await callSessionStub(env, runId).snapshot();
      expect(snap.endReason).toBe("agent_hangup");
      expect(snap.turns.map((t) => t.text)).toEqual(TRANSCRIPT);
      // One resume, and the call's clock went on across it: the turns' times never go back.
      expect(snap.resumes).toBe(1);
      for (let i = 1; i < snap.turns.length; i++) expect(snap.turns[i].startMs).toBeGreaterThanOrEqual(snap.turns[i - 1].endMs - 1000);
      expect(snap.turns.at(-1)!.startMs).toBeGreaterThan(snap.turns[2].endMs);
      expect((await runRow(runId)).status).not.toBe("failed");
    });
  },
);
