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

/** Throws a 400 GatewayHttpError when `text` names a top-level key twice. */
export function refuseDuplicateKeys(text: string, what: string): void {
  const twice = duplicateTopLevelKey(text);
  if (twice !== undefined) throw errors.invalidRequest(`${what}: the key "${twice.slice(0, 100)}" appears twice`);
}
