import { defineProvider } from "../define";
import * as config from "./config";
import { cloudonixCalls } from "./calls";
import { cloudonixProvision } from "./provision";
import { cloudonixInbound } from "./inbound";

export const cloudonix = defineProvider("cloudonix", config, {
  calls: { ...cloudonixCalls, inbound: cloudonixInbound },
  provision: cloudonixProvision,
  supportsTrunks: true,
});
