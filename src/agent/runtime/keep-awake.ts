/**
 * Keep the machine from idle-sleeping while any segment runs, behind the
 * `offPeak.keepAwake` setting. One inhibitor process while the hold count is above zero, none
 * when idle. Each inhibitor also ends by itself when the host process dies, so nothing is left
 * running after a crash:
 *   Linux:   systemd-inhibit --what=idle:sleep … tail --pid=<host> -f /dev/null
 *   macOS:   caffeinate -i -w <host>
 *   Windows: powershell SetThreadExecutionState(ES_CONTINUOUS|ES_SYSTEM_REQUIRED), exits with the host
 * (A closed laptop lid still sleeps: no user-space inhibitor can stop that.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { programOnPath } from '../../core/executable-path';

export interface InhibitorCommand {
  command: string;
  args: string[];
}

export function inhibitorFor(platform: NodeJS.Platform, hostPid: number): InhibitorCommand | null {
  switch (platform) {
    case 'linux':
      return {
        command: 'systemd-inhibit',
        args: [
          '--what=idle:sleep',
          '--who=Off-Peak Tasks',
          '--why=An off-peak task is running',
          '--mode=block',
          'tail',
          `--pid=${hostPid}`,
          '-f',
          '/dev/null',
        ],
      };
    case 'darwin':
      return { command: 'caffeinate', args: ['-i', '-w', String(hostPid)] };
    case 'win32':
      return {
        command: 'powershell.exe',
        args: [
          '-NoProfile',
          '-NonInteractive',
          '-Command',
          `$s='[DllImport("kernel32.dll")] public static extern uint SetThreadExecutionState(uint f);';` +
            `$k=Add-Type -MemberDefinition $s -Name K -Namespace W -PassThru; $null=$k::SetThreadExecutionState(0x80000001);` +
            `Wait-Process -Id ${hostPid}`,
        ],
      };
    default:
      return null;
  }
}

export interface KeepAwakeOptions {
  /** Read on every acquire, so a settings change applies to the next run. */
  enabled: () => boolean;
  /** Defaults to the inhibitor for this platform. */
  command?: InhibitorCommand | null;
  log?: (line: string) => void;
}

export class KeepAwake {
  private holds = 0;
  private child: ChildProcess | null = null;
  private readonly command: InhibitorCommand | null;

  constructor(private readonly options: KeepAwakeOptions) {
    this.command = options.command === undefined ? inhibitorFor(process.platform, process.pid) : options.command;
  }

  get active(): boolean {
    return this.child !== null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** One more thing runs; returns the matching release (idempotent). */
  acquire(): () => void {
    this.holds++;
    if (this.holds === 1 && this.options.enabled() && this.command) this.startInhibitor(this.command);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds === 0) this.stopInhibitor();
    };
  }

  dispose(): void {
    this.holds = 0;
    this.stopInhibitor();
  }

  private startInhibitor(command: InhibitorCommand): void {
    const program = programOnPath(command.command);
    if (program === undefined) {
      this.options.log?.(`keep-awake: ${command.command} is not on PATH; the machine may sleep during runs`);
      return;
    }
    const child = spawn(program, command.args, { stdio: 'ignore', windowsHide: true });
    child.on('error', (err) => {
      this.options.log?.(`keep-awake: ${command.command} is not available (${err.message}); the machine may sleep during runs`);
      if (this.child === child) this.child = null;
    });
    child.on('exit', (code) => {
      // Exiting while still wanted means the inhibitor refused (e.g. no system bus in a container).
      if (this.child === child) {
        this.child = null;
        this.options.log?.(`keep-awake: ${command.command} exited (code ${code}); the machine may sleep during runs`);
      }
    });
    this.child = child;
  }

  private stopInhibitor(): void {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) child.kill('SIGTERM');
  }
}
