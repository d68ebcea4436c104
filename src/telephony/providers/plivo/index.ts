import { defineProvider } from "../define";
import { familyInbound } from "../plivo-family-inbound";
import * as config from "./config";
import { plivoCalls, plivoCarrier } from "./calls";
import { familySendDtmf } from "../plivo-family-dtmf";
import { familyTransfer } from "../plivo-family-transfer";
import { plivoProvision } from "./provision";

export const plivo = defineProvider("plivo", config, {
  calls: { ...plivoCalls, sendDtmf: familySendDtmf(plivoCarrier), inbound: familyInbound(plivoCarrier), transfer: familyTransfer(plivoCarrier) },
  provision: plivoProvision,
});
