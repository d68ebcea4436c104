// Creates (or finds) the Vobiz application of a configuration saved without application_id
// (Vobiz keeps Plivo's Application resource; the code is shared with Plivo).
import { familyProvision } from "../plivo-family";
import { vobizCarrier } from "./calls";

export const vobizProvision = familyProvision(vobizCarrier);
