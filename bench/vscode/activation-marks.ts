// Runs inside the real extension host (npm run bench -- vsix): reads the performance marks VS
// Code's extension host itself sets around loading an extension's code and calling its
// activate(), for Off-Peak Tasks and for the do-nothing test-host extension (the floor), and
// writes them to OFFPEAK_BENCH_ACTIVATION_OUT.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';

const MEASURED = { extension: 'offpeak.off-peak-tasks', floor: 'offpeak-test.vsix-test-host' } as const;

interface Mark {
  name: string;
  startTime: number;
}

/** The extension host's marks (vs/base/common/performance keeps them on globalThis). */
function hostMarks(): Mark[] {
  const perf = (globalThis as { MonacoPerformanceMarks?: { getMarks(): Mark[] } }).MonacoPerformanceMarks;
  assert.ok(perf, 'this VS Code keeps no performance marks in the extension host');
  return perf.getMarks();
}

function span(marks: Mark[], from: string, to: string): number {
  const start = marks.find((m) => m.name === from);
  const end = marks.find((m) => m.name === to);
  assert.ok(start && end, `no marks ${from} / ${to}`);
  return end.startTime - start.startTime;
}

function activationOf(id: string, marks: Mark[]): { code_load_ms: number; activate_ms: number } {
  return {
    code_load_ms: span(marks, `code/extHost/willLoadExtensionCode/${id}`, `code/extHost/didLoadExtensionCode/${id}`),
    activate_ms: span(marks, `code/extHost/willActivateExtension/${id}`, `code/extHost/didActivateExtension/${id}`),
  };
}

describe('activation cost in the extension host', () => {
  it('reads the load and activate() marks of Off-Peak Tasks and of a do-nothing extension', async () => {
    const out = process.env.OFFPEAK_BENCH_ACTIVATION_OUT;
    assert.ok(out, 'OFFPEAK_BENCH_ACTIVATION_OUT is not set');
    for (const id of Object.values(MEASURED)) await vscode.extensions.getExtension(id)?.activate();
    const marks = hostMarks();
    const result = { extension: activationOf(MEASURED.extension, marks), floor: activationOf(MEASURED.floor, marks) };
    writeFileSync(out, JSON.stringify(result));
    console.log(`  [bench] ${JSON.stringify(result)}`);
  });
});
