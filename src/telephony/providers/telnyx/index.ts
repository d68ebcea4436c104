import { defineProvider } from "../define";
import * as config from "./config";
import { telnyxCalls } from "./calls";
import { telnyxProvision } from "./provision";
import { telnyxTransfer } from "./transfer";
import { telnyxInbound } from "./inbound";
import { telnyxKeyPressed, telnyxSendDtmf } from "./dtmf";

export const telnyx = defineProvider("telnyx", config, {
  calls: { ...telnyxCalls, transfer: telnyxTransfer, sendDtmf: telnyxSendDtmf, inbound: telnyxInbound, keyPressed: telnyxKeyPressed },
  provision: telnyxProvision,
});
