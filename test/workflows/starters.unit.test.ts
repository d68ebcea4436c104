// The starter templates are agents like any other: each passes the create schema and the validator with no problem,
// and its scripted model walks its graph on the sample conversation (text only, the real graph and reply code): the
// lead is qualified and handed over warm (or, nobody answering, promised a follow-up), the booking calls the HTTP
// tool with the day heard and ends booked, the receptionist gives the hours and takes a message. The scripted model's
// `after` key tells arriving at a node from an answer there.
import { describe, expect, it } from "vitest";
import type { Action } from "../../src/agent/actions";
import { Conversation } from "../../src/agent/graph";
import { ScriptedModel, SCRIPT_FALLBACK } from "../../src/agent/scripted-model";
import { type ActionResult, agentReply, type ReplyEvent } from "../../src/agent/turn";
import { CreateWorkflow } from "../../src/workflows/schemas";
import { createBody, findStarter, STARTER_AGENTS } from "../../src/workflows/starters";
import { templateVariables } from "../../src/workflows/template";
import { validateDefinition } from "../../src/workflows/validate";

const starter = (id: string) => {
  const t = findStarter(id);
  if (!t) throw new Error(`no starter ${id}`);
  return t;
};

/** Plays the sample conversation: each caller line, then the agent's reply; what it said, where it went, what it did. */
async function walk(id: string, act: (a: Action) => ActionResult = () => ({ content: "ok" }), lines = starter(id).sample) {
  const t = starter(id);
  const conv = new Conversation(t.definition, t.variables, t.dispositions);
  const model = new ScriptedModel(t.script);
  const said: string[] = [conv.greeting ?? ""];
  const actions: Action[] = [];
  let ended = false;
  let transferred = false;
  for (const line of lines) {
    conv.heard(line);
    const gen = agentReply(conv, model, undefined, async (a) => (actions.push(a), act(a)));
    for (;;) {
      const r = await gen.next();
      if (r.done) {
        ended ||= r.value.ended;
        transferred ||= r.value.transferred;
        break;
      }
      const e: ReplyEvent = r.value;
      if (e.type === "sentence") said.push(e.text);
    }
    if (ended || transferred) break;
  }
  return { conv, said: said.join(" "), actions, ended, transferred };
}

describe("starter templates", () => {
  it("are three, with unique ids, and each passes the create schema and the validator without a problem", () => {
    expect(STARTER_AGENTS.map((t) => t.id)).toEqual(["lead-qualification", "appointment-booking", "inbound-receptionist"]);
    for (const t of STARTER_AGENTS) {
      for (const scripted of [false, true]) {
        const parsed = CreateWorkflow.safeParse(createBody(t, { scripted }));
        expect(parsed.success, `${t.id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
      const verdict = validateDefinition(t.definition);
      expect(verdict, t.id).toEqual({ is_valid: true, errors: [], warnings: [] });
      // Every variable the agent speaks has a test value, so a call needs none of its own.
      expect(
        templateVariables(t.definition).filter((v) => !(v in t.variables)),
        t.id,
      ).toEqual([]);
    }
  });

  it("lead qualification: qualified on the sample, handed over warm with the gathered values", async () => {
    const r = await walk("lead-qualification", () => ({ content: "connected", transfer: "connected" }));
    expect(r.said.startsWith("Hi Alex, this is Sam from Northwind Solar.")).toBe(true);
    expect(r.said).toContain("When would you like to get started");
    expect(r.conv.path).toEqual(["start", "qualify", "sales"]);
    expect(r.actions).toEqual([
      expect.objectContaining({ type: "transfer", transfer: expect.objectContaining({ mode: "warm", destination: "+14155550188" }) }),
    ]);
    expect(r.conv.gathered).toEqual({ timeline: "this month", budget: "about ten thousand dollars" });
    expect(r.transferred).toBe(true);
    expect(r.said).not.toContain(SCRIPT_FALLBACK);
  });

  it("lead qualification: nobody answering the transfer ends with a follow-up; a busy lead is let go", async () => {
    const missed = await walk("lead-qualification", () => ({ content: "no answer", transfer: "no_answer" }));
    expect(missed.conv.path).toEqual(["start", "qualify", "sales", "follow_up"]);
    expect(missed.ended).toBe(true);
    expect(missed.conv.disposition).toBe("follow_up");
    const busy = await walk("lead-qualification", undefined, ["Sorry, I'm busy right now."]);
    expect(busy.conv.path).toEqual(["start", "not_interested"]);
    expect(busy.conv.disposition).toBe("not_interested");
  });

  it("appointment booking: the day heard goes to the HTTP tool, and the call ends booked", async () => {
    const r = await walk("appointment-booking", () => ({ content: '{"error":"HTTP 404"}' }));
    expect(r.said.startsWith("Hi Jordan, this is the booking assistant at Riverside Physio.")).toBe(true);
    expect(r.actions).toEqual([
      expect.objectContaining({
        type: "http",
        tool: expect.objectContaining({ name: "book_appointment" }),
        arguments: { name: "Jordan", day: "Tuesday", time: "10 am" },
      }),
    ]);
    expect(r.conv.path).toEqual(["start", "book", "booked"]);
    expect(r.conv.gathered).toEqual({ appointment_day: "Tuesday", appointment_time: "10 am" });
    expect(r.ended).toBe(true);
    expect(r.conv.disposition).toBe("booked");
    expect(r.said).not.toContain(SCRIPT_FALLBACK);
  });

  it("appointment booking: words with no day are asked again, not booked", async () => {
    const r = await walk("appointment-booking", undefined, ["Yes please.", "Whenever is fine."]);
    expect(r.actions).toEqual([]);
    expect(r.conv.path).toEqual(["start", "book"]);
    expect(r.said).toContain("Which weekday would suit you?");
  });

  it("inbound receptionist: gives the hours, takes a message, says goodbye; a caller for the front desk is put through", async () => {
    const r = await walk("inbound-receptionist");
    expect(r.said).toContain("We're open Monday to Friday, 8 am to 6 pm, at 12 Harbour Street.");
    expect(r.conv.path).toEqual(["start", "info", "message", "goodbye"]);
    expect(r.conv.gathered).toMatchObject({ caller_name: "Maria" });
    expect(r.ended).toBe(true);
    expect(r.said).not.toContain(SCRIPT_FALLBACK);
    const desk = await walk("inbound-receptionist", () => ({ content: "no answer", transfer: "no_answer" }), [
      "Can I speak to someone?",
      "This is Maria, call me back.",
    ]);
    expect(desk.actions[0]).toMatchObject({ type: "transfer", transfer: { mode: "cold", destination: "+14155550123" } });
    expect(desk.said).toContain("Can I take a message instead?");
    expect(desk.conv.path).toEqual(["start", "front_desk", "message", "goodbye"]);
  });

  it("the scripted model's `after` tells arriving at a node from an answer there", async () => {
    const model = new ScriptedModel([
      { prompt: "Ask", after: "agent", say: "arrived" },
      { prompt: "Ask", after: "caller", say: "answered" },
    ]);
    const text = async (messages: Parameters<ScriptedModel["stream"]>[0]["messages"]) => {
      let out = "";
      for await (const e of model.stream({ messages, tools: [] })) if (e.type === "text") out += e.text;
      return out;
    };
    const moved = [
      { role: "system" as const, content: "Ask" },
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: "", toolCalls: [{ id: "1", name: "next", arguments: {} }] },
      { role: "tool" as const, toolCallId: "1", content: "moved" },
    ];
    expect(await text(moved)).toBe("arrived");
    expect(await text([...moved, { role: "user", content: "yes" }])).toBe("answered");
  });
});
