// The reference agent's own git (its shell commands, started through the real launch code:
// src/agent/runtime/segment-launch.ts, agent-git-env.ts) runs nothing a repository's config names,
// under the system git and under the newest git (test/integration/git-variants.ts).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { SegmentRun } from '../../src/agent/runtime/segment-runner';
import { sessionViewOf, withAgentGit } from '../../src/agent/runtime/session-terminal';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { referenceAgentArgv } from '../support/source-bundle';
import { gitVariants, useGit } from './git-variants';
import { makeHostileRepository, markersLeft } from './hostile-git-repo';

for (const variant of gitVariants()) {
  describe(`the reference agent's own git in a hostile repository (real agent, ${variant.name})`, () => {
    useGit(variant);
    let upstream: FakeAnthropicUpstream;
    let root: string;
    let workspace: string;
    let markers: string;

    beforeEach(async () => {
      upstream = await FakeAnthropicUpstream.start();
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-git-'));
      workspace = path.join(root, 'ws');
      markers = path.join(root, 'markers');
      fs.mkdirSync(workspace);
      makeHostileRepository(workspace, markers);
    });
    afterEach(async () => {
      await upstream.close();
      fs.rmSync(root, { recursive: true, force: true });
    });

    /** What a model would ask for: look at the changes, then commit them. */
    const gitWork = (out: string) =>
      `git status --porcelain > '${out}.status'; git diff > /dev/null 2>&1; git add -A && git -c user.name=m -c user.email=m@example.invalid commit -q -m work; git log -1 --format=%s > '${out}.log'`;

    it("the fixture is hostile: the same commands in a plain shell run the repository's fsmonitor, filters, diff drivers and hooks", () => {
      const run = spawnSync('sh', ['-c', gitWork(path.join(root, 'plain'))], {
        cwd: workspace,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull },
      });
      assert.equal(run.status, 0, String(run.stderr));
      const left = markersLeft(markers);
      for (const name of ['fsmonitor', 'clean', 'external-diff', 'hooks-dir-pre-commit'])
        assert.ok(left.includes(name), `${name} did not run (${left.join(', ')})`);
      if (variant.configHooks)
        for (const name of ['evil-pre-commit', 'onbranch-post-commit'])
          assert.ok(left.includes(name), `${name} did not run (${left.join(', ')})`);
    });

    it("item 1: the reference agent's git status, diff and commit run nothing from the repository's config", async () => {
      const out = path.join(root, 'agent');
      upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: gitWork(out) } }, { kind: 'text', text: 'Committed.' });
      const run = await SegmentRun.start({
        adapter: new ReferenceAgentAdapter({
          command: process.execPath,
          argsPrefix: referenceAgentArgv(),
          sessionsDir: path.join(root, 'sessions'),
          env: { OFFPEAK_AGENT_RETRY_BASE_MS: '20', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull },
        }),
        spec: {
          taskId: 'task-1',
          sessionId: 'sess-1',
          resume: false,
          prompt: 'commit the work',
          permissionMode: 'bypassPermissions',
          model: 'fake-model',
          thoughtLevel: null,
          workspacePath: workspace,
        },
        gateway: { anthropicBaseUrl: `${upstream.url}/api/anthropic`, apiKey: 'user-key' },
        ticketId: 'T-1',
        segmentDir: path.join(root, 'segments', '1'),
        proxyTimings: { holdDefaultMs: 30, holdMaxMs: 30 },
      });
      assert.equal((await run.done).kind, 'completed');
      assert.match(fs.readFileSync(`${out}.status`, 'utf8'), /a\.txt/, 'git status ran');
      assert.equal(fs.readFileSync(`${out}.log`, 'utf8').trim(), 'work', 'the commit was made');
      assert.equal(
        execFileSync('git', ['cat-file', 'blob', 'HEAD:a.txt'], { cwd: workspace, encoding: 'utf8' }),
        'one\ntwo\n',
        'committed as the file is (no clean filter)',
      );
      assert.deepEqual(markersLeft(markers), []);
    });

    it("item 1: Open session's terminal runs the same git: its git status, diff and commit run nothing from the repository's config", async () => {
      const hostEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull };
      const task = {
        title: 't',
        prompt: 'p',
        status: 'completed' as const,
        sessionId: '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e',
        workspacePath: workspace,
      };
      const view = await withAgentGit(sessionViewOf(task, 'claude-code', { command: 'claude', hostEnv, proxyPort: 0 }, false), hostEnv);
      assert.equal(view.kind, 'interactive');
      if (view.kind !== 'interactive') return;
      // What VS Code does with the terminal's env (laid over the host's, null removes), then the
      // commands the user's agent would run there.
      const env: NodeJS.ProcessEnv = { ...hostEnv };
      for (const [name, value] of Object.entries(view.terminal.env))
        if (value === null) delete env[name];
        else env[name] = value;
      const out = path.join(root, 'session');
      const run = spawnSync('sh', ['-c', gitWork(out)], { cwd: view.terminal.cwd, env });
      assert.equal(run.status, 0, String(run.stderr));
      assert.equal(fs.readFileSync(`${out}.log`, 'utf8').trim(), 'work', 'the commit was made');
      assert.deepEqual(markersLeft(markers), []);
    });
  });
}
