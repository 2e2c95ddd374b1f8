// docs/flows.md names the files that do each flow: every backticked source file it names exists
// (the same check as architecture.md's, docs/architecture.md#layers; folders are left out: the
// flows name run-time and build folders too), and each user action's
// section names the file that does it as a path (`src/service/task-actions.ts`), not a class.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { missingPaths, sourceTree } from './architecture-doc-paths.test';

const ROOT = path.resolve(__dirname, '../..');
/** The sections of an action or a loop, each done by one file. */
const ACTION_SECTIONS = ['Create', 'Sync', 'Pause, continue, edit', 'Settle', 'Cancel, delete, History', 'Archive', 'Personal mode'];

/** The text of each `## ` section of a Markdown text, by its heading. */
export function sectionsOf(markdown: string): Map<string, string> {
  return new Map(
    markdown
      .split(/^## /m)
      .slice(1)
      .map((part) => [part.slice(0, part.indexOf('\n')), part]),
  );
}

/** The backticked `src/…` files a text names. */
export function sourcePathsIn(text: string): string[] {
  return [...text.matchAll(/`(src\/[\w./-]+\.tsx?)`/g)].map((m) => m[1]!);
}

describe('docs/flows.md names files that exist, and the file of each action (docs/flows.md#create)', () => {
  const markdown = fs.readFileSync(path.join(ROOT, 'docs/flows.md'), 'utf8');

  it('every backticked source file it names exists', () => {
    assert.deepEqual(
      missingPaths(markdown, sourceTree()).filter((name) => !name.endsWith('/')),
      [],
    );
  });

  it('each action section names the file that does it', () => {
    const sections = sectionsOf(markdown);
    for (const heading of ACTION_SECTIONS) {
      const text = sections.get(heading);
      assert.ok(text !== undefined, `no "## ${heading}" section`);
      assert.ok(sourcePathsIn(text).length > 0, `"## ${heading}" names no src/ file in backticks`);
    }
  });

  it('the section reader finds a section and its files (a fake document)', () => {
    const sections = sectionsOf(
      '# Doc\n\n## Create\n\n`create` in `src/service/task-actions.ts`.\n\n## Sync\n\n`TaskService`, sync part.\n',
    );
    assert.deepEqual([...sections.keys()], ['Create', 'Sync']);
    assert.deepEqual(sourcePathsIn(sections.get('Create')!), ['src/service/task-actions.ts']);
    assert.deepEqual(sourcePathsIn(sections.get('Sync')!), []);
  });
});
