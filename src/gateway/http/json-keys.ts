// A JSON body that names a top-level key twice is refused (400): JSON.parse keeps the last one,
// another parser (the model API's) may keep the first, so the gateway would check one "model" and
// forward the other. The tokens come from jsonc-parser's scanner (string escapes decoded, so
// "mod\u0065l" is "model"); only the nesting depth is tracked here.
import { createScanner } from 'jsonc-parser';
import { errors } from './errors';

// jsonc-parser's SyntaxKind values (a const enum, which isolatedModules cannot read).
const TOKEN = { openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, comma: 5, string: 10, eof: 17 } as const;

/** The first top-level key that appears twice in `text` (a JSON object), or undefined. */
export function duplicateTopLevelKey(text: string): string | undefined {
  const scanner = createScanner(text, true);
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let token = scanner.scan() as number; token !== TOKEN.eof; token = scanner.scan() as number) {
    switch (token) {
      case TOKEN.openBrace:
        depth += 1;
        expectKey = depth === 1;
        break;
      case TOKEN.openBracket:
        depth += 1;
        break;
      case TOKEN.closeBrace:
      case TOKEN.closeBracket:
        depth -= 1;
        break;
      case TOKEN.comma:
        expectKey = depth === 1;
        break;
      case TOKEN.string:
        if (expectKey) {
          const key = scanner.getTokenValue();
          if (seen.has(key)) return key;
          seen.add(key);
        }
        expectKey = false;
        break;
      default:
        break; // colons, values, whitespace: a key only follows "{" or "," at the top level
    }
  }
  return undefined;
}

/** How many times `char` occurs in `text`. */
function occurrences(text: string, char: string): number {
  let n = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) n += 1;
  return n;
}

/** Keys of every object in `value` (a JSON.parse result), stopping once over `limit`. */
function keysWithin(value: unknown, limit: number): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && n <= limit) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key in v) {
      n += 1;
      const item = (v as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return n;
}

/**
 * Whether `text` (which JSON.parse read as `parsed`) may name a key twice. In JSON every key is
 * followed by a colon, so the colons in the text bound the keys written; when the parsed objects
 * hold as many keys as there are colons, no key was dropped by JSON.parse: no key appears twice at
 * any depth. The tokenizer then has nothing to find (the status route's hot path: one colon, one key).
 */
function mayRepeatKeys(text: string, parsed: unknown): boolean {
  const colons = occurrences(text, ':');
  return keysWithin(parsed, colons) < colons;
}

/**
 * Throws a 400 GatewayHttpError when `text` names a top-level key twice. `parsed`, when given, is
 * JSON.parse(text): it lets a body whose keys are all distinct skip the tokenizer.
 */
export function refuseDuplicateKeys(text: string, what: string, parsed?: unknown): void {
  if (parsed !== undefined && !mayRepeatKeys(text, parsed)) return;
  const twice = duplicateTopLevelKey(text);
  if (twice !== undefined) throw errors.invalidRequest(`${what}: the key "${twice.slice(0, 100)}" appears twice`);
}
