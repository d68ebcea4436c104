import { defineProvider } from "../define";
import * as config from "./config";
import { vonageCalls } from "./calls";

export const vonage = defineProvider("vonage", config, { calls: vonageCalls });
