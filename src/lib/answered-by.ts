// Who answered a call, as carriers' answering-machine detection reports it: shared by the carriers that map their
// verdicts, the status applier, and the voice agent that heeds them.

/** AMD verdicts that mean a machine answered (Twilio names, and the plain words other carriers use). */
export function isMachine(answeredBy: string | null | undefined): boolean {
  if (!answeredBy) return false;
  const v = answeredBy.toLowerCase();
  return v.startsWith("machine") || v === "fax" || v === "voicemail";
}
