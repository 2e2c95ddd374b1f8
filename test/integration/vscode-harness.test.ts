// The harness behind `npm run test:vscode` must fail when a test inside VS Code fails. This runs
// the real harness (real code-server, real Chromium, real extension host) against the fixture
// test/fixtures/vscode-failing-suite, which has one passing and one deliberately failing test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function runHarness(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'vscode-test.ts'), ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('VS Code test harness (scripts/vscode-test.ts)', function () {
  // One code-server run takes ~25 s; on a fresh machine the first run also installs code-server.
  this.timeout(20 * 60_000);

  it('exits non-zero and reports "1 passed, 1 failed" when one test inside VS Code fails', async () => {
    const spec = path.join(repoRoot, 'test', 'fixtures', 'vscode-failing-suite', 'failing.test.ts');
    const run = await runHarness(['--spec', spec]);
    const output = `${run.stdout}\n${run.stderr}`;
    assert.notEqual(run.code, 0, `the harness passed a failing suite:\n${output}`);
    assert.match(run.stdout, /^vscode: 1 passed, 1 failed$/m, output);
    // The failure is named, so a reader of the CI log can see which test failed.
    assert.match(output, /fails on purpose: 1 \+ 1 is not 3/);
  });

  it("stops with code-server's reason when --vsix is not a package it can install", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-harness-vsix-'));
    try {
      const notAPackage = path.join(dir, 'broken.vsix');
      writeFileSync(notAPackage, 'not a zip file');
      const run = await runHarness(['--no-build', '--vsix', notAPackage]);
      const output = `${run.stdout}\n${run.stderr}`;
      assert.notEqual(run.code, 0, output);
      assert.match(run.stdout, /^vscode: the suite did not run$/m, output);
      assert.match(run.stderr, /--install-extension .*broken\.vsix exited with/, output);
      assert.match(run.stderr, /not a zip file/i, output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
