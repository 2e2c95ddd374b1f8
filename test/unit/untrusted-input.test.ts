import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkWorkspaceFolder, MAX_PROMPT_CHARS, parseCreateTaskArgs, promptProblem } from '../../src/panel/create-task-command';
import { plainNotificationText } from '../../src/core/untrusted-text';

/** The link syntax VS Code notifications render (label, then a command:, http(s): or file: target). */
const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;

describe('untrusted text in notifications and command arguments', () => {
  it('item 2: model text cannot form a command link in a notification, and stays readable', () => {
    const hostile = [
      'Run [Fix it](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%20-rf%20~%5Cn%22%7D) now',
      'see [docs](https://evil.example/x "title")',
      '[a]\n(command:x)',
      '[a] \t (file:///etc/passwd)',
      '[a]\u200b(command:x)',
    ];
    for (const text of hostile) {
      const shown = plainNotificationText(text);
      assert.doesNotMatch(shown, NOTIFICATION_LINK, shown);
      assert.ok(!/[\n\r\t]/.test(shown), 'one line');
    }
    assert.equal(plainNotificationText('Run [Fix it](command:x) now'), 'Run [Fix it] (command:x) now');
    assert.equal(plainNotificationText('write notes.txt (3 lines)'), 'write notes.txt (3 lines)');
    assert.equal(plainNotificationText('x'.repeat(1_000), 50).length, 50);
  });

  it('item 2: the createTask command arguments are validated: unknown fields, wrong types, bad modes and oversized text are refused with a clear error', () => {
    assert.deepEqual(parseCreateTaskArgs(undefined), {});
    assert.deepEqual(parseCreateTaskArgs({ prompt: 'Do it', permissionMode: 'plan' }), { prompt: 'Do it', permissionMode: 'plan' });
    assert.throws(() => parseCreateTaskArgs({ prompt: 42 }), /"prompt"/);
    assert.throws(() => parseCreateTaskArgs({ permissionMode: 'yolo' }), /"permissionMode"/);
    assert.throws(() => parseCreateTaskArgs({ prompt: 'x', shell: 'rm -rf /' }), /invalid task arguments/);
    assert.throws(() => parseCreateTaskArgs({ title: 't'.repeat(10_000) }), /"title"/);
    assert.throws(() => parseCreateTaskArgs('just a string'), /invalid task arguments/);
    // docs/flows.md#schedules-and-chains: a time and a task to wait for, checked for shape like the rest
    assert.deepEqual(parseCreateTaskArgs({ notBefore: 1_800_000_000_000, afterTaskId: 't1', continueInBranch: true }), {
      notBefore: 1_800_000_000_000,
      afterTaskId: 't1',
      continueInBranch: true,
    });
    assert.throws(() => parseCreateTaskArgs({ notBefore: 'tonight' }), /"notBefore"/);
  });

  it('item 7: the palette refuses an empty or over-long prompt with a message', () => {
    assert.equal(promptProblem('Upgrade mocha'), undefined);
    assert.match(promptProblem('   ') ?? '', /empty/);
    assert.equal(promptProblem('字'.repeat(MAX_PROMPT_CHARS)), undefined);
    assert.match(promptProblem('字'.repeat(MAX_PROMPT_CHARS + 1)) ?? '', /too long/);
  });

  it('item 7: a task workspace must be an existing directory open in this window', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsfolder-'));
    const open = path.join(root, 'repo');
    fs.mkdirSync(open);
    try {
      assert.equal(checkWorkspaceFolder(open + path.sep, [open]), open);
      assert.throws(() => checkWorkspaceFolder(path.join(root, 'other'), [open]), /not a folder open in this window/);
      assert.throws(() => checkWorkspaceFolder('/', [open]), /not a folder open in this window/);
      fs.rmSync(open, { recursive: true });
      assert.throws(() => checkWorkspaceFolder(open, [open]), /not an existing directory/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
