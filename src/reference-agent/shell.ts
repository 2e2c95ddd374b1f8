/**
 * The shell run_command hands the model's command line to, per platform (docs/user-guide.md#agent-runtime).
 * POSIX: the user's `$SHELL` (else /bin/sh) with `-c <command>`. Windows: `cmd.exe /d /s /c "<command>"`,
 * passed verbatim: Node would otherwise quote the command line by the C runtime's rules (`\"`),
 * which cmd.exe does not read, so every quoted argument reached the program mangled. With `/s`,
 * cmd.exe drops exactly the outer quotes and runs the rest as typed (what Node's own `shell: true`
 * does). cmd.exe is taken from ComSpec or the system folder, never looked up in the workspace.
 * The platform is injected so each branch is tested on any machine.
 */
import { windowsCommandShell } from '../core/executable-path';

export interface ShellHost {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
}

export interface ShellInvocation {
  file: string;
  args: string[];
  /** Windows: the arguments are already a cmd.exe command line (no C runtime quoting). */
  windowsVerbatimArguments: boolean;
}

const systemHost = (): ShellHost => ({ platform: process.platform, env: process.env });

/** The shell program: Windows' cmd.exe by absolute path only (ComSpec, else %SystemRoot%\System32). */
export function shellProgram(host: ShellHost = systemHost()): string {
  return host.platform === 'win32' ? windowsCommandShell(host) : host.env.SHELL || '/bin/sh';
}

/** How to run `command` (one shell command line, as the model wrote it) on this platform. */
export function shellInvocation(command: string, host: ShellHost = systemHost()): ShellInvocation {
  const file = shellProgram(host);
  if (host.platform !== 'win32') return { file, args: ['-c', command], windowsVerbatimArguments: false };
  return { file, args: ['/d', '/s', '/c', `"${command}"`], windowsVerbatimArguments: true };
}

/** One line for the system prompt: the operating system and the shell run_command uses. */
export function shellDescription(host: ShellHost = systemHost()): string {
  if (host.platform === 'win32') {
    return 'The operating system is Windows. run_command runs each command line with cmd.exe (cmd syntax: `&&`, `%VAR%`, `dir`, `type`, backslash paths; no POSIX tools unless they are on PATH).';
  }
  const os = host.platform === 'darwin' ? 'macOS' : host.platform === 'linux' ? 'Linux' : host.platform;
  return `The operating system is ${os}. run_command runs each command line with ${shellProgram(host)} -c (POSIX shell syntax).`;
}
