import { defineProvider } from "../define";
import * as config from "./config";
import { ariCalls } from "./calls";

export const ari = defineProvider("ari", config, { calls: ariCalls, connectivity: "sip", pbx: true });
