import type { Provider } from "../types";
import * as config from "./config";
import { twilioCalls } from "./calls";

export const twilio: Provider = {
  name: "twilio",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: twilioCalls,
};
