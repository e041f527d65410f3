export { CsvError, parseCsv, parseCsvLine } from "./csv.ts";
export type { ParseOptions, Record, Row } from "./csv.ts";
