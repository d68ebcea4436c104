// Which lines of an uploaded CSV carry a phone number, pure: a cell whose digits are the number's (with or without
// its country code, leading zeros or punctuation) marks its line. Used to rewrite campaign files on erasure.

/** The digits of a cell, leading zeros dropped (a trunk or international prefix). */
const digitsOf = (cell: string) => cell.replace(/\D/g, "").replace(/^0+/, "");

/** Whether one CSV line holds `e164` in any cell (at least 7 digits must match, so short numbers never do). */
export function lineHasNumber(line: string, e164: string): boolean {
  const target = e164.replace(/\D/g, "");
  for (const cell of line.split(",")) {
    const d = digitsOf(cell);
    if (d.length >= 7 && (d === target || target.endsWith(d) || d.endsWith(target))) return true;
  }
  return false;
}

/** The text without the lines that hold the number (the header is never one), and how many went. */
export function withoutNumber(text: string, e164: string): { text: string; removed: number } {
  const lines = text.split("\n");
  const kept = lines.filter((line, i) => i === 0 || !lineHasNumber(line, e164));
  return { text: kept.join("\n"), removed: lines.length - kept.length };
}
