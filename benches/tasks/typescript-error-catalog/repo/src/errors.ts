import { CATALOG } from "./catalog.ts";
import type { ErrorDef, ErrorResponse } from "./types.ts";

const BY_CODE = new Map<string, ErrorDef>(CATALOG.map((def) => [def.code, def]));

/** Seconds clients should wait before retrying, by status. */
const RETRY_AFTER: { [status: number]: number } = { 429: 60, 503: 30, 504: 5 };

export const UNKNOWN: ErrorDef = {
  code: "UNKNOWN",
  status: 500,
  retryable: false,
  message: "An unexpected error occurred",
};

/** The catalogue entry for `code`, or the generic UNKNOWN entry. */
export function describe(code: string): ErrorDef {
  return BY_CODE.get(code) ?? UNKNOWN;
}

/** The HTTP response the API sends for `code`. */
export function toResponse(code: string, detail?: string): ErrorResponse {
  const def = describe(code);
  const headers: { [name: string]: string } = { "content-type": "application/json" };
  if (def.retryable) {
    headers["retry-after"] = String(RETRY_AFTER[def.status] ?? 30);
  }
  return {
    status: def.status,
    headers,
    body: {
      error: {
        code: def.code,
        message: def.message,
        retryable: def.retryable,
        ...(detail === undefined ? {} : { detail }),
      },
    },
  };
}

/** Problems in the catalogue: duplicate codes, bad code shapes, statuses outside 4xx/5xx. */
export function lintCatalog(catalog: readonly ErrorDef[] = CATALOG): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const def of catalog) {
    if (!/^[A-Z]+-\d{4}$/.test(def.code)) problems.push(`${def.code}: malformed code`);
    if (seen.has(def.code)) problems.push(`${def.code}: duplicate code`);
    seen.add(def.code);
    if (def.status < 400 || def.status > 599) problems.push(`${def.code}: status ${def.status} is not an error`);
    if (def.message.trim() === "") problems.push(`${def.code}: empty message`);
  }
  return problems;
}
