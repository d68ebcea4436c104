// The model's two parts in an agent test: the persona caller (an LLM plays the scenario's prompt, a line per turn)
// and the judge (an LLM decides each rubric criterion over the call's transcript, with its reasoning).
//
// The persona reads what the agent said from the call's own transcript (the session's turns) rather than by ear:
// offline the agent speaks tones, and on a deployment this keeps the caller's understanding exact and cheap. What the
// persona says is spoken in the caller voice (caller-voice.ts) after the agent's offline speech-to-text learned the
// line (the session's `learnLine`), so the agent hears it over the carrier's protocol like a scripted line.
import type { ChatMessage, ChatModel } from "../agent/chat";
import type { Turn } from "../agent/voice-agent";
import { answer } from "./models";
import type { LineSource } from "./caller";
import type { ObservedTurn } from "./expectations";

/** What the persona answers when it is done and would hang up. */
export const END_MARK = "[END]";

const personaSystem = (prompt: string) =>
  [
    "You are role-playing the caller on a phone call with a company's voice agent, to test the agent. Stay in character:",
    prompt,
    `Reply with only what you say next, one or two short spoken sentences, no stage directions. When the conversation is over and you would hang up, reply with ${END_MARK} alone.`,
  ].join("\n\n");

/** The call so far as the persona's chat: the agent's turns are the other side ("user"), the caller's its own. */
export function personaMessages(prompt: string, turns: Array<Pick<Turn, "role" | "text">>): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: personaSystem(prompt) }];
  for (const t of turns) {
    if (t.role === "tool" || !t.text.trim()) continue;
    messages.push(t.role === "agent" ? { role: "user", content: t.text } : { role: "assistant", content: t.text });
  }
  // The agent said nothing yet (or only what could not be heard): the persona opens.
  if (messages.length === 1 || messages[messages.length - 1].role === "assistant") messages.push({ role: "user", content: "(silence on the line)" });
  return messages;
}

export type Persona = { source: LineSource; error: () => string | null; lines: () => number };

/**
 * The persona's lines: each asks the model with the call so far (`turns`), stops after `maxTurns` lines or at the
 * end mark, and has every line learned (`learn`) before it is spoken. A model failure is kept as the call's error.
 */
export function persona(
  model: ChatModel,
  prompt: string,
  maxTurns: number,
  turns: () => Promise<Array<Pick<Turn, "role" | "text">>>,
  learn: (text: string) => Promise<void>,
): Persona {
  let said = 0;
  let error: string | null = null;
  const source: LineSource = async () => {
    if (said >= maxTurns) return null;
    let text: string;
    try {
      text = (await answer(model, personaMessages(prompt, await turns()))).replace(/\s+/g, " ").trim();
    } catch (err) {
      error = `The persona caller's model failed: ${String((err as Error)?.message ?? err)}`;
      throw err;
    }
    if (!text || text.includes(END_MARK)) return null;
    const line = text.slice(0, 500);
    try {
      await learn(line);
    } catch (err) {
      // The line's voice (a real text-to-speech) or the session's learning it failed: says so itself.
      error = String((err as Error)?.message ?? err);
      throw err;
    }
    said++;
    return line;
  };
  return { source, error: () => error, lines: () => said };
}

const JUDGE_SYSTEM = [
  "You judge a phone call between a company's voice agent and a caller, against one criterion about the agent.",
  'Answer with JSON only: {"passed": true or false, "reasoning": "one or two sentences citing the transcript"}.',
].join(" ");

export const judgeMessages = (criterion: string, transcript: ObservedTurn[]): ChatMessage[] => [
  { role: "system", content: JUDGE_SYSTEM },
  {
    role: "user",
    content: `Criterion: ${criterion}\n\nTranscript:\n${transcript.map((t) => `${t.role === "agent" ? "Agent" : "Caller"}: ${t.text}`).join("\n") || "(nothing was said)"}`,
  },
];

/** The judge's verdict from its answer: the first JSON object in it with a boolean `passed`. */
export function readVerdict(text: string): { passed: boolean; reasoning: string } {
  const at = text.indexOf("{");
  const end = text.lastIndexOf("}");
  try {
    const v = JSON.parse(text.slice(at, end + 1)) as { passed?: unknown; reasoning?: unknown };
    if (at >= 0 && typeof v.passed === "boolean") return { passed: v.passed, reasoning: typeof v.reasoning === "string" ? v.reasoning.slice(0, 2000) : "" };
  } catch {
    // not JSON: below
  }
  throw new Error(`The judge's answer is not a verdict: ${text.slice(0, 200)}`);
}

/** Every rubric criterion judged, one question each (a criterion's verdict never leans on another's). */
export async function judge(model: ChatModel, criteria: string[], transcript: ObservedTurn[]) {
  const out: Array<{ criterion: string; passed: boolean; reasoning: string }> = [];
  for (const criterion of criteria) {
    try {
      out.push({ criterion, ...readVerdict(await answer(model, judgeMessages(criterion, transcript))) });
    } catch (err) {
      throw new Error(`The judge's model failed on "${criterion.slice(0, 80)}": ${String((err as Error)?.message ?? err)}`);
    }
  }
  return out;
}
