// Structural checks of what lets the agent act on the call: transferCall nodes (a destination dialing takes, a
// mode, a ring time, and exactly one no-answer edge as their only way on), edges chosen by key presses, and the
// agent's HTTP tools (unique names, the nodes they name exist). Pure and total, like the rest of the validator; the
// shape of each field is zod's (a 422 at save), these are the rules across fields and elements.
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { isObject, type Obj } from "../lib/helpers";
import { DTMF_KEYS, RESERVED_TOOL_NAMES, TOOL_NAME } from "./tools";

type Problem = { kind: "node" | "edge" | "workflow"; id: string | null; field: string | null; message: string };

// The forms dialing takes (normalizeNumber in src/telephony/numbers.ts, which this folder ranks below): a number is
// valid E.164 by the numbering plans, or, for a PBX (ari) only, an extension, a SIP URI or a dial string, none with
// spaces, commas or ampersands. test/workflows/action-checks.unit.test.ts holds the two to the same verdicts.
const FORBIDDEN = /[\s,&]/;
const EXTENSION = /^\d{2,15}$/;
const SIP_URI = /^sips?:[^\s@:;]+@[A-Za-z0-9.-]+(:\d{1,5})?(;[^\s]*)?$/i;
const DIAL_STRING = /^[A-Za-z][A-Za-z0-9]*\/[^\s,&]+$/;

/** A number the numbering plans know, written exactly in E.164 (libphonenumber-js, as dialing checks it). */
export const isValidE164 = (d: string) => {
  const parsed = d.startsWith("+") ? parsePhoneNumberFromString(d) : undefined;
  return !!parsed && parsed.number === d && parsed.getType() !== undefined;
};

/** Why dialing would refuse this transfer destination on every carrier, or null. The calling policy (countries,
 * number types) is the organization's and may change after a save: it is applied when the transfer dials. */
export function transferDestinationProblem(raw: string): string | null {
  const d = raw.trim();
  if (d.startsWith("+")) return isValidE164(d) ? null : "data.destination is not a valid phone number: E.164 (+ and country code) by the numbering plans";
  if (!FORBIDDEN.test(d) && (EXTENSION.test(d) || SIP_URI.test(d) || DIAL_STRING.test(d))) return null;
  return "data.destination must be an E.164 number (+14155550100), or for an Asterisk (ari) configuration an extension, a SIP URI (sip:100@pbx.example.com) or a dial string (PJSIP/100), without spaces, commas or ampersands";
}

export function actionProblems(definition: Obj, nodeTypes: ReadonlyMap<string, string | null>): Problem[] {
  const out: Problem[] = [];
  const nodes = Array.isArray(definition.nodes) ? definition.nodes : [];
  const edges = Array.isArray(definition.edges) ? definition.edges : [];
  for (const n of nodes) {
    if (!isObject(n) || n.type !== "transferCall" || typeof n.id !== "string") continue;
    const data = isObject(n.data) ? n.data : {};
    const d = data.destination;
    const refused = typeof d === "string" && d.trim() ? transferDestinationProblem(d) : null;
    if (refused) out.push({ kind: "node", id: n.id, field: "data.destination", message: refused });
    if (data.mode !== undefined && data.mode !== null && data.mode !== "cold" && data.mode !== "warm")
      out.push({ kind: "node", id: n.id, field: "data.mode", message: "data.mode must be cold or warm" });
    const t = data.timeout_seconds;
    if (t !== undefined && t !== null && !(Number.isInteger(t) && (t as number) >= 5 && (t as number) <= 120))
      out.push({ kind: "node", id: n.id, field: "data.timeout_seconds", message: "data.timeout_seconds must be a whole number from 5 to 120" });
  }
  const noAnswer = new Map<string, number>();
  const keysBySource = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!isObject(e) || typeof e.source !== "string") continue;
    const id = typeof e.id === "string" ? e.id : null;
    const data = isObject(e.data) ? e.data : {};
    const fromTransfer = nodeTypes.get(e.source) === "transferCall";
    if (data.on !== undefined && data.on !== null) {
      if (data.on !== "no_answer") out.push({ kind: "edge", id, field: "data.on", message: "data.on must be no_answer" });
      else if (!fromTransfer) out.push({ kind: "edge", id, field: "data.on", message: "Only an edge leaving a transferCall node can be its no_answer edge" });
      else noAnswer.set(e.source, (noAnswer.get(e.source) ?? 0) + 1);
    } else if (fromTransfer) {
      out.push({
        kind: "edge",
        id,
        field: "data.on",
        message: `Edges leaving transferCall node '${e.source}' must be its no_answer edge (data.on: "no_answer")`,
      });
    }
    if (data.dtmf !== undefined && data.dtmf !== null) {
      if (typeof data.dtmf !== "string" || !DTMF_KEYS.test(data.dtmf) || data.dtmf.includes("w"))
        out.push({ kind: "edge", id, field: "data.dtmf", message: "data.dtmf must be 1 to 32 keys of 0-9, *, #, A-D" });
      else {
        const seen = keysBySource.get(e.source) ?? new Set<string>();
        keysBySource.set(e.source, seen);
        if (seen.has(data.dtmf))
          out.push({ kind: "edge", id, field: "data.dtmf", message: `Another edge leaving '${e.source}' already waits for ${data.dtmf}` });
        seen.add(data.dtmf);
      }
    }
  }
  for (const [id, type] of nodeTypes) {
    if (type !== "transferCall") continue;
    const count = noAnswer.get(id) ?? 0;
    if (count !== 1)
      out.push({
        kind: "node",
        id,
        field: null,
        message: `transferCall node '${id}' needs exactly one edge marked data.on: "no_answer" (where the call goes on when nobody answers); it has ${count}`,
      });
  }
  out.push(...toolProblems(definition, nodeTypes));
  return out;
}

function toolProblems(definition: Obj, nodeTypes: ReadonlyMap<string, string | null>): Problem[] {
  const out: Problem[] = [];
  if (definition.tools === undefined || definition.tools === null) return out;
  if (!Array.isArray(definition.tools)) return [{ kind: "workflow", id: null, field: "tools", message: "tools must be a list" }];
  const names = new Set<string>();
  definition.tools.forEach((t, i) => {
    const at = (f: string) => `tools[${i}].${f}`;
    if (!isObject(t)) {
      out.push({ kind: "workflow", id: null, field: `tools[${i}]`, message: `Tool at index ${i} must be an object` });
      return;
    }
    if (typeof t.name !== "string" || !TOOL_NAME.test(t.name) || RESERVED_TOOL_NAMES.has(t.name))
      out.push({
        kind: "workflow",
        id: null,
        field: at("name"),
        message: `Tool at index ${i} needs a name of letters, digits, '_' and '-', not end_call, transfer_call or send_dtmf`,
      });
    else if (names.has(t.name)) out.push({ kind: "workflow", id: null, field: at("name"), message: `Another tool is already named ${t.name}` });
    else names.add(t.name);
    if (typeof t.url !== "string") out.push({ kind: "workflow", id: null, field: at("url"), message: `Tool at index ${i} needs a url` });
    for (const n of Array.isArray(t.nodes) ? t.nodes : []) {
      if (typeof n !== "string" || !nodeTypes.has(n))
        out.push({ kind: "workflow", id: null, field: at("nodes"), message: `Tool ${String(t.name)} names node '${String(n)}', which does not exist` });
    }
  });
  return out;
}
