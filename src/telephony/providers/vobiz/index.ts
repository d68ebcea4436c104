import type { Provider } from "../types";
import * as config from "./config";

export const vobiz: Provider = {
  name: "vobiz",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
};
