import { env } from "cloudflare:workers";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { isFinal } from "../../src/calls/runs/runs";
import { callSessionStub } from "../../src/calls/session/stub";
import { unwrap } from "../../src/campaigns/errors";
import { call } from "../helpers";
import { clip, DEFINITION, listenLive, MACHINE, SCRIPT, SEATS, SEATS_DISPOSITIONS, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { deliverAll, eventually, placedCampaign, play, runApi, type Setup, setup } from "./support";

// Short prompts (espeak-ng, test/fixtures/audio): their words reach the agent with the callee's first turn, before the
// audio alone would take the short opening and its pause for a person.
const IVR = clip("callee-ivr-8k.wav", "For sales, press one.");
const SCREENING = clip("callee-screening-8k.wav", "Please state your name.");

const CALLEES = new Map([
  ["+14155550401", { audio: MACHINE, cls: "machine_greeting", status: "voicemail", keyword: null }],
  ["+14155550402", { audio: IVR, cls: "ivr_menu", status: "completed", keyword: "for sales" }],
  ["+14155550403", { audio: SCREENING, cls: "call_screening", status: "completed", keyword: "state your name" }],
]);

/** The call answered: every callback but the carrier's final one delivered (the session ends the call itself). */
async function answer(s: Setup, runId: number) {
  const callId = (await runApi(s, runId)).provider_call_id as string;
  const callbacks = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
  await deliverAll(callbacks.slice(0, -1));
}

describe("the agent's answering-machine class in D1", () => {
  it("a machine greeting, an IVR menu and a call screening service: told apart on the run, the lists, results.csv and progress", async () => {
    const base = await setup("twilio");
    // A short end of turn: a prompt's words are in before 800 ms of quiet would make its short opening a person's.
    const wf = await call("POST", "/api/v1/workflow/create", {
      key: base.org.key,
      body: {
        name: "seats",
        workflow_definition: DEFINITION,
        call_disposition_codes: SEATS_DISPOSITIONS,
        workflow_configurations: { voice_agent: { turn: { end_of_turn_ms: 300 } } },
      },
    });
    expect(wf.status, wf.text).toBe(200);
    const s: Setup = { ...base, agent: wf.json };
    const agentId = wf.json.id as number;
    const { id, stub, runs, placed } = await placedCampaign(s, { name: "who answered", agentId, phones: [...CALLEES.keys()], maxConcurrency: 3 });

    for (const run of placed) {
      await answer(s, run.id);
      const who = CALLEES.get(run.phoneNumber)!;
      // The seats agent on the deterministic engines; the menu and the screening service say nothing after their
      // prompt, so the session ends those calls after 2 s of silence (wall clock); the machine is hung up on.
      await callSessionStub(env, run.id).prepare({
        agent: "conversation",
        scripted: { script: SCRIPT, clips: [SURE, SEATS, MACHINE, IVR, SCREENING] },
        silenceSeconds: 2,
      });
      const callee = await connect("twilio", run.id);
      await listenLive(callee, () => callee.played.length >= 1);
      callee.speak(who.audio.samples);
      await listenLive(callee, () => false, 20_000);
      expect(callee.closed, run.phoneNumber).not.toBeNull();
    }
    const ended = await eventually(runs, (r) => r.every((x) => isFinal(x.status) && x.amdClass !== null), 15_000);
    expect(ended.map((r) => [r.phoneNumber, r.amdClass, r.status]).sort()).toEqual([...CALLEES].map(([phone, w]) => [phone, w.cls, w.status]));

    // The run's page: amd_class beside the evidence it was decided on (the menu's and the screening's words; the
    // greeting ran on past a person's length).
    for (const r of ended) {
      const who = CALLEES.get(r.phoneNumber)!;
      const page = (await call("GET", `/api/v1/workflow/${agentId}/runs/${r.id}`, { key: s.org.key })).json;
      expect([page.amd_class, page.amd?.class, page.amd?.evidence.keyword ?? null], r.phoneNumber).toEqual([who.cls, who.cls, who.keyword]);
    }
    const classOf = (items: Array<{ phone_number: string; amd_class: string | null }>) => Object.fromEntries(items.map((i) => [i.phone_number, i.amd_class]));
    const expected = Object.fromEntries([...CALLEES].map(([phone, w]) => [phone, w.cls]));
    // The lists show it (the evidence stays on the run's page).
    const list = (await call("GET", `/api/v1/workflow/${agentId}/runs`, { key: s.org.key })).json;
    expect(classOf(list.items)).toEqual(expected);
    expect(list.items[0]).not.toHaveProperty("amd");
    const campaignRuns = (await call("GET", `/api/v1/campaign/${id}/runs`, { key: s.org.key })).json;
    expect(classOf(campaignRuns.items)).toEqual(expected);
    // The agent's list filters by it; a class that is not one is refused in the contract's shape.
    const ivr = (await call("GET", `/api/v1/workflow/${agentId}/runs?amd_class=ivr_menu`, { key: s.org.key })).json;
    expect(ivr.items.map((i: { phone_number: string }) => i.phone_number)).toEqual(["+14155550402"]);
    expect((await call("GET", `/api/v1/workflow/${agentId}/runs?amd_class=human`, { key: s.org.key })).json.items).toEqual([]);
    const bad = await call("GET", `/api/v1/workflow/${agentId}/runs?amd_class=robot`, { key: s.org.key });
    expect(bad.status).toBe(422);
    expect(bad.json.detail).toBeDefined();

    // Progress counts the calls per class; only the machine is a machine.
    const progress = await eventually(
      async () => unwrap(await stub.progress()),
      (p) => Object.keys(p.answering_machines.amd_classes).length === 3,
      10_000,
    );
    expect(progress.answering_machines).toEqual({
      answered: 3,
      machines: 1,
      rate: 1 / 3,
      amd_classes: { call_screening: 1, ivr_menu: 1, machine_greeting: 1 },
    });
    expect((await call("GET", `/api/v1/campaign/${id}/progress`, { key: s.org.key })).json.answering_machines).toEqual(progress.answering_machines);

    // results.csv: amd_class is the last column, after answered_by.
    const res = await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: s.org.key });
    expect(res.status, res.text).toBe(200);
    const [header, ...lines] = Papa.parse<string[]>(res.text.trimEnd(), { header: false }).data;
    expect(header.slice(-2)).toEqual(["answered_by", "amd_class"]);
    expect(Object.fromEntries(lines.map((l) => [l[header.indexOf("phone_number")], l.at(-1)]))).toEqual(expected);
  }, 120_000);
});
