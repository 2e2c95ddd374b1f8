// The DEMO model's script (pure: the next reply from the conversation so far) and the demo
// pacing presets of the gateway config.
import assert from 'node:assert/strict';
import { resolveGatewayConfig } from '../../src/gateway/config';
import { demoTargetFile, demoTurn } from '../../src/gateway/model/demo-model';

const REFERENCE_TOOLS = ['read_file', 'list_files', 'write_file', 'edit_file', 'run_command'].map((name) => ({ name }));
const pacing = { stepMs: 1_000, activeWindowMs: 3_000 }; // review for ceil(3000/1000)+2 = 5 turns

type Msg = { role: string; content: string | Record<string, unknown>[] };
function conversation(prompt: string, turns: number, resumeAfter?: number): Msg[] {
  const messages: Msg[] = [{ role: 'user', content: prompt }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'list_files', input: {} }] });
    const result: Record<string, unknown>[] = [
      { type: 'tool_result', tool_use_id: `t${i}`, content: i === 2 ? 'exit code 0\nv24.1.0' : 'README.md' },
    ];
    if (resumeAfter === i) result.push({ type: 'text', text: 'The previous working segment of this task was interrupted.' });
    messages.push({ role: 'user', content: result });
  }
  return messages;
}

describe('gateway DEMO model script', () => {
  it('explores first: list, read the README it found, run node --version, then keeps reviewing', () => {
    const steps = [0, 1, 2, 3].map((n) => demoTurn({ messages: conversation('create hello.txt', n), tools: REFERENCE_TOOLS }, pacing)!);
    assert.deepEqual(
      steps.map((s) => s.tool?.name),
      ['list_files', 'read_file', 'run_command', 'list_files'],
    );
    assert.deepEqual(steps[1].tool?.input, { path: 'README.md' });
    assert.deepEqual(steps[2].tool?.input, { command: 'node --version' });
    assert.ok(
      steps.every((s) => s.text.startsWith('[Off-Peak demo model]')),
      'every reply is labelled',
    );
  });

  it('after the resume: writes the file the prompt names (with the node version it saw), checks it, and finishes', () => {
    const at = (extra: number) => {
      const messages = conversation('Please create hello.txt', 4, 3);
      for (let i = 0; i < extra; i++)
        messages.push(
          { role: 'assistant', content: [{ type: 'text', text: 'x' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'ok' }] },
        );
      return demoTurn({ messages, tools: REFERENCE_TOOLS }, pacing)!;
    };
    const write = at(0);
    assert.equal(write.tool?.name, 'write_file');
    assert.equal((write.tool?.input as { path: string }).path, 'hello.txt');
    assert.match((write.tool?.input as { content: string }).content, /node --version said: v24\.1\.0/);
    assert.match(write.text, /Resumed the same session/);
    assert.equal(at(1).tool?.name, 'read_file');
    assert.equal(at(2).tool, undefined, 'the last reply ends the turn');
  });

  it('a call allowed while the task was parked is made again first after the resume (its input unchanged), then the script goes on where it was', () => {
    // Segment 1 ended (3102); the resumed segment's write asked and parked; the user allowed it.
    const messages = conversation('Please create hello.txt', 4, 3);
    const write = demoTurn({ messages, tools: REFERENCE_TOOLS }, pacing)!;
    assert.equal(write.tool?.name, 'write_file');
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: write.text },
          { type: 'tool_use', id: 'w1', ...write.tool },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'w1',
            content: 'The tool did not run: the session was interrupted before it could.',
            is_error: true,
          },
          { type: 'text', text: 'The user has answered:\n- ALLOWED: write_file: hello.txt. Make exactly this tool call again now' },
        ],
      },
    );
    const repeat = demoTurn({ messages, tools: REFERENCE_TOOLS }, pacing)!;
    assert.equal(repeat.tool?.name, 'write_file');
    assert.deepEqual(repeat.tool?.input, write.tool?.input, 'the very call that was allowed');
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: repeat.text },
          { type: 'tool_use', id: 'w2', ...repeat.tool },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'w2', content: 'wrote hello.txt' }] },
    );
    assert.equal(
      demoTurn({ messages, tools: REFERENCE_TOOLS }, pacing)!.tool?.name,
      'read_file',
      'then it checks the file, as after a write',
    );
  });

  it('a parked command allowed in the first segment runs again after the resume before the script writes its file; a denied one is not repeated', () => {
    const messages = conversation('create hello.txt', 2);
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'run_command', input: { command: 'node --version' } }],
    });
    const answered = (decision: string) => [
      ...messages,
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'did not run', is_error: true },
          { type: 'text', text: `The user has answered:\n- ${decision}: run_command: node --version. …` },
        ],
      },
    ];
    const allowed = demoTurn({ messages: answered('ALLOWED'), tools: REFERENCE_TOOLS }, pacing)!;
    assert.deepEqual(allowed.tool, { name: 'run_command', input: { command: 'node --version' } });
    assert.equal(demoTurn({ messages: answered('DENIED'), tools: REFERENCE_TOOLS }, pacing)!.tool?.name, 'write_file');
  });

  it('finishes without a resume after reviewing as long as a segment lasts; plan mode (no write tool) writes nothing', () => {
    assert.equal(demoTurn({ messages: conversation('x', 5), tools: REFERENCE_TOOLS }, pacing)!.tool?.name, 'write_file');
    const readOnly = REFERENCE_TOOLS.filter((t) => t.name === 'read_file' || t.name === 'list_files');
    const plan = demoTurn({ messages: conversation('create a.md', 5), tools: readOnly }, pacing)!;
    assert.equal(plan.tool, undefined);
    assert.match(plan.text, /plan mode/);
  });

  it('falls back to the echo for an agent without the reference tools', () => {
    assert.equal(demoTurn({ messages: conversation('x', 0), tools: [{ name: 'Bash' }] }, pacing), null);
  });

  it('writes only a plain file name in the workspace root, else off-peak-demo.md', () => {
    assert.equal(demoTargetFile('create hello.txt please'), 'hello.txt');
    assert.equal(demoTargetFile('write ../../etc/passwd.txt'), 'off-peak-demo.md');
    assert.equal(demoTargetFile('write /tmp/x.txt'), 'off-peak-demo.md');
    assert.equal(demoTargetFile('say hello'), 'off-peak-demo.md');
  });
});

describe('gateway config: demo pacing', () => {
  it('the working DEMO model paces the demo; echo, a real upstream, or explicit values do not get the presets', () => {
    const paced = resolveGatewayConfig({ demo: true });
    assert.deepEqual([paced.queueHoldMs, paced.admissionHoldMs, paced.activeWindowMs], [15_000, 10_000, 25_000]);
    const echo = resolveGatewayConfig({ demo: true, demoScript: 'echo' });
    assert.deepEqual([echo.queueHoldMs, echo.admissionHoldMs, echo.activeWindowMs], [0, 0, 3 * 3_600_000]);
    const real = resolveGatewayConfig({ demo: true, upstreamUrl: 'https://api.example.test', upstreamApiKey: 'k' });
    assert.equal(real.queueHoldMs, 0);
    assert.equal(resolveGatewayConfig({ demo: true, activeWindowMs: 60_000 }).activeWindowMs, 60_000);
    assert.equal(resolveGatewayConfig({ users: [{ id: 'u', apiKey: 'key-12345678' }] }).queueHoldMs, 0, 'never outside demo mode');
    assert.throws(() => resolveGatewayConfig({ demo: true, demoScript: 'dance' as 'echo' }), /demoScript/);
  });
});
