// The pure structural validator: each rule broken alone, several at once, and garbage input.
import { describe, expect, it } from "vitest";
import { triggerPathsOf, validateDefinition } from "../../src/workflows/validate";
import { minimalDefinition, validDefinition, type Def } from "./fixtures";

/** Applies one change to a valid definition and returns the validator's errors, as {kind, id, field}. */
function errorsAfter(change: (d: Def) => void, opts?: Parameters<typeof validateDefinition>[1]) {
  const d = validDefinition();
  change(d);
  const result = validateDefinition(d, opts);
  expect(result.is_valid).toBe(result.errors.length === 0);
  for (const e of result.errors) expect(typeof e.message).toBe("string");
  return result.errors.map(({ kind, id, field }) => ({ kind, id, field }));
}

const node = (d: Def, id: string) => d.nodes.find((n) => n.id === id);

describe("validateDefinition", () => {
  it("accepts a valid definition with every node type", () => {
    expect(validateDefinition(validDefinition())).toEqual({ is_valid: true, errors: [], warnings: [] });
    expect(validateDefinition(minimalDefinition())).toEqual({ is_valid: true, errors: [], warnings: [] });
  });

  it("warns (without making it invalid) about a greeting longer than a carrier speaks in one utterance", () => {
    const limits = [
      { provider: "short", maxChars: 10 },
      { provider: "long", maxChars: 100 },
    ];
    const d = validDefinition();
    node(d, "start").data.greeting = "Hello there, friend"; // 19 characters
    expect(validateDefinition(d, { speechLimits: limits })).toEqual({
      is_valid: true,
      errors: [],
      warnings: [{ kind: "node", id: "start", field: "data.greeting", message: expect.stringContaining("short (10)") }],
    });
    expect(validateDefinition(d, { speechLimits: limits }).warnings[0].message).not.toContain("long (");
    // Counted in UTF-8 bytes, as the calls module splits: 4 characters of 3 bytes each pass a limit of 10.
    node(d, "start").data.greeting = "日本語だ";
    expect(validateDefinition(d, { speechLimits: limits }).warnings).toHaveLength(1);
    node(d, "start").data.greeting = "Hi";
    expect(validateDefinition(d, { speechLimits: limits }).warnings).toEqual([]);
    // An invalid definition keeps its errors and still gets its warnings.
    node(d, "start").data.greeting = "Hello there, friend";
    d.nodes.push({ id: "start2", type: "startCall", data: { prompt: "again" } });
    const r = validateDefinition(d, { speechLimits: limits });
    expect(r.is_valid).toBe(false);
    expect(r.warnings).toHaveLength(1);
  });

  it("a missing edges list counts as no edges (so the end is unreachable)", () => {
    const d: any = minimalDefinition();
    delete d.edges;
    expect(validateDefinition(d).errors).toEqual([expect.objectContaining({ kind: "node", id: "e", field: null })]);
  });

  it("duplicate node ids", () => {
    expect(errorsAfter((d) => d.nodes.push({ id: "qualify", type: "agentNode", data: { prompt: "again" } }))).toEqual([
      { kind: "node", id: "qualify", field: "id" },
    ]);
  });

  it("duplicate edge ids", () => {
    expect(errorsAfter((d) => d.edges.push({ id: "e1", source: "qualify", target: "end-no", data: { label: "other" } }))).toEqual([
      { kind: "edge", id: "e1", field: "id" },
    ]);
  });

  it("edge to a node that does not exist", () => {
    expect(errorsAfter((d) => d.edges.push({ id: "ghost", source: "qualify", target: "nowhere", data: { label: "lost" } }))).toEqual([
      { kind: "edge", id: "ghost", field: "target" },
    ]);
  });

  it("edge from a node that does not exist", () => {
    expect(errorsAfter((d) => d.edges.push({ id: "ghost", source: "nowhere", target: "qualify", data: { label: "lost" } }))).toEqual([
      { kind: "edge", id: "ghost", field: "source" },
    ]);
  });

  it("nothing may enter startCall", () => {
    expect(errorsAfter((d) => d.edges.push({ id: "back", source: "qualify", target: "start", data: { label: "restart" } }))).toEqual([
      { kind: "edge", id: "back", field: "target" },
    ]);
  });

  it("nothing may leave endCall", () => {
    expect(errorsAfter((d) => d.edges.push({ id: "after", source: "end-ok", target: "qualify", data: { label: "more" } }))).toEqual([
      { kind: "edge", id: "after", field: "source" },
    ]);
  });

  it("exactly one startCall: none", () => {
    // Replacing the start with an agent node keeps every other rule satisfied except reachability, which needs a start.
    expect(errorsAfter((d) => (node(d, "start").type = "agentNode"))).toEqual([{ kind: "workflow", id: null, field: "nodes" }]);
  });

  it("exactly one startCall: two", () => {
    expect(
      errorsAfter((d) => {
        d.nodes.push({ id: "start2", type: "startCall", data: { prompt: "Another start" } });
        d.edges.push({ id: "e4", source: "start2", target: "end-ok", data: { label: "x" } });
      }),
    ).toEqual([{ kind: "workflow", id: null, field: "nodes" }]);
  });

  it("at least one endCall", () => {
    const d = minimalDefinition();
    d.nodes[1].type = "agentNode";
    expect(validateDefinition(d).errors).toEqual([expect.objectContaining({ kind: "workflow", id: null, field: "nodes" })]);
  });

  it("at most one globalNode", () => {
    expect(errorsAfter((d) => d.nodes.push({ id: "global2", type: "globalNode", data: { prompt: "Also polite" } }))).toEqual([
      { kind: "workflow", id: null, field: "nodes" },
    ]);
  });

  it("every conversation node is reachable from the start", () => {
    expect(errorsAfter((d) => d.nodes.push({ id: "orphan", type: "agentNode", data: { prompt: "Nobody comes here" } }))).toEqual([
      { kind: "node", id: "orphan", field: null },
    ]);
    // Reachability follows edges transitively: cutting e1 strands qualify and end-ok behind it.
    expect(errorsAfter((d) => (d.edges = d.edges.filter((e) => e.id !== "e1")))).toEqual([
      { kind: "node", id: "qualify", field: null },
      { kind: "node", id: "end-ok", field: null },
    ]);
  });

  it.each([
    ["startCall", "start", "prompt"],
    ["agentNode", "qualify", "prompt"],
    ["endCall", "end-ok", "prompt"],
    ["webhook", "hook", "url"],
    ["apiTrigger", "trigger", "trigger_path"],
  ])("required field of %s: data.%s", (_type, id, field) => {
    for (const bad of [undefined, "   ", 42]) {
      expect(
        errorsAfter((d) => {
          if (bad === undefined) delete node(d, id).data[field];
          else node(d, id).data[field] = bad;
        }),
      ).toEqual([{ kind: "node", id, field: `data.${field}` }]);
    }
  });

  it("a node without data reports its required field", () => {
    expect(errorsAfter((d) => delete node(d, "qualify").data)).toEqual([{ kind: "node", id: "qualify", field: "data.prompt" }]);
  });

  it("greeting is optional but must be text", () => {
    expect(errorsAfter((d) => delete node(d, "start").data.greeting)).toEqual([]);
    expect(errorsAfter((d) => (node(d, "start").data.greeting = ["hi"]))).toEqual([{ kind: "node", id: "start", field: "data.greeting" }]);
  });

  it("webhook url must be http(s)", () => {
    expect(errorsAfter((d) => (node(d, "hook").data.url = "ftp://example.com/x"))).toEqual([{ kind: "node", id: "hook", field: "data.url" }]);
  });

  it("webhook url must not point at an internal address (SSRF): metadata, loopback, private, in any spelling", () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://127.0.0.1:8080/x",
      "http://[::1]/x",
      "http://10.0.0.5/hook",
      "http://2130706433/x",
      "http://localhost/x",
      "http://[::ffff:169.254.169.254]/",
    ]) {
      expect(
        errorsAfter((d) => (node(d, "hook").data.url = url)),
        url,
      ).toEqual([{ kind: "node", id: "hook", field: "data.url" }]);
    }
    expect(errorsAfter((d) => (node(d, "hook").data.url = "https://hooks.example.com/crm"))).toEqual([]);
    const d = validDefinition();
    node(d, "hook").data.url = "http://169.254.169.254/";
    expect(validateDefinition(d).errors.find((e) => e.field === "data.url")?.message).toMatch(/^data\.url must not point at a .*address$/);
  });

  it("no two edges from one node with the same label", () => {
    expect(
      errorsAfter((d) => {
        d.nodes.push({ id: "end-3", type: "endCall", data: { prompt: "bye" } });
        d.edges.push({ id: "e-dup", source: "start", target: "end-3", data: { label: " Interested ", condition: "again" } });
      }),
    ).toEqual([{ kind: "edge", id: "e-dup", field: "data.label" }]);
    // The same label from different nodes is fine.
    expect(errorsAfter((d) => d.edges.push({ id: "e5", source: "qualify", target: "end-no", data: { label: "interested", condition: "x" } }))).toEqual([]);
  });

  it("trigger_path unique across the organization", () => {
    const d = validDefinition();
    const path = node(d, "trigger").data.trigger_path;
    expect(validateDefinition(d, { takenTriggerPaths: new Set(["something-else"]) }).is_valid).toBe(true);
    expect(validateDefinition(d, { takenTriggerPaths: new Set([path]) }).errors).toEqual([
      expect.objectContaining({ kind: "node", id: "trigger", field: "data.trigger_path" }),
    ]);
  });

  it("trigger_path unique within the definition and URL-safe", () => {
    expect(errorsAfter((d) => d.nodes.push({ id: "trigger2", type: "apiTrigger", data: { trigger_path: node(d, "trigger").data.trigger_path } }))).toEqual([
      { kind: "node", id: "trigger2", field: "data.trigger_path" },
    ]);
    expect(errorsAfter((d) => (node(d, "trigger").data.trigger_path = "a/b"))).toEqual([{ kind: "node", id: "trigger", field: "data.trigger_path" }]);
  });

  it("unknown node types are reported once (edges to them are not)", () => {
    expect(
      errorsAfter((d) => {
        d.nodes.push({ id: "weird", type: "teleport", data: {} });
        d.edges.push({ id: "e9", source: "qualify", target: "weird", data: { label: "beam" } });
      }),
    ).toEqual([{ kind: "node", id: "weird", field: "type" }]);
  });

  it("reports every problem of a definition that breaks several rules", () => {
    const d = {
      nodes: [
        { id: "a", type: "agentNode", data: {} }, // no prompt; unreachable
        { id: "a", type: "agentNode", data: { prompt: "dup" } }, // duplicate id
        { id: "g1", type: "globalNode", data: {} },
        { id: "g2", type: "globalNode", data: {} }, // two globals
        { id: "w", type: "webhook", data: {} }, // no url
        { id: "t", type: "apiTrigger", data: { trigger_path: "taken" } }, // owned by another agent
      ],
      edges: [
        { id: "x", source: "a", target: "missing", data: { label: "go" } }, // unknown target
        { id: "x", source: "a", target: "a", data: { label: "go" } }, // duplicate id and label
      ],
    };
    const r = validateDefinition(d, { takenTriggerPaths: new Set(["taken"]) });
    expect(r.is_valid).toBe(false);
    const found = r.errors.map(({ kind, id, field }) => `${kind}:${id}:${field}`).sort();
    expect(found).toEqual(
      [
        "node:a:data.prompt",
        "node:a:id",
        "node:w:data.url",
        "node:t:data.trigger_path",
        "workflow:null:nodes", // no startCall
        "workflow:null:nodes", // no endCall
        "workflow:null:nodes", // two globalNodes
        "edge:x:target",
        "edge:x:id",
        "edge:x:data.label",
      ].sort(),
    );
  });

  it.each([
    ["null", null],
    ["a string", "nodes"],
    ["an array", [1, 2]],
    ["nodes not a list", { nodes: { a: 1 }, edges: [] }],
    ["edges not a list", { nodes: [], edges: "x" }],
    ["nodes of garbage", { nodes: [null, 7, "x", [], { id: 5, type: 6, data: "d" }], edges: [null, { id: {}, source: 1, target: [], data: 3 }] }],
    [
      "deeply odd values",
      { nodes: [{ id: "s", type: "startCall", data: { prompt: { toString: 1 } } }], edges: [{ id: "e", source: "s", target: "s", data: { label: 5 } }] },
    ],
  ])("never throws on %s and reports is_valid false", (_name, input) => {
    const r = validateDefinition(input);
    expect(r.is_valid).toBe(false);
    expect(r.errors.length).toBeGreaterThan(0);
    for (const e of r.errors) {
      expect(["node", "edge", "workflow"]).toContain(e.kind);
      expect(e.message.length).toBeGreaterThan(0);
    }
  });

  it("triggerPathsOf lists well-formed trigger paths once", () => {
    const d = validDefinition();
    const p = node(d, "trigger").data.trigger_path;
    d.nodes.push({ id: "t2", type: "apiTrigger", data: { trigger_path: p } }, { id: "t3", type: "apiTrigger", data: { trigger_path: "bad path" } });
    expect(triggerPathsOf(d)).toEqual([p]);
    expect(triggerPathsOf(null)).toEqual([]);
  });
});
