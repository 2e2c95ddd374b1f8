// The rule `npm run package` applies to the .vsix file list (scripts/vsix/contents.ts).
import assert from 'node:assert/strict';
import {
  BUNDLE_BUDGET_BYTES,
  checkVsixEntries,
  FIRST_PAINT_BUDGET_BYTES,
  FIRST_PAINT_BUNDLES,
  REQUIRED_VSIX_FILES,
  type VsixEntry,
} from '../../scripts/vsix/contents';

const entry = (path: string): VsixEntry => ({ path, bytes: 1 });
const shipped: VsixEntry[] = [
  ...REQUIRED_VSIX_FILES.map(entry),
  entry('[Content_Types].xml'),
  entry('extension/media/icon.svg'),
  entry('extension/media/panel.css'),
  entry('extension/media/walkthrough/mode.md'),
];

describe('.vsix content rule', () => {
  it('accepts the bundles, the wasm, media and the manifest documents', () => {
    assert.deepEqual(checkVsixEntries(shipped), []);
  });

  it('names each file that must not ship, with why', () => {
    const problems = checkVsixEntries([
      ...shipped,
      entry('extension/src/extension.ts'),
      entry('extension/test/vscode/index.ts'),
      entry('extension/dist/test/vscode/index.js'),
      entry('extension/dist/extension.js.map'),
      entry('extension/dist/webview/main.js.map'),
      entry('extension/node_modules/zod/index.js'),
      entry('extension/.tools/node24/bin/node'),
      entry('extension/esbuild.mjs'),
    ]);
    assert.deepEqual(problems, [
      'must not ship: extension/src/extension.ts (TypeScript source (the bundles hold the code))',
      'must not ship: extension/test/vscode/index.ts (tests)',
      'must not ship: extension/dist/test/vscode/index.js (tests)',
      'must not ship: extension/dist/extension.js.map (a source map (kept in dist/, not shipped))',
      'must not ship: extension/dist/webview/main.js.map (a source map (kept in dist/, not shipped))',
      'must not ship: extension/node_modules/zod/index.js (node_modules (every dependency is bundled))',
      'must not ship: extension/.tools/node24/bin/node (the local VS Code / Node 24 tool cache)',
      'must not ship: extension/esbuild.mjs (not something the installed extension uses)',
    ]);
  });

  it('reports a required file that is missing', () => {
    const problems = checkVsixEntries(shipped.filter((e) => e.path !== 'extension/dist/sql-wasm.wasm'));
    assert.deepEqual(problems, ['missing: extension/dist/sql-wasm.wasm']);
  });

  it('reports a bundle over its size budget, and accepts one exactly at it', () => {
    const extensionJs = 'extension/dist/extension.js';
    const budget = BUNDLE_BUDGET_BYTES[extensionJs];
    const withSize = (bytes: number) => shipped.map((e) => (e.path === extensionJs ? { ...e, bytes } : e));
    assert.deepEqual(checkVsixEntries(withSize(budget)), []);
    assert.deepEqual(checkVsixEntries(withSize(budget + 1)), [
      `over budget: ${extensionJs} is ${budget + 1} bytes, the budget is ${budget}`,
    ]);
  });

  it("item 8: reports the first paint's bundles over their budget together, though each is within its own", () => {
    const [extensionJs, engineJs] = FIRST_PAINT_BUNDLES;
    const sized = (ext: number, engine: number) =>
      shipped.map((e) => (e.path === extensionJs ? { ...e, bytes: ext } : e.path === engineJs ? { ...e, bytes: engine } : e));
    const ext = BUNDLE_BUDGET_BYTES[extensionJs];
    const engine = FIRST_PAINT_BUDGET_BYTES - ext;
    assert.ok(engine <= BUNDLE_BUDGET_BYTES[engineJs], 'engine.js alone stays within its budget');
    assert.deepEqual(checkVsixEntries(sized(ext, engine)), []);
    assert.deepEqual(checkVsixEntries(sized(ext, engine + 1)), [
      `over budget: the first paint's bundles (extension.js, engine.js) are ${FIRST_PAINT_BUDGET_BYTES + 1} bytes, the budget is ${FIRST_PAINT_BUDGET_BYTES}`,
    ]);
  });
});
