// The call session Durable Object as deployed: the session (src/calls/session/) with the calls module's operations
// it may not import itself, hanging up through the carrier, finishing a run, telling a campaign the disposition and
// handing the call to a person.
import { getDb } from "../lib/db";
import { campaignPort } from "./campaign/campaign-port";
import { getRun, isFinal } from "./runs/runs";
import { CallSessionCore } from "./session/call-session";
import type { CallPorts } from "./session/ports";
import { hangupRun } from "./start/start";
import { sendRunDtmf } from "./callbacks/keypad";
import { applyStatus } from "./runs/status";
import { giveUpTransfer, startTransfer } from "./transfer/transfer";

export class CallSession extends CallSessionCore {
  protected readonly calls: CallPorts = {
    hangup: (orgId, runId) => hangupRun(this.env, orgId, runId),
    // The session ended the call (or its media never came): the run is final now, whoever noticed first, since the
    // carrier's own report may never come (Twilio sends it once; src/calls/session/run-final.ts). A later report of
    // the carrier's changes nothing; the campaign's slot and the organization's lease are given back now.
    finish: async (runId, durationSeconds) => {
      const run = await getRun(getDb(this.env), runId);
      if (run) await applyStatus(this.env, run, { status: "completed", durationSeconds });
    },
    runFinal: async (runId) => {
      const run = await getRun(getDb(this.env), runId);
      return !run || isFinal(run.status);
    },
    disposition: async (c, runId, disposition, amdClass) => {
      await campaignPort(this.env, c.campaignId).onRunOutcome({ runId, contactId: c.contactId, attempt: c.attempt, disposition, amdClass });
    },
    sendDtmf: (orgId, runId, digits) => sendRunDtmf(this.env, orgId, runId, digits),
    transfer: (orgId, runId, request) => startTransfer(this.env, orgId, runId, request),
    transferGiveUp: (orgId, runId, outcome, message) => giveUpTransfer(this.env, orgId, runId, outcome, message),
  };
}
