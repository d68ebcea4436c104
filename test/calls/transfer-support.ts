// The transfer tests' shared parts: a call whose session runs the transfer test agent (which asks for the hand-over
// the run's variables describe), the outcome it logs, and the run's details once the call ended.
import { env } from "cloudflare:workers";
import { callSessionStub } from "../../src/calls/session/stub";
import type { MediaProvider } from "../../src/dev/simulator/media/callee";
import type { ProviderName } from "../../src/telephony/providers/types";
import { listen } from "./conversation-support";
import { connect } from "./media-support";
import { deliverAll, eventually, play, runApi, runRow, type Setup, setup, sim, startCall } from "./support";

export const PERSON = "+14155550199";

/**
 * A call whose session runs the transfer test agent. `pickUp`: the simulated call is answered first and stays up (a
 * carrier's live-call command needs a call in progress; Plivo and Vobiz name it, CallUUID, in the answer request).
 */
export async function transferCall(provider: ProviderName, vars: Record<string, string>, o: { pickUp?: boolean } = {}) {
  const s = await setup(provider);
  const runId = await startCall(s, { initial_context: { first_name: "Ada", transfer_to: PERSON, transfer_timeout: "20", ...vars } });
  if (o.pickUp) {
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll((await play(callId, "answered")).filter((c) => c.kind === "answer"));
    await sim("POST", `/calls/${encodeURIComponent(callId)}/pick-up`, {});
  }
  await callSessionStub(env, runId).prepare({ agent: "transfer" });
  const callee = await connect(provider as MediaProvider, runId);
  return { s, runId, callee };
}

/** The session's transcript once the test agent logged the transfer's outcome (the callee listening meanwhile). */
export async function outcomeOf(runId: number, callee: Awaited<ReturnType<typeof connect>>) {
  for (let i = 0; i < 200; i++) {
    const snap = await callSessionStub(env, runId).snapshot();
    const turn = snap.turns.find((t) => t.text.startsWith("transfer: "));
    if (turn) return { snap, outcome: turn.text.slice("transfer: ".length) };
    await listen(callee, 20);
  }
  throw new Error("the transfer never settled");
}

/** The run's details once its call session wrote them (the transcript, after the end). */
export const runOnceEnded = (s: Setup, runId: number) =>
  eventually(
    () => runApi(s, runId),
    (r) => r.transfer?.outcome != null && r.end_reason != null,
  );

export const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

/** An agent that offers a person at `destination` (its transferCall node's no-answer edge apologizes and ends). */
export const transferDefinition = (destination: string, mode: "cold" | "warm") => ({
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} whether they want to talk to a person.", greeting: "Hi {{first_name}}!" } },
    {
      id: "xfer",
      type: "transferCall",
      data: { destination, mode, message: "Putting you through.", whisper_prompt: "Summarize for the rep.", timeout_seconds: 20 },
    },
    { id: "bye", type: "endCall", data: { prompt: "Apologize that nobody is free and say goodbye." } },
  ],
  edges: [
    { id: "e1", source: "start", target: "xfer", data: { label: "transfer", condition: "They want a person" } },
    { id: "e2", source: "xfer", target: "bye", data: { label: "nobody", condition: "Nobody answered", on: "no_answer" } },
  ],
});
/** The scripted model for transferDefinition: asks for the transfer, writes the whisper, apologizes if nobody answered. */
export const TRANSFER_SCRIPT = [
  { user: "tell me more", prompt: "whether they want", call: { name: "transfer" } },
  { prompt: "Summarize for the rep", say: "Ada wants to talk to a person." },
  { prompt: "Apologize", say: "Sorry, nobody is free. Goodbye!", call: { name: "end_call", arguments: {} } },
];
