// A task's check command (docs/flows.md#checks): the platform shell on every platform (the
// platform injected), and a real run through /bin/sh on this machine: output made terminal-safe,
// a time limit that stops the command's whole group.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckCommandRun, shellInvocation } from '../../src/agent/runtime/check-command';
import { checkFeedbackPrompt } from '../../src/agent/runtime/segment-work';
import { outcomeLine } from '../../src/agent/runtime/task-terminal-feed';

describe('check command', function () {
  this.timeout(30_000);

  it('runs through the platform shell as typed: /bin/sh -c on Linux and macOS, cmd.exe by its absolute path on Windows', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      assert.deepEqual(shellInvocation('npm test && echo "ok"', { platform, env: {} }), {
        file: '/bin/sh',
        args: ['-c', 'npm test && echo "ok"'],
        windowsVerbatimArguments: false,
      });
    }
    const windows = shellInvocation('npm test && echo "ok"', {
      platform: 'win32',
      env: { ComSpec: 'D:\\Windows\\system32\\cmd.exe', SystemRoot: 'D:\\Windows' },
    });
    assert.deepEqual(windows, {
      file: 'D:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', '"npm test && echo "ok""'],
      windowsVerbatimArguments: true,
    });
    // A relative COMSPEC would be looked up in the task's folder: the system's cmd.exe instead.
    assert.equal(
      shellInvocation('x', { platform: 'win32', env: { COMSPEC: 'cmd.exe', SYSTEMROOT: 'C:\\Windows' } }).file,
      'C:\\Windows\\System32\\cmd.exe',
    );
  });

  it('a real run: exit code and output, colour codes stripped and other controls made visible', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-check-'));
    const shown: string[] = [];
    const command = `node -e "process.stdout.write('\\u001b[31mred\\u001b[0m line\\n\\u0007bell\\n'); process.exit(4)"`;
    const run = await CheckCommandRun.start({ command, cwd: dir, timeoutMs: 20_000, onOutput: (t) => shown.push(t) });
    const result = await run.done;
    assert.deepEqual([result.passed, result.exitCode, result.stopped], [false, 4, null]);
    assert.equal(result.output, 'red line\n\\u{7}bell\n');
    assert.equal(shown.join(''), result.output);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the time limit stops the command and what it started (its process group or tree)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-check-'));
    // The check starts a child that would write late.txt after 2.5 s, and waits for it.
    const late = `setTimeout(() => require('node:fs').writeFileSync('late.txt', 'ran on'), 2500)`;
    fs.writeFileSync(
      path.join(dir, 'parent.js'),
      `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(late)}], { stdio: 'inherit' });\n`,
    );
    const run = await CheckCommandRun.start({ command: 'node parent.js', cwd: dir, timeoutMs: 1_000, onOutput: () => undefined });
    const result = await run.done;
    assert.deepEqual([result.passed, result.exitCode, result.stopped], [false, null, 'timeout']);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(fs.existsSync(path.join(dir, 'late.txt')), false, 'what it started was stopped with it');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the fed-back prompt names the command, how it ended and its output tail', () => {
    const failed = checkFeedbackPrompt('npm test', 1, 2, { exitCode: 1, stopped: null, output: '1 failing\n' });
    assert.match(failed, /round 1 of 2\): it exited with code 1\./);
    assert.match(failed, /Command: npm test\n/);
    assert.match(failed, /```\n1 failing\n```/);
    assert.match(
      checkFeedbackPrompt('npm test', 2, 3, { exitCode: null, stopped: 'timeout', output: '' }),
      /did not finish within its time limit[\s\S]*\(no output\)/,
    );
  });
});

describe("the task terminal's last line for a task with a check", () => {
  it('says ready with the round, or that the check failed after its rounds; without a check, "Task completed."', () => {
    assert.equal(
      outcomeLine({ kind: 'completed', summary: '', exitCode: 0, check: { passed: true, round: 2 } }),
      '\n[off-peak] Ready for review: the check passed (round 2).\n',
    );
    assert.equal(
      outcomeLine({ kind: 'completed', summary: '', exitCode: 0, check: { passed: false, round: 2 } }),
      "\n[off-peak] Check failed after 2 rounds; the task's work is kept for review.\n",
    );
    assert.equal(outcomeLine({ kind: 'completed', summary: '', exitCode: 0 }), '\n[off-peak] Task completed.\n');
  });
});
