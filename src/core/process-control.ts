/**
 * Starting and stopping a process tree on every platform (docs/platforms.md): an agent, what it
 * starts, and what a dead window left behind. One module, the platform injected, so each branch is
 * tested on any machine.
 *
 * - POSIX (Linux, macOS): the agent leads its own process group, so the group is stopped as a
 *   whole: SIGINT to the agent first (a terminal's Ctrl+C), then SIGTERM, then SIGKILL to the group.
 *   A process that left the group (`setsid`, a daemonizing double fork) is found on Linux by the
 *   segment's tag in its environment (`/proc/<pid>/environ`); macOS cannot read it, so there it
 *   is not found.
 * - Windows has no process groups and Node turns every signal into TerminateProcess of that one
 *   process. The graceful step there is a Ctrl+C to the agent's console, sent by ctrlc-windows'
 *   helper (process-killer.exe: attaches to that console, sends CTRL_C_EVENT to every process on
 *   it, as a terminal's Ctrl+C does): the agent is spawned with pipes only, so it gets a console of
 *   its own (libuv's CREATE_NO_WINDOW) that its tree shares and ours is not part of. When the
 *   helper cannot send it (not shipped, access denied, no console) the stop is forced at once. The
 *   forced stop takes the whole tree, found in the process table (PowerShell's Win32_Process, else
 *   wmic) while the agent still runs: the agent first (it can start no more), then everything
 *   whose parent chain leads to it (Windows keeps a process's parent id after the parent ended,
 *   so children of an ended agent are found too, unless the agent's id was given to a new
 *   process; a process older than the one holding its parent id now is not its child, told by
 *   start times where the table has them). Without a process table, `taskkill /T /F`. A
 *   grandchild whose own parent ended before the stop (a detached grandchild) is not found.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface ProcessHost {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  /** Signals a process (a negative pid: a POSIX process group); throws when there is none. */
  kill(pid: number, signal: NodeJS.Signals | 0): void;
  /** Runs a system program (by absolute path); its standard output, or undefined when it failed. */
  run(file: string, args: readonly string[]): Promise<Buffer | undefined>;
  /** Linux's process table folder; undefined where there is none. */
  procDir?: string;
  /** Windows: the program that sends Ctrl+C to a process's console (argv: its pid); undefined where none ships. */
  ctrlCProgram?: string;
}

export interface ProcessRow {
  pid: number;
  ppid: number;
  /** POSIX process group (undefined on Windows). */
  pgid?: number;
  /** The command line; undefined when the platform did not tell (Wine tells none). */
  command?: string;
  /**
   * When it started, as a number that orders within one table (Windows: PowerShell's FILETIME, or
   * microseconds since 1970 from wmic; undefined elsewhere, and from a wmic without the column,
   * as Wine's). Windows reuses a dead parent's id while its children keep it as their parent id.
   */
  startedAt?: number;
}

export function systemProcessHost(): ProcessHost {
  return {
    platform: process.platform,
    env: process.env,
    kill: (pid, signal) => process.kill(pid, signal),
    run: (file, args) =>
      new Promise((resolve) => {
        // No standard input: wmic waits for it to end.
        const child = execFile(
          file,
          [...args],
          { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 60_000, windowsHide: true },
          (err, stdout) => resolve(err ? undefined : stdout),
        );
        child.stdin?.end();
      }),
    procDir: process.platform === 'linux' ? '/proc' : undefined,
    ctrlCProgram: process.platform === 'win32' ? findCtrlCProgram(process.arch) : undefined,
  };
}

/**
 * ctrlc-windows' helper for this architecture: beside the bundle (dist/ctrlc-windows/<arch>/, where
 * esbuild.mjs copies it for the .vsix), else in node_modules (a checkout, the tests).
 */
export function findCtrlCProgram(arch: string): string | undefined {
  const dir = arch === 'arm64' ? 'arm64' : 'x64';
  const candidates = typeof __dirname === 'string' ? [path.join(__dirname, 'ctrlc-windows', dir, 'process-killer.exe')] : [];
  try {
    // An alias keeps esbuild from resolving it at build time (the bundle finds its own copy first).
    const runtimeRequire = require;
    candidates.push(path.join(path.dirname(runtimeRequire.resolve('ctrlc-windows/package.json')), 'dist', dir, 'process-killer.exe'));
  } catch {
    // not installed: only the bundle's copy, if any
  }
  return candidates.find((file) => fs.existsSync(file));
}

/**
 * How to spawn an agent so that its whole tree can be stopped (POSIX: its own process group).
 * Windows: give it pipes only (no inherited handle), so it gets the console of its own that the
 * graceful Ctrl+C goes to.
 */
export function treeSpawnOptions(host: Pick<ProcessHost, 'platform'>): { detached: boolean; windowsHide: true } {
  return { detached: host.platform !== 'win32', windowsHide: true };
}

/** Windows' environment names are case-insensitive (`SystemRoot`, `SYSTEMROOT`). */
function windowsEnv(host: Pick<ProcessHost, 'env'>, name: string): string | undefined {
  const key = Object.keys(host.env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : host.env[key];
}

/** A Windows system program by absolute path (never looked up in the working directory). */
export function windowsSystemProgram(host: Pick<ProcessHost, 'env'>, ...parts: string[]): string {
  return path.win32.join(windowsEnv(host, 'SYSTEMROOT') ?? 'C:\\Windows', 'System32', ...parts);
}

/** `taskkill /T /F` of the tree of `rootPid` (it walks the tree itself, so it runs while the root does). */
export function windowsTreeKillCommand(rootPid: number, host: Pick<ProcessHost, 'env'>): [string, string[]] {
  return [windowsSystemProgram(host, 'taskkill.exe'), ['/PID', String(rootPid), '/T', '/F']];
}

/**
 * The graceful steps of a stop, in order, each followed by its grace period; the forced stop
 * (`killTree`) comes after them. Windows has one: Ctrl+C to the agent's console (see above).
 */
export function gracefulSignals(host: Pick<ProcessHost, 'platform'>): NodeJS.Signals[] {
  return host.platform === 'win32' ? ['SIGINT'] : ['SIGINT', 'SIGTERM'];
}

/** Whether a graceful step reached the agent: `gone` when there was no agent left to reach. */
export type SignalResult = 'sent' | 'gone' | 'failed';

/**
 * Sends a graceful signal. POSIX: to the agent alone (its children hear of it from the agent).
 * Windows: SIGINT is a Ctrl+C to the agent's console, so every process on it hears it, as in a
 * terminal; there is no other graceful signal there.
 */
export async function signalAgent(pid: number, signal: NodeJS.Signals, host: ProcessHost): Promise<SignalResult> {
  if (host.platform === 'win32') {
    if (signal !== 'SIGINT' || host.ctrlCProgram === undefined) return 'failed';
    if ((await host.run(host.ctrlCProgram, [String(pid)])) !== undefined) return 'sent';
    return isAlive(pid, host) ? 'failed' : 'gone';
  }
  try {
    host.kill(pid, signal);
    return 'sent';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : 'failed';
  }
}

/**
 * Stops the tree of `rootPid` by force (the agent's own, started with `treeSpawnOptions`).
 * POSIX: SIGKILL to its process group (to the process alone when it leads none). Windows: the
 * process table's tree, the root first, repeated while new members turn up; `taskkill /T /F`
 * when there is no table. Returns the pids it killed (POSIX: the group's id).
 */
export async function killTree(rootPid: number, host: ProcessHost): Promise<number[]> {
  if (host.platform !== 'win32') {
    for (const target of [-rootPid, rootPid]) {
      try {
        host.kill(target, 'SIGKILL');
        return [rootPid];
      } catch {
        // no such group: the process alone, or nothing
      }
    }
    return [];
  }
  return killWindowsTree(rootPid, host, true);
}

/**
 * After the agent ended by itself: what it started and left running. POSIX: its process group.
 * Windows: the children the process table still names it as parent of, when no process has
 * the agent's id now (else that id went to another process, whose children are not ours).
 */
export async function killLeftovers(rootPid: number, host: ProcessHost): Promise<number[]> {
  if (host.platform !== 'win32') {
    try {
      host.kill(-rootPid, 'SIGKILL');
      return [rootPid];
    } catch {
      return []; // the group is empty
    }
  }
  if (isAlive(rootPid, host)) return [];
  return killWindowsTree(rootPid, host, false);
}

async function killWindowsTree(rootPid: number, host: ProcessHost, includeRoot: boolean): Promise<number[]> {
  const killed = new Set<number>();
  const terminate = (pid: number) => {
    try {
      host.kill(pid, 'SIGKILL'); // TerminateProcess
      killed.add(pid);
    } catch {
      // gone meanwhile
    }
  };
  for (let round = 0; round < 3; round++) {
    // Read before the root is stopped: the tree is whole while it runs.
    const rows = await processTable(host);
    // No table: taskkill walks the tree itself, while the root still runs.
    if (rows === undefined && includeRoot && round === 0) await host.run(...windowsTreeKillCommand(rootPid, host));
    if (includeRoot && round === 0) terminate(rootPid);
    if (rows === undefined) break;
    const fresh = descendantsOf(rootPid, rows).filter((pid) => !killed.has(pid));
    if (fresh.length === 0) break;
    fresh.forEach(terminate);
  }
  return [...killed];
}

/**
 * Every process whose parent chain leads to `rootPid` (not `rootPid` itself), parents first. A
 * process that started before the one holding its parent id now is not its child: on Windows
 * that id was its dead parent's, reused since.
 */
export function descendantsOf(rootPid: number, rows: readonly ProcessRow[]): number[] {
  const startedAt = new Map(rows.map((row) => [row.pid, row.startedAt]));
  const children = new Map<number, number[]>();
  for (const row of rows) {
    if (row.pid === row.ppid) continue;
    const parentStarted = startedAt.get(row.ppid);
    if (row.startedAt !== undefined && parentStarted !== undefined && row.startedAt < parentStarted) continue;
    children.set(row.ppid, [...(children.get(row.ppid) ?? []), row.pid]);
  }
  const found: number[] = [];
  const seen = new Set([rootPid]);
  const queue = [rootPid];
  while (queue.length) {
    for (const pid of children.get(queue.shift()!) ?? []) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      found.push(pid);
      queue.push(pid);
    }
  }
  return found;
}

/**
 * SIGKILLs (Windows: terminates) a command and everything it started that is still its
 * descendant, leaving the rest of the agent's tree alone (the reference agent's run_command).
 */
export async function killSubtree(rootPid: number, host: ProcessHost): Promise<void> {
  const rows = await processTable(host);
  for (const pid of [rootPid, ...(rows ? descendantsOf(rootPid, rows) : [])]) {
    try {
      host.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (!rows && host.platform === 'win32') await host.run(...windowsTreeKillCommand(rootPid, host));
}

export function isAlive(pid: number, host: Pick<ProcessHost, 'kill'>): boolean {
  try {
    host.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, someone else's
  }
}

/**
 * The process table: Linux's /proc; `ps` on other POSIX systems (macOS); on Windows PowerShell's
 * Win32_Process, else wmic (both from the system folder). Undefined when it cannot be read.
 */
export async function processTable(host: ProcessHost): Promise<ProcessRow[] | undefined> {
  if (host.procDir !== undefined) {
    const rows = readProcTable(host.procDir);
    if (rows) return rows;
  }
  if (host.platform === 'win32') {
    const ps = await host.run(windowsSystemProgram(host, 'WindowsPowerShell', 'v1.0', 'powershell.exe'), [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      POWERSHELL_TABLE,
    ]);
    const fromPs = ps === undefined ? undefined : parsePowerShellTable(decodeWindowsOutput(ps));
    if (fromPs) return fromPs;
    return wmicTable(host);
  }
  const out = await host.run('/bin/ps', ['-A', '-o', 'pid=,ppid=,pgid=,command=']);
  return out === undefined ? undefined : parsePsTable(out.toString('utf8'));
}

const POWERSHELL_TABLE =
  "Get-CimInstance Win32_Process | Select-Object ProcessId,ParentProcessId,CommandLine,@{n='Started';e={if ($_.CreationDate) { $_.CreationDate.ToFileTimeUtc() }}} | ConvertTo-Json -Compress";

/** wmic writes UTF-16 (with a byte order mark) when its output is not a console. */
export function decodeWindowsOutput(out: Buffer): string {
  const text = out.includes(0) ? out.toString('utf16le') : out.toString('utf8');
  return text.replace(/^\uFEFF/, '');
}

export function parsePowerShellTable(text: string): ProcessRow[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const rows: ProcessRow[] = [];
  for (const item of list as { ProcessId?: unknown; ParentProcessId?: unknown; CommandLine?: unknown; Started?: unknown }[]) {
    if (typeof item?.ProcessId !== 'number' || typeof item.ParentProcessId !== 'number') continue;
    const row: ProcessRow = {
      pid: item.ProcessId,
      ppid: item.ParentProcessId,
      command: typeof item.CommandLine === 'string' && item.CommandLine ? item.CommandLine : undefined,
    };
    if (typeof item.Started === 'number') row.startedAt = item.Started;
    rows.push(row);
  }
  return rows.length ? rows : undefined;
}

/** The wmic programs that refused the CreationDate column (Wine's): asked without it from then on. */
const wmicWithoutCreationDate = new Set<string>();

/** wmic's table, with start times where this wmic tells them (it prints its columns in name order). */
async function wmicTable(host: ProcessHost): Promise<ProcessRow[] | undefined> {
  const wmic = windowsSystemProgram(host, 'wbem', 'WMIC.exe');
  if (!wmicWithoutCreationDate.has(wmic)) {
    const out = await host.run(wmic, ['process', 'get', 'CommandLine,CreationDate,ParentProcessId,ProcessId']);
    const rows = out === undefined ? undefined : parseWmicTable(decodeWindowsOutput(out));
    if (rows) return rows;
    wmicWithoutCreationDate.add(wmic);
  }
  const out = await host.run(wmic, ['process', 'get', 'CommandLine,ParentProcessId,ProcessId']);
  return out === undefined ? undefined : parseWmicTable(decodeWindowsOutput(out));
}

/**
 * `wmic process get CommandLine[,CreationDate],ParentProcessId,ProcessId`: the command, its start
 * (CIM's `yyyymmddHHMMSS.ffffff±mmm`, local time and its offset in minutes), then the two ids.
 */
export function parseWmicTable(text: string): ProcessRow[] | undefined {
  const lines = text.split(/\r*\n/);
  const header = /^CommandLine\s+(CreationDate\s+)?ParentProcessId\s+ProcessId/i.exec(lines[0]?.trim() ?? '');
  if (!header) return undefined;
  const rows: ProcessRow[] = [];
  for (const line of lines.slice(1)) {
    const m = header[1] ? /^(.*?)\s*(\d{14}\.\d{6}[+-]\d{3})?\s+(\d+)\s+(\d+)\s*$/.exec(line) : /^(.*?)\s*()(\d+)\s+(\d+)\s*$/.exec(line);
    if (!m) continue;
    const row: ProcessRow = { pid: Number(m[4]), ppid: Number(m[3]), command: m[1].trim() || undefined };
    if (m[2]) row.startedAt = cimMicroseconds(m[2]);
    rows.push(row);
  }
  return rows;
}

/** CIM's `yyyymmddHHMMSS.ffffff±mmm` as microseconds since 1970 (UTC). */
function cimMicroseconds(cim: string): number {
  const [y, mo, d, h, mi, sec] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(cim.slice(at, at + (i === 0 ? 4 : 2))));
  const offsetMinutes = Number(cim.slice(21));
  return (Date.UTC(y, mo - 1, d, h, mi, sec) - offsetMinutes * 60_000) * 1000 + Number(cim.slice(15, 21));
}

/** `ps -A -o pid=,ppid=,pgid=,command=`. */
export function parsePsTable(text: string): ProcessRow[] | undefined {
  const rows: ProcessRow[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s?(.*)$/.exec(line);
    if (m) rows.push({ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), command: m[4].trim() || undefined });
  }
  return rows.length ? rows : undefined;
}

/** /proc/<pid>/stat: `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses. */
function statFields(stat: string): { state: string; ppid: number; pgid: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]) };
}

function readProcTable(procDir: string): ProcessRow[] | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(procDir).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const rows: ProcessRow[] = [];
  for (const name of names) {
    try {
      const { state, ppid, pgid } = statFields(fs.readFileSync(path.join(procDir, name, 'stat'), 'utf8'));
      if (state.startsWith('Z')) continue; // a zombie: nothing left to stop
      let command: string | undefined;
      try {
        command =
          fs
            .readFileSync(path.join(procDir, name, 'cmdline'), 'utf8')
            .split('\0')
            .join(' ')
            .trim() || undefined;
      } catch {
        // not ours to read
      }
      rows.push({ pid: Number(name), ppid, pgid, command });
    } catch {
      // gone meanwhile
    }
  }
  return rows;
}

/**
 * The pids (of the process group `pgid`, when given) whose environment holds `name=value`.
 * Linux only (`/proc/<pid>/environ`, readable for the user's own processes); empty elsewhere.
 * A process that cleared its environment (`env -i`) is not found.
 */
export function processesWithEnv(
  name: string,
  value: string,
  host: Pick<ProcessHost, 'procDir'>,
  options: { pgid?: number; exceptPids?: readonly number[] } = {},
): number[] {
  if (host.procDir === undefined) return [];
  const needle = Buffer.from(`${name}=${value}\0`);
  const except = new Set([process.pid, ...(options.exceptPids ?? [])]);
  const found: number[] = [];
  for (const row of readProcTable(host.procDir) ?? []) {
    if (except.has(row.pid) || (options.pgid !== undefined && row.pgid !== options.pgid)) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(path.join(host.procDir, String(row.pid), 'environ'));
    } catch {
      continue; // gone, or another user's process
    }
    // The first variable has no NUL before it; every later one does.
    if (environ.subarray(0, needle.length).equals(needle) || environ.includes(Buffer.concat([Buffer.from([0]), needle])))
      found.push(row.pid);
  }
  return found;
}
