import { unitBySymbol } from "./internal/table.ts";
import type { Dimension } from "./internal/table.ts";

export interface Quantity {
  /** The amount in base units: metres, grams, seconds or bytes. */
  value: number;
  dimension: Dimension;
}

export class UnitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnitError";
  }
}

/** Parses "1.5 km", "250g", "-3 h" into a quantity in base units. */
export function parseQuantity(text: string): Quantity {
  const match = /^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$/.exec(text);
  if (!match) throw new UnitError(`not a quantity: ${JSON.stringify(text)}`);
  const unit = unitBySymbol(match[2]);
  if (!unit) throw new UnitError(`unknown unit ${JSON.stringify(match[2])}`);
  return { value: Number(match[1]) * unit.factor, dimension: unit.dimension };
}

/** Parses `text` and returns its value in `symbol` units, e.g. `parseAs("2 h", "min")` is 120. */
export function parseAs(text: string, symbol: string): number {
  const quantity = parseQuantity(text);
  const unit = unitBySymbol(symbol);
  if (!unit) throw new UnitError(`unknown unit ${JSON.stringify(symbol)}`);
  if (unit.dimension !== quantity.dimension) {
    throw new UnitError(`cannot express a ${quantity.dimension} in ${symbol}`);
  }
  return quantity.value / unit.factor;
}
