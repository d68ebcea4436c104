import { defineProvider } from "../define";
import * as config from "./config";
import { twilioCalls } from "./calls";
import { twilioInbound } from "./inbound";
import { twilioTransfer } from "./transfer";

export const twilio = defineProvider("twilio", config, { calls: { ...twilioCalls, inbound: twilioInbound, transfer: twilioTransfer } });
