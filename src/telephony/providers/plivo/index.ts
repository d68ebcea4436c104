import type { Provider } from "../types";
import * as config from "./config";
import { plivoCalls } from "./calls";
import { plivoProvision } from "./provision";

export const plivo: Provider = {
  name: "plivo",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: plivoCalls,
  provision: plivoProvision,
};
