// The local lint rule that keeps comments and test titles pointing at documents in this repository.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { RuleTester } from 'eslint';
import { findOutsideRefs, markdownAnchors, noOutsideDocRefs } from '../../eslint-rules/no-outside-doc-refs.mjs';

const root = path.resolve(__dirname, '../..');
const filename = path.join(root, 'src/core/example.ts');
const ruleTester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });

describe('lint rule no-outside-doc-refs', () => {
  ruleTester.run('no-outside-doc-refs', noOutsideDocRefs, {
    valid: [
      {
        name: 'a link to a heading of docs/flows.md',
        filename,
        code: '// Cancel writes the terminal state first (docs/flows.md#cancel-delete-history).\nconst a = 1;',
      },
      { name: 'relative links to READMEs that exist', filename, code: '/* see src/store/README.md and ../../README.md */ const b = 2;' },
      { name: 'a heading of the top-level README, named bare', filename, code: '// see README.md#quick-start\nconst f = 6;' },
      { name: 'a random seed', filename, code: '// a seeded PRNG, so a failing run can be replayed from its seed\nconst c = 3;' },
      { name: 'a test title that says the behaviour', filename, code: "it('pause keeps the ticket in place', () => {});" },
      {
        name: 'a plain string that is neither a comment nor a test title',
        filename,
        code: "const title = 'seed 07 branch 03'; // a string that is not a comment nor a test title",
      },
    ],
    invalid: [
      {
        name: 'section numbers of an outside document in a comment',
        filename,
        code: '// The scheduler (seed 07 branches 05, 12)\nconst a = 1;',
        errors: 2,
      },
      { name: 'a section of an outside design document', filename, code: '/** The gateway API (DESIGN §6). */ const b = 2;', errors: 1 },
      { name: 'a path outside the repository', filename, code: '// measured in ../shared/reference\nconst c = 3;', errors: 1 },
      { name: 'a docs/ file that does not exist', filename, code: '// see docs/no-such-file.md\nconst d = 4;', errors: 1 },
      {
        name: 'a heading that docs/flows.md does not have',
        filename,
        code: '// see docs/flows.md#no-such-heading\nconst e = 5;',
        errors: 1,
      },
      { name: 'a heading the top-level README does not have', filename, code: '// see README.md#platforms\nconst g = 7;', errors: 1 },
      { name: 'an it() title citing a section number', filename, code: "it('branch 03: ready wakes the scheduler', () => {});", errors: 1 },
      {
        name: 'a describe() template title citing a section number',
        filename,
        code: 'describe(`service: seed 07 flows`, () => {});',
        errors: 1,
      },
    ],
  });

  it('names what is wrong: the citation, or the missing file or heading', () => {
    assert.match(findOutsideRefs('as DESIGN.md says', filename, root)[0], /"DESIGN\.md" cites DESIGN\.md/);
    assert.match(findOutsideRefs('see docs/missing.md', filename, root)[0], /"docs\/missing\.md" is not a file in this repository/);
    assert.match(findOutsideRefs('see docs/flows.md#nowhere', filename, root)[0], /has no heading with that anchor/);
    assert.deepEqual(findOutsideRefs('see docs/flows.md#task-states and docs/architecture.md#layers', filename, root), []);
  });

  it('every relative link in the Markdown documents (READMEs, CHANGELOG, docs/) names a file and heading that exist', () => {
    const documents = [
      'README.md',
      'CHANGELOG.md',
      'src/store/README.md',
      ...fs
        .readdirSync(path.join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const broken: string[] = [];
    let links = 0;
    for (const document of documents) {
      const file = path.join(root, document);
      for (const [, target] of fs.readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:, command:
        links += 1;
        const [relative, anchor] = target.split('#');
        const resolved = relative ? path.resolve(path.dirname(file), relative) : file;
        if (!fs.existsSync(resolved)) broken.push(`${document}: ${target} (no such file)`);
        else if (anchor && resolved.endsWith('.md') && !markdownAnchors(resolved).has(anchor))
          broken.push(`${document}: ${target} (no such heading)`);
      }
    }
    assert.ok(links >= 5, `found only ${links} relative links: is the link pattern still right?`);
    assert.deepEqual(broken, []);
  });
});
