/**
 * Where the extension finds a program it runs by name (git, claude, taskkill, …): on PATH only.
 * Windows starts a bare name from the working directory before PATH (unless
 * `NoDefaultCurrentDirectoryInExePath` is set), and the working directory is often a task's
 * repository, which could ship a `git.exe` of its own; a relative PATH entry (`.`, `bin`, an empty
 * one) is the same hole on every platform. So a name is looked up here, in the absolute folders
 * of PATH only (with PATHEXT on Windows), and the program is started by its full path. The
 * platform, environment and file check are injected, so each platform's branch is tested anywhere.
 */
import { argument as escapeArgument, command as escapeCommand } from 'cross-spawn/lib/util/escape';
import fs from 'node:fs';
import path from 'node:path';

export interface ExecutableHost {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  /** A regular file (or a link to one) exists at this path. */
  isFile(file: string): boolean;
}

export function systemExecutableHost(): ExecutableHost {
  return {
    platform: process.platform,
    env: process.env,
    isFile: (file) => {
      try {
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
}

/** Windows' environment names are case-insensitive (`Path`, `PATH`). */
export function envOf(host: Pick<ExecutableHost, 'platform' | 'env'>, name: string): string | undefined {
  if (host.platform !== 'win32') return host.env[name];
  const key = Object.keys(host.env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : host.env[key];
}

/** The extensions a bare name may have on Windows (PATHEXT), lower case. */
export function windowsExtensions(pathExt: string | undefined): string[] {
  const listed = (pathExt ?? '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .filter(Boolean)
    .map((e) => e.toLowerCase());
  return listed.length ? listed : ['.exe', '.cmd'];
}

/** PATH's absolute folders, in order: an empty or relative entry would mean the working directory. */
export function absolutePathFolders(host: Pick<ExecutableHost, 'platform' | 'env'>): string[] {
  const p = host.platform === 'win32' ? path.win32 : path.posix;
  return (envOf(host, 'PATH') ?? '').split(p.delimiter).filter((dir) => dir !== '' && p.isAbsolute(dir));
}

/**
 * The full path of the program `name` names: a name with a folder is taken as it is; a bare name
 * is the first file in PATH's absolute folders (trying PATHEXT's extensions on Windows when it has
 * none). Undefined when there is none: the caller then does not run it.
 */
export function findOnPath(name: string, host: ExecutableHost): string | undefined {
  const win = host.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  if (name.includes('/') || (win && name.includes('\\'))) return name;
  const exts = win && p.extname(name) === '' ? windowsExtensions(envOf(host, 'PATHEXT')) : [''];
  for (const dir of absolutePathFolders(host)) {
    for (const ext of exts) {
      const file = p.join(dir, name + ext);
      if (host.isFile(file)) return file;
    }
  }
  return undefined;
}

const found = new Map<string, string>();

/** `findOnPath` on this machine, a program found remembered per name and PATH (git runs often). */
export function programOnPath(name: string): string | undefined {
  const host = systemExecutableHost();
  const key = `${name}\0${envOf(host, 'PATH') ?? ''}`;
  const known = found.get(key);
  if (known !== undefined) return known;
  const file = findOnPath(name, host);
  if (file !== undefined) found.set(key, file);
  return file;
}

/** The full path to start for `name` (`programOnPath`); throws, saying where it looked, when PATH has none. */
export function programToRun(name: string, injected?: ExecutableHost): string {
  const file = injected ? findOnPath(name, injected) : programOnPath(name);
  if (file !== undefined) return file;
  const host = injected ?? systemExecutableHost();
  const folders = absolutePathFolders(host);
  const exts =
    host.platform === 'win32' && path.win32.extname(name) === '' ? ` with ${windowsExtensions(envOf(host, 'PATHEXT')).join(', ')}` : '';
  throw new Error(
    `${name} was not found on PATH: looked for it${exts} in ${folders.length ? folders.join(host.platform === 'win32' ? '; ' : ':') : 'no folder (PATH has no absolute folder)'}, never in the working directory`,
  );
}

/** Windows' command interpreter by absolute path: ComSpec when absolute, else the system folder's. */
export function windowsCommandShell(host: Pick<ExecutableHost, 'platform' | 'env'>): string {
  const comSpec = envOf({ ...host, platform: 'win32' }, 'COMSPEC');
  if (comSpec && path.win32.isAbsolute(comSpec)) return comSpec;
  return path.win32.join(envOf({ ...host, platform: 'win32' }, 'SYSTEMROOT') ?? 'C:\\Windows', 'System32', 'cmd.exe');
}

export interface Invocation {
  file: string;
  args: string[];
  /** Windows: `args` are already one cmd.exe command line (no C runtime quoting by Node). */
  windowsVerbatimArguments: boolean;
}

/**
 * How the OS would start the program `file` (a full path) with `args`. Windows runs a batch file
 * (`.cmd`, `.bat`: npm's shims, one's own wrappers) only through cmd.exe, and Node refuses to spawn
 * one without a shell (EINVAL since CVE-2024-27980); a PowerShell script (`.ps1`) only through
 * PowerShell. cmd.exe parses its command line by rules of its own, so each argument is quoted and
 * escaped as cross-spawn does (a well-kept library; an npm shim under `node_modules\.bin` runs
 * cmd.exe again, so its meta characters are escaped twice). Everything else starts directly.
 */
export function commandInvocation(
  file: string,
  args: readonly string[],
  host: Pick<ExecutableHost, 'platform' | 'env'> = systemExecutableHost(),
): Invocation {
  if (host.platform === 'win32' && /\.(cmd|bat)$/i.test(file)) {
    const twice = /node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i.test(file);
    const line = [escapeCommand(path.win32.normalize(file)), ...args.map((arg) => escapeArgument(arg, twice))].join(' ');
    return { file: windowsCommandShell(host), args: ['/d', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
  }
  if (host.platform === 'win32' && /\.ps1$/i.test(file)) {
    const powershell = path.win32.join(
      envOf(host, 'SYSTEMROOT') ?? 'C:\\Windows',
      'System32',
      'WindowsPowerShell',
      'v1.0',
      'powershell.exe',
    );
    return {
      file: powershell,
      args: ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', file, ...args],
      windowsVerbatimArguments: false,
    };
  }
  return { file, args: [...args], windowsVerbatimArguments: false };
}
