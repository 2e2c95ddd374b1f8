// The agent watchdog's command on each platform (docs/flows.md#segments): the window's own runtime
// as Node, the agent's pid, and on Windows taskkill from the system folder (never from PATH or the
// working directory); no variable of the window's environment is passed on. The platform is injected.
import assert from 'node:assert/strict';
import { watchdogCommand } from '../../src/agent/runtime/agent-watchdog';

describe('the agent watchdog command', () => {
  it('item 1: Unix: the runtime as Node with the agent group, nothing of the window environment', () => {
    const cmd = watchdogCommand(4242, { platform: 'darwin', execPath: '/Applications/Code.app/helper', env: { ANTHROPIC_API_KEY: 'sk-secret', PATH: '/usr/bin' } });
    assert.equal(cmd.command, '/Applications/Code.app/helper');
    assert.equal(cmd.args[0], '-e');
    assert.deepEqual(cmd.args.slice(2), ['4242', '']);
    assert.deepEqual(cmd.env, { ELECTRON_RUN_AS_NODE: '1' });
  });

  it('item 1: Windows: taskkill from SystemRoot\\System32, not PATH', () => {
    const cmd = watchdogCommand(77, { platform: 'win32', execPath: 'C:\\Code\\Code.exe', env: { SystemRoot: 'D:\\Win', PATH: 'C:\\evil' } });
    assert.deepEqual(cmd.args.slice(2), ['77', 'D:\\Win\\System32\\taskkill.exe']);
    assert.deepEqual(cmd.env, { ELECTRON_RUN_AS_NODE: '1', SystemRoot: 'D:\\Win' });
  });
});
