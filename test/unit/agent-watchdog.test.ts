// The agent watchdog's command on each platform (docs/flows.md#segments): the window's own runtime
// as Node, the agent's pid, and on Windows taskkill from the system folder (never from PATH or the
// working directory); no variable of the window's environment is passed on. The platform is injected,
// except in the last test, which runs the real watchdog over this machine's processes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { watchdogCommand } from '../../src/agent/runtime/agent-watchdog';
import { isAlive, systemProcessHost, treeSpawnOptions } from '../../src/core/process-control';

async function until(what: string, done: () => boolean, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !done();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the agent watchdog command', () => {
  it('item 1: Unix: the runtime as Node with the agent group, nothing of the window environment', () => {
    const cmd = watchdogCommand(4242, {
      platform: 'darwin',
      execPath: '/Applications/Code.app/helper',
      env: { ANTHROPIC_API_KEY: 'sk-secret', PATH: '/usr/bin' },
    });
    assert.equal(cmd.command, '/Applications/Code.app/helper');
    assert.equal(cmd.args[0], '-e');
    assert.deepEqual(cmd.args.slice(2), ['4242'], 'the agent group: no tree kill command');
    assert.deepEqual(cmd.env, { ELECTRON_RUN_AS_NODE: '1' });
  });

  it('platform: Windows: the tree is stopped with taskkill /PID <agent> /T /F, taskkill from SystemRoot\\System32, not PATH (injected platform)', () => {
    const cmd = watchdogCommand(77, {
      platform: 'win32',
      execPath: 'C:\\Code\\Code.exe',
      env: { SystemRoot: 'D:\\Win', PATH: 'C:\\evil' },
    });
    assert.deepEqual(cmd.args.slice(2), ['77', 'D:\\Win\\System32\\taskkill.exe', '/PID', '77', '/T', '/F']);
    assert.deepEqual(cmd.env, { ELECTRON_RUN_AS_NODE: '1', SystemRoot: 'D:\\Win' });
  });

  it("platform: a window that ends without a word has its agent stopped by the watchdog (this platform's own tools; on POSIX its process group, the agent's child included)", async () => {
    const host = systemProcessHost();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watchdog-'));
    const childFile = path.join(dir, 'child.pid');
    const idle = 'setTimeout(() => {}, 120000)';
    const agentCode = `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(idle)}], { stdio: 'ignore' }); require('fs').writeFileSync(${JSON.stringify(childFile)}, String(c.pid)); ${idle}`;
    const agent = spawn(process.execPath, ['-e', agentCode], { stdio: 'ignore', ...treeSpawnOptions(host) });
    const pids = [agent.pid!];
    try {
      await until("the agent's child", () => fs.existsSync(childFile) && fs.readFileSync(childFile, 'utf8') !== '');
      const child = Number(fs.readFileSync(childFile, 'utf8'));
      assert.ok(child > 0, `the agent told its child's pid (${child})`);
      pids.push(child);
      const { command, args, env } = watchdogCommand(agent.pid!);
      // The window's end of the pipe, closed without "stop": as when the window's process ends.
      const watchdog = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], env, windowsHide: true });
      watchdog.stdin!.end();
      await until('the agent to be stopped', () => !isAlive(agent.pid!, host));
      // Windows: taskkill /T stops the child too; Wine 8's taskkill has no /T (docs/platforms.md).
      if (host.platform !== 'win32') await until("the agent's child to be stopped with its group", () => !isAlive(child, host));
      await new Promise((r) => (watchdog.exitCode !== null ? r(undefined) : watchdog.once('exit', r)));
    } finally {
      for (const pid of pids) {
        if (!(Number.isInteger(pid) && pid > 0)) continue; // on Windows process.kill(0) ends this process
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
