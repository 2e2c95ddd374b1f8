// Installs OpenAI's Codex CLI (`@openai/codex`, whose native binary comes in a platform package, an
// optional dependency; about 424 MB together) under .tools/codex, idempotently: a second run with the
// same version does nothing. Used by the Codex integration tests (and CI) to get a real `codex` executable.
//   node --import tsx scripts/setup-codex.ts        prints the path of the `codex` binary
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Pinned: the Codex adapter's app-server protocol (thread/start, thread/resume, turn/start) was read from this version's generated types. */
export const CODEX_VERSION = process.env.OFFPEAK_CODEX_VERSION ?? '0.171.0';

const repoRoot = path.resolve(__dirname, '..');
export const CODEX_DIR = path.join(repoRoot, '.tools', 'codex');

/** The Rust target triple the platform package keeps its binary under (`vendor/<triple>/bin/`). */
export function codexTargetTriple(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string | null {
  const cpu = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : null;
  if (!cpu) return null;
  if (platform === 'linux') return `${cpu}-unknown-linux-musl`;
  if (platform === 'darwin') return `${cpu}-apple-darwin`;
  if (platform === 'win32') return `${cpu}-pc-windows-msvc`;
  return null;
}

/**
 * The native executable itself, not the npm bin shim (`bin/codex.js`, which needs Node and, on
 * Windows, a .cmd wrapper Node refuses to spawn without a shell). Null when not installed.
 */
export function codexBinaryPath(): string | null {
  const triple = codexTargetTriple();
  if (!triple) return null;
  const exe = process.platform === 'win32' ? 'codex.exe' : 'codex';
  const platformPackage = `codex-${process.platform}-${process.arch}`;
  const candidates = [
    path.join(CODEX_DIR, 'node_modules', '@openai', platformPackage, 'vendor', triple, 'bin', exe),
    path.join(CODEX_DIR, 'node_modules', '@openai', 'codex', 'vendor', triple, 'bin', exe),
  ];
  return candidates.find((c) => fs.existsSync(c)) ?? null;
}

function installedVersion(): string | null {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(CODEX_DIR, 'node_modules', '@openai', 'codex', 'package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? null;
  } catch {
    return null;
  }
}

function works(binary: string): boolean {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  return r.status === 0 && /\d+\.\d+\.\d+/.test(r.stdout);
}

/** Returns the path of a working `codex` binary, installing it first when needed. */
export function ensureCodex(log: (line: string) => void = (l) => process.stderr.write(l + '\n')): string {
  const found = codexBinaryPath();
  if (installedVersion() === CODEX_VERSION && found && works(found)) return found;
  fs.mkdirSync(CODEX_DIR, { recursive: true });
  if (!fs.existsSync(path.join(CODEX_DIR, 'package.json'))) {
    fs.writeFileSync(path.join(CODEX_DIR, 'package.json'), JSON.stringify({ name: 'offpeak-tools-codex', private: true }, null, 2) + '\n');
  }
  log(`installing @openai/codex@${CODEX_VERSION} into ${CODEX_DIR} (about 424 MB)…`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', `@openai/codex@${CODEX_VERSION}`], {
    cwd: CODEX_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 15 * 60_000,
  });
  if (r.status !== 0) throw new Error(`npm install of @openai/codex@${CODEX_VERSION} failed (exit ${r.status ?? r.signal})`);
  const binary = codexBinaryPath();
  if (!binary)
    throw new Error(`@openai/codex@${CODEX_VERSION} was installed but no native binary for ${process.platform}-${process.arch} was found`);
  if (!works(binary)) throw new Error(`Codex was installed but ${binary} --version does not run`);
  return binary;
}

if (require.main === module) {
  try {
    process.stdout.write(ensureCodex() + '\n');
  } catch (err) {
    process.stderr.write(`setup-codex: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
