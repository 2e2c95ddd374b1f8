// scripts/setup-codex.ts finds the native Codex binary where the npm package's own launcher
// (bin/codex.js) looks for it: vendor/<target triple>/bin/ of the platform package.
import assert from 'node:assert/strict';
import { codexTargetTriple } from '../../scripts/setup-codex';

describe('setup-codex: the platform binary of @openai/codex', () => {
  it('names the target triple of each platform the package ships, and none for others', () => {
    assert.equal(codexTargetTriple('linux', 'x64'), 'x86_64-unknown-linux-musl');
    assert.equal(codexTargetTriple('linux', 'arm64'), 'aarch64-unknown-linux-musl');
    assert.equal(codexTargetTriple('darwin', 'x64'), 'x86_64-apple-darwin');
    assert.equal(codexTargetTriple('darwin', 'arm64'), 'aarch64-apple-darwin');
    assert.equal(codexTargetTriple('win32', 'x64'), 'x86_64-pc-windows-msvc');
    assert.equal(codexTargetTriple('win32', 'arm64'), 'aarch64-pc-windows-msvc');
    assert.equal(codexTargetTriple('linux', 'ia32'), null);
    assert.equal(codexTargetTriple('freebsd', 'x64'), null);
  });
});
