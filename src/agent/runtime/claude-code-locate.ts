/**
 * Where Claude Code is, and which agent `offPeak.agent` = `auto` runs (docs/flows.md#which-agent):
 * the `offPeak.claudeCodePath` setting, then PATH, then the places its installers put it. The
 * platform, environment, home folder and file reads are injected, so the Windows and macOS
 * branches are tested on any machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { absolutePathFolders, envOf, systemExecutableHost, windowsExtensions, type ExecutableHost } from '../../core/executable-path';
import type { AgentKind } from './agent-adapter';

/** `offPeak.agent`: a fixed agent, or `auto` (Claude Code when it is found, else the reference agent). */
/** The agents `offPeak.agent` names so far (Codex runs where an engine is given its adapter: not yet a setting). */
export type SettingAgent = Exclude<AgentKind, 'codex'>;
export type AgentSetting = SettingAgent | 'auto';
export const AGENT_SETTINGS: readonly AgentSetting[] = ['auto', 'reference', 'claude-code'];

export interface LocateHost extends ExecutableHost {
  homedir: string;
  /** The file's text, or undefined when it cannot be read. */
  readText(file: string): string | undefined;
  /** This process's user id (undefined on Windows). */
  uid: number | undefined;
  /** A file's or folder's owner and mode (links followed), or undefined when it cannot be read; not called on Windows. */
  statOf(file: string): { uid: number; mode: number } | undefined;
}

export function systemLocateHost(): LocateHost {
  return {
    ...systemExecutableHost(),
    homedir: os.homedir(),
    uid: process.getuid?.(),
    statOf: (file) => {
      try {
        const { uid, mode } = fs.statSync(file);
        return { uid, mode };
      } catch {
        return undefined;
      }
    },
    readText: (file) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/** How to start the Claude Code that was found: a program, maybe with a script before its own arguments. */
export interface ClaudeCodeLocation {
  /** What was found (shown to the user): the executable, or the Windows `.cmd` shim. */
  found: string;
  command: string;
  argsPrefix: string[];
  /** Set when `command` is Node running the shim's script (the extension host's Electron must act as Node). */
  env?: Record<string, string>;
}

/** The name the setting has by default: searched on PATH and in the installers' places. */
export const DEFAULT_CLAUDE_COMMAND = 'claude';

/**
 * Finds Claude Code: a path in the setting is taken as is (when it exists); a bare name is looked
 * up on PATH (with PATHEXT on Windows), and the default name also where the native installer, the
 * old local installer, npm's global folder and Homebrew put it. Undefined when none exists.
 * `node` runs a Windows npm shim's script (see `fromWindowsShim`).
 */
export function locateClaudeCode(setting: string, host: LocateHost, node: string = process.execPath): ClaudeCodeLocation | undefined {
  const win = host.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  const name = setting.trim() || DEFAULT_CLAUDE_COMMAND;
  const exts = win ? windowsExtensions(envOf(host, 'PATHEXT')) : [''];
  const withExts = (file: string) => (win && p.extname(file) === '' ? exts.map((e) => file + e) : [file]);
  const candidates: string[] = [];
  /** The installers' places: a file there counts only when `safeInstallerPlace`. */
  const installed: string[] = [];
  if (name.includes('/') || (win && name.includes('\\'))) {
    candidates.push(...withExts(name.startsWith('~') ? p.join(host.homedir, name.slice(1)) : name));
  } else {
    // PATH's absolute folders only: never the working directory (a task's repository).
    for (const dir of absolutePathFolders(host)) candidates.push(...withExts(p.join(dir, name)));
    if (name === DEFAULT_CLAUDE_COMMAND) installed.push(...installerPlaces(host).flatMap(withExts));
  }
  for (const file of [...candidates, ...installed]) {
    if (!host.isFile(file)) continue;
    if (!candidates.includes(file) && !safeInstallerPlace(file, host)) continue;
    if (win && /\.(cmd|bat|ps1)$/i.test(file)) {
      const viaShim = fromWindowsShim(file, host, node);
      if (viaShim === 'missing') continue;
      // A script of one's own (no npm shim): started through cmd.exe or PowerShell (commandInvocation).
      return viaShim ?? { found: file, command: file, argsPrefix: [] };
    }
    return { found: file, command: file, argsPrefix: [] };
  }
  return undefined;
}

/** The agent a new task runs: the setting's, or for `auto` Claude Code when it was found. */
export function chooseAgent(setting: AgentSetting, claudeCode: ClaudeCodeLocation | undefined): SettingAgent {
  if (setting !== 'auto') return setting;
  return claudeCode ? 'claude-code' : 'reference';
}

/** The two settings that pick the agent: `offPeak.agent` and `offPeak.claudeCodePath`. */
export interface AgentSettings {
  agentSetting: AgentSetting;
  claudeCodePath: string;
}

/** The agent new tasks run now, and where Claude Code was found (undefined: not found). */
export function resolveAgent(
  settings: AgentSettings,
  host: LocateHost,
  node?: string,
): { agent: SettingAgent; claudeCode: ClaudeCodeLocation | undefined } {
  const claudeCode = locateClaudeCode(settings.claudeCodePath, host, node);
  return { agent: chooseAgent(settings.agentSetting, claudeCode), claudeCode };
}

/**
 * What a window's engine is given to pick a task's agent (read at each first start, so a setting
 * changed or a Claude Code installed applies without a reload): the agent, and how to start
 * Claude Code (where it was found, a Windows npm shim resolved to what it runs; else the setting).
 */
export function engineAgentChoice(
  read: () => AgentSettings,
  host: () => LocateHost,
  node?: string,
): { agent: () => AgentKind; claudeCommand: () => string | ClaudeCodeLocation } {
  return {
    agent: () => resolveAgent(read(), host(), node).agent,
    claudeCommand: () => {
      const settings = read();
      return resolveAgent(settings, host(), node).claudeCode ?? settings.claudeCodePath;
    },
  };
}

/** Where Claude Code's installers put `claude` (the first that exists wins, after PATH). */
function installerPlaces(host: LocateHost): string[] {
  const home = host.homedir;
  if (host.platform === 'win32') {
    const p = path.win32;
    const appData = envOf(host, 'APPDATA') ?? p.join(home, 'AppData', 'Roaming');
    // The native installer's place, then npm's global folder (a .cmd shim).
    return [p.join(home, '.local', 'bin', 'claude'), p.join(appData, 'npm', 'claude')];
  }
  const p = path.posix;
  const places = [
    p.join(home, '.local', 'bin', 'claude'),
    p.join(home, '.claude', 'local', 'claude'),
    p.join(home, '.npm-global', 'bin', 'claude'),
    '/usr/local/bin/claude',
  ];
  if (host.platform === 'darwin') places.push('/opt/homebrew/bin/claude');
  return places;
}

/**
 * Whether a file in an installer's place may be run by `auto`: it and its folder belong to this
 * user or root and neither is group- or other-writable, so another user of the machine (one who
 * installed Homebrew, or a shared `/usr/local/bin`) cannot have put a `claude` there that `auto`
 * would run with the user's login. A folder the user put on PATH is their own choice and is not
 * checked. Windows: not checked, since its files are guarded by ACLs and Node's `mode` there says
 * nothing about who may write (the per-user places are under the user's profile).
 */
function safeInstallerPlace(file: string, host: LocateHost): boolean {
  if (host.platform === 'win32') return true;
  return [file, path.posix.dirname(file)].every((entry) => {
    const stat = host.statOf(entry);
    return stat !== undefined && (stat.uid === 0 || stat.uid === host.uid) && (stat.mode & 0o022) === 0;
  });
}

/**
 * npm's Windows shims (`claude.cmd`, `claude.ps1`) run a program named relative to their own
 * folder (`"%dp0%\node_modules\…\claude.exe"` or `…\cli.js`; `"$basedir/…"` in PowerShell):
 * that program is started directly, a script with Node, so no shell parses the arguments.
 * Undefined when the file names no such program (a script of one's own), `missing` when the
 * program it names is not there (a broken install: not Claude Code).
 */
function fromWindowsShim(shim: string, host: LocateHost, node: string): ClaudeCodeLocation | 'missing' | undefined {
  const text = host.readText(shim);
  if (text === undefined) return 'missing';
  const named = /\.ps1$/i.test(shim) ? /"\$basedir[\\/]([^"$]+)"/g : /"%~?dp0%?\\([^"%]+)"/g;
  const targets = [...text.matchAll(named)].map((m) => m[1]).filter((t) => /\.(exe|c?js|mjs)$/i.test(t) && !/^node(\.exe)?$/i.test(t));
  const target = targets.at(-1);
  if (!target) return undefined;
  const file = path.win32.join(path.win32.dirname(shim), target.replace(/\//g, '\\'));
  if (!host.isFile(file)) return 'missing';
  if (/\.exe$/i.test(file)) return { found: shim, command: file, argsPrefix: [] };
  return { found: shim, command: node, argsPrefix: [file], env: { ELECTRON_RUN_AS_NODE: '1' } };
}

/**
 * Whether Claude Code has a login of its own, looked for before a task is queued (personal mode,
 * docs/flows.md#which-agent): a key or token in the environment, its credentials file, or an
 * account in its config (macOS keeps the token in the keychain, the account in `.claude.json`).
 * `CLAUDE_CONFIG_DIR` moves both files. False only when none is there: the task would fail at once.
 */
export function claudeLoginSeen(env: Record<string, string | undefined>, homedir: string): boolean {
  const inEnv = [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
  ];
  if (inEnv.some((name) => env[name]?.trim())) return true;
  const configDir = env.CLAUDE_CONFIG_DIR?.trim();
  if (fs.existsSync(path.join(configDir || path.join(homedir, '.claude'), '.credentials.json'))) return true;
  try {
    const config = JSON.parse(
      fs.readFileSync(configDir ? path.join(configDir, '.claude.json') : path.join(homedir, '.claude.json'), 'utf8'),
    ) as Record<string, unknown> | undefined;
    return Boolean(config?.oauthAccount || config?.primaryApiKey);
  } catch {
    return false;
  }
}

/** When Claude Code's login files last changed (0: none there): a login made after a task failed for the lack of it counts. */
export function claudeLoginChangedAt(env: Record<string, string | undefined>, homedir: string): number {
  const configDir = env.CLAUDE_CONFIG_DIR?.trim();
  const files = [
    path.join(configDir || path.join(homedir, '.claude'), '.credentials.json'),
    configDir ? path.join(configDir, '.claude.json') : path.join(homedir, '.claude.json'),
  ];
  return Math.max(0, ...files.map((f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0));
}
