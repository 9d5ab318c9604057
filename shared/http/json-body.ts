import { InvalidBodyError } from './errors';

/**
 * JSON request bodies held to I-JSON (RFC 7493), the profile every strict client can read back: no
 * repeated member names, no unpaired surrogates, numbers read for their exact value. Plain JSON.parse
 * silently accepts all three, so what we store could differ from what a validator in front approved.
 */

/**
 * How deep a body may nest. A pet is one level; anything deep is a mistake or an attack, and the
 * reviver JSON.parse runs recursively would overflow the stack at a few thousand levels.
 */
export const MAX_JSON_DEPTH = 32;

/** Parses a JSON text under the rules above; 400 invalid_body, naming the problem, otherwise. */
export function parseJsonBody(text: string): unknown {
  const { depth, duplicate, plain } = scanStructure(text);
  if (depth > MAX_JSON_DEPTH) throw new InvalidBodyError(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  let unpaired: string | undefined;
  let value: unknown;
  try {
    // A plain text (no \u escape, only short integers) holds no unpaired surrogate and no number
    // JSON.parse would round, so the costly reviver could change nothing.
    value =
      plain && text.isWellFormed()
        ? JSON.parse(text)
        : JSON.parse(text, function reviver(this: unknown, key: string, raw: unknown, context?: { source?: string }) {
            if (unpaired === undefined && (!key.isWellFormed() || (typeof raw === 'string' && !raw.isWellFormed()))) unpaired = key;
            return typeof raw === 'number' ? exactNumber(raw, context?.source) : raw;
          });
  } catch {
    throw new InvalidBodyError('The request body is not valid JSON.');
  }
  if (duplicate !== undefined) throw new InvalidBodyError(`The request body repeats the member ${JSON.stringify(duplicate)}.`);
  if (unpaired !== undefined) {
    throw new InvalidBodyError(
      `The request body has a string with an unpaired UTF-16 surrogate${unpaired ? ` (in ${JSON.stringify(unpaired.toWellFormed())})` : ''}; ` +
        'strings must be valid Unicode (I-JSON, RFC 7493).',
    );
  }
  return value;
}

/**
 * A JSON number read for its exact value: `1.0` and `1e3` are the integers 1 and 1000, as JSON Schema
 * counts them. An integral value a double cannot hold exactly (`9007199254740993`, `1e400`) becomes
 * NaN, so integer fields reject it rather than store a neighbour; a written fraction stays a
 * fraction (it fails `integer()`), even one JSON.parse rounds to an integer (`1.0000000000000001`).
 */
function exactNumber(value: number, source: string | undefined): number {
  if (source === undefined || !Number.isFinite(value)) return Number.NaN;
  // The common case, cheaply: an integer literal whose value is a safe integer was read exactly
  // (parsing only rounds beyond 2^53, where no value is a safe integer).
  if (Number.isSafeInteger(value) && PLAIN_INTEGER.test(source)) return value;
  const exact = exactInteger(source);
  if (exact === undefined) return Number.isInteger(value) ? Number.NaN : value;
  return Number.isSafeInteger(value) && BigInt(value) === exact ? value : Number.NaN;
}

const PLAIN_INTEGER = /^-?\d+$/;

/** The integer a JSON number literal denotes exactly, or undefined when it has a fractional part (or a huge exponent). */
function exactInteger(source: string): bigint | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(source);
  if (!match) return undefined;
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > 400) return undefined;
  // The digits with the decimal point moved `exponent` places to the right.
  let digits = whole! + fraction;
  let point = whole!.length + exponent;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  if (/[1-9]/.test(digits.slice(point))) return undefined;
  const magnitude = BigInt(digits.slice(0, point) || '0');
  return sign === '-' ? -magnitude : magnitude;
}

/**
 * A string literal (to its closing quote, or to the end of an unterminated one; a backslash always
 * escapes the next character), one structural character, or a number. Literals, colons and
 * whitespace between them are skipped by the search itself, which is what makes the scan cheap.
 */
const STRUCTURE_TOKEN = /"(?:[^"\\]|\\[\s\S])*"?|[{}[\],]|-?\d[\d.eE+-]*/g;

/** A number JSON.parse reads exactly as written: an integer of at most 15 digits. */
const SHORT_INTEGER = /^-?\d{1,15}$/;

/**
 * One pass over the text, without building anything: the deepest nesting, the first member name
 * repeated within one object (as a dotted path), and whether the text is plain: no string with a
 * \u escape, no number but short integers. Meaningful only for valid JSON; the caller reports
 * duplicates after JSON.parse has accepted the text.
 */
function scanStructure(text: string): { depth: number; duplicate?: string; plain: boolean } {
  const frames: Array<{ keys: Set<string> | undefined; expectingKey: boolean; path: string }> = [];
  let maxDepth = 0;
  let duplicate: string | undefined;
  let lastKey = '';
  let plain = true;
  for (const [token] of text.matchAll(STRUCTURE_TOKEN)) {
    const char = token[0];
    if (char === '"') {
      if (plain && token.includes('\\u')) plain = false;
      const frame = frames.at(-1);
      if (frame?.keys && frame.expectingKey) {
        const key = token.includes('\\') ? decodeString(token) : token.slice(1, -1);
        const path = frame.path ? `${frame.path}.${key}` : key;
        if (frame.keys.has(key)) duplicate ??= path;
        frame.keys.add(key);
        frame.expectingKey = false;
        lastKey = path;
      }
    } else if (char === '{' || char === '[') {
      const parent = frames.at(-1);
      const path = parent?.keys ? lastKey : parent ? `${parent.path}[]` : '';
      frames.push({ keys: char === '{' ? new Set() : undefined, expectingKey: char === '{', path });
      maxDepth = Math.max(maxDepth, frames.length);
      // Deep enough to refuse: no need to read the rest.
      if (maxDepth > MAX_JSON_DEPTH) break;
    } else if (char === '}' || char === ']') {
      frames.pop();
    } else if (char === ',') {
      const frame = frames.at(-1);
      if (frame?.keys) frame.expectingKey = true;
    } else if (plain && !SHORT_INTEGER.test(token)) {
      plain = false;
    }
  }
  return { depth: maxDepth, plain, ...(duplicate === undefined ? {} : { duplicate }) };
}

function decodeString(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal;
  }
}
