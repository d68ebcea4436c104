import type { Provider } from "../types";
import * as config from "./config";
import { vobizCalls } from "./calls";
import { vobizProvision } from "./provision";

export const vobiz: Provider = {
  name: "vobiz",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: vobizCalls,
  provision: vobizProvision,
};
