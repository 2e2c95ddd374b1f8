// The floor for bench/idle.bench.ts: a Node process that does nothing but wake up as often as an
// idle window's timers do (lease check every 10 s, DB file poll every 15 s, a 60 s keep-alive)
// and watches a directory. Prints the CPU milliseconds it used over argv[2] seconds as JSON.
const fs = require('node:fs');
const [seconds, watchDir] = [Number(process.argv[2]), process.argv[3]];
const noop = () => undefined;
for (const ms of [10_000, 15_000, 60_000]) setInterval(noop, ms);
if (watchDir) fs.watch(watchDir, { persistent: false }, noop);
const start = process.cpuUsage();
setTimeout(() => {
  const cpu = process.cpuUsage(start);
  process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
  process.exit(0);
}, seconds * 1000);
