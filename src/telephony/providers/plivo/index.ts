import { defineProvider } from "../define";
import * as config from "./config";
import { plivoCalls } from "./calls";
import { plivoProvision } from "./provision";

export const plivo = defineProvider("plivo", config, { calls: plivoCalls, provision: plivoProvision });
