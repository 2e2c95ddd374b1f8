// What the Windows lane leaves out (.ci/windows/not-under-wine.txt, docs/platforms.md#the-windows-lane):
// each line names tests that exist, says why Wine cannot run them, and names a twin test that
// stands in (the platform's behaviour injected, or what Wine can run), so nothing is left out unexamined.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const LIST = '.ci/windows/not-under-wine.txt';

function testSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.ts')) files.push(fs.readFileSync(file, 'utf8'));
    }
  };
  walk('test');
  return files;
}

describe('the Windows lane: what it leaves out', () => {
  const lines = fs
    .readFileSync(LIST, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() && !line.startsWith('#'));

  it('platform: every exclusion names tests that exist, says why, and names a twin test that exists', () => {
    assert.ok(lines.length > 0);
    const sources = testSources();
    const found = (text: string) => sources.some((source) => source.includes(text));
    for (const line of lines) {
      const [pattern, why, twin, ...rest] = line.split(' | ').map((field) => field.trim());
      assert.equal(rest.length, 0, `one "<tests> | <why> | twin: <test>" a line: ${line}`);
      assert.ok(pattern && why, `a pattern and a reason: ${line}`);
      assert.match(twin ?? '', /^twin: ./, `a twin named: ${line}`);
      assert.ok(found(pattern), `no test matches the exclusion "${pattern}"`);
      assert.ok(found(twin.slice('twin: '.length)), `no test is the twin "${twin}"`);
    }
  });
});
