import { defineProvider } from "../define";
import * as config from "./config";
import { vonageCalls } from "./calls";
import { vonageSendDtmf } from "./dtmf";
import { vonageTransfer } from "./transfer";
import { vonageInbound } from "./inbound";

export const vonage = defineProvider("vonage", config, {
  calls: { ...vonageCalls, sendDtmf: vonageSendDtmf, inbound: vonageInbound, transfer: vonageTransfer },
});
