import type { Provider } from "../types";
import * as config from "./config";
import { ariCalls } from "./calls";

export const ari: Provider = {
  name: "ari",
  displayName: config.displayName,
  connectivity: "sip",
  pbx: true,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: ariCalls,
};
