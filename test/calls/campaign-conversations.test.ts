// Issue 39's check, end to end on the carrier simulator: a campaign whose callees either speak (the seats
// conversation) or stay silent. results.csv tells the two apart row by row (`outcome`, `conversation`), the progress
// counts them apart, and each row's duration agrees with its call's recording (read from the WAV the link serves) to
// within 1 s. The carrier's final callbacks are never delivered: the session ends each call itself.
import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { eq } from "drizzle-orm";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { isFinal } from "../../src/calls/runs/runs";
import { callSessionStub } from "../../src/calls/session/stub";
import { unwrap } from "../../src/campaigns/errors";
import { workflowRuns } from "../../src/db/schema";
import { readWav } from "../../src/lib/audio/wav";
import { getDb } from "../../src/lib/db";
import { call } from "../helpers";
import { DEFINITION, listenLive, MACHINE, prepareScripted, SCRIPT, SEATS, SEATS_DISPOSITIONS, SURE, seatsConversation } from "./conversation-support";
import { connect } from "./media-support";
import {
  CALLEE,
  CONTEXT,
  campaignId,
  campaignObject,
  deliver,
  deliverAll,
  eventually,
  placedCampaign,
  play,
  runApi,
  runRow,
  type Setup,
  setup,
} from "./support";

const wavSeconds = async (url: string) => {
  const res = await exports.default.fetch(new Request(url));
  expect(res.status).toBe(200);
  const w = readWav(new Uint8Array(await res.arrayBuffer()));
  return w.samples.length / w.channels / w.rate;
};

/** The call answered (every callback but the carrier's final one delivered, which is returned). */
async function answer(s: Setup, runId: number) {
  const callId = (await runApi(s, runId)).provider_call_id as string;
  const callbacks = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
  expect(callbacks.at(-1)!.body).toMatch(/CallStatus=completed/);
  await deliverAll(callbacks.slice(0, -1));
  return callbacks.at(-1)!;
}

describe("a campaign where some callees speak and some stay silent", () => {
  it("results.csv tells them apart row by row; each duration is its recording's length ±1 s", async () => {
    const base = await setup("twilio");
    const wf = await call("POST", "/api/v1/workflow/create", {
      key: base.org.key,
      body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS },
    });
    expect(wf.status, wf.text).toBe(200);
    const s: Setup = { ...base, agent: wf.json };
    const speaks = new Map([
      ["+14155550301", true],
      ["+14155550302", false],
      ["+14155550303", true],
      ["+14155550304", false],
    ]);
    const { id, stub, runs, placed } = await placedCampaign(s, { name: "talk or not", agentId: s.agent.id, phones: [...speaks.keys()], maxConcurrency: 4 });

    for (const run of placed) {
      await answer(s, run.id);
      if (speaks.get(run.phoneNumber)) {
        await prepareScripted(run.id);
        await seatsConversation(await connect("twilio", run.id));
      } else {
        // The same agent; the callee says nothing and the session ends the call after 2 s of silence (wall clock).
        await callSessionStub(env, run.id).prepare({ agent: "conversation", scripted: { script: SCRIPT, clips: [SURE, SEATS, MACHINE] }, silenceSeconds: 2 });
        const callee = await connect("twilio", run.id);
        await listenLive(callee, () => false, 15_000);
        expect(callee.closed).not.toBeNull();
      }
    }
    // Every run final with what its session heard and its recording stored; the campaign counted each.
    const ended = await eventually(runs, (r) => r.every((x) => isFinal(x.status) && x.conversation !== null && x.recordingKey !== null), 15_000);
    expect(ended.map((r) => [r.phoneNumber, r.status, r.conversation])).toEqual(
      expect.arrayContaining([...speaks].map(([phone, talked]) => [phone, "completed", talked])),
    );
    const progress = await eventually(
      async () => unwrap(await stub.progress()),
      (p) => p.state === "completed",
      10_000,
    );
    expect(progress).toMatchObject({ total: 4, completed: 2, answered_no_conversation: 2, failed: 0 });

    const res = await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: s.org.key });
    expect(res.status, res.text).toBe(200);
    const [header, ...lines] = Papa.parse<string[]>(res.text.trimEnd(), { header: false }).data;
    const col = (line: string[], name: string) => line[header.indexOf(name)];
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      const talked = speaks.get(col(line, "phone_number"))!;
      expect([col(line, "status"), col(line, "outcome"), col(line, "conversation")], col(line, "phone_number")).toEqual([
        "done",
        talked ? "completed" : "answered_no_conversation",
        String(talked),
      ]);
      expect(col(line, "end_reason")).toBe(talked ? "agent_hangup" : "callee_silent");
      const duration = Number(col(line, "duration_seconds"));
      expect(duration).toBeGreaterThan(0);
      expect(Math.abs((await wavSeconds(col(line, "recording_url"))) - duration), col(line, "phone_number")).toBeLessThanOrEqual(1);
    }
  }, 120_000);

  it("the carrier's final status before the session's word: the contact is corrected once the session says nobody spoke", async () => {
    const s = await setup("twilio");
    const id = campaignId();
    const stub = await campaignObject(s, id, { enabled: false }, [{ row: 2, phone_number: CALLEE, initial_context: CONTEXT, greeting_override: null }]);
    await stub.start();
    const runs = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    const [run] = await eventually(
      async () => {
        await runDurableObjectAlarm(stub);
        return runs();
      },
      (r) => r.length === 1,
      10_000,
    );
    const final = await answer(s, run.id);
    await callSessionStub(env, run.id).prepare({ agent: "echo", silenceSeconds: 2 });
    const callee = await connect("twilio", run.id);
    callee.silence(200);
    // The carrier reports the end while the session still listens: nothing known of a conversation yet.
    expect((await deliver(final)).status).toBeLessThan(300);
    expect(unwrap(await stub.progress())).toMatchObject({ completed: 1, answered_no_conversation: 0 });
    await listenLive(callee, () => false, 15_000);
    // The session ends the call, writes that nobody spoke and tells the campaign through the same final status.
    const p = await eventually(
      async () => unwrap(await stub.progress()),
      (x) => x.answered_no_conversation === 1,
      10_000,
    );
    expect(p).toMatchObject({ completed: 0, answered_no_conversation: 1, failed: 0, state: "completed" });
    expect(unwrap(await stub.contacts(0, 1)).items[0].outcome).toBe("answered_no_conversation");
    expect((await runRow(run.id)).conversation).toBe(false);
  }, 60_000);
});
