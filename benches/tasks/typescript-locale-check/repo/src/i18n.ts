import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Messages = { [key: string]: string | Messages };
export type Params = { [name: string]: string | number };

export const DEFAULT_LOCALE = "en";
export const LOCALES_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "locales");

/** Reads every `locales/<locale>.json` file. */
export function loadLocales(dir = LOCALES_DIR): Map<string, Messages> {
  const locales = new Map<string, Messages>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    locales.set(basename(file, ".json"), JSON.parse(readFileSync(join(dir, file), "utf8")));
  }
  return locales;
}

/** Flattens nested messages into dotted keys: `{ a: { b: "x" } }` becomes `{ "a.b": "x" }`. */
export function flatten(messages: Messages, prefix = ""): Map<string, string> {
  const flat = new Map<string, string>();
  for (const [key, value] of Object.entries(messages)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === "string") {
      flat.set(path, value);
    } else {
      for (const [k, v] of flatten(value, path)) flat.set(k, v);
    }
  }
  return flat;
}

/** The `{name}` placeholders a message uses, sorted and without duplicates. */
export function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();
}

export function interpolate(message: string, params: Params = {}): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** A translator: looks keys up in `locale`, falling back to English, then to the key itself. */
export function createTranslator(locale: string, locales = loadLocales()) {
  const primary = flatten(locales.get(locale) ?? {});
  const fallback = flatten(locales.get(DEFAULT_LOCALE) ?? {});
  return (key: string, params?: Params): string => {
    const message = primary.get(key) || fallback.get(key);
    return message === undefined ? key : interpolate(message, params);
  };
}
