import { unitBySymbol, unitsOf } from "./internal/table.ts";
import type { Quantity } from "./parse.ts";

export interface FormatOptions {
  /** Use this unit instead of picking the largest one that keeps the number ≥ 1. */
  unit?: string;
  /** Decimal places at most (default 2); trailing zeros are dropped. */
  maxDecimals?: number;
}

function trim(value: number, maxDecimals: number): string {
  return Number(value.toFixed(maxDecimals)).toString();
}

/** Formats a quantity with a readable unit: 1500 m is "1.5 km", 5400 s is "1.5 h". */
export function formatQuantity(quantity: Quantity, options: FormatOptions = {}): string {
  const maxDecimals = options.maxDecimals ?? 2;
  if (options.unit !== undefined) {
    const unit = unitBySymbol(options.unit);
    if (!unit || unit.dimension !== quantity.dimension) {
      throw new RangeError(`cannot format a ${quantity.dimension} in ${options.unit}`);
    }
    return `${trim(quantity.value / unit.factor, maxDecimals)} ${unit.symbol}`;
  }
  const units = unitsOf(quantity.dimension);
  const abs = Math.abs(quantity.value);
  const unit = units.find((u) => abs >= u.factor) ?? units[units.length - 1];
  return `${trim(quantity.value / unit.factor, maxDecimals)} ${unit.symbol}`;
}
