// A parser for Python literals (what `ast.literal_eval` accepts for data): numbers, strings in single
// or double quotes, True/False/None, lists, tuples, dicts. APPS-style call-based tests write their
// arguments this way ("['aabb', 'abcd']", "(1, 2)"). Values come out as PyJson (tuples become lists,
// integers beyond 2^53 become bigint) so the code judge can send them to the program as JSON.
import type { PyJson } from '../../verify/code/index.ts';

export class PythonLiteralError extends Error {
  override name = 'PythonLiteralError';
}

export function parsePythonLiteral(text: string): PyJson {
  let i = 0;
  const fail = (what: string): never => {
    throw new PythonLiteralError(`${what} at position ${i} of ${JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text)}`);
  };
  const ws = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    // Optional prefix r/b/u is not supported beyond plain strings: data literals rarely use it.
    const quote = text[i]!;
    const triple = text.startsWith(quote.repeat(3), i);
    i += triple ? 3 : 1;
    let out = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      if (triple ? text.startsWith(quote.repeat(3), i) : text[i] === quote) {
        i += triple ? 3 : 1;
        return out;
      }
      const c = text[i]!;
      if (c === '\\') {
        const n = text[i + 1];
        const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '' };
        if (n !== undefined && n in simple) {
          out += simple[n];
          i += 2;
        } else if (n === 'x' || n === 'u' || n === 'U') {
          const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
          const hex = text.slice(i + 2, i + 2 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail('bad escape');
          out += String.fromCodePoint(parseInt(hex, 16));
          i += 2 + len;
        } else {
          out += c;
          i++;
        }
      } else {
        out += c;
        i++;
      }
    }
  };
  const num = (): number | bigint => {
    const m = /^[-+]?(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?|\d[\d_]*\.)/.exec(text.slice(i));
    if (!m) return fail('expected a number');
    i += m[0].length;
    const t = m[0].replace(/_/g, '');
    if (/^[-+]?\d+$/.test(t)) {
      const big = BigInt(t);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    if (/^[-+]?0[xX]/.test(t)) return Number(t.startsWith('-') ? -Number(t.slice(1)) : Number(t.replace('+', '')));
    return Number(t);
  };
  const seq = (close: string, depth: number): PyJson[] => {
    const items: PyJson[] = [];
    ws();
    while (text[i] !== close) {
      items.push(value(depth + 1));
      ws();
      if (text[i] === ',') {
        i++;
        ws();
      } else if (text[i] !== close) fail(`expected ',' or '${close}'`);
    }
    i++;
    return items;
  };
  const value = (depth: number): PyJson => {
    if (depth > 1000) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === undefined) return fail('unexpected end');
    if (c === '[') {
      i++;
      return seq(']', depth);
    }
    if (c === '(') {
      i++;
      return seq(')', depth);
    }
    if (c === '{') {
      i++;
      const obj: { [k: string]: PyJson } = {};
      ws();
      while (text[i] !== '}') {
        const key = value(depth + 1);
        ws();
        if (text[i++] !== ':') fail("expected ':'");
        Object.defineProperty(obj, typeof key === 'string' ? key : JSON.stringify(typeof key === 'bigint' ? key.toString() : key), {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail("expected ',' or '}'");
        ws();
      }
      i++;
      return obj;
    }
    if (c === "'" || c === '"') return str();
    for (const [word, v] of [['True', true], ['False', false], ['None', null]] as const) {
      if (text.startsWith(word, i) && !/\w/.test(text[i + word.length] ?? '')) {
        i += word.length;
        return v;
      }
    }
    if (text.startsWith('float("inf")', i) || text.startsWith("float('inf')", i)) {
      i += 12;
      return Infinity;
    }
    return num();
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('unexpected text after the value');
  return v;
}

/** `{ value }` when the text is a Python literal, else null. */
export function tryParsePythonLiteral(text: string): { value: PyJson } | null {
  try {
    return { value: parsePythonLiteral(text) };
  } catch (e) {
    if (e instanceof PythonLiteralError) return null;
    throw e;
  }
}
