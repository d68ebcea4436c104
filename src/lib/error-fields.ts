// A refusal whose body carries more than `detail`, e.g. the list of problems of an agent that cannot take calls.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "./errors";

export class ApiErrorWithFields extends ApiError {
  constructor(
    status: ContentfulStatusCode,
    detail: string,
    /** Sent beside `detail`; never `detail` itself. */
    readonly fields: Record<string, unknown>,
  ) {
    super(status, detail);
  }
}
