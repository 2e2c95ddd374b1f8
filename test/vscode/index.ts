// Entry point the VS Code extension host loads as `extensionTestsPath` (code-server via
// scripts/vscode-test.ts, or desktop VS Code via @vscode/test-electron). It runs the mocha suite
// INSIDE the real extension host; its console output reaches the harness, which prints it.
// run() rejects when any test fails, which makes the host report a non-zero exit code.
//
// Environment (set by the harness through the extension host's environment):
//   OFFPEAK_VSCODE_SPECS    JSON array of absolute spec files to run instead of the *.test.js beside this file
//   OFFPEAK_VSCODE_RESULTS  file to write {"passed","failed","pending","failures":[...]} into
//   OFFPEAK_VSCODE_GREP     only run tests whose full title matches
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// mocha 12's package entry is ESM. Desktop VS Code's Electron Node may not require() ESM, so load
// mocha's CommonJS build, which works in every host.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Mocha = require('mocha/lib/mocha.cjs') as typeof import('mocha');

export interface VsCodeTestResults {
  passed: number;
  failed: number;
  pending: number;
  failures: { title: string; error: string }[];
}

function specFiles(): string[] {
  const fromEnv = process.env.OFFPEAK_VSCODE_SPECS;
  if (fromEnv) {
    const files = JSON.parse(fromEnv) as unknown;
    if (!Array.isArray(files) || files.some((f) => typeof f !== 'string')) {
      throw new Error('OFFPEAK_VSCODE_SPECS must be a JSON array of file paths');
    }
    return files as string[];
  }
  return readdirSync(__dirname)
    .filter((file) => file.endsWith('.test.js'))
    .sort()
    .map((file) => path.join(__dirname, file));
}

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 60_000,
    forbidOnly: true,
    forbidPending: true,
    grep: process.env.OFFPEAK_VSCODE_GREP,
  });
  const files = specFiles();
  if (files.length === 0) return Promise.reject(new Error(`no *.test.js spec files beside ${__filename}`));
  for (const file of files) mocha.addFile(file);

  return new Promise((resolve, reject) => {
    const failures: VsCodeTestResults['failures'] = [];
    let runner: Mocha.Runner;
    try {
      runner = mocha.run((failed) => {
        const stats = runner.stats;
        const results: VsCodeTestResults = {
          passed: stats?.passes ?? 0,
          failed: stats?.failures ?? failed,
          pending: stats?.pending ?? 0,
          failures,
        };
        if (process.env.OFFPEAK_VSCODE_RESULTS) writeFileSync(process.env.OFFPEAK_VSCODE_RESULTS, JSON.stringify(results, null, 2));
        // A plain closing line, alone, for anyone reading the log.
        console.log(`${results.passed} passed, ${results.failed} failed`);
        if (failed > 0) reject(new Error(`${failed} test(s) failed inside VS Code`));
        else resolve();
      });
      runner.on('fail', (test, err: Error) => failures.push({ title: test.fullTitle(), error: String(err?.message ?? err) }));
    } catch (err) {
      reject(err);
    }
  });
}
