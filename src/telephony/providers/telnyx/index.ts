import { defineProvider } from "../define";
import * as config from "./config";
import { telnyxCalls } from "./calls";
import { telnyxProvision } from "./provision";

export const telnyx = defineProvider("telnyx", config, { calls: telnyxCalls, provision: telnyxProvision });
