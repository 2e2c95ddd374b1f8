// The gits the hostile-repository tests run under: the system's, and the newest one built by
// scripts/setup-newest-git.ts (git 2.54 added hooks defined in config, a door an older git does
// not have). The newest runs when it is built; where OFFPEAK_REQUIRE_NEWEST_GIT=1 (CI) a missing
// one fails its tests instead of leaving them out.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { NEWEST_GIT_DIR, NEWEST_GIT_VERSION, newestGit } from '../../scripts/setup-newest-git';

export interface GitVariant {
  /** For test names: `system git` or `git 2.55.0`. */
  name: string;
  /** The folder put first on PATH while its tests run (the product finds git on PATH); null: PATH as it is. */
  binDir: string | null;
  /** Whether this git has hooks defined in config (2.54+). */
  configHooks: boolean;
}

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const [a, b] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

const systemVersion = /(\d+\.\d+\.\d+)/.exec(execFileSync('git', ['--version'], { encoding: 'utf8' }))?.[1] ?? '0.0.0';
const required = process.env.OFFPEAK_REQUIRE_NEWEST_GIT === '1';
let told = false;

/** The system git, and the newest git when it is built or required (then a missing one fails in `useGit`). */
export function gitVariants(): GitVariant[] {
  const variants: GitVariant[] = [{ name: 'system git', binDir: null, configHooks: versionAtLeast(systemVersion, 2, 54) }];
  if (newestGit() !== null || required)
    variants.push({ name: `git ${NEWEST_GIT_VERSION}`, binDir: path.join(NEWEST_GIT_DIR, 'bin'), configHooks: true });
  else if (!told) {
    told = true; // once per run, not once per describe
    console.log(
      `      (git ${NEWEST_GIT_VERSION} is not built: run scripts/setup-newest-git.ts to run these tests under it too; CI requires it)`,
    );
  }
  return variants;
}

/** The gits with hooks defined in config (the tests of those hooks need one). */
export const configHookGits = (): GitVariant[] => gitVariants().filter((v) => v.configHooks);

/**
 * Mocha hooks that put the variant's git first on PATH for the tests of the enclosing describe
 * (the product's git and the fixtures' `git` alike) and take it away after.
 */
export function useGit(variant: GitVariant): void {
  let saved: string | undefined;
  before(() => {
    if (variant.binDir === null) return;
    if (newestGit() === null)
      throw new Error(`git ${NEWEST_GIT_VERSION} is required here (OFFPEAK_REQUIRE_NEWEST_GIT=1) but not built in ${NEWEST_GIT_DIR}`);
    saved = process.env.PATH;
    process.env.PATH = `${variant.binDir}${path.delimiter}${saved ?? ''}`;
    const version = execFileSync('git', ['--version'], { encoding: 'utf8' });
    if (!version.includes(NEWEST_GIT_VERSION)) throw new Error(`PATH's git is ${version.trim()}, not the newest`);
  });
  after(() => {
    if (variant.binDir !== null && saved !== undefined) process.env.PATH = saved;
  });
}
