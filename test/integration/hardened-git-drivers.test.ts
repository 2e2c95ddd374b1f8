// A repository's own filter and merge drivers and its signing program are never run by the git the
// extension runs (src/agent/workplace/hardened-git.ts; docs/flows.md#isolation): worktree creation, Merge and
// Apply on real git repositories whose .git/config names commands that leave a marker file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { driverOverrides } from '../../src/agent/workplace/hardened-git';
import { applyTaskChanges, mergeTaskBranch } from '../../src/agent/workplace/task-merge';
import { createTaskWorktree, type TaskWorktree } from '../../src/agent/workplace/task-worktree';
import { gitVariants, useGit } from './git-variants';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

for (const variant of gitVariants()) {
  describe(`hardened git: a repository's drivers and signing program do not run (real git: ${variant.name})`, () => {
    useGit(variant);
    let root: string;
    let repo: string;
    let markers: string;
    const write = (dir: string, file: string, text: string) => fs.writeFileSync(path.join(dir, file), text);
    const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');
    const ran = () => fs.readdirSync(markers).sort();

    beforeEach(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'hardened-drivers-'));
      repo = path.join(root, 'repo');
      markers = path.join(root, 'markers');
      fs.mkdirSync(repo);
      fs.mkdirSync(markers);
      write(repo, 'a.txt', 'one\ntwo\n');
      write(repo, 'b.txt', 'b\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '.');
      git(repo, 'commit', '-q', '-m', 'init');
      // Set up after the first commit, as a model writing into the repository would.
      write(repo, '.gitattributes', '*.txt filter=evil merge=evil\n');
      git(repo, 'add', '.gitattributes');
      git(repo, 'commit', '-q', '-m', 'attributes');
      const mark = (name: string) => `touch '${path.join(markers, name)}'`;
      git(repo, 'config', 'filter.evil.smudge', `${mark('smudge')}; cat`);
      git(repo, 'config', 'filter.evil.clean', `${mark('clean')}; cat`);
      git(repo, 'config', 'filter.evil.process', `sh -c "${mark('process')}"`);
      git(repo, 'config', 'filter.evil.required', 'true');
      git(repo, 'config', 'merge.evil.driver', `${mark('merge-driver')}; false`);
      const gpg = path.join(root, 'gpg');
      fs.writeFileSync(gpg, `#!/bin/sh\n${mark('gpg')}\nexit 1\n`, { mode: 0o755 });
      git(repo, 'config', 'commit.gpgSign', 'true');
      git(repo, 'config', 'gpg.program', gpg);
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    async function worktree(): Promise<TaskWorktree> {
      const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'drivers12', title: 'Drivers' });
      assert.equal(made.kind, 'created', 'the worktree was created');
      return made as TaskWorktree;
    }

    it("the fixture is hostile: plain git runs the repository's smudge filter on checkout", () => {
      try {
        execFileSync('git', ['worktree', 'add', '--quiet', '-b', 'control', path.join(root, 'control'), 'HEAD'], {
          cwd: repo,
          stdio: 'pipe',
        });
      } catch {
        // The process filter does not speak git's protocol, so the checkout fails after running it.
      }
      assert.ok(ran().includes('process') || ran().includes('smudge'), `plain git ran no driver (${ran().join(', ')})`);
    });

    it('a task worktree is created and merged back without running a filter, merge driver or gpg program', async () => {
      const wt = await worktree();
      assert.equal(read(wt.worktreePath, 'a.txt'), 'one\ntwo\n');
      write(wt.worktreePath, 'a.txt', 'one\ntwo\nthree\n');
      const result = await mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.equal(result.kind, 'merged');
      assert.equal(read(repo, 'a.txt'), 'one\ntwo\nthree\n');
      assert.deepEqual(ran(), []);
    });

    it("item 4: a repository's merge.verifySignatures neither refuses the Merge nor runs its gpg program", async () => {
      git(repo, 'config', 'merge.verifySignatures', 'true');
      const wt = await worktree();
      write(wt.worktreePath, 'b.txt', 'b\nsigned by nobody\n');
      const result = await mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.equal(result.kind, 'merged', JSON.stringify(result));
      assert.deepEqual(ran(), []);
    });

    it("a conflicting merge uses git's own text merge (conflict markers), not the repository's merge driver", async () => {
      const wt = await worktree();
      write(wt.worktreePath, 'a.txt', 'one\nTASK\n');
      write(repo, 'a.txt', 'one\nUSER\n');
      git(
        repo,
        '-c',
        'commit.gpgSign=false',
        '-c',
        'filter.evil.clean=',
        '-c',
        'filter.evil.process=',
        '-c',
        'filter.evil.required=false',
        'commit',
        '-q',
        '-am',
        'the user changed a',
      );
      const result = await mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.deepEqual(result, { kind: 'conflict', into: 'main', files: ['a.txt'] });
      assert.match(read(repo, 'a.txt'), /<<<<<<< ours\n[\s\S]*USER[\s\S]*TASK[\s\S]*>>>>>>> theirs/);
      assert.deepEqual(ran(), []);
    });

    it("Apply writes the task's changes into the folder without running a filter", async () => {
      const wt = await worktree();
      write(wt.worktreePath, 'b.txt', 'b\nby the task\n');
      const result = await applyTaskChanges({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
      assert.deepEqual(result, { kind: 'applied', files: ['b.txt'] });
      assert.equal(read(repo, 'b.txt'), 'b\nby the task\n');
      assert.deepEqual(ran(), []);
    });

    it('driver names git could not take back from -c make the run fail instead of running unguarded', () => {
      assert.equal(driverOverrides('filter.a=b.smudge\nx\0'), null);
      assert.deepEqual(driverOverrides('filter.my.dots.clean\ncat\0merge.m.driver\nx\0core.bare\nfalse\0'), [
        'filter.my.dots.smudge=',
        'filter.my.dots.clean=',
        'filter.my.dots.process=',
        'filter.my.dots.required=false',
        'merge.m.driver=git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B',
        'merge.m.recursive=',
      ]);
    });
  });
}

for (const variant of gitVariants()) {
  describe(`hardened git: drivers a conditional include names for the new worktree do not run (real git: ${variant.name})`, () => {
    useGit(variant);
    let root: string;
    let repo: string;
    let markers: string;
    const ran = () => fs.readdirSync(markers).sort();

    /** A repository whose `.git/config` defines the `cond` filter only under `condition`. */
    function hostileRepo(condition: string): void {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'hardened-includeif-'));
      repo = path.join(root, 'repo');
      markers = path.join(root, 'markers');
      fs.mkdirSync(repo);
      fs.mkdirSync(markers);
      fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
      fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=cond\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '.');
      git(repo, 'commit', '-q', '-m', 'init');
      const mark = (name: string) => `touch '${path.join(markers, name)}'`;
      fs.writeFileSync(
        path.join(repo, '.git', 'cond.inc'),
        `[filter "cond"]\n\tsmudge = ${mark('smudge')}; cat\n\tclean = ${mark('clean')}; cat\n\trequired = true\n`,
      );
      fs.appendFileSync(path.join(repo, '.git', 'config'), `[includeIf "${condition}"]\n\tpath = cond.inc\n`);
    }
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it('a start that crashed between `worktree add --no-checkout` and the checkout checks the worktree out at the next start, still without the filter', async () => {
      hostileRepo('onbranch:offpeak/**');
      const first = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'crash123', title: 'Crashed' });
      assert.equal(first.kind, 'created');
      const wt = first as TaskWorktree;
      // As if the host died right after the add: no index, no files.
      fs.rmSync(path.join(repo, '.git', 'worktrees', path.basename(wt.worktreePath), 'index'));
      fs.rmSync(path.join(wt.worktreePath, 'a.txt'));
      fs.rmSync(path.join(wt.worktreePath, '.gitattributes'));
      const again = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'crash123', title: 'Crashed' });
      assert.deepEqual(again, first, 'the same worktree, branch and base');
      assert.equal(fs.readFileSync(path.join(wt.worktreePath, 'a.txt'), 'utf8'), 'one\n');
      assert.deepEqual(ran(), []);
    });

    for (const condition of ['onbranch:offpeak/**', 'gitdir:**/worktrees/**']) {
      it(`the fixture is hostile: plain git runs the filter of [includeIf "${condition}"] when it adds an offpeak/ worktree`, () => {
        hostileRepo(condition);
        execFileSync('git', ['worktree', 'add', '--quiet', '-b', 'offpeak/control', path.join(root, 'control'), 'HEAD'], {
          cwd: repo,
          stdio: 'pipe',
        });
        assert.deepEqual(ran(), ['smudge']);
      });

      it(`item 4: the filter of [includeIf "${condition}"] does not run at worktree add; the files are checked out as committed`, async () => {
        hostileRepo(condition);
        const made = await createTaskWorktree({
          folder: repo,
          worktreesDir: path.join(root, 'wt'),
          taskId: 'cond1234',
          title: 'Conditional',
        });
        assert.equal(made.kind, 'created', 'the worktree was created');
        const wt = made as TaskWorktree;
        assert.deepEqual(ran(), [], 'no filter ran');
        assert.equal(fs.readFileSync(path.join(wt.worktreePath, 'a.txt'), 'utf8'), 'one\n');
        assert.equal(
          git(wt.worktreePath, '-c', 'filter.cond.clean=', '-c', 'filter.cond.required=false', 'status', '--porcelain'),
          '',
          'the worktree is clean: index and files match its branch',
        );
        assert.deepEqual(ran(), [], 'no filter ran (git status neither)');
      });
    }
  });
}
