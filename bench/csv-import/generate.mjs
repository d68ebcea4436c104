// Writes a contacts CSV of `rows` rows and five columns (about 60 bytes a row, 60 MB for a million): unique valid E.164 numbers in a
// few countries, names, a company with a quoted comma now and then, and a free-text note. Deterministic.
import { createWriteStream } from "node:fs";
import { once } from "node:events";

const FIRST = ["Ada", "Bob", "Chloé", "Dmitri", "Eve", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kofi", "Lena"];
const LAST = ["Lovelace", "Marley", "Dupont", "Ivanov", "Adams", "Haddad", "Hopper", "Tanaka", "Silva", "Khan", "Mensah", "Berg"];
const COMPANY = ["Acme", "Globex", '"Widgets, Inc."', "Initech", "Umbrella", "Hooli", "Stark", "Wayne"];

/** The i-th number: 1M unique valid numbers across the US, the UK and Germany. */
export function phoneOf(i) {
  switch (i % 3) {
    case 0:
      return `+1415${2_000_000 + Math.floor(i / 3)}`; // +1 415 2xx xxxx
    case 1:
      return `+4420${71_000_000 + Math.floor(i / 3)}`; // +44 20 71xx xxxx
    default:
      return `+49151${23_000_000 + Math.floor(i / 3)}`; // +49 151 23xx xxxx
  }
}

/** The i-th PBX extension (for an ari configuration): plain digits, no carrier numbering plan to check. */
export const extensionOf = (i) => String(10_000_000 + i);

export async function generateCsv(path, rows, { pbx = false } = {}) {
  const number = pbx ? extensionOf : phoneOf;
  const out = createWriteStream(path);
  let buf = "phone_number,first_name,last_name,company,notes\n";
  for (let i = 0; i < rows; i++) {
    buf += `${number(i)},${FIRST[i % 12]},${LAST[(i * 7) % 12]},${COMPANY[i % 8]},Customer since ${2000 + (i % 25)} (tier ${i % 5})\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(out, "finish");
}
