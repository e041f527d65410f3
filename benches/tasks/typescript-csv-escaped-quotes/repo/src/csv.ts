export interface ParseOptions {
  /** Field separator, a single character (default `,`). */
  delimiter?: string;
  /** Treat the first row as a header and return one object per row, keyed by it. */
  header?: boolean;
  /** Drop lines that are empty or only whitespace (default true). */
  skipEmptyLines?: boolean;
}

export type Row = string[];
export type Record = { [column: string]: string };

export class CsvError extends Error {
  line: number;

  constructor(message: string, line: number) {
    super(`line ${line}: ${message}`);
    this.name = "CsvError";
    this.line = line;
  }
}

/**
 * Splits one CSV line into its fields.
 *
 * Fields may be quoted with `"`; inside a quoted field the delimiter is literal
 * and a doubled quote (`""`) stands for one `"`.
 */
export function parseCsvLine(line: string, delimiter = ",", lineNumber = 1): Row {
  if (delimiter.length !== 1 || delimiter === '"') {
    throw new CsvError(`invalid delimiter ${JSON.stringify(delimiter)}`, lineNumber);
  }
  const fields: Row = [];
  let field = "";
  let inQuotes = false;

  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (inQuotes) {
      if (ch === '"') {
        inQuotes = false;
      } else {
        field += ch;
      }
    } else if (ch === '"') {
      inQuotes = true;
    } else if (ch === delimiter) {
      fields.push(field);
      field = "";
    } else {
      field += ch;
    }
  }

  if (inQuotes) {
    throw new CsvError("unterminated quoted field", lineNumber);
  }
  fields.push(field);
  return fields;
}

export function parseCsv(text: string, options: ParseOptions & { header: true }): Record[];
export function parseCsv(text: string, options?: ParseOptions): Row[];
export function parseCsv(text: string, options: ParseOptions = {}): Row[] | Record[] {
  const delimiter = options.delimiter ?? ",";
  const skipEmpty = options.skipEmptyLines ?? true;

  const rows: Row[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (skipEmpty && line.trim() === "") return;
    if (!skipEmpty && line === "" && index === lines.length - 1) return; // trailing newline
    rows.push(parseCsvLine(line, delimiter, index + 1));
  });

  if (!options.header) return rows;
  if (rows.length === 0) return [];

  const [head, ...body] = rows;
  return body.map((row, i) => {
    if (row.length !== head.length) {
      throw new CsvError(`expected ${head.length} fields, got ${row.length}`, i + 2);
    }
    const record: Record = {};
    head.forEach((name, col) => {
      record[name] = row[col];
    });
    return record;
  });
}
