// An agent's test scenarios (issue 40): who calls (a fixed script, or a persona an LLM plays), over which carrier's
// protocol, with which template variables and mocked tool answers, and what must be true of the call afterwards.
// These zod schemas are the one source of the API's validation, the types and the OpenAPI document.
import { z } from "@hono/zod-openapi";

/** The carrier protocols the simulator speaks: a test call runs over exactly one of them. */
export const TEST_PROTOCOLS = ["twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel", "ari"] as const;
export type TestProtocol = (typeof TEST_PROTOCOLS)[number];

export const MAX_SCENARIOS_PER_AGENT = 100;
const MAX_STEPS = 50;
const Line = z.string().trim().min(1).max(500);
const Name = z.string().trim().min(1).max(64);
const Ms = (max: number) => z.number().int().min(0).max(max);

// One step of a scripted caller. `say` waits for the agent to finish its turn; `interrupt` speaks while the agent is
// talking (a barge-in), `after_ms` into the agent's next turn; `pause` waits before the next step, listening;
// `silence` says nothing for that long where a reply is expected (what the agent does about a quiet caller).
const Say = z.strictObject({ action: z.literal("say"), text: Line });
const Press = z.strictObject({
  action: z.literal("press"),
  digits: z
    .string()
    .regex(/^[0-9*#]{1,20}$/, "Must be 1-20 of 0-9, * and #")
    .openapi({ description: "Keys pressed, sent as the carrier reports key presses" }),
});
const Pause = z.strictObject({ action: z.literal("pause"), ms: Ms(30_000) });
const Interrupt = z.strictObject({ action: z.literal("interrupt"), text: Line, after_ms: Ms(10_000).default(300) });
const Silence = z.strictObject({ action: z.literal("silence"), ms: Ms(60_000) });
export const ScriptStep = z.discriminatedUnion("action", [Say, Press, Pause, Interrupt, Silence]).openapi("TestCallerStep");
export type ScriptStep = z.infer<typeof ScriptStep>;

export const Caller = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("script"), steps: z.array(ScriptStep).min(1).max(MAX_STEPS) }),
    z.strictObject({
      type: z.literal("persona"),
      prompt: z.string().trim().min(1).max(4000).openapi({ description: "Who the caller is and what they want; an LLM plays them" }),
      max_turns: z.number().int().min(1).max(30).default(8),
    }),
  ])
  .openapi("TestCaller");

/** What a tool answers in a test call instead of the real system (so a test never calls production). */
const MockedTool = z.strictObject({
  tool: Name.openapi({ description: "The HTTP tool's name in the agent's definition" }),
  status: z.number().int().min(100).max(599).default(200),
  body: z.unknown().openapi({ description: "The JSON the tool answers" }),
});

const Phrase = z.string().trim().min(1).max(200);

export const Expectations = z
  .strictObject({
    nodes_reached: z
      .strictObject({ nodes: z.array(Name).min(1).max(50), in_order: z.boolean().default(false) })
      .optional()
      .openapi({ description: "Node ids the call must pass through (in this order when in_order)" }),
    extraction: z.record(z.string().max(64), z.unknown()).optional().openapi({ description: "Extraction variables and the values gathered" }),
    tools_called: z
      .array(
        z.strictObject({
          name: Name,
          arguments: z.record(z.string(), z.unknown()).optional(),
          answered: z.boolean().optional().openapi({
            description:
              "Unset or true: the call counts only when the tool answered (status ok: a 2xx, or the scenario's mock); false: any call counts, failed or not",
          }),
        }),
      )
      .max(20)
      .optional()
      .openapi({
        description:
          "Tools the agent called; given arguments must match (others may be present); a call the tool did not answer (a wrong URL, an error, a timeout) does not count unless answered is false",
      }),
    transfer: z
      .strictObject({ destination: z.string().max(255).optional(), mode: z.enum(["cold", "warm"]).optional() })
      .optional()
      .openapi({ description: "A transfer was requested (to this destination, in this mode, when given)" }),
    dtmf_sent: z
      .string()
      .regex(/^[0-9*#wW]{1,40}$/)
      .optional()
      .openapi({ description: "Keys the agent sent" }),
    disposition: z.string().max(64).optional(),
    end_reason: z.string().max(64).optional(),
    analysis: z.record(z.string().max(64), z.unknown()).optional().openapi({ description: "Fields of the analysis' structured data" }),
    max_answer_latency_ms: Ms(60_000).optional().openapi({ description: "No agent reply starts later than this after the caller's turn ends" }),
    never_says: z.array(Phrase).max(50).optional().openapi({ description: "Phrases the agent must never say (any case)" }),
    rubric: z.array(z.string().trim().min(1).max(1000)).max(20).optional().openapi({ description: "Criteria a model judges from the transcript" }),
  })
  .openapi("TestExpectations");
export type Expectations = z.infer<typeof Expectations>;

export const ScenarioInput = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(2000).optional(),
    caller: Caller,
    variables: z
      .record(z.string().max(64), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .default({})
      .openapi({ description: "The contact's template variables" }),
    protocol: z.enum(TEST_PROTOCOLS).default("twilio").openapi({ description: "The carrier protocol the call runs over (the simulator's)" }),
    mock_tools: z.array(MockedTool).max(20).default([]),
    expectations: Expectations,
  })
  .openapi("TestScenarioInput");
export type ScenarioInput = z.infer<typeof ScenarioInput>;

export const Scenario = ScenarioInput.extend({
  id: z.number().int(),
  workflow_id: z.number().int(),
  revision: z.number().int().openapi({ description: "Bumped on every change of the scenario" }),
  agent_version: z.number().int().openapi({ description: "The agent's version when the scenario was last saved" }),
  created_at: z.string(),
  updated_at: z.string(),
}).openapi("TestScenario");
export type Scenario = z.infer<typeof Scenario>;
