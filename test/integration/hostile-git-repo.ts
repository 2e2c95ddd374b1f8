// A fixture of the outside world: a git repository whose own config makes git run commands that
// each leave a marker file (docs/security.md, "What a repository can make run"), for the tests of
// the agents' own git.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The hook events a `git status`, `git diff` or `git commit` can run. */
const EVENTS = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'reference-transaction', 'post-index-change'];

/**
 * Makes `repo` a committed repository (branch main) whose `.git/config` names an fsmonitor, a
 * hooks directory, a clean and smudge filter, a diff textconv and external diff, a merge driver,
 * and hooks defined in config (git 2.54+), some of them behind `[includeIf "onbranch:main"]`;
 * `a.txt` is left modified, and `b.txt` touched so that `git status` cleans it to compare. Each
 * leaves `<markers>/<what>`.
 */
export function makeHostileRepository(repo: string, markers: string): void {
  fs.mkdirSync(markers, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd: repo });
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=evil diff=evil merge=evil\n');
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'init');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
  // Same size, another time: git status reads b.txt through the clean filter to compare it.
  fs.utimesSync(path.join(repo, 'b.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1));
  const mark = (name: string) => `touch '${path.join(markers, name)}'`;
  const hooks = path.join(path.dirname(markers), 'hooks');
  fs.mkdirSync(hooks, { recursive: true });
  for (const event of EVENTS) fs.writeFileSync(path.join(hooks, event), `#!/bin/sh\n${mark(`hooks-dir-${event}`)}\n`, { mode: 0o755 });
  const hook = (name: string, event: string) => `[hook "${name}"]\n\tevent = ${event}\n\tcommand = ${mark(name)}\n`;
  fs.writeFileSync(path.join(repo, '.git', 'main.inc'), EVENTS.map((e) => hook(`onbranch-${e}`, e)).join(''));
  fs.appendFileSync(
    path.join(repo, '.git', 'config'),
    [
      `[core]\n\tfsmonitor = ${mark('fsmonitor')}; false\n\thooksPath = ${hooks}\n`,
      `[filter "evil"]\n\tclean = ${mark('clean')}; cat\n\tsmudge = ${mark('smudge')}; cat\n\trequired = true\n`,
      `[diff "evil"]\n\ttextconv = ${mark('textconv')}; cat\n\tcommand = ${mark('external-diff')}; true\n`,
      `[merge "evil"]\n\tdriver = ${mark('merge-driver')}; false\n`,
      EVENTS.map((e) => hook(`evil-${e}`, e)).join(''),
      `[includeIf "onbranch:main"]\n\tpath = main.inc\n`,
    ].join(''),
  );
}

/** The markers left so far, sorted. */
export const markersLeft = (markers: string): string[] => fs.readdirSync(markers).sort();
