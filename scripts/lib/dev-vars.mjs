// .dev.vars, the local secrets `npm run dev` and `npm run demo` share: created from .dev.vars.example with fresh random
// secrets when missing, given the settings the example has added since, and read as name → value. One set of secrets
// for the local storage: what one runner sealed or signed there (telephony credentials, recording links), the other
// opens. A demo on a storage of its own (--keep DIR) keeps its own file in DIR instead: a test of the demo must not
// leave a .dev.vars in the checkout that later suites (wrangler reads it) would load.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freshSecrets } from "./deploy-plan.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEV_VARS = `${ROOT}.dev.vars`;
const EXAMPLE = `${ROOT}.dev.vars.example`;

const nameOf = (line) => /^([A-Z][A-Z0-9_]*)=/.exec(line.trim())?.[1];

export function ensureDevVars(file = DEV_VARS) {
  if (existsSync(file)) return addNewNames(file);
  const fresh = freshSecrets();
  const lines = readFileSync(EXAMPLE, "utf8")
    .split("\n")
    .map((line) => {
      const name = line.split("=")[0];
      return name in fresh ? `${name}=${fresh[name]}` : line;
    });
  writeFileSync(file, lines.join("\n"), { mode: 0o600 });
  console.log(`created ${file === DEV_VARS ? ".dev.vars" : file} with fresh random secrets`);
}

/** An older .dev.vars gains the settings the example has added since (as the example sets them), its own values kept. */
function addNewNames(file) {
  const current = readFileSync(file, "utf8");
  const have = new Set(current.split("\n").map(nameOf).filter(Boolean));
  const missing = readFileSync(EXAMPLE, "utf8")
    .split("\n")
    .filter((line) => nameOf(line) && !have.has(nameOf(line)));
  if (!missing.length) return;
  writeFileSync(file, `${current.replace(/\n?$/, "\n")}${missing.join("\n")}\n`, { mode: 0o600 });
  console.log(`.dev.vars: added ${missing.map(nameOf).join(", ")} from .dev.vars.example`);
}

/** .dev.vars (or `file`) as name → value (created first if missing). */
export function devVars(file = DEV_VARS) {
  ensureDevVars(file);
  const vars = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const name = nameOf(line);
    if (name) vars[name] = line.slice(line.indexOf("=") + 1).trim();
  }
  return vars;
}
