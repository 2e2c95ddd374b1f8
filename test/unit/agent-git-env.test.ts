import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SegmentSpec } from '../../src/agent/runtime/agent-adapter';
import { agentGitEnv, agentRepositorySettings, repositorySettings } from '../../src/agent/runtime/agent-git-env';
import { SAFE_MERGE_DRIVER } from '../../src/agent/workplace/hardened-git';
import { ClaudeCodeAdapter } from '../../src/agent/runtime/claude-code-adapter';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { agentProcessEnv } from '../../src/agent/runtime/segment-launch';

const spec = (segmentDir: string, workspacePath: string): SegmentSpec => ({
  taskId: 't',
  sessionId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  resume: false,
  prompt: 'do it',
  permissionMode: 'plan',
  model: null,
  thoughtLevel: null,
  workspacePath,
  proxyBaseUrl: 'http://127.0.0.1:5/secret',
  segmentDir,
});

describe("the agent's own git", () => {
  it('appends no fsmonitor, a null hooks path and no ext:: transport after the git config entries already in the environment', () => {
    assert.deepEqual(agentGitEnv({}), {
      GIT_NO_LAZY_FETCH: '1',
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: 'false',
      GIT_CONFIG_KEY_1: 'core.hooksPath',
      GIT_CONFIG_VALUE_1: os.devNull,
      GIT_CONFIG_KEY_2: 'protocol.ext.allow',
      GIT_CONFIG_VALUE_2: 'never',
    });
    const base = {
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'Me',
      GIT_CONFIG_KEY_1: 'a.b',
      GIT_CONFIG_VALUE_1: 'c',
    };
    const merged = { ...base, ...agentGitEnv(base) };
    assert.equal(merged.GIT_CONFIG_COUNT, '5');
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((i) => [
        merged[`GIT_CONFIG_KEY_${i}` as keyof typeof merged],
        merged[`GIT_CONFIG_VALUE_${i}` as keyof typeof merged],
      ]),
      [
        ['user.name', 'Me'],
        ['a.b', 'c'],
        ['core.fsmonitor', 'false'],
        ['core.hooksPath', os.devNull],
        ['protocol.ext.allow', 'never'],
      ],
    );
    assert.equal(agentGitEnv({ GIT_CONFIG_COUNT: 'x' }).GIT_CONFIG_COUNT, '3', 'a bogus count is replaced');
    for (const value of Object.values(agentGitEnv(base))) assert.doesNotMatch(value, /secret|sk-|token/i);
  });

  it("item 1: an agent's own git status in a repository with core.fsmonitor runs nothing", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-git-'));
    try {
      const ws = path.join(root, 'ws');
      fs.mkdirSync(ws);
      const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'pipe' });
      git('init', '-q');
      git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'base');
      fs.writeFileSync(path.join(ws, 'a.txt'), '1');
      const marker = path.join(root, 'fsmonitor-ran');
      const shellPath = (file: string) => file.replace(/\\/g, '/'); // git runs these through its sh, also on Windows
      git('config', 'core.fsmonitor', `touch '${shellPath(marker)}'; false`);
      const hooks = path.join(root, 'hooks');
      fs.mkdirSync(hooks);
      fs.writeFileSync(path.join(hooks, 'post-index-change'), `#!/bin/sh\ntouch '${shellPath(marker)}-hook'\n`, { mode: 0o755 });
      git('config', 'core.hooksPath', hooks);
      const host = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull };
      const launches = {
        'claude-code': new ClaudeCodeAdapter({ command: 'claude' }).launch(spec(path.join(root, 'seg-cc'), ws)),
        reference: new ReferenceAgentAdapter({ command: 'node', argsPrefix: [], sessionsDir: path.join(root, 'sessions') }).launch(
          spec(path.join(root, 'seg-ref'), ws),
        ),
      };
      for (const [agent, launch] of Object.entries(launches)) {
        const status = spawnSync('git', ['status', '--porcelain'], {
          cwd: ws,
          env: agentProcessEnv(launch, 'tag', host),
          encoding: 'utf8',
        });
        assert.equal(status.status, 0, status.stderr);
        assert.match(status.stdout, /a\.txt/);
        assert.deepEqual(
          fs.readdirSync(root).filter((f) => f.includes('-ran')),
          [],
          `${agent}: git ran the repository's fsmonitor or hook`,
        );
      }
      // The same git status without the agent's settings does run it: the check above can fail.
      spawnSync('git', ['status', '--porcelain'], { cwd: ws, env: host });
      assert.ok(fs.existsSync(marker), 'plain git status ran the fsmonitor command');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("item 1: the repository's drivers and config hooks are switched off by name; a diff driver only where it names a command", () => {
    const listing = [
      'filter.lfs.clean\ngit-lfs clean -- %f',
      'merge.ours.driver\ntrue',
      'diff.word.textconv\ndocx2txt',
      'diff.csharp.xfuncname\n^class',
      'diff.ext.command\nmy-diff',
      'hook.lint.command\nnpm test',
      'hook.lint.event\npre-commit',
      '',
    ].join('\0');
    assert.deepEqual(repositorySettings(listing), [
      ['filter.lfs.smudge', ''],
      ['filter.lfs.clean', ''],
      ['filter.lfs.process', ''],
      ['filter.lfs.required', 'false'],
      ['merge.ours.driver', SAFE_MERGE_DRIVER],
      ['merge.ours.recursive', ''],
      ['hook.lint.enabled', 'false'],
      ['hook.lint.event', ''],
      ['diff.word.textconv', ''],
      ['diff.ext.command', ''],
    ]);
    for (const bad of ['diff.a=b.command\nx\0', 'hook.a=b.command\nx\0', 'filter.a=b.clean\nx\0'])
      assert.equal(repositorySettings(bad), null, bad);
  });

  it('item 1: an agent does not start in a repository whose config names a driver git could not take back, and says why', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-git-'));
    try {
      execFileSync('git', ['init', '-q'], { cwd: root });
      fs.appendFileSync(path.join(root, '.git', 'config'), '[filter "a=b"]\n\tclean = touch x\n');
      await assert.rejects(agentRepositorySettings(root), /cannot take back/);
      assert.deepEqual(await agentRepositorySettings(path.join(os.tmpdir())), [], 'outside a repository: nothing to switch off');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("item 1: an agent's git does not run an ext:: remote, whatever the repository's protocol.ext.allow says", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-git-'));
    try {
      const ws = path.join(root, 'ws');
      fs.mkdirSync(ws);
      execFileSync('git', ['init', '-q'], { cwd: ws });
      const marker = path.join(root, 'ext-ran').replace(/\\/g, '/');
      execFileSync('git', ['config', 'protocol.ext.allow', 'always'], { cwd: ws });
      execFileSync('git', ['config', 'remote.origin.url', `ext::sh -c touch% ${marker}`], { cwd: ws });
      const host = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull };
      const launch = new ClaudeCodeAdapter({ command: 'claude' }).launch(spec(path.join(root, 'seg'), ws));
      const run = spawnSync('git', ['ls-remote', 'origin'], { cwd: ws, env: agentProcessEnv(launch, 'tag', host), encoding: 'utf8' });
      assert.notEqual(run.status, 0);
      assert.equal(fs.existsSync(marker), false, "the agent's git ran the ext:: command");
      spawnSync('git', ['ls-remote', 'origin'], { cwd: ws, env: host });
      assert.ok(fs.existsSync(marker), 'plain git ran the ext:: command');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
