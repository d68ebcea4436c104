import { defineProvider } from "../define";
import * as config from "./config";
import { vonageCalls } from "./calls";
import { vonageSendDtmf } from "./dtmf";

export const vonage = defineProvider("vonage", config, { calls: { ...vonageCalls, sendDtmf: vonageSendDtmf } });
