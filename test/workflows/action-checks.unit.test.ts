// The validator's rules for what lets the agent act: transferCall nodes (destination, mode, ring time, exactly one
// no-answer edge as their only way on), key-press edges, and the HTTP tools' names and nodes.
import { describe, expect, it } from "vitest";
import { normalizeNumber } from "../../src/telephony/numbers";
import { transferDestinationProblem } from "../../src/workflows/action-checks";
import { validateDefinition } from "../../src/workflows/validate";

const base = (transfer: Record<string, unknown>, edges: unknown[] = [], tools?: unknown[]) => ({
  ...(tools ? { tools } : {}),
  nodes: [
    { id: "s", type: "startCall", data: { prompt: "Hi" } },
    { id: "t", type: "transferCall", data: transfer },
    { id: "e", type: "endCall", data: { prompt: "Bye" } },
  ],
  edges: [
    { id: "st", source: "s", target: "t", data: { label: "person", dtmf: "0" } },
    { id: "se", source: "s", target: "e", data: { label: "bye" } },
    ...edges,
  ],
});
const noAnswer = { id: "te", source: "t", target: "e", data: { on: "no_answer" } };
const problems = (d: unknown) => validateDefinition(d).errors.map((e) => `${e.id ?? "-"} ${e.field ?? "-"}`);

describe("transferCall, key-press edges and tools in the validator", () => {
  it("a complete transferCall node is valid, with an E.164 number, a SIP URI or a dial string", () => {
    for (const destination of ["+14155550100", "sip:sales@pbx.example.com", "PJSIP/100"]) {
      expect(validateDefinition(base({ destination, mode: "warm", timeout_seconds: 20 }, [noAnswer])).errors).toEqual([]);
    }
  });

  it("a destination dialing refuses is refused by validation too (the same forms as an ari dial, the strictest carrier's superset)", () => {
    const corpus = [
      "+14155550100",
      "+442071234567",
      "+15551230000", // E.164-shaped, but no numbering plan has it
      "+1 415 555 0100",
      "+0123456789",
      "100",
      "1",
      "555-1234",
      "sip:sales@pbx.example.com",
      "sip:100@pbx.example.com:5060;transport=tcp",
      "sip:pbx.example.com",
      "sip:a@b c",
      "PJSIP/100",
      "Local/100@default",
      "PJSIP/100,foo",
      "PJSIP/100&PJSIP/200",
      "SIP/x y",
    ];
    for (const d of corpus) expect(transferDestinationProblem(d) === null, d).toBe(normalizeNumber(d, true).ok);
    for (const d of ["+15551230000", "PJSIP/100&PJSIP/200", "sip:pbx.example.com"]) {
      expect(problems(base({ destination: d }, [noAnswer])), d).toEqual(["t data.destination"]);
    }
    expect(validateDefinition(base({ destination: "+15551230000" }, [noAnswer])).errors[0].message).toMatch(/not a valid phone number/);
  });

  it("names each problem at its field", () => {
    expect(problems(base({}, [noAnswer]))).toEqual(["t data.destination"]);
    expect(problems(base({ destination: "555-1234", mode: "hot", timeout_seconds: 2 }, [noAnswer]))).toEqual([
      "t data.destination",
      "t data.mode",
      "t data.timeout_seconds",
    ]);
    // No no-answer edge; an ordinary edge leaving the node; a no-answer edge from elsewhere.
    expect(problems(base({ destination: "+14155550100" }))).toEqual(["t -"]);
    expect(problems(base({ destination: "+14155550100" }, [noAnswer, { id: "x", source: "t", target: "e", data: { label: "other" } }]))).toEqual(["x data.on"]);
    expect(problems(base({ destination: "+14155550100" }, [noAnswer, { id: "y", source: "s", target: "e", data: { on: "no_answer" } }]))).toEqual([
      "y data.on",
    ]);
  });

  it("key-press edges: valid keys, distinct per node", () => {
    expect(problems(base({ destination: "+14155550100" }, [noAnswer, { id: "k", source: "s", target: "e", data: { label: "k", dtmf: "0" } }]))).toEqual([
      "k data.dtmf",
    ]);
    expect(problems(base({ destination: "+14155550100" }, [noAnswer, { id: "k", source: "s", target: "e", data: { label: "k", dtmf: "x" } }]))).toEqual([
      "k data.dtmf",
    ]);
  });

  it("tools: names unique and not the agent's own, nodes that exist", () => {
    const tool = (o: Record<string, unknown>) => ({ name: "lookup", url: "https://api.example.com/x", ...o });
    const d = base(
      { destination: "+14155550100" },
      [noAnswer],
      [tool({ nodes: ["s"] }), tool({}), tool({ name: "end_call" }), tool({ name: "ok", nodes: ["nope"] })],
    );
    expect(validateDefinition(d).errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      "tools[1].name: Another tool is already named lookup",
      "tools[2].name: Tool at index 2 needs a name of letters, digits, '_' and '-', not end_call, transfer_call or send_dtmf",
      "tools[3].nodes: Tool ok names node 'nope', which does not exist",
    ]);
  });
});
