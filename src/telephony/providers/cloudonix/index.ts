import type { Provider } from "../types";
import * as config from "./config";
import { cloudonixCalls } from "./calls";
import { cloudonixProvision } from "./provision";

export const cloudonix: Provider = {
  name: "cloudonix",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: true,
  ...config.definition,
  steps: config.steps,
  calls: cloudonixCalls,
  provision: cloudonixProvision,
  sipConnectivity: config.sipConnectivity,
};
