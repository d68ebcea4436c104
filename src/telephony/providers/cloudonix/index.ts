import { defineProvider } from "../define";
import * as config from "./config";
import { cloudonixCalls } from "./calls";
import { cloudonixProvision } from "./provision";

export const cloudonix = defineProvider("cloudonix", config, { calls: cloudonixCalls, provision: cloudonixProvision, supportsTrunks: true });
