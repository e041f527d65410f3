export { CATALOG } from "./catalog.ts";
export { describe, lintCatalog, toResponse, UNKNOWN } from "./errors.ts";
export type { ErrorDef, ErrorResponse } from "./types.ts";
