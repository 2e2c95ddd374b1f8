// dist/THIRD-PARTY-NOTICES.txt (scripts/third-party-notices.mjs): the packages of the shipped
// bundles are found from esbuild's inputs, nested ones by their own folder, and each notice carries
// the package's license text, or says plainly that it ships none.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { noticeOf, packageDirsOfInputs, thirdPartyNotices } from '../../scripts/third-party-notices.mjs';

describe('third-party notices of the .vsix', () => {
  it("finds each package once from bundle inputs, a nested or scoped one by its own folder, and skips the project's own files", () => {
    const dirs = packageDirsOfInputs(
      [
        'node_modules/preact/dist/preact.module.js',
        'node_modules/preact/hooks/dist/hooks.module.js',
        'node_modules/@vscode-elements/elements/dist/main.js',
        'node_modules/a/node_modules/b/index.js',
        'src/extension.ts',
      ],
      '/repo',
    );
    assert.deepEqual(dirs, [
      '/repo/node_modules/preact',
      '/repo/node_modules/@vscode-elements/elements',
      '/repo/node_modules/a/node_modules/b',
    ]);
  });

  it('a notice carries the license text; a package without one says so with its package.json license and author; the file lists each package once, by name', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-notices-'));
    try {
      const withText = path.join(root, 'zeta');
      const without = path.join(root, 'alpha');
      fs.mkdirSync(withText);
      fs.mkdirSync(without);
      fs.writeFileSync(
        path.join(withText, 'package.json'),
        JSON.stringify({ name: 'zeta', version: '1.2.3', license: 'MIT', homepage: 'https://zeta.example' }),
      );
      fs.writeFileSync(path.join(withText, 'LICENSE.md'), 'Copyright (c) Zeta\n\nPermission is hereby granted...\n');
      fs.writeFileSync(
        path.join(without, 'package.json'),
        JSON.stringify({ name: 'alpha', version: '0.1.0', license: 'MIT', author: 'Alpha Co <a@example.invalid>' }),
      );
      assert.match(noticeOf(withText).text, /^zeta 1\.2\.3 \(MIT\)\nhttps:\/\/zeta\.example\n\nCopyright \(c\) Zeta/);
      assert.match(noticeOf(without).text, /ships no license text\. Its package\.json says: license MIT, author Alpha Co/);
      const file = thirdPartyNotices([withText, without, withText]);
      assert.match(file, /these 2 packages/);
      assert.ok(file.indexOf('alpha 0.1.0') < file.indexOf('zeta 1.2.3'), 'sorted by name');
      assert.equal(file.split('zeta 1.2.3').length, 2, 'each package once');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
