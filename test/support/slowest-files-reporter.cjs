// Mocha's spec reporter, plus, at the end of the run, the suite's slowest test files (the time of
// their tests and hooks), so a slow run says where its time goes. Plain CommonJS: mocha loads a
// reporter before any TypeScript loader. OFFPEAK_SLOWEST_FILES sets how many are listed (8).
'use strict';
/* global module */
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_TEST_END, EVENT_HOOK_END, EVENT_RUN_END } = Mocha.Runner.constants;

class SlowestFilesReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const perFile = new Map();
    const add = (runnable) => {
      if (!runnable.file || typeof runnable.duration !== 'number') return;
      perFile.set(runnable.file, (perFile.get(runnable.file) ?? 0) + runnable.duration);
    };
    runner.on(EVENT_TEST_END, add);
    runner.on(EVENT_HOOK_END, add);
    runner.once(EVENT_RUN_END, () => {
      const count = Number(process.env.OFFPEAK_SLOWEST_FILES) || 8;
      const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, count);
      if (slowest.length === 0) return;
      process.stdout.write(`\n  slowest test files (tests and hooks):\n`);
      for (const [file, ms] of slowest) {
        process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(8)} s  ${path.relative(process.cwd(), file)}\n`);
      }
    });
  }
}

module.exports = SlowestFilesReporter;
