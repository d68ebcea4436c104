import { defineProvider } from "../define";
import { familyInbound } from "../plivo-family-inbound";
import * as config from "./config";
import { vobizCalls, vobizCarrier } from "./calls";
import { familySendDtmf } from "../plivo-family-dtmf";
import { familyTransfer } from "../plivo-family-transfer";
import { vobizProvision } from "./provision";

export const vobiz = defineProvider("vobiz", config, {
  calls: { ...vobizCalls, sendDtmf: familySendDtmf(vobizCarrier), inbound: familyInbound(vobizCarrier), transfer: familyTransfer(vobizCarrier) },
  provision: vobizProvision,
});
