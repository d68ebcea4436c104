import { defineProvider } from "../define";
import * as config from "./config";
import { twilioCalls } from "./calls";
import { twilioInbound } from "./inbound";

export const twilio = defineProvider("twilio", config, { calls: { ...twilioCalls, inbound: twilioInbound } });
