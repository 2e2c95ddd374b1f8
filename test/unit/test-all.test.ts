// `npm test` (scripts/test-all.ts) runs the suites README.md "Running the tests" lists, in its
// order, none dropped, and each of them is a script of package.json.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { batchTours, failureTails, planToRun, STATIC_GROUP, STREAMS, suiteTimeLine, TEST_GROUPS } from '../../scripts/test-all';

const ROOT = path.resolve(__dirname, '../..');

describe('npm test runs every suite of README.md#running-the-tests', () => {
  it('the README row of npm test names the suites test-all.ts runs, in its order', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `npm test` |'));
    assert.ok(row, 'README has the npm test row');
    const listed = row
      .split('|')[2]!
      .split(', in that order')[0]!
      .match(/`([^`]+)`/g)!
      .map((name) => name.slice(1, -1));
    assert.deepEqual(TEST_GROUPS.flat(), listed);
  });

  it('every suite is a script of package.json, and npm test is test-all.ts', () => {
    const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const script of TEST_GROUPS.flat()) assert.ok(scripts[script], `package.json has no script ${script}`);
    assert.equal(scripts.test, 'node --import tsx scripts/test-all.ts');
  });

  it('named suites run where the plan has them (the static group first, then each in its stream); an unknown name is refused', () => {
    assert.deepEqual(planToRun(['test:e2e', 'lint', 'test:ui:panel', 'test:mysql']), {
      first: ['lint'],
      streams: [[['test:ui:panel']], [['test:mysql'], ['test:e2e']]],
    });
    assert.deepEqual(planToRun(['test:e2e']), { first: [], streams: [[['test:e2e']]] });
    assert.throws(() => planToRun(['test:everything']), /not a suite of npm test: test:everything/);
  });

  it('everything runs once: the static group, then the two streams; test:vsix ends the first stream', () => {
    const plan = planToRun([]);
    assert.deepEqual(plan.first, [...STATIC_GROUP]);
    assert.equal(plan.streams.length, 2);
    const all = [plan.first, ...plan.streams.flat()].flat();
    assert.deepEqual([...all].sort(), [...TEST_GROUPS.flat()].sort());
    assert.equal(new Set(all).size, all.length, 'no suite twice');
    assert.deepEqual(STREAMS[0]!.at(-1), ['test:vsix']);
  });
});

describe('item 9: the workbench stream batches its panel tours', () => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('item 9: consecutive panel tours run as one batch (scripts/ui-tours.ts); other suites stay on their own', () => {
    const units = batchTours(STREAMS[0]!, scripts);
    const tours = STREAMS[0]!.flat().filter((script) => /scripts\/panel-tour[\w-]*\.ts --no-build$/.test(scripts[script] ?? ''));
    assert.ok(tours.length >= 8, `the panel tours of the workbench stream: ${tours.join(', ')}`);
    assert.deepEqual(
      units.filter((unit) => 'tours' in unit),
      [{ tours }],
      'one batch of every panel tour, in the stream order',
    );
    assert.deepEqual(units.filter((unit) => !('tours' in unit)).flat(), ['test:unit', 'test:ui', 'test:ui:personal', 'test:vsix']);
  });

  it('item 9: each tour of a batch keeps its own line in the table of times', () => {
    assert.equal(suiteTimeLine({ script: 'test:ui:panel', code: 0, ms: 211345, busy: 0.91 }), '[suite-time] test:ui:panel ok 211345 0.910');
    assert.equal(suiteTimeLine({ script: 'test:ui:park', code: 1, ms: 5, busy: undefined }), '[suite-time] test:ui:park FAILED 5 -');
  });
});

describe('a failed suite says why next to the table of times', () => {
  it('prints the last lines of each failed suite only, named, and nothing when all passed', () => {
    const long = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const text = failureTails([
      { script: 'test:ui', code: 1, tail: long },
      { script: 'test:unit', code: 0, tail: 'passing output' },
    ]);
    assert.match(text, /the end of test:ui's output/);
    assert.ok(text.includes('line 99') && text.includes('line 40') && !text.includes('line 39\n'), text);
    assert.ok(!text.includes('passing output'));
    assert.equal(failureTails([{ script: 'test:unit', code: 0, tail: 'x' }]), '');
  });
});
