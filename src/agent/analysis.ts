// Post-call analysis: the agent's model reads the finished call (transcript, gathered values, disposition) and
// answers one JSON object: a summary, structured data under the agent's JSON Schema, and a verdict against its success
// criteria. An answer that does not conform is sent back once with the reason; a second bad answer is recorded as
// failed with its reason, never guessed at. Pure apart from the model it is given.
import type { z } from "@hono/zod-openapi";
import { isObject } from "../lib/helpers";
import { type AnalysisSettings, dataValidator, type RunAnalysis } from "../workflows/analysis-schema";
import type { ChatMessage, ChatModel } from "./chat";

export const ANALYSIS_SYSTEM_MARK = "You write the post-call analysis of a phone call";
const DEFAULT_SUMMARY = "Summarize the call in two or three sentences: who was reached, what they said, and what was agreed.";
/** A model that has not answered by then has failed this attempt (the work runs after the call, not in it). */
export const ANALYSIS_TIMEOUT_MS = 60_000;
const MAX_ANSWER_CHARS = 64 * 1024;

export type CallForAnalysis = {
  turns: { role: string; text: string }[];
  gathered: Record<string, unknown> | null;
  disposition: string | null;
  dispositionCodes: string[];
  /** The call's template variables (the contact's columns), for context. */
  variables: Record<string, unknown>;
};

/** The system prompt: what to answer and in which shape. */
export function analysisPrompt(s: AnalysisSettings, codes: string[]): string {
  const parts = [
    `${ANALYSIS_SYSTEM_MARK}. Answer with one JSON object and nothing else (no prose, no code fence), with these keys:`,
    `- "summary": a string. ${s.summary_prompt ?? DEFAULT_SUMMARY}`,
  ];
  if (s.data_schema) {
    parts.push(`- "data": an object conforming to this JSON Schema: ${JSON.stringify(s.data_schema)}`);
    if (s.data_prompt) parts.push(`  ${s.data_prompt}`);
    if (codes.length) parts.push(`  Where it has a "disposition", use one of: ${codes.join(", ")}.`);
  }
  if (s.success_criteria) {
    parts.push(`- "success": true or false, whether the call met these criteria: ${s.success_criteria}`);
    parts.push(`- "success_reason": a string, one sentence saying why.`);
  }
  return parts.join("\n");
}

/** The call as the model reads it. */
export function callText(c: CallForAnalysis): string {
  const lines = c.turns.map((t) => `${t.role === "agent" ? "Agent" : "Callee"}: ${t.text}`);
  return [
    `Transcript:\n${lines.join("\n") || "(nothing was said)"}`,
    `Values gathered during the call: ${JSON.stringify(c.gathered ?? {})}`,
    `Disposition chosen by the agent: ${c.disposition ?? "(none)"}`,
    `Contact details: ${JSON.stringify(c.variables)}`,
  ].join("\n\n");
}

type Parsed = Pick<RunAnalysis, "summary" | "data" | "success" | "success_reason">;

/** The answer checked against what was asked: the parsed result, or why it does not conform. */
export function checkAnswer(answer: string, s: AnalysisSettings, validator: z.ZodType | null): { ok: true; value: Parsed } | { ok: false; reason: string } {
  const text = answer
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, reason: "The answer is not a JSON object" };
  }
  if (!isObject(v)) return { ok: false, reason: "The answer is not a JSON object" };
  if (typeof v.summary !== "string" || !v.summary.trim()) return { ok: false, reason: '"summary" must be a non-empty string' };
  let data: Record<string, unknown> | null = null;
  if (validator) {
    const r = validator.safeParse(v.data);
    if (!r.success) {
      const issue = r.error.issues[0];
      const at = issue.path.length ? ` at data.${issue.path.join(".")}` : " at data";
      return { ok: false, reason: `"data" does not conform to the schema${at}: ${issue.message}` };
    }
    data = r.data as Record<string, unknown>;
  }
  let success: boolean | null = null;
  let reason: string | null = null;
  if (s.success_criteria) {
    if (typeof v.success !== "boolean") return { ok: false, reason: '"success" must be true or false' };
    if (typeof v.success_reason !== "string" || !v.success_reason.trim()) return { ok: false, reason: '"success_reason" must be a non-empty string' };
    success = v.success;
    reason = v.success_reason.trim();
  }
  return { ok: true, value: { summary: v.summary.trim(), data, success, success_reason: reason } };
}

/** The whole reply's text (tool calls are not asked for and are ignored). */
async function ask(model: ChatModel, messages: ChatMessage[]): Promise<string> {
  let text = "";
  const signal = AbortSignal.timeout(ANALYSIS_TIMEOUT_MS);
  for await (const e of model.stream({ messages, tools: [] }, signal)) {
    if (e.type === "text") text += e.text;
    if (text.length > MAX_ANSWER_CHARS) throw new Error(`The answer is longer than ${MAX_ANSWER_CHARS} characters`);
  }
  return text;
}

/** Runs the analysis: at most two requests (the second with the first answer's problem). Never throws. */
export async function analyzeCall(model: ChatModel, s: AnalysisSettings, call: CallForAnalysis, nowIso: () => string): Promise<RunAnalysis> {
  const failed = (error: string, attempts: number): RunAnalysis => ({
    status: "failed",
    summary: null,
    data: null,
    success: null,
    success_reason: null,
    error,
    attempts,
    analyzed_at: nowIso(),
  });
  let validator: z.ZodType | null = null;
  try {
    validator = s.data_schema ? dataValidator(s.data_schema) : null;
  } catch (err) {
    return failed(`The data schema is not usable: ${String((err as Error)?.message ?? err)}`, 0);
  }
  const messages: ChatMessage[] = [
    { role: "system", content: analysisPrompt(s, call.dispositionCodes) },
    { role: "user", content: callText(call) },
  ];
  let reason = "";
  for (let attempt = 1; attempt <= 2; attempt++) {
    let answer: string;
    try {
      answer = await ask(model, messages);
    } catch (err) {
      return failed(`The model could not be asked: ${String((err as Error)?.message ?? err)}`.slice(0, 500), attempt);
    }
    const checked = checkAnswer(answer, s, validator);
    if (checked.ok) return { status: "completed", ...checked.value, error: null, attempts: attempt, analyzed_at: nowIso() };
    reason = checked.reason;
    messages.push(
      { role: "assistant", content: answer },
      { role: "user", content: `Your answer was not valid: ${reason}. Reply again with only the corrected JSON object.` },
    );
  }
  return failed(`The model's answer did not conform twice; last: ${reason}`, 2);
}
