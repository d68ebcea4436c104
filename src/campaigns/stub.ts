// The campaign object addressed by campaign id (idFromName(String(id))), typed by its class: every RPC method is
// async and returns plain data, so the class's own signatures describe the stub (and avoid deep RPC type mapping).
// The one way the Worker reaches the object: its refusals arrive as the contract's HTTP errors (ApiError), mapped here.
import type { CampaignObject } from "./campaign-object";
import { engineErrorToApi } from "./errors";
import { FAULT_RETURNING_METHODS, isFault, type Fault } from "./faults";

export type CampaignRpc = Pick<
  CampaignObject,
  | "initialize"
  | "beginImport"
  | "importContacts"
  | "importPacked"
  | "finishImport"
  | "failSource"
  | "discard"
  | "beginAppend"
  | "stageAppend"
  | "commitAppend"
  | "discardAppend"
  | "snapshot"
  | "progress"
  | "progressFor"
  | "logs"
  | "contacts"
  | "onRunOutcome"
  | "start"
  | "resume"
  | "pause"
  | "cancel"
  | "updateSettings"
  | "wake"
  | "onCallStatus"
  | "redialPlan"
  | "redialContacts"
  | "linkRedial"
>;

type Method = (...args: unknown[]) => Promise<unknown>;
const MAPPED = new Set<PropertyKey>(FAULT_RETURNING_METHODS);

/** The campaign's object; a refusal (a returned Fault or an encoded "[409] ..." error) rejects with its ApiError. */
export function campaignStub(env: Env, campaignId: number): CampaignRpc {
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(campaignId)));
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (!MAPPED.has(prop) || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        let r: unknown;
        try {
          // Called as a method of the stub: an RPC method stub has no real `apply` (it would be another RPC).
          r = await (target as unknown as Record<PropertyKey, Method>)[prop](...args);
        } catch (err) {
          throw engineErrorToApi(err) ?? err;
        }
        if (isFault(r)) throw engineErrorToApi((r as Fault).__engine_fault) ?? new Error((r as Fault).__engine_fault);
        return r;
      };
    },
  }) as unknown as CampaignRpc;
}
