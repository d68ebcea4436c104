import { defineProvider } from "../define";
import * as config from "./config";
import { telnyxCalls } from "./calls";
import { telnyxProvision } from "./provision";
import { telnyxTransfer } from "./transfer";

export const telnyx = defineProvider("telnyx", config, { calls: { ...telnyxCalls, transfer: telnyxTransfer }, provision: telnyxProvision });
