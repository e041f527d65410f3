export type Dimension = "length" | "mass" | "time" | "data";

export interface UnitDef {
  symbol: string;
  dimension: Dimension;
  /** How many base units (m, g, s, B) one of this unit is. */
  factor: number;
}

export const UNITS: readonly UnitDef[] = [
  { symbol: "mm", dimension: "length", factor: 0.001 },
  { symbol: "cm", dimension: "length", factor: 0.01 },
  { symbol: "m", dimension: "length", factor: 1 },
  { symbol: "km", dimension: "length", factor: 1000 },
  { symbol: "mg", dimension: "mass", factor: 0.001 },
  { symbol: "g", dimension: "mass", factor: 1 },
  { symbol: "kg", dimension: "mass", factor: 1000 },
  { symbol: "t", dimension: "mass", factor: 1_000_000 },
  { symbol: "ms", dimension: "time", factor: 0.001 },
  { symbol: "s", dimension: "time", factor: 1 },
  { symbol: "min", dimension: "time", factor: 60 },
  { symbol: "h", dimension: "time", factor: 3600 },
  { symbol: "d", dimension: "time", factor: 86400 },
  { symbol: "B", dimension: "data", factor: 1 },
  { symbol: "KiB", dimension: "data", factor: 1024 },
  { symbol: "MiB", dimension: "data", factor: 1024 ** 2 },
  { symbol: "GiB", dimension: "data", factor: 1024 ** 3 },
];

const BY_SYMBOL = new Map(UNITS.map((u) => [u.symbol, u]));

export function unitBySymbol(symbol: string): UnitDef | undefined {
  return BY_SYMBOL.get(symbol);
}

/** Units of one dimension, largest first. */
export function unitsOf(dimension: Dimension): UnitDef[] {
  return UNITS.filter((u) => u.dimension === dimension).sort((a, b) => b.factor - a.factor);
}
