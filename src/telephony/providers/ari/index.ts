import { defineProvider } from "../define";
import * as config from "./config";
import { ariCalls } from "./calls";
import { ariMedia } from "./media";
import { ariTransfer } from "./transfer";
import { ariSendDtmf } from "./dtmf";

export const ari = defineProvider("ari", config, {
  calls: { ...ariCalls, media: ariMedia, transfer: ariTransfer, sendDtmf: ariSendDtmf },
  connectivity: "sip",
  pbx: true,
});
