// Starts code-server (a real VS Code workbench + Node extension host) in its own process group with
// its own HOME/XDG/TMPDIR, user-data and extensions dirs, so a run neither reads nor litters the
// user's home or /tmp, and stopping it leaves no orphaned helpers (file watcher, pty host, ext host).
// It always asks for a password (code-server's --auth password): whoever reaches the port gets a
// terminal as this user, so a random password is made per start, given to code-server through its
// environment (never argv, which any local user can read) as its argon2 hash, and returned for the
// caller to print or type into the login page.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { VsCodeTools } from './tools';

/** User settings that keep the workbench quiet: no welcome page, telemetry, chat, update checks. */
export const QUIET_SETTINGS: Readonly<Record<string, unknown>> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'chat.disableAIFeatures': true,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
};

/**
 * What a scripted window does without (`lean`): no animations (headless Chromium draws every frame
 * in software), a steady cursor (no repaint every half second), no natural-language settings search.
 */
export const LEAN_SETTINGS: Readonly<Record<string, unknown>> = {
  'workbench.reduceMotion': 'on',
  'editor.cursorBlinking': 'solid',
  'workbench.settings.enableNaturalLanguageSearch': false,
};

/**
 * Built-in extensions with code that the panel tours and `npm start --check` never use, left out of
 * a scripted window's VS Code (`lean`, through VSCODE_SKIP_BUILTIN_EXTENSIONS, which the VS Code
 * server's scanner of built-in extensions reads): none is loaded, activated or has its contributions
 * read. Git, git-base and github start in every window ("*"), merge-conflict and debug-auto-launch at
 * startup, the JSON and TypeScript features on the first JSONC file loaded; js-debug and terminal-suggest join
 * every terminal. Grammars, themes and the markdown renderer of the walkthrough stay. The review
 * tour's diff editor reads the task's originals through the extension's own scheme, not git's.
 * CPU seconds of a tour's whole process tree (Chromium, code-server, extension host, driver), alone, on
 * the same loaded 2-core machine: panel-tour-checks 96 before, 104 and 92 with these left out (within
 * the noise: the extension host was 9 s of it), 55 with hashPassword too (code-server 28 → 7 s);
 * with both, panel-tour-review 111 → 84, test:ui 90 → 45, test:ui:personal 74 → 43.
 */
export const UNUSED_BUILTIN_EXTENSIONS: readonly string[] = [
  'GitHub.copilot-chat',
  'vscode.git',
  'vscode.git-base',
  'vscode.github',
  'vscode.github-authentication',
  'vscode.microsoft-authentication',
  'vscode.merge-conflict',
  'vscode.debug-auto-launch',
  'vscode.debug-server-ready',
  'ms-vscode.js-debug',
  'ms-vscode.js-debug-companion',
  'ms-vscode.vscode-js-profile-table',
  'vscode.npm',
  'vscode.grunt',
  'vscode.gulp',
  'vscode.jake',
  'vscode.emmet',
  'vscode.typescript-language-features',
  'vscode.css-language-features',
  'vscode.html-language-features',
  'vscode.json-language-features',
  'vscode.php-language-features',
  'vscode.configuration-editing',
  'vscode.extension-editing',
  'vscode.references-view',
  'vscode.search-result',
  'vscode.simple-browser',
  'vscode.media-preview',
  'vscode.ipynb',
  'vscode.terminal-suggest',
  'vscode.tunnel-forwarding',
  'vscode.markdown-math',
  'vscode.mermaid-markdown-features',
];

export interface CodeServerOptions {
  tools: VsCodeTools;
  /** Holds home/, tmp/, user-data/, extensions/ and code-server.log; created if missing. */
  stateDir: string;
  /**
   * `--vscode-option enable-smoke-test-driver`: without it a built workbench silently ignores the
   * URL payload's extensionDevelopmentPath/extensionTestsPath. Side effect: toasts are suppressed.
   */
  smokeTestDriver: boolean;
  /** Merged over the existing user settings.json (if any). */
  userSettings: Record<string, unknown>;
  /** Machine-scoped settings (the window's "Remote" settings). */
  machineSettings?: Record<string, unknown>;
  host?: string;
  /** 0 or undefined = a free port. */
  port?: number;
  startTimeoutMs?: number;
  /** The login password; a random one when not given. */
  password?: string;
  /**
   * The window is driven by a script (a tour, `npm start --check`), not used by a person: the
   * served VS Code leaves UNUSED_BUILTIN_EXTENSIONS out and LEAN_SETTINGS go under userSettings.
   */
  lean?: boolean;
}

/**
 * The argon2 hash of `password` for code-server's HASHED_PASSWORD, made with its own argon2 module
 * by its Node (the password on stdin). Given PASSWORD instead, code-server checks the session cookie
 * of every request (each script, image and webview resource of the workbench) with argon2.verify,
 * ~0.4 s of CPU each: it was a third of a tour's CPU time. Given the hash, the cookie is compared.
 */
function hashPassword(tools: VsCodeTools, password: string): string {
  const script =
    "const argon2 = require('node:module').createRequire(process.argv[1])('argon2');" +
    "let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => argon2.hash(s).then((h) => process.stdout.write(h)));";
  const result = spawnSync(tools.node24, ['-e', script, tools.codeServerEntry], { input: password, encoding: 'utf8', timeout: 60_000 });
  const hash = result.stdout?.trim() ?? '';
  if (result.status !== 0 || !hash.startsWith('$argon2'))
    throw new Error(`could not hash the code-server password: ${result.error?.message ?? result.stderr}`);
  return hash;
}

/** A password for one code-server start: 144 random bits. */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}

export interface RunningCodeServer {
  readonly origin: string;
  readonly authority: string;
  readonly port: number;
  readonly pid: number;
  readonly logFile: string;
  /** What its login page asks for. */
  readonly password: string;
  /** Settles when the main code-server process exits. */
  readonly exited: Promise<number | null>;
  logTail(lines?: number): string;
  /** SIGTERM to the whole process group, then SIGKILL to whatever is left. Idempotent. */
  stop(): Promise<void>;
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Kills a detached child's whole process group: TERM, a grace period, then KILL. */
export async function killProcessGroup(child: ChildProcess, graceMs = 1500): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signalGroup = (signal: NodeJS.Signals | 0): boolean => {
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false; // ESRCH: the group is already gone
    }
  };
  if (!signalGroup('SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!signalGroup(0)) return; // signal 0 only probes whether any member is left
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signalGroup('SIGKILL');
}

/**
 * Merges settings into `<user-data>/User/settings.json`, or with `scope: 'machine'` into
 * `<user-data>/Machine/settings.json`: the "Remote" settings of a code-server window, the only
 * place machine-scoped settings (e.g. offPeak.gatewayUrl) are read from there.
 */
export function writeUserSettings(userDataDir: string, settings: Record<string, unknown>, scope: 'user' | 'machine' = 'user'): void {
  const dir = path.join(userDataDir, scope === 'machine' ? 'Machine' : 'User');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'settings.json');
  let existing: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      existing = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      // settings.json may contain comments (JSONC); our keys win and the rest is rewritten without them
      existing = {};
    }
  }
  writeFileSync(file, `${JSON.stringify({ ...existing, ...settings }, null, 2)}\n`);
}

interface StateDirs {
  home: string;
  tmp: string;
  userData: string;
  extensions: string;
}

/** The directories of one isolated code-server under stateDir (created if missing). */
function stateDirs(stateDir: string): StateDirs {
  const dirs = {
    home: path.join(stateDir, 'home'),
    tmp: path.join(stateDir, 'tmp'),
    userData: path.join(stateDir, 'user-data'),
    extensions: path.join(stateDir, 'extensions'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  return dirs;
}

function isolatedEnv(dirs: StateDirs): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
    TMPDIR: dirs.tmp,
  };
}

/**
 * Installs a .vsix into the extensions dir of the code-server that startCodeServer() will run on
 * the same stateDir, as a user would (`code-server --install-extension file.vsix`). Returns the
 * directory it was installed to.
 */
export function installVsix(tools: VsCodeTools, stateDir: string, vsix: string): string {
  const dirs = stateDirs(stateDir);
  const before = new Set(readdirSync(dirs.extensions));
  const args = [tools.codeServerEntry, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--install-extension', vsix];
  const result = spawnSync(tools.node24, args, { env: isolatedEnv(dirs), encoding: 'utf8', timeout: 120_000 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  if (result.error) throw new Error(`code-server --install-extension: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`code-server --install-extension ${vsix} exited with ${result.status ?? result.signal}:\n${output}`);
  // A fresh extensions dir: the one new directory is the installed extension.
  const added = readdirSync(dirs.extensions).filter((name) => !before.has(name) && !name.startsWith('.') && name !== 'extensions.json');
  if (added.length !== 1)
    throw new Error(
      `expected one new extension in ${dirs.extensions} after installing ${vsix}, found: ${added.join(', ') || 'none'}\n${output}`,
    );
  return path.join(dirs.extensions, added[0]);
}

/** Where the served VS Code keeps an extension's globalStorage (`context.globalStorageUri`) under `stateDir`. */
export function extensionStorageDir(stateDir: string, extensionId: string): string {
  return path.join(stateDir, 'user-data', 'User', 'globalStorage', extensionId.toLowerCase());
}

/**
 * Waits until code-server serves VS Code: its first request to `/` loads the VS Code server (tens
 * of seconds on a loaded machine) before it answers, with the login page's redirect when not
 * logged in. No window is opened, so no extension host starts.
 */
export async function waitUntilServing(origin: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(`${origin}/`, { redirect: 'manual', signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())) });
      await res.body?.cancel();
      if (res.status === 200 || (res.status === 302 && /\/login\b/.test(res.headers.get('location') ?? ''))) return;
      last = `it answered ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() >= deadline) throw new Error(`code-server did not serve VS Code within ${Math.round(timeoutMs / 1000)} s (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export async function startCodeServer(options: CodeServerOptions): Promise<RunningCodeServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ? options.port : await freePort(host);
  const dirs = stateDirs(options.stateDir);
  writeUserSettings(dirs.userData, { ...QUIET_SETTINGS, ...(options.lean ? LEAN_SETTINGS : {}), ...options.userSettings });
  if (options.machineSettings) writeUserSettings(dirs.userData, options.machineSettings, 'machine');
  const logFile = path.join(options.stateDir, 'code-server.log');
  const password = options.password ?? randomPassword();
  if (password.length < 12) throw new Error('a code-server password has at least 12 characters');

  const args = [
    options.tools.codeServerEntry,
    '--bind-addr',
    `${host}:${port}`,
    '--auth',
    'password', // its hash only in the environment (HASHED_PASSWORD), which code-server clears
    '--user-data-dir',
    dirs.userData,
    '--extensions-dir',
    dirs.extensions,
    '--config',
    path.join(options.stateDir, 'config.yaml'),
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    ...(options.smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
  ];
  const child = spawn(options.tools.node24, args, {
    detached: true, // own process group, so stop() reaches every helper it forks
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...isolatedEnv(dirs),
      HASHED_PASSWORD: hashPassword(options.tools, password),
      ...(options.lean ? { VSCODE_SKIP_BUILTIN_EXTENSIONS: UNUSED_BUILTIN_EXTENSIONS.join(',') } : {}),
    },
  });
  const logStream = createWriteStream(logFile);
  child.stdout?.pipe(logStream);
  child.stderr?.pipe(logStream);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  let stopped: Promise<void> | undefined;
  const server: RunningCodeServer = {
    origin: `http://${host}:${port}`,
    authority: `${host}:${port}`,
    port,
    pid: child.pid ?? -1,
    logFile,
    password,
    exited,
    logTail(lines = 40) {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '(no code-server log)';
      }
    },
    stop() {
      stopped ??= killProcessGroup(child);
      return stopped;
    },
  };

  const timeoutMs = options.startTimeoutMs ?? 90_000;
  try {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`code-server did not start within ${timeoutMs / 1000} s`)), timeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => {
        seen = (seen + chunk.toString()).slice(-4096);
        if (/HTTP server listening on/.test(seen)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`code-server exited with code ${code} before listening`));
      });
    });
  } catch (err) {
    await server.stop();
    throw new Error(`${(err as Error).message}\n--- code-server log (tail) ---\n${server.logTail()}`);
  }
  return server;
}
