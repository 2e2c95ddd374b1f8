// `offPeak.agent` `auto` picks a task's agent through the path the extension gives its engine
// (`engineAgentChoice`, docs/flows.md#which-agent): real temp folders as PATH and home, the real
// PATH lookup on the real file system, a real HostEngine, the real reference gateway in front of
// the scripted model upstream (test fixture). Claude Code is a recording stand-in (TEST FIXTURE:
// test/fixtures/fake-claude-code.ts). The Windows `.cmd` case runs on any machine through an
// injected platform: a win32 host whose C:\ is a temp folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { engineAgentChoice, systemLocateHost, type LocateHost } from '../../src/agent/runtime/claude-code-locate';
import { isTerminalStatus } from '../../src/core/types';
import type { HostEngine } from '../../src/engine/host-engine';
import { fakeClaudeStarts, writeFakeClaudeCode } from '../fixtures/fake-claude-code';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

const AUTO = () => ({ agentSetting: 'auto' as const, claudeCodePath: 'claude' });

describe('auto agent detection (host engine, real gateway)', function () {
  this.timeout(120_000);
  let world: GatewayWorld;
  let engine: HostEngine | undefined;
  let record: string;

  beforeEach(async () => {
    world = await startWorld();
    world.upstream.setDefaultReply({ kind: 'text', text: 'done' });
    record = path.join(world.root, 'claude-starts.jsonl');
  });
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    await world.close();
  });

  const folder = (...parts: string[]) => {
    const dir = path.join(world.root, ...parts);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };

  /** One task queued with the form's defaults in a window whose engine picks the agent with `choice`. */
  async function runOneTask(
    choice: ReturnType<typeof engineAgentChoice>,
  ): Promise<{ status: string; failure: string; agent: string | undefined }> {
    engine = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      agentChoice: choice,
      claudeConfigDir: folder('claude-config'),
    });
    const live = engine;
    await live.service.availability.refresh();
    const task = await live.service.create({
      title: 'auto',
      prompt: 'say hi',
      permissionMode: 'plan',
      workspacePath: makeGitWorkspace(world.root),
      model: null,
    });
    const done = await waitFor(
      () => {
        const t = live.service.getTask(task.id);
        return t && isTerminalStatus(t.status) ? t : undefined;
      },
      'the task to finish',
      90_000,
    );
    const agent = live.store.read((tx) => tx.runtime.get(task.id)?.agent);
    return { status: done.status, failure: done.failureReason ?? '', agent };
  }

  it('Claude Code found on PATH: the task runs it from there (POSIX only: the stand-in starts through its #! line)', async () => {
    const bin = folder('bin');
    writeFakeClaudeCode(path.join(bin, 'claude'), record);
    const host = (): LocateHost => ({ ...systemLocateHost(), env: { PATH: bin }, homedir: folder('home') });
    const ran = await runOneTask(engineAgentChoice(AUTO, host));
    assert.equal(ran.status, 'completed', ran.failure);
    assert.equal(ran.agent, 'claude-code');
    const starts = fakeClaudeStarts(record);
    assert.equal(starts.length, 1, 'the claude found on PATH was started once');
    assert.ok(starts[0].argv.includes('-p') && starts[0].argv.includes('stream-json'), starts[0].argv.join(' '));
    assert.equal(world.upstream.messageRequests().length, 0, 'the reference agent did not run');
  });

  it("Claude Code not found (nothing on PATH or in the installers' places): the reference agent runs the task", async () => {
    const host = (): LocateHost => ({ ...systemLocateHost(), env: { PATH: folder('empty-bin') }, homedir: folder('home') });
    const ran = await runOneTask(engineAgentChoice(AUTO, host));
    assert.equal(ran.status, 'completed', ran.failure);
    assert.equal(ran.agent, 'reference');
    assert.ok(world.upstream.messageRequests().length > 0, 'the reference agent reached the model');
    assert.deepEqual(fakeClaudeStarts(record), []);
  });

  it("Windows-style: npm's claude.cmd in %APPDATA%\\npm is resolved to the cli.js it names and started by the host's own runtime as Node (ELECTRON_RUN_AS_NODE), never the .cmd", async () => {
    const drive = folder('C');
    const onDisk = (file: string) => path.join(drive, ...file.replace(/^C:\\/i, '').split('\\'));
    const npm = 'C:\\Users\\ana\\AppData\\Roaming\\npm';
    const cliJs = `${npm}\\node_modules\\@anthropic-ai\\claude-code\\cli.js`;
    fs.mkdirSync(path.dirname(onDisk(cliJs)), { recursive: true });
    fs.writeFileSync(onDisk(cliJs), '// Claude Code itself would be here\n');
    // The shim npm writes for a package's bin on Windows.
    const shim =
      '@SETLOCAL\r\n@IF EXIST "%~dp0\\node.exe" (\r\n  "%~dp0\\node.exe"  "%~dp0\\node_modules\\@anthropic-ai\\claude-code\\cli.js" %*\r\n) ELSE (\r\n  node  "%~dp0\\node_modules\\@anthropic-ai\\claude-code\\cli.js" %*\r\n)\r\n';
    fs.writeFileSync(onDisk(`${npm}\\claude.cmd`), shim);
    const windows = (): LocateHost => ({
      platform: 'win32',
      env: { Path: 'C:\\Windows\\system32', PATHEXT: '.COM;.EXE;.BAT;.CMD', APPDATA: 'C:\\Users\\ana\\AppData\\Roaming' },
      homedir: 'C:\\Users\\ana',
      isFile: (file) => /^C:\\/i.test(file) && fs.statSync(onDisk(file), { throwIfNoEntry: false })?.isFile() === true,
      readText: (file) => (/^C:\\/i.test(file) && fs.existsSync(onDisk(file)) ? fs.readFileSync(onDisk(file), 'utf8') : undefined),
      uid: undefined,
      statOf: () => {
        throw new Error('Windows has no POSIX owner or mode to check');
      },
    });
    // The extension host's runtime (Electron, acting as Node): the stand-in records how it was started.
    const hostRuntime = path.join(folder('host'), 'code');
    writeFakeClaudeCode(hostRuntime, record);
    const ran = await runOneTask(engineAgentChoice(AUTO, windows, hostRuntime));
    assert.equal(ran.status, 'completed', ran.failure);
    assert.equal(ran.agent, 'claude-code');
    const [start] = fakeClaudeStarts(record);
    assert.ok(start, "the host's runtime was started");
    assert.equal(start.argv[0], cliJs, 'its first argument is the script the shim names');
    assert.equal(start.argv[1], '-p');
    assert.equal(start.electronRunAsNode, '1');
  });
});
