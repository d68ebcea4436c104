import { defineProvider } from "../define";
import * as config from "./config";
import { twilioCalls } from "./calls";

export const twilio = defineProvider("twilio", config, { calls: twilioCalls });
