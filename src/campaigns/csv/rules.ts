// What a campaign's import checks the file against, decided once by create: plain data, so a background import
// stored in the campaign's object applies exactly the rules a request would have.
// (The spec's type is the engine's, engine/types.ts: the object stores it for a background import.)
import { checkDestination, REFUSED_TYPE, type EffectivePolicy } from "../../telephony/destination-policy";
import { checkPbxDestination, pbxTemplates } from "../../telephony/pbx-destinations";
import type { ImportSpec } from "../engine/types";
import type { ImportOptions } from "./import";

export function specPolicy(p: EffectivePolicy): ImportSpec["policy"] {
  return {
    allowedCountries: [...p.allowedCountries],
    countriesSource: p.countriesSource,
    blockedTypes: [...p.blockedTypes],
    allowedNumbers: [...p.allowedNumbers],
  };
}

/** The import's options from its spec (all but the sink). */
export function rulesOf(spec: ImportSpec): Omit<ImportOptions, "sink"> {
  const policy: EffectivePolicy = {
    allowedCountries: new Set(spec.policy.allowedCountries),
    countriesSource: spec.policy.countriesSource,
    blockedTypes: new Set(spec.policy.blockedTypes),
    allowedNumbers: new Set(spec.policy.allowedNumbers),
  };
  return {
    pbx: spec.pbx,
    numbers: spec.numbers,
    destination: (phone) => {
      // A PBX's destination has its number extracted first; a spec stored before that knew only the default form.
      const refused = spec.pbx ? checkPbxDestination(phone, spec.pbxTemplates ?? pbxTemplates(null), policy) : checkDestination(phone, policy);
      return refused && { message: refused.message, type: REFUSED_TYPE, ctx: refused.ctx };
    },
    recordings: new Set(spec.recordings),
    requiredVariables: spec.requiredVariables,
    skipInvalid: spec.skipInvalid ?? false,
  };
}
