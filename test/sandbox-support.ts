// Test support for the sandbox carrier's transfers, inbound calls and key presses: a sandbox configuration (its
// calls on the simulator's sandbox account), a number of its own (the sandbox account is shared by every test, so
// each test dials a number nobody else uses), and the call's media stream as the simulator's Twilio opens it.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { CALLEE_PROTOCOLS, CalleeStream } from "../src/dev/simulator/media/callee";
import { callSessionStub } from "../src/calls/session/stub";
import { call, createOrg, type Org } from "./helpers";
import { createAgent, runRow, sim } from "./calls/support";
import { upgrade } from "./calls/media-support";

/** A number no other test uses (the simulator's sandbox account is one for the whole run). */
export const freshNumber = () => `+1415555${String(Math.floor(Math.random() * 1e4)).padStart(4, "0")}`;

export type SandboxSetup = { org: Org; configId: number; numberId: number; number: string; agent: Awaited<ReturnType<typeof createAgent>> };

/**
 * A sandbox configuration with one number (the default caller ID). A ring of 30 s: the test plays the carrier's
 * deliveries itself (the simulator's own would go to edgedial.test, which it cannot reach in the test pool).
 */
export async function sandboxSetup(config: Record<string, unknown> = {}, org?: Org): Promise<SandboxSetup> {
  org ??= await createOrg();
  const created = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: { name: `sandbox-${crypto.randomUUID()}`, is_default_outbound: true, config: { provider: "sandbox", answer_after_ms: 30000, ...config } },
  });
  expect(created.status, created.text).toBe(200);
  const number = freshNumber();
  const num = await call("POST", `/api/v1/organizations/telephony-configs/${created.json.id}/phone-numbers`, {
    key: org.key,
    body: { address: number, is_default_caller_id: true },
  });
  expect(num.status, num.text).toBe(200);
  return { org, configId: created.json.id, numberId: num.json.id, number, agent: await createAgent(org) };
}

/** The run's media stream as the sandbox (Twilio's protocol) opens it, with the test as the callee. */
export async function sandboxStream(runId: number): Promise<CalleeStream> {
  const res = await upgrade("sandbox", runId);
  if (res.status !== 101) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS.twilio);
  callee.open((await runRow(runId)).providerCallId!);
  return callee;
}

/** An outbound sandbox call whose session runs `agent` (a test agent), its callee on the stream. */
export async function sandboxCall(s: SandboxSetup, agent: "transfer" | "keypad", vars: Record<string, string> = {}) {
  const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
    key: s.org.key,
    body: { phone_number: "+14155550123", initial_context: { first_name: "Ada", ...vars } },
  });
  expect(res.status, res.text).toBe(200);
  const runId = res.json.workflow_run_id as number;
  await callSessionStub(env, runId).prepare({ agent });
  const callee = await sandboxStream(runId);
  return { runId, callId: (await runRow(runId)).providerCallId!, callee };
}

/** The simulator's view of a call (its `extra` holds what the sandbox recorded: a transfer, keys pressed). */
export const simCall = (id: string) =>
  sim<{ id: string; to: string; from: string; state: string; answerUrl?: string; extra: Record<string, any> }>("GET", `/calls/${encodeURIComponent(id)}`);
