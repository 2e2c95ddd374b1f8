// "Review changes" of a task that ran in its own worktree: an editor on a file:// URI inside the
// worktree makes VS Code's git extension open the worktree as a second repository in Source Control
// (with a pending change) until a reload. The plan (src/panel/workplace-panel.ts) says which side
// src/vscode/review.ts shows read-only through the extension's own scheme instead.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readWorktreeFile } from '../../src/agent/workplace/task-changes';
import { reviewPlan } from '../../src/panel/workplace-panel';
import type { TaskIsolation } from '../../src/store';

const changes = [
  { path: 'src/a.ts', status: 'modified' as const, oldBlob: 'a'.repeat(40) },
  { path: 'b.txt', status: 'added' as const, oldBlob: null },
  { path: 'gone.txt', status: 'deleted' as const, oldBlob: 'b'.repeat(40) },
];
const isolation = (mode: 'worktree' | 'inPlace'): TaskIsolation =>
  ({
    taskId: 't',
    mode,
    repoPath: '/repo',
    worktreePath: mode === 'worktree' ? '/repo-offpeak/t' : null,
    branch: mode === 'worktree' ? 'offpeak/t' : null,
    baseCommit: mode === 'worktree' ? 'c'.repeat(40) : null,
    note: null,
    changes,
    missingAt: null,
    broughtHome: null,
    createdAt: 0,
  }) as TaskIsolation;
const task = { id: 't', title: 'T', prompt: 'p', workspacePath: '/repo' } as never;

describe('review of a worktree task (Source Control)', () => {
  it("item 8: a worktree task's review opens no file:// editor in the worktree; an in-place task's opens the folder's files", () => {
    const inWorktree = reviewPlan(task, isolation('worktree'));
    assert.ok(!('problem' in inWorktree));
    if ('problem' in inWorktree) return;
    assert.deepEqual(
      inWorktree.entries.map((e) => [e.path, e.modifiedFile]),
      [
        ['src/a.ts', null],
        ['b.txt', null],
        ['gone.txt', null],
      ],
      'nothing of the worktree opens as a file',
    );
    assert.deepEqual(
      inWorktree.entries.map((e) => [e.path, e.modifiedPath]),
      [
        ['src/a.ts', path.join('/repo-offpeak/t', 'src', 'a.ts')],
        ['b.txt', path.join('/repo-offpeak/t', 'b.txt')],
        ['gone.txt', null],
      ],
      'read through the task copy scheme from where the worktree has them',
    );
    const inPlace = reviewPlan(task, { ...isolation('inPlace'), mode: 'inPlace' } as TaskIsolation);
    assert.ok(!('problem' in inPlace));
    if ('problem' in inPlace) return;
    assert.deepEqual(
      inPlace.entries.map((e) => e.modifiedFile),
      [path.join('/repo', 'src', 'a.ts'), path.join('/repo', 'b.txt'), null],
      "in place, the folder's own files (already in Source Control), editable",
    );
  });

  it('the read-only side reads a file the task changed from its worktree, and nothing else', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-review-copy-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 2;\n');
      writeFileSync(path.join(dir, 'other.txt'), 'not a change of the task\n');
      const recorded = changes.map((c) => ({ ...c, added: null, removed: null }));
      assert.equal(await readWorktreeFile(dir, recorded, 'src/a.ts'), 'export const a = 2;\n');
      assert.equal(await readWorktreeFile(dir, recorded, 'other.txt'), '', 'not among the changes');
      assert.equal(await readWorktreeFile(dir, recorded, 'gone.txt'), '', 'deleted');
      assert.equal(await readWorktreeFile(dir, recorded, 'b.txt'), '', 'removed from the worktree since');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
