import { defineProvider } from "../define";
import * as config from "./config";
import { vobizCalls } from "./calls";
import { vobizProvision } from "./provision";

export const vobiz = defineProvider("vobiz", config, { calls: vobizCalls, provision: vobizProvision });
