/** Runs a store worker script (tsx) to its end and collects the JSON lines it printed. */
import { spawn } from 'node:child_process';

export interface WorkerRun<Line> {
  code: number | null;
  lines: Line[];
  stderr: string;
}

export function runJsonLinesWorker<Line>(script: string, args: readonly string[]): Promise<WorkerRun<Line>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        stderr,
        lines: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line),
      }),
    );
  });
}
