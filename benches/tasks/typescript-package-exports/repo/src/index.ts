export { parseAs, parseQuantity, UnitError } from "./parse.ts";
export type { Quantity } from "./parse.ts";
export { formatQuantity } from "./format.ts";
export type { FormatOptions } from "./format.ts";
export type { Dimension } from "./internal/table.ts";
