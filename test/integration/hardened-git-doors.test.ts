// git's newer doors stay shut in the git the extension runs (src/agent/workplace/hardened-git.ts;
// docs/security.md): a partial clone's lazy fetch (a promisor remote that is a command, or a local
// remote whose `uploadpack` is one) and hooks defined in config (git 2.54+), at worktree creation,
// Merge, Apply and discard, under the system git and under the newest git (test/integration/git-variants.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hookOverrides } from '../../src/agent/workplace/hardened-git';
import { applyTaskChanges, mergeTaskBranch } from '../../src/agent/workplace/task-merge';
import { createTaskWorktree, removeTaskWorktree, type TaskWorktree } from '../../src/agent/workplace/task-worktree';
import { configHookGits, gitVariants, useGit } from './git-variants';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

/** A committed repository under a fresh temporary folder. */
function newRepository(prefix: string): { root: string; repo: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const repo = path.join(root, 'repo');
  fs.mkdirSync(repo);
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\n');
  fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return { root, repo };
}

for (const variant of gitVariants()) {
  describe(`hardened git: a partial clone's lazy fetch runs nothing (${variant.name})`, () => {
    useGit(variant);
    let root: string;
    let repo: string;
    let marker: string;

    beforeEach(() => {
      ({ root, repo } = newRepository('hardened-lazy-'));
      marker = path.join(root, 'fetched');
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    /** The two promisor remotes the issue names: an `ext::` command, and a local remote whose `uploadpack` is a command. */
    const promisors = {
      'ext::': (script: string) => {
        git(repo, 'config', 'remote.evil.url', `ext::sh ${script}`);
        git(repo, 'config', 'protocol.ext.allow', 'always');
      },
      'uploadpack=': (script: string) => {
        const other = path.join(root, 'other.git');
        git(root, 'init', '-q', '--bare', other);
        git(repo, 'config', 'remote.evil.url', other);
        git(repo, 'config', 'remote.evil.uploadpack', script);
        git(repo, 'config', 'protocol.file.allow', 'always');
      },
    };

    for (const [kind, promisor] of Object.entries(promisors)) {
      /** Makes the repository a partial clone missing `blob`, whose promisor remote leaves the marker when it runs. */
      const partialClone = (blob: string): void => {
        fs.rmSync(path.join(repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
        const script = path.join(root, 'fetch.sh');
        fs.writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
        git(repo, 'config', 'core.repositoryFormatVersion', '1');
        git(repo, 'config', 'extensions.partialClone', 'evil');
        git(repo, 'config', 'remote.evil.promisor', 'true');
        promisor(script);
      };

      it(`the fixture is hostile: plain git, even with -c protocol.allow=never, runs the ${kind} promisor remote to fetch the missing blob`, () => {
        partialClone(git(repo, 'rev-parse', 'HEAD:a.txt'));
        const control = path.join(root, 'control');
        execFileSync('git', ['worktree', 'add', '--quiet', '--no-checkout', '-b', 'control', control, 'HEAD'], {
          cwd: repo,
          stdio: 'pipe',
        });
        assert.throws(() =>
          execFileSync('git', ['-c', 'protocol.allow=never', 'reset', '--hard', '--quiet', 'HEAD'], { cwd: control, stdio: 'pipe' }),
        );
        assert.ok(fs.existsSync(marker), 'plain git ran the promisor remote');
      });

      it(`item 1: a partial-clone repository whose promisor remote is ${kind} runs nothing at worktree creation`, async () => {
        partialClone(git(repo, 'rev-parse', 'HEAD:a.txt'));
        // The blob cannot be had, so the checkout fails: what matters is that nothing ran.
        await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'lazy1234', title: 'Lazy' }).catch(
          () => undefined,
        );
        assert.equal(fs.existsSync(marker), false, 'the promisor remote ran');
      });

      it(`item 1: a partial-clone repository whose promisor remote is ${kind} runs nothing at merge`, async () => {
        const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'lazy5678', title: 'Lazy' });
        assert.equal(made.kind, 'created', 'the worktree was created');
        const wt = made as TaskWorktree;
        // Both sides change a.txt, so the merge reads its base version: the blob that goes missing.
        const base = git(repo, 'rev-parse', 'HEAD:a.txt');
        fs.writeFileSync(path.join(wt.worktreePath, 'a.txt'), 'one\ntwo\nthree\nfour\nFIVE\n');
        fs.writeFileSync(path.join(repo, 'a.txt'), 'ONE\ntwo\nthree\nfour\nfive\n');
        git(repo, 'commit', '-q', '-am', 'the user changed a');
        partialClone(base);
        await mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') }).catch(() => undefined);
        assert.equal(fs.existsSync(marker), false, 'the promisor remote ran');
      });
    }
  });
}

/** Every hook event git runs on the way of a worktree's creation, a commit, a merge or a removal. */
const EVENTS = [
  'reference-transaction',
  'post-checkout',
  'post-index-change',
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-merge-commit',
  'post-merge',
  'post-rewrite',
  'pre-auto-gc',
];

for (const variant of configHookGits()) {
  describe(`hardened git: hooks defined in the repository's config run nothing (${variant.name})`, () => {
    useGit(variant);
    let root: string;
    let repo: string;
    let markers: string;
    const ran = () => fs.readdirSync(markers).sort();

    beforeEach(() => {
      ({ root, repo } = newRepository('hardened-hooks-'));
      markers = path.join(root, 'markers');
      fs.mkdirSync(markers);
      const config = (name: string, event: string) => `[hook "${name}"]\n\tevent = ${event}\n\tcommand = touch '${markers}/${name}'\n`;
      // Set up after the first commit, as a model writing into the repository would: one hook per
      // event in .git/config, and more behind the conditional includes a task's worktree matches.
      fs.appendFileSync(path.join(repo, '.git', 'config'), EVENTS.map((e) => config(`evil-${e}`, e)).join(''));
      fs.writeFileSync(path.join(repo, '.git', 'onbranch.inc'), EVENTS.map((e) => config(`onbranch-${e}`, e)).join(''));
      fs.writeFileSync(path.join(repo, '.git', 'gitdir.inc'), EVENTS.map((e) => config(`gitdir-${e}`, e)).join(''));
      fs.appendFileSync(
        path.join(repo, '.git', 'config'),
        `[includeIf "onbranch:offpeak/**"]\n\tpath = onbranch.inc\n[includeIf "gitdir:**/worktrees/**"]\n\tpath = gitdir.inc\n`,
      );
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    async function worktree(): Promise<TaskWorktree> {
      const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'hooks123', title: 'Hooks' });
      assert.equal(made.kind, 'created', 'the worktree was created');
      return made as TaskWorktree;
    }

    it('the fixture is hostile: plain git with core.hooksPath=/dev/null runs them when it adds a worktree and commits', () => {
      const control = path.join(root, 'control');
      git(repo, '-c', `core.hooksPath=${os.devNull}`, 'worktree', 'add', '--quiet', '-b', 'offpeak/control', control, 'HEAD');
      fs.writeFileSync(path.join(control, 'b.txt'), 'changed\n');
      git(control, '-c', `core.hooksPath=${os.devNull}`, 'commit', '-q', '-am', 'control');
      const hooks = ran();
      for (const name of [
        'evil-reference-transaction',
        'evil-post-checkout',
        'evil-pre-commit',
        'onbranch-pre-commit',
        'gitdir-pre-commit',
      ])
        assert.ok(hooks.includes(name), `${name} did not run (${hooks.join(', ')})`);
    });

    it('item 1: hooks defined in config run nothing at worktree creation', async () => {
      const wt = await worktree();
      assert.equal(fs.readFileSync(path.join(wt.worktreePath, 'a.txt'), 'utf8'), 'one\ntwo\nthree\nfour\nfive\n');
      assert.deepEqual(ran(), []);
    });

    it('item 1: hooks defined in config run nothing at merge', async () => {
      const wt = await worktree();
      fs.writeFileSync(path.join(wt.worktreePath, 'b.txt'), 'b\nby the task\n');
      const merged = await mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.equal(merged.kind, 'merged', JSON.stringify(merged));
      assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'b\nby the task\n');
      assert.deepEqual(ran(), []);
    });

    it('item 1: hooks defined in config run nothing at Apply', async () => {
      const wt = await worktree();
      fs.writeFileSync(path.join(wt.worktreePath, 'b.txt'), 'b\nby the task\n');
      const applied = await applyTaskChanges({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.equal(applied.kind, 'applied', JSON.stringify(applied));
      assert.deepEqual(ran(), []);
    });

    it('item 1: hooks defined in config run nothing at discard (the worktree and branch removed)', async () => {
      const wt = await worktree();
      const removal = await removeTaskWorktree({ repoPath: repo, worktreePath: wt.worktreePath, branch: wt.branch });
      assert.deepEqual(removal.problems, []);
      assert.equal(fs.existsSync(wt.worktreePath), false);
      assert.deepEqual(ran(), []);
    });
  });
}

describe('hardened git: the overrides of config hooks', () => {
  it('each hook name gets enabled=false and its events cleared; a name git could not take back refuses the run', () => {
    assert.deepEqual(hookOverrides('hook.lint.command\nnpm test\0hook.lint.event\npre-commit\0hook.a.b.command\nx\0hook.jobs\n2\0'), [
      'hook.lint.enabled=false',
      'hook.lint.event=',
      'hook.a.b.enabled=false',
      'hook.a.b.event=',
    ]);
    assert.equal(hookOverrides('hook.a=b.command\nx\0'), null);
  });
});
