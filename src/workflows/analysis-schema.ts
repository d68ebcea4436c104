// An agent's post-call analysis, in `workflow_configurations.analysis`: what the model is asked after the call (a
// summary, structured data under a JSON Schema, a verdict against success criteria). The structured-output schema is
// turned into a zod validator here, once at save (a 422 names what it cannot use) and again for each analysis.
import { z } from "@hono/zod-openapi";
import { isObject } from "../lib/helpers";

const Prompt = z.string().trim().min(1).max(4000);

/** The JSON Schema a model's structured data must conform to, as a validator; throws with the reason it is unusable. */
export function dataValidator(schema: unknown): z.ZodType {
  if (!isObject(schema)) throw new Error("Must be a JSON Schema object");
  if (schema.type !== "object") throw new Error('Must describe an object (`"type": "object"`)');
  const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  // Some problems (a bad regular expression) show only when a value is checked.
  validator.safeParse({});
  return validator;
}

const DataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((v, ctx) => {
    try {
      dataValidator(v);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `Not a usable JSON Schema: ${String((err as Error)?.message ?? err)}` });
    }
  })
  .openapi({
    description:
      "JSON Schema (type \"object\") the analysis's `data` must conform to. A `disposition` property fills the run's disposition when the agent chose none; `callback_at` (ISO 8601) with the disposition `call_back_later` schedules a campaign's retry at that time",
    example: { type: "object", properties: { seats: { type: "integer" }, callback_at: { type: "string", format: "date-time" } }, required: ["seats"] },
  });

export const AnalysisSettings = z
  .strictObject({
    summary_prompt: Prompt.optional().openapi({ description: "How to summarize the call (default: two or three sentences of what happened)" }),
    data_schema: DataSchema.optional(),
    data_prompt: Prompt.optional().openapi({ description: "Guidance for filling `data_schema`" }),
    success_criteria: Prompt.optional().openapi({ description: "What makes the call a success; the model answers true or false with its reason" }),
  })
  .openapi("AnalysisSettings", {
    description: "Post-call analysis: filled by the agent's model after the call and shown as the run's `analysis` (event `run.analyzed`)",
  });
export type AnalysisSettings = z.infer<typeof AnalysisSettings>;

/** The stored analysis settings of an agent, or null when it has none (or they no longer parse). */
export function analysisSettingsOf(configurations: unknown): AnalysisSettings | null {
  if (!isObject(configurations) || configurations.analysis === undefined) return null;
  const parsed = AnalysisSettings.safeParse(configurations.analysis);
  return parsed.success ? parsed.data : null;
}

/** The run's `analysis` as the API shows it. */
export const RunAnalysis = z
  .object({
    status: z.enum(["completed", "failed"]),
    summary: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).nullable().openapi({ description: "Conforms to the agent's `data_schema`" }),
    success: z.boolean().nullable().openapi({ description: "Against `success_criteria`; null without criteria" }),
    success_reason: z.string().nullable(),
    error: z.string().nullable().openapi({ description: "Why the analysis failed (the model's last answer did not conform, or it could not be asked)" }),
    attempts: z.int().openapi({ description: "Model requests made: 1, or 2 when the first answer did not conform" }),
    analyzed_at: z.string(),
  })
  .openapi("RunAnalysis");
export type RunAnalysis = z.infer<typeof RunAnalysis>;
