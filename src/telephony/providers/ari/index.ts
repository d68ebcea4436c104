import { defineProvider } from "../define";
import * as config from "./config";
import { ariCalls } from "./calls";
import { ariMedia } from "./media";
import { ariSendDtmf } from "./dtmf";

export const ari = defineProvider("ari", config, { calls: { ...ariCalls, media: ariMedia, sendDtmf: ariSendDtmf }, connectivity: "sip", pbx: true });
