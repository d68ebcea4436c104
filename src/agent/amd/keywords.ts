// What the callee's words say about who answered (issue 42): a machine's greeting names itself ("leave a message",
// "after the tone", "voicemail", "not available"), an IVR menu offers keys ("press 1", "for sales", "menu"), a call
// screening service asks who is calling ("state your name", "Google Assistant", "record your name"). Pure.

export const MACHINE_WORDS =
  /\b(leave (me |us )?(a |your )?(message|name)|after the (tone|beep)|voice ?mail|mailbox|(is |are |am )?(not|un)available|can'?t (take|come to) (your|the) (call|phone)|record your message|at the tone)\b/i;

const IVR_WORDS =
  /\b(press (\d|one|two|three|four|five|six|seven|eight|nine|zero|star|pound|the pound key)|for (sales|support|billing|service|customer service|english|spanish|account)|(main |following )?menu|menu options|(party'?s )?extension|listen carefully|options have changed|para espa[nñ]ol)\b/i;

// "Who's calling?" alone is what a person says on picking up: only a longer prompt that asks it is a screening service.
const SCREENING_WORDS =
  /\b(state your name|say your name|record your name|google assistant|call ?screening|screening service|being screened|reason for (your )?call(ing)?|why you'?re calling|why you are calling|see if (this person|they|he|she) (is|are) available)\b/i;
const WHO_IS_CALLING = /\b(who'?s|who is) calling\b/i;

export type KeywordClass = "machine_greeting" | "ivr_menu" | "call_screening";

/** The class the words name and the words that did, or null: screening first (its prompts ask for a name, as machines do), then IVR, then machine. */
export function keywordClass(text: string, voicedMs = 0): { cls: KeywordClass; keyword: string } | null {
  const screening = SCREENING_WORDS.exec(text) ?? (voicedMs >= 2500 ? WHO_IS_CALLING.exec(text) : null);
  if (screening) return { cls: "call_screening", keyword: screening[0].toLowerCase() };
  const ivr = IVR_WORDS.exec(text);
  if (ivr) return { cls: "ivr_menu", keyword: ivr[0].toLowerCase() };
  const machine = MACHINE_WORDS.exec(text);
  if (machine) return { cls: "machine_greeting", keyword: machine[0].toLowerCase() };
  return null;
}
