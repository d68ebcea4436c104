import type { Provider } from "../types";
import * as config from "./config";
import { vonageCalls } from "./calls";

export const vonage: Provider = {
  name: "vonage",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: vonageCalls,
};
