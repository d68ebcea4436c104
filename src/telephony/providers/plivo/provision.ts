// Creates (or finds) the Plivo application of a configuration saved without application_id (shared with Vobiz).
import { familyProvision } from "../plivo-family";
import { plivoCarrier } from "./calls";

export const plivoProvision = familyProvision(plivoCarrier);
