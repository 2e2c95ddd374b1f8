// One process-control module for every platform (docs/platforms.md): real processes on this
// platform (under the Windows lane: Windows' own), and each other platform's branch with its
// behaviour injected (a scripted process table stands in for PowerShell, wmic or ps; labelled so).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  descendantsOf,
  decodeWindowsOutput,
  findCtrlCProgram,
  gracefulSignals,
  killLeftovers,
  killTree,
  parsePsTable,
  parsePowerShellTable,
  parseWmicTable,
  processTable,
  signalAgent,
  systemProcessHost,
  treeSpawnOptions,
  type ProcessHost,
} from '../../src/core/process-control';
import { isProcessAlive } from '../../src/core/process-alive';

const IDLE = 'setInterval(() => {}, 1000)';
/** A process that starts an idle child and prints the child's pid. */
const WITH_CHILD = `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(IDLE)}], { stdio: 'ignore' }); console.log(c.pid);`;

async function firstLine(child: ChildProcess): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('error', reject);
  });
}

async function gone(pid: number, ms = 15_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50)))
    if (!isProcessAlive(pid)) return true;
  return false;
}

/** A Windows host whose process table is scripted (PowerShell's JSON); kills and runs are recorded. */
function scriptedWindows(rows: { ProcessId: number; ParentProcessId: number; CommandLine?: string }[] | undefined) {
  const kills: [number, NodeJS.Signals | 0][] = [];
  const runs: [string, readonly string[]][] = [];
  const host: ProcessHost = {
    platform: 'win32',
    env: { SystemRoot: 'C:\\Windows' },
    kill: (pid, signal) => void kills.push([pid, signal]),
    run: async (file, args) => {
      runs.push([file, args]);
      return rows && /powershell\.exe$/i.test(file) ? Buffer.from(JSON.stringify(rows)) : undefined;
    },
  };
  return { host, kills, runs };
}

describe('platform: one process-control module (start, stop, find orphans)', () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it("platform: the process table lists a child of this process with its parent (this platform's own tools: /proc, ps, or PowerShell/wmic on Windows)", async () => {
    const child = spawn(process.execPath, ['-e', IDLE], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    started.push(child.pid!);
    const rows = await processTable(systemProcessHost());
    assert.ok(rows, 'the table could be read');
    assert.equal(rows.find((row) => row.pid === child.pid)?.ppid, process.pid);
  });

  it("platform: a forced stop takes the agent's whole tree, its child included (this platform's own rules: process group on POSIX, the process table on Windows)", async () => {
    const host = systemProcessHost();
    const agent = spawn(process.execPath, ['-e', WITH_CHILD], { stdio: ['ignore', 'pipe', 'ignore'], ...treeSpawnOptions(host) });
    started.push(agent.pid!);
    const childPid = Number(await firstLine(agent));
    started.push(childPid);
    assert.ok(isProcessAlive(childPid));
    assert.ok((await killTree(agent.pid!, host)).includes(agent.pid!));
    assert.equal(await gone(agent.pid!), true, 'the agent is stopped');
    assert.equal(await gone(childPid), true, "the agent's child is stopped with it");
  });

  it("platform: the graceful step reaches the agent's own handler (this platform's own: POSIX SIGINT; Windows Ctrl+C to the agent's console through ctrlc-windows' helper)", async () => {
    const host = systemProcessHost();
    const onInterrupt =
      "process.on('SIGINT', () => { console.log('interrupted'); process.exit(7); }); console.log('ready'); setInterval(() => {}, 1000);";
    // Pipes only: on Windows the agent's console is its own (treeSpawnOptions).
    const agent = spawn(process.execPath, ['-e', onInterrupt], { stdio: ['pipe', 'pipe', 'ignore'], ...treeSpawnOptions(host) });
    started.push(agent.pid!);
    assert.equal(await firstLine(agent), 'ready');
    const exited = new Promise<number | null>((resolve) => agent.once('exit', (code) => resolve(code)));
    let out = '';
    agent.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    assert.equal(await signalAgent(agent.pid!, 'SIGINT', host), 'sent');
    assert.equal(await exited, 7, 'the agent ended through its own SIGINT handler');
    assert.match(out, /interrupted/);
  });

  it("platform: ctrlc-windows' helper is found for x64 and arm64 (node_modules here; dist/ctrlc-windows/<arch>/ in the .vsix)", () => {
    assert.match(findCtrlCProgram('x64') ?? '', /[\\/]x64[\\/]process-killer\.exe$/);
    assert.match(findCtrlCProgram('arm64') ?? '', /[\\/]arm64[\\/]process-killer\.exe$/);
  });

  it("platform: what an agent that ended by itself left running is stopped (this platform's own rules: POSIX its group; Windows the children still naming it as parent)", async () => {
    const host = systemProcessHost();
    // On Windows the child gets a console of its own: Wine ends the processes sharing a console
    // with its owner (a real Windows does not); its parent id still names the agent either way.
    const orphaning = WITH_CHILD.replace("{ stdio: 'ignore' }", "{ stdio: 'ignore', detached: process.platform === 'win32' }");
    const agent = spawn(process.execPath, ['-e', `${orphaning} setTimeout(() => process.exit(0), 300);`], {
      stdio: ['ignore', 'pipe', 'ignore'],
      ...treeSpawnOptions(host),
    });
    const childPid = Number(await firstLine(agent));
    started.push(childPid);
    if (agent.exitCode === null) await new Promise((r) => agent.once('exit', r));
    assert.ok(isProcessAlive(childPid), 'the child outlived the agent');
    await killLeftovers(agent.pid!, host);
    assert.equal(await gone(childPid), true);
  });

  it("platform: Windows: the graceful step is Ctrl+C through ctrlc-windows' helper (by absolute path, the pid its only argument), never a signal (it would be TerminateProcess); the forced stop terminates the agent first, then each descendant the table names (injected platform, scripted process table)", async () => {
    const { host, kills, runs } = scriptedWindows([
      { ProcessId: 40, ParentProcessId: 4 },
      { ProcessId: 42, ParentProcessId: 40, CommandLine: 'claude.exe --session-id s1' },
      { ProcessId: 50, ParentProcessId: 42, CommandLine: 'cmd.exe /d /s /c "npm run dev"' },
      { ProcessId: 51, ParentProcessId: 50, CommandLine: 'node server.js' },
      { ProcessId: 60, ParentProcessId: 40 },
    ]);
    host.ctrlCProgram = 'C:\\ext\\dist\\ctrlc-windows\\x64\\process-killer.exe';
    assert.deepEqual(gracefulSignals(host), ['SIGINT']);
    assert.equal(await signalAgent(42, 'SIGINT', host), 'failed', 'the scripted helper fails (exits non-zero) while the agent runs');
    assert.deepEqual(runs, [[host.ctrlCProgram, ['42']]]);
    assert.equal(kills.filter(([, signal]) => signal !== 0).length, 0, 'no signal reached the agent alone');
    runs.length = 0;
    kills.length = 0;
    assert.deepEqual(await killTree(42, host), [42, 50, 51]);
    assert.deepEqual(
      kills.map(([pid]) => pid),
      [42, 50, 51],
    );
  });

  it('platform: Windows without a process table (no PowerShell, no wmic) stops the tree with taskkill /T /F from the system folder (injected platform)', async () => {
    const { host, runs, kills } = scriptedWindows(undefined);
    await killTree(42, host);
    assert.deepEqual(runs.at(-1), ['C:\\Windows\\System32\\taskkill.exe', ['/PID', '42', '/T', '/F']]);
    assert.deepEqual(kills, [[42, 'SIGKILL']], 'and the root is terminated too, in case taskkill could not');
    assert.ok(
      runs.every(([file]) => /^C:\\Windows\\System32\\/.test(file)),
      'every tool by absolute path',
    );
  });

  it("platform: Windows: an ended agent's leftovers are not looked for when its pid now belongs to another process (injected platform)", async () => {
    const { host, kills } = scriptedWindows([{ ProcessId: 50, ParentProcessId: 42 }]);
    host.kill = (pid, signal) => {
      if (signal === 0 && pid === 42) return; // the pid was given to a new process
      kills.push([pid, signal]);
    };
    assert.deepEqual(await killLeftovers(42, host), []);
    assert.deepEqual(kills, []);
  });

  it("platform: Windows: Ctrl+C is 'sent' when the helper succeeds; 'failed' without a helper or for any other signal (no run); 'gone' when the helper failed because the agent had ended (injected platform)", async () => {
    const { host, runs } = scriptedWindows([]);
    assert.equal(await signalAgent(42, 'SIGINT', host), 'failed', 'no helper shipped');
    assert.deepEqual(runs, []);
    host.ctrlCProgram = 'C:\\ext\\process-killer.exe';
    assert.equal(await signalAgent(42, 'SIGTERM', host), 'failed', 'Windows has no other graceful signal');
    assert.deepEqual(runs, []);
    host.run = async () => Buffer.alloc(0);
    assert.equal(await signalAgent(42, 'SIGINT', host), 'sent');
    host.run = async () => undefined;
    host.kill = () => {
      throw Object.assign(new Error('no such process'), { code: 'ESRCH' });
    };
    assert.equal(await signalAgent(42, 'SIGINT', host), 'gone');
  });

  it('platform: POSIX: SIGINT, then SIGTERM to the agent alone, and the forced stop to its process group (injected platform)', async () => {
    const kills: [number, NodeJS.Signals | 0][] = [];
    const host: ProcessHost = {
      platform: 'darwin',
      env: {},
      kill: (pid, signal) => void kills.push([pid, signal]),
      run: async () => undefined,
    };
    assert.deepEqual(gracefulSignals(host), ['SIGINT', 'SIGTERM']);
    assert.equal(await signalAgent(42, 'SIGINT', host), 'sent');
    await killTree(42, host);
    assert.deepEqual(kills, [
      [42, 'SIGINT'],
      [-42, 'SIGKILL'],
    ]);
  });

  it('platform: macOS has no /proc: the table comes from /bin/ps (injected platform, scripted ps output)', async () => {
    const runs: string[] = [];
    const host: ProcessHost = {
      platform: 'darwin',
      env: {},
      kill: () => undefined,
      run: async (file) => {
        runs.push(file);
        return Buffer.from(
          '    1     0     1 /sbin/launchd\n  420     1   420 /Applications/Code.app/Contents/MacOS/Electron --type=extensionHost\n  421   420   421 claude -p --session-id s1\n',
        );
      },
    };
    const rows = await processTable(host);
    assert.deepEqual(runs, ['/bin/ps']);
    assert.deepEqual(rows?.[2], { pid: 421, ppid: 420, pgid: 421, command: 'claude -p --session-id s1' });
    assert.deepEqual(descendantsOf(1, rows!), [420, 421]);
  });

  it("platform: Windows reuses a dead parent's id: a process that started before the one holding its parent id now is not stopped with that one's tree (injected PowerShell table)", () => {
    // 500 started a child (700) and ended; its id went to an unrelated process that the agent's
    // tree (root 500 now) must not take 700 with. 701 is the new 500's own child.
    const rows = parsePowerShellTable(
      JSON.stringify([
        { ProcessId: 4, ParentProcessId: 0, CommandLine: null, Started: 100 },
        { ProcessId: 700, ParentProcessId: 500, CommandLine: 'editor.exe notes.txt', Started: 200 },
        { ProcessId: 500, ParentProcessId: 4, CommandLine: 'node.exe agent.js', Started: 300 },
        { ProcessId: 701, ParentProcessId: 500, CommandLine: 'cmd.exe /d /s /c "npm test"', Started: 400 },
        { ProcessId: 702, ParentProcessId: 701, CommandLine: 'node.exe test.js' },
      ]),
    );
    assert.equal(rows?.[1].startedAt, 200);
    assert.deepEqual(descendantsOf(500, rows!), [701, 702]);
  });

  it("platform: Windows reuses a dead parent's id: wmic's start times (CreationDate, local time with its offset) keep an older process out of the tree as PowerShell's do (injected wmic table)", () => {
    // As in the test above: 700 is the child of the process that had id 500 before (it started
    // at 10:00:00 UTC, given as 11:00 at +060); the agent 500 started at 10:00:01 UTC (+000).
    const text = [
      'CommandLine                 CreationDate               ParentProcessId  ProcessId  ',
      '                                                       0                4          ',
      'editor.exe notes.txt        20261202110000.000000+060  500              700        ',
      'node.exe agent.js 5         20261202100001.000000+000  4                500        ',
      'cmd.exe /d /s /c "npm test" 20261202100001.500000+000  500              701        ',
      'node.exe test.js            20261202100002.000000+000  701              702        ',
    ].join('\r\r\n');
    const rows = parseWmicTable(decodeWindowsOutput(Buffer.from(`\uFEFF${text}`, 'utf16le')));
    assert.deepEqual(rows?.[2], { pid: 500, ppid: 4, command: 'node.exe agent.js 5', startedAt: Date.UTC(2026, 11, 2, 10, 0, 1) * 1000 });
    assert.equal(rows?.[3].startedAt, Date.UTC(2026, 11, 2, 10, 0, 1) * 1000 + 500_000);
    assert.equal(rows?.[1].startedAt, Date.UTC(2026, 11, 2, 10, 0, 0) * 1000, 'the offset in minutes is taken off');
    assert.equal(rows?.[0].startedAt, undefined);
    assert.deepEqual(descendantsOf(500, rows!), [701, 702]);
  });

  it("platform: a wmic that refuses the CreationDate column (as Wine 8's does) is asked without it, and only once per process (injected wmic)", async () => {
    const runs: string[][] = [];
    const host: ProcessHost = {
      platform: 'win32',
      env: { SystemRoot: 'C:\\WineLike' },
      kill: () => undefined,
      run: async (file, args) => {
        runs.push([...args]);
        if (!/WMIC\.exe$/.test(file) || args[2].includes('CreationDate')) return undefined; // no PowerShell; "Invalid query"
        return Buffer.from('CommandLine  ParentProcessId  ProcessId\r\nnode.exe     4                500\r\n');
      },
    };
    assert.deepEqual(await processTable(host), [{ pid: 500, ppid: 4, command: 'node.exe' }]);
    assert.deepEqual(await processTable(host), [{ pid: 500, ppid: 4, command: 'node.exe' }]);
    const wmicColumns = runs.filter((args) => args[0] === 'process').map((args) => args[2]);
    assert.deepEqual(wmicColumns, [
      'CommandLine,CreationDate,ParentProcessId,ProcessId',
      'CommandLine,ParentProcessId,ProcessId',
      'CommandLine,ParentProcessId,ProcessId',
    ]);
  });

  it("platform: wmic's UTF-16 table (as Windows and Wine write it to a file or pipe) is read: the command line, then parent and process ids", () => {
    const text =
      '\uFEFFCommandLine                                  ParentProcessId  ProcessId  \r\r\n                                              0                32         \r\r\nC:\\Windows\\node.exe -e "x 5" session-1       32               284        \r\r\n';
    const rows = parseWmicTable(decodeWindowsOutput(Buffer.from(text, 'utf16le')));
    assert.deepEqual(rows, [
      { pid: 32, ppid: 0, command: undefined },
      { pid: 284, ppid: 32, command: 'C:\\Windows\\node.exe -e "x 5" session-1' },
    ]);
    assert.equal(parseWmicTable('No Instance(s) Available.'), undefined);
    assert.equal(parsePsTable(''), undefined);
  });
});
