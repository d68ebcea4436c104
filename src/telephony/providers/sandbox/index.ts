import { defineProvider } from "../define";
import { sandboxCalls } from "./calls";
import * as config from "./config";

export const sandbox = defineProvider("sandbox", config, { calls: sandboxCalls, localOnly: true });
