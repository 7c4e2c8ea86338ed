// JSON values as Python sees them, for call-based tests (spec section 3: "compare the
// JSON-decoded return value with =="). JSON.parse would round integers beyond 2^53, so this
// parser keeps them as bigint; equality then follows Python's ==: numbers compare by value
// (1 == 1.0, True == 1), lists element-wise, objects by key set and values.

export type PyJson = null | boolean | number | bigint | string | PyJson[] | { [key: string]: PyJson };

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

/** Parses JSON text; integers outside the safe range become bigint. Also accepts Python's NaN/Infinity tokens. */
export function parsePyJson(text: string): PyJson {
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at position ${i}`);
  };
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const value = (depth: number): PyJson => {
    if (depth > 10_000) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: { [key: string]: PyJson } = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key');
        const key = string();
        ws();
        if (text[i++] !== ':') fail("expected ':'");
        Object.defineProperty(obj, key, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return obj;
        } else fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const arr: PyJson[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return arr;
        } else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null], ['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 100_000));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    if (!m[1] && !m[2]) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const string = (): string => {
    const start = i;
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('unterminated string');
      if (c === '"') break;
      if (c === '\\') i++;
      i++;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('unexpected text after the value');
  return v;
}

/** JSON text for a PyJson value (bigints written as plain integers). */
export function stringifyPyJson(v: PyJson): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return JSON.stringify(v);
  }
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stringifyPyJson).join(',')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${stringifyPyJson(x)}`).join(',')}}`;
}

function numeric(v: PyJson): number | bigint | null {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  return null;
}

function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  const [n, big] = typeof a === 'number' ? [a, b as bigint] : [b as number, a];
  if (typeof n === 'bigint') return n === big;
  return Number.isInteger(n) && BigInt(n) === big;
}

/** Python's == on JSON-decoded values. */
export function pyJsonEqual(a: PyJson, b: PyJson): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== null || nb !== null) return na !== null && nb !== null && numbersEqual(na, nb);
  if (a === null || b === null) return a === b;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => pyJsonEqual(x, b[i]!));
  }
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && pyJsonEqual(a[k]!, b[k]!));
}
