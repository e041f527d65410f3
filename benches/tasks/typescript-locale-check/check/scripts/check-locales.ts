// Compares every locale in locales/ with the English source strings and reports:
//   - keys missing from a locale, and keys English doesn't have
//   - messages whose {placeholders} differ from the English ones
//   - empty messages
// Exits 1 when there is any problem. Run in CI: node scripts/check-locales.ts
import { DEFAULT_LOCALE, flatten, loadLocales, placeholders } from "../src/i18n.ts";

const locales = loadLocales();
const source = locales.get(DEFAULT_LOCALE);
if (!source) {
  console.error(`no ${DEFAULT_LOCALE}.json in locales/`);
  process.exit(2);
}
const reference = flatten(source);

let problems = 0;
function report(locale: string, message: string): void {
  problems++;
  console.log(`locales/${locale}.json: ${message}`);
}

for (const [locale, messages] of locales) {
  if (locale === DEFAULT_LOCALE) continue;
  const flat = flatten(messages);
  for (const [key, english] of reference) {
    const translated = flat.get(key);
    if (translated === undefined) {
      report(locale, `missing "${key}" (en: ${JSON.stringify(english)})`);
      continue;
    }
    if (translated.trim() === "") {
      report(locale, `"${key}" is empty (en: ${JSON.stringify(english)})`);
      continue;
    }
    const want = placeholders(english).join(", ");
    const got = placeholders(translated).join(", ");
    if (want !== got) {
      report(locale, `"${key}" has placeholders {${got}} but en has {${want}}: ${JSON.stringify(translated)}`);
    }
  }
  for (const key of flat.keys()) {
    if (!reference.has(key)) report(locale, `"${key}" is not in en.json; remove it`);
  }
}

if (problems > 0) {
  console.log(`\n${problems} problem${problems === 1 ? "" : "s"} found`);
  process.exit(1);
}
console.log(`all ${locales.size - 1} locales match ${DEFAULT_LOCALE}.json (${reference.size} keys)`);
