/**
 * check_end_to_resume_ms (issue 32): from a task's check command exiting non-zero
 * (docs/flows.md#checks) to the resumed session's first model request reaching the model API:
 * the check's exit -> its output kept and the round recorded -> the fix round's agent spawned on
 * the same ticket -> its first request through the ticket proxy and the gateway. The check writes
 * the time it exits; the upstream records when the request arrived (both this machine's clock).
 * The REAL engine (test timings), the REAL reference gateway and the reference agent; the model is
 * the scripted fake upstream (a fixture standing in for the model API). Goal: at most 2,000 ms.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeGitWorkspace, startWorld, USER_KEY } from '../test/e2e/gateway-fixture';
import { startTestEngine, waitFor } from '../test/e2e/test-engine';

/** Fails (exit 1) until fixed.txt exists; writes when it exits. */
const CHECK_JS = `const fs = require('node:fs');
const ok = fs.existsSync('fixed.txt');
console.log(ok ? 'ok' : 'fixed.txt is missing');
fs.appendFileSync('check-exits.log', Date.now() + '\\n');
process.exit(ok ? 0 : 1);
`;

export async function checkEndToResume(iterations: number): Promise<number[]> {
  const world = await startWorld({});
  const host = await startTestEngine({
    storageDir: path.join(world.root, 'globalStorage'),
    gatewayUrl: world.gateway.url,
    apiKey: USER_KEY,
    agent: 'reference',
    checks: { timeoutMs: () => 60_000, maxRounds: () => 2 },
  });
  const samples: number[] = [];
  try {
    await waitFor(() => host.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(world.root);
    fs.writeFileSync(path.join(ws, 'check.js'), CHECK_JS);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=b@example.invalid', '-c', 'user.name=b', ...args], { cwd: ws, stdio: 'ignore' });
    git('add', 'check.js');
    git('commit', '-q', '-m', 'check');
    for (let i = 0; i < iterations; i++) {
      fs.rmSync(path.join(ws, 'fixed.txt'), { force: true });
      const before = world.upstream.messageRequests().length;
      world.upstream.enqueue(
        { kind: 'text', text: 'done' },
        { kind: 'tool_use', name: 'write_file', input: { path: 'fixed.txt', content: 'fixed\n' } },
        { kind: 'text', text: 'fixed' },
      );
      const task = await host.service.create({
        title: `check ${i}`,
        prompt: 'make the check pass',
        permissionMode: 'acceptEdits',
        workspacePath: ws,
        checkCommand: 'node check.js',
      });
      await waitFor(() => host.service.getTask(task.id)?.status === 'completed', 'completed', 120_000);
      const check = host.store.read((tx) => tx.checks.get(task.id));
      if (check?.state !== 'passed')
        throw new Error(`the check did not pass after the fix round (iteration ${i}: ${JSON.stringify(check)})`);
      // The second request of the task is the fix round's first (after the first turn's one).
      const resumed = world.upstream.messageRequests()[before + 1];
      samples.push(resumed.receivedAt - failedExitAt(ws, i));
    }
  } finally {
    await host.dispose();
    await world.close();
  }
  return samples;
}

/** The failed run's exit time: each iteration's check exits twice (failed, then passed), in order. */
function failedExitAt(ws: string, iteration: number): number {
  const exits = fs.readFileSync(path.join(ws, 'check-exits.log'), 'utf8').trim().split('\n').map(Number);
  return exits[iteration * 2];
}
