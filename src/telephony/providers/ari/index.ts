import { defineProvider } from "../define";
import * as config from "./config";
import { ariCalls } from "./calls";
import { ariMedia } from "./media";

export const ari = defineProvider("ari", config, { calls: { ...ariCalls, media: ariMedia }, connectivity: "sip", pbx: true });
