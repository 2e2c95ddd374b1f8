// Installs Claude Code (`@anthropic-ai/claude-code`, a ~245 MB native binary inside a platform npm
// package) under .tools/claude-code, idempotently: a second run with the same version does
// nothing. Used by the Claude Code end-to-end test (and CI) to get a real `claude` executable.
//   node --import tsx scripts/setup-claude-code.ts        prints the path of the `claude` binary
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Pinned: the Claude Code adapter's flags and stream-json events were measured on the 2.1 line. */
export const CLAUDE_CODE_VERSION = process.env.OFFPEAK_CLAUDE_CODE_VERSION ?? '2.1.197';

const repoRoot = path.resolve(__dirname, '..');
export const CLAUDE_CODE_DIR = path.join(repoRoot, '.tools', 'claude-code');

/**
 * The native executable itself (the package's postinstall puts the platform binary there), not
 * the npm bin shim: on Windows the shim is a .cmd file, which Node refuses to spawn without a shell.
 */
export function claudeBinaryPath(): string {
  return path.join(CLAUDE_CODE_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
}

function installedVersion(): string | null {
  try {
    const pkg = JSON.parse(
      fs.readFileSync(path.join(CLAUDE_CODE_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'package.json'), 'utf8'),
    ) as { version?: string };
    return pkg.version ?? null;
  } catch {
    return null;
  }
}

function works(binary: string): boolean {
  const r = spawnSync(binary, ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
  });
  return r.status === 0 && /\d+\.\d+\.\d+/.test(r.stdout);
}

/** Returns the path of a working `claude` binary, installing it first when needed. */
export function ensureClaudeCode(log: (line: string) => void = (l) => process.stderr.write(l + '\n')): string {
  const binary = claudeBinaryPath();
  if (installedVersion() === CLAUDE_CODE_VERSION && fs.existsSync(binary) && works(binary)) return binary;
  fs.mkdirSync(CLAUDE_CODE_DIR, { recursive: true });
  if (!fs.existsSync(path.join(CLAUDE_CODE_DIR, 'package.json'))) {
    fs.writeFileSync(
      path.join(CLAUDE_CODE_DIR, 'package.json'),
      JSON.stringify({ name: 'offpeak-tools-claude-code', private: true }, null, 2) + '\n',
    );
  }
  log(`installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${CLAUDE_CODE_DIR} (about 250 MB)…`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`], {
    cwd: CLAUDE_CODE_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 15 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(`npm install of @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} failed (exit ${r.status ?? r.signal})`);
  if (!works(binary)) throw new Error(`Claude Code was installed but ${binary} --version does not run`);
  return binary;
}

if (require.main === module) {
  try {
    process.stdout.write(ensureClaudeCode() + '\n');
  } catch (err) {
    process.stderr.write(`setup-claude-code: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
