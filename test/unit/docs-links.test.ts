// The documents a reader follows: every relative link in README.md, docs/*.md and src/**/README.md
// names a file that exists and, with a #anchor into a Markdown file, a heading of that file (GitHub's
// slug of it); and README.md stays short enough to read first (the details live in docs/).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const README_MAX_LINES = 250;

/** The text of a line with fenced code blocks blanked, so a link or heading in a code sample counts as neither. */
function withoutCode(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return '';
    }
    if (opener) {
      fence = opener;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, ''); // inline code spans
  });
}

/** GitHub's anchors of a Markdown text: each heading lowercased, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1'); // a link in a heading reads as its text
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative link targets of a Markdown text: inline links and images, and reference definitions. */
export function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of withoutCode(markdown)) {
    for (const [, target] of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(target!);
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) targets.push(definition[1]!);
  }
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//')); // https:, mailto:, command:
}

/** Every link of `documents` (absolute paths) whose file or heading is missing, as "document: target (why)". */
export function brokenLinks(documents: string[], root: string): string[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, headingAnchors(fs.readFileSync(file, 'utf8')));
    return anchorsOf.get(file)!;
  };
  const broken: string[] = [];
  for (const document of documents) {
    const name = path.relative(root, document).split(path.sep).join('/');
    for (const target of relativeLinks(fs.readFileSync(document, 'utf8'))) {
      const hash = target.indexOf('#');
      const relative = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const file = relative ? path.resolve(path.dirname(document), relative) : document;
      if (!file.startsWith(root + path.sep) && file !== root) broken.push(`${name}: ${target} (outside the repository)`);
      else if (!fs.existsSync(file)) broken.push(`${name}: ${target} (no such file)`);
      else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${name}: ${target} (no such heading)`);
    }
  }
  return broken;
}

/** Every README.md under a folder (node_modules and dot-folders skipped). */
function readmesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.')) found.push(...readmesUnder(full));
    else if (entry.isFile() && entry.name === 'README.md') found.push(full);
  }
  return found;
}

describe('documentation links', () => {
  it('catches a broken file link and a broken anchor in a small fake document, and passes the good ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
    try {
      fs.mkdirSync(path.join(dir, 'docs'));
      fs.writeFileSync(
        path.join(dir, 'README.md'),
        [
          '# Fake project',
          '',
          '## Quick start',
          '## Quick start',
          '## The `npm test` suite (all of it)',
          '',
          'Good: [here](#quick-start), [again](#quick-start-1), [suite](#the-npm-test-suite-all-of-it),',
          '[guide](docs/guide.md), [its part](docs/guide.md#part-two), [a file](docs/guide.md "title"), [web](https://example.com/x.md#y).',
          'Broken: [gone](docs/missing.md) and [nowhere](docs/guide.md#part-three).',
          '',
          '```md',
          '[a sample, not a link](docs/sample.md)',
          '```',
          '`[inline code](docs/also-not.md)`',
        ].join('\n'),
      );
      fs.writeFileSync(path.join(dir, 'docs', 'guide.md'), '# Guide\n\n## Part two\n\nBack to [the start](../README.md#quick-start).\n');
      const documents = [path.join(dir, 'README.md'), path.join(dir, 'docs', 'guide.md')];
      assert.deepEqual(brokenLinks(documents, dir), [
        'README.md: docs/missing.md (no such file)',
        'README.md: docs/guide.md#part-three (no such heading)',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every relative link in README.md, docs/*.md and src/**/README.md resolves to a file and heading that exist', () => {
    const docs = fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join(ROOT, 'docs', f));
    const documents = [path.join(ROOT, 'README.md'), ...docs, ...readmesUnder(path.join(ROOT, 'src'))];
    const links = documents.reduce((n, d) => n + relativeLinks(fs.readFileSync(d, 'utf8')).length, 0);
    assert.ok(links >= 20, `found only ${links} relative links: is the link pattern still right?`);
    assert.deepEqual(brokenLinks(documents, ROOT), []);
  });

  it(`README.md is at most ${README_MAX_LINES} lines: the details live in docs/`, () => {
    const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move the details into docs/`);
  });
});
