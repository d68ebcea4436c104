import type { Provider } from "../types";
import * as config from "./config";
import { exotelCalls } from "./calls";

export const exotel: Provider = {
  name: "exotel",
  displayName: config.displayName,
  connectivity: "api",
  pbx: false,
  docsUrl: config.docsUrl,
  supportsTrunks: false,
  ...config.definition,
  steps: config.steps,
  calls: exotelCalls,
};
