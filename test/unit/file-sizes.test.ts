// docs/architecture.md#file-sizes: a source file over 450 lines is named in that table with why it
// stays whole, and the table names no file that is not; a file Prettier leaves alone
// (.prettierignore) is one being split, so the table names it too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const LIMIT = 450;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) ? [rel] : [];
  });
}

function lineCount(file: string): number {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The files the "File sizes" table names, with their reasons. */
export function namedLongFiles(markdown: string): Map<string, string> {
  const start = markdown.indexOf('## File sizes');
  assert.ok(start >= 0, 'docs/architecture.md has a "File sizes" section');
  const section = markdown.slice(start).split(/\n## /)[0]!;
  const named = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)) named.set(match[1]!, match[2]!.trim());
  return named;
}

/** The files over `limit` lines that the table does not name, and the named ones that are not over it. */
export function sizeDrift(lines: ReadonlyMap<string, number>, named: ReadonlyMap<string, string>, limit: number) {
  const unnamed = [...lines].filter(([file, count]) => count > limit && !named.has(file)).map(([file]) => file);
  const stale = [...named.keys()].filter((file) => (lines.get(file) ?? 0) <= limit);
  return { unnamed, stale };
}

describe('file sizes: a file over 450 lines says why (docs/architecture.md#file-sizes)', () => {
  const markdown = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const named = namedLongFiles(markdown);
  const lines = new Map([...sourceFiles('src'), ...sourceFiles('webview')].map((file) => [file, lineCount(file)]));
  const ignored = fs
    .readFileSync(path.join(ROOT, '.prettierignore'), 'utf8')
    .split('\n')
    .filter((line) => /^(src|webview)\//.test(line));

  it('every file over 450 lines is in the table with a reason, and the table names none that is not', () => {
    // A file not yet formatted may be shorter than it will be: it stays named until it is split.
    const { unnamed, stale } = sizeDrift(lines, named, LIMIT);
    assert.deepEqual({ unnamed, stale: stale.filter((file) => !ignored.includes(file)) }, { unnamed: [], stale: [] });
    for (const [file, why] of named) assert.ok(why.length > 10, `${file}: the reason is empty`);
  });

  it('every source file Prettier is told to leave alone is one the table names', () => {
    assert.deepEqual(
      ignored.filter((file) => !named.has(file)),
      [],
    );
  });

  it('the check finds an unnamed long file and a named short one', () => {
    const drift = sizeDrift(
      new Map([
        ['a.ts', 451],
        ['b.ts', 450],
        ['c.ts', 600],
      ]),
      new Map([
        ['b.ts', 'a reason'],
        ['c.ts', 'a reason'],
      ]),
      LIMIT,
    );
    assert.deepEqual(drift, { unnamed: ['a.ts'], stale: ['b.ts'] });
  });
});
