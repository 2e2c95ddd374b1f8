// Builds a newer git than Debian 12's (2.39) under .tools/git-2.55, once: the hostile-repository
// tests run under it as well as under the system git, because git 2.54 added doors an older git
// does not have (hooks defined in config: docs/security.md). The source is Debian's own
// orig tarball (the Debian mirror is reachable from CI), checked against its pinned SHA-256, and
// only the `git` program is built (no docs, tests, Perl, Python, Tcl/Tk, gettext, curl, Rust), so
// the build is a few minutes of CPU. A second run with the build in place does nothing.
//   node --import tsx scripts/setup-newest-git.ts        prints the path of the `git` binary
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const NEWEST_GIT_VERSION = '2.55.0';
const SOURCE_URL = `http://deb.debian.org/debian/pool/main/g/git/git_${NEWEST_GIT_VERSION}.orig.tar.xz`;
/** The tarball's SHA-256 (Debian's .dsc lists the same); plain http is fine because of it. */
const SOURCE_SHA256 = '457fdb04dc8728e007d4688695e6912e6f680727920f2a40bf11eacc17505357';

const repoRoot = path.resolve(__dirname, '..');
export const NEWEST_GIT_DIR = path.join(repoRoot, '.tools', 'git-2.55');

/** `<dir>/bin/git`; the same program is `libexec/git-core/git`, where git looks for itself. */
export function newestGitBinary(dir = NEWEST_GIT_DIR): string {
  return path.join(dir, 'bin', 'git');
}

/** The version a git binary reports, or null when it does not run. */
export function gitVersion(binary: string): string | null {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? (/git version (\d+\.\d+\.\d+)/.exec(r.stdout)?.[1] ?? null) : null;
}

/** The built git's binary when it is in place and runs, else null (nothing is built). */
export function newestGit(): string | null {
  const binary = newestGitBinary();
  return fs.existsSync(binary) && gitVersion(binary) === NEWEST_GIT_VERSION ? binary : null;
}

/**
 * The make flags of a minimal git: what a repository's config can make git run lives in C code
 * every build has; the rest is switched off. RUNTIME_PREFIX lets git find its own libexec folder
 * from where its binary is, so the folder can be reached through a symlink or moved.
 */
const MAKE_FLAGS = [
  'NO_PERL=YesPlease',
  'NO_PYTHON=YesPlease',
  'NO_TCLTK=YesPlease',
  'NO_GETTEXT=YesPlease',
  'NO_CURL=YesPlease',
  'NO_EXPAT=YesPlease',
  'NO_OPENSSL=YesPlease',
  'NO_RUST=YesPlease',
  'NO_INSTALL_HARDLINKS=YesPlease',
  'RUNTIME_PREFIX=YesPlease',
  'CFLAGS=-O1',
];

/** Returns the built git's binary, downloading, checking and building it first when needed. */
export async function ensureNewestGit(log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<string> {
  const ready = newestGit();
  if (ready) return ready;
  if (process.platform !== 'linux') throw new Error('the newest git is built on Linux only (CI)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-git-build-'));
  try {
    log(`downloading ${SOURCE_URL}…`);
    const response = await fetch(SOURCE_URL);
    if (!response.ok) throw new Error(`download failed: HTTP ${response.status}`);
    const tarball = Buffer.from(await response.arrayBuffer());
    const sha = crypto.createHash('sha256').update(tarball).digest('hex');
    if (sha !== SOURCE_SHA256) throw new Error(`the tarball's SHA-256 is ${sha}, expected ${SOURCE_SHA256}`);
    fs.writeFileSync(path.join(work, 'git.tar.xz'), tarball);
    run('tar', ['-xJf', 'git.tar.xz'], work);
    const source = path.join(work, `git-${NEWEST_GIT_VERSION}`);
    const started = Date.now();
    log(`building git ${NEWEST_GIT_VERSION} (the git program and its templates only)…`);
    run('make', ['-j2', ...MAKE_FLAGS, 'git'], source);
    run('make', ['-C', 'templates', ...MAKE_FLAGS], source);
    log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    // Staged beside the final folder, then renamed into place: a half-built folder is never seen.
    const stage = `${NEWEST_GIT_DIR}.partial-${process.pid}`;
    fs.rmSync(stage, { recursive: true, force: true });
    for (const dir of ['bin', 'libexec/git-core', 'share/git-core/templates']) fs.mkdirSync(path.join(stage, dir), { recursive: true });
    fs.copyFileSync(path.join(source, 'git'), path.join(stage, 'bin', 'git'));
    fs.copyFileSync(path.join(source, 'git'), path.join(stage, 'libexec', 'git-core', 'git'));
    for (const file of ['bin/git', 'libexec/git-core/git']) fs.chmodSync(path.join(stage, file), 0o755);
    fs.cpSync(path.join(source, 'templates', 'blt'), path.join(stage, 'share', 'git-core', 'templates'), { recursive: true });
    if (gitVersion(newestGitBinary(stage)) !== NEWEST_GIT_VERSION) throw new Error('the built git does not run');
    try {
      fs.renameSync(stage, NEWEST_GIT_DIR);
    } catch (err) {
      // Another build finished first: keep its folder.
      fs.rmSync(stage, { recursive: true, force: true });
      if (!newestGit()) throw err;
    }
    return newestGitBinary();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], cwd: string): void {
  const r = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'], timeout: 60 * 60_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.slice(0, 2).join(' ')} failed (exit ${r.status ?? r.signal})`);
}

if (require.main === module) {
  ensureNewestGit().then(
    (binary) => process.stdout.write(binary + '\n'),
    (err: Error) => {
      process.stderr.write(`setup-newest-git: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
