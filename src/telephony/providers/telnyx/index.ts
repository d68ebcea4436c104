import type { Provider } from "../types";
import * as config from "./config";
import { telnyxCalls } from "./calls";
import { telnyxProvision } from "./provision";

export const telnyx: Provider = {
  name: "telnyx",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: telnyxCalls,
  provision: telnyxProvision,
};
