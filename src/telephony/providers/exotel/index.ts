import { defineProvider } from "../define";
import * as config from "./config";
import { exotelCalls } from "./calls";

export const exotel = defineProvider("exotel", config, { calls: exotelCalls });
