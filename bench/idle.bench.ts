/**
 * Cost of idle windows (issue 8). Writes bench/results/idle.json and prints it.
 *
 * 3 real window processes (each runs the HostEngine: store, task service with the leader lease,
 * scheduler, window registry, runtime; and the panel controller with a webview port that counts
 * snapshots) on one globalStorage holding 1,000 finished tasks and nothing live. After a settle
 * period, measured for IDLE_BENCH_SECONDS (default 600) and scaled to an hour:
 *   db_bytes_written_per_hour      DB persists x file size (each persist writes the whole file)
 *   total_bytes_written_per_hour   bytes the window processes sent to storage (Linux write_bytes)
 *   reloads_per_hour               DB reloads of all windows
 *   cpu_ms_per_window_hour         user + system CPU of a window process, mean of the windows
 *   floor_cpu_ms_per_hour          the same for a bare Node process with the same timer wake-ups (same run)
 *   panel_pushes_per_hour          panel snapshots the windows would have posted to their webviews
 * Extra: lease_renewals_per_hour (each sets the lease file's mtime: metadata only, no data).
 * Side by side, at the same time, the same 3 windows on a DB that also holds 100 repeating
 * schedules none of which is due during the run (docs/flows.md#schedules-and-chains):
 *   db_bytes_written_per_hour_with_schedules   (goal 0)
 *   cpu_ratio_with_schedules_to_without        mean CPU per window-hour, with / without (goal <= 1.1) The window code is bundled with esbuild as the extension is (under tsx
 * its loader thread alone would cost more CPU than the whole idle window).
 * usage: npm run bench -- idle
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { DEFAULT_LEASE_TICK_MS, DEFAULT_LEASE_TTL_MS } from '../src/service/leadership';
import { WATCHED_POLL_MS } from '../src/store/db/change-watcher';
import { runIdleWindows } from '../test/integration/idle-windows';
import { publish, sized } from './mode';

/**
 * The floor: a bare Node process that does nothing but wake up as often as an idle window's timers
 * (the lease tick, which also looks at the DB file and re-checks the holder's scheduler, and the
 * window process's 60 s keep-alive) and watch the storage directory. Prints the CPU milliseconds
 * it used over argv[1] seconds.
 */
const FLOOR_SCRIPT = `
const [seconds, watchDir, tickMs] = [Number(process.argv[1]), process.argv[2], Number(process.argv[3])];
const noop = () => undefined;
for (const ms of [tickMs, 60000]) setInterval(noop, ms);
require('node:fs').watch(watchDir, { persistent: false }, noop);
const start = process.cpuUsage();
setTimeout(() => {
  const cpu = process.cpuUsage(start);
  process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 }));
  process.exit(0);
}, seconds * 1000);
`;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const seconds = Number(process.env.IDLE_BENCH_SECONDS ?? sized(600, 15));
  const windows = 3;
  const tasks = sized(1000, 100);
  // The floor: a bare Node process waking up as often as an idle window's timers, measured alongside.
  let floor: Promise<number> = Promise.resolve(NaN);
  const onMeasureStart = (storageDir: string) => {
    floor = new Promise((resolve, reject) =>
      execFile(process.execPath, ['-e', FLOOR_SCRIPT, String(seconds), storageDir, String(DEFAULT_LEASE_TICK_MS)], (err, stdout) =>
        err ? reject(err) : resolve((JSON.parse(stdout) as { cpuMs: number }).cpuMs),
      ),
    );
  };
  const schedules = 100;
  // Both runs at once, so the machine's load weighs on both alike.
  const [run, withSchedules] = await Promise.all([
    runIdleWindows({ windows, tasks, seconds, killHolder: false, bundled: true, onMeasureStart }),
    runIdleWindows({ windows, tasks, schedules, seconds, killHolder: false, bundled: true }),
  ]);
  const floorCpuMsPerHour = round((await floor) * (3600 / seconds), 0);
  const perHour = 3600 / seconds;
  const sum = (pick: (r: (typeof run.reports)[number]) => number | null) => run.reports.reduce((s, r) => s + (pick(r) ?? 0), 0);
  const persists = sum((r) => r.persists);
  const cpuPerWindowHour = (reports: typeof run.reports) => (reports.reduce((s, r) => s + r.cpuMs, 0) / windows) * perHour;
  const schedulePersists = withSchedules.reports.reduce((s, r) => s + r.persists, 0);
  const result = {
    windows,
    tasks,
    seconds,
    db_bytes_written_per_hour: run.dbFileUnchanged && persists === 0 ? 0 : round(persists * run.dbFileBytes * perHour, 0),
    total_bytes_written_per_hour: round(sum((r) => r.storageBytesWritten) * perHour, 0),
    reloads_per_hour: round(sum((r) => r.reloads) * perHour),
    cpu_ms_per_window_hour: round((sum((r) => r.cpuMs) / windows) * perHour, 0),
    cpu_ms_per_window_hour_holder: round(sum((r) => (r.isLeader ? r.cpuMs : 0)) * perHour, 0),
    floor_cpu_ms_per_hour: floorCpuMsPerHour,
    cpu_ratio_to_floor: round(((sum((r) => r.cpuMs) / windows) * perHour) / floorCpuMsPerHour, 2),
    panel_pushes_per_hour: round(sum((r) => r.panelSnapshots) * perHour),
    lease_renewals_per_hour: round(sum((r) => r.leaseRenewals) * perHour),
    schedules,
    db_bytes_written_per_hour_with_schedules:
      withSchedules.dbFileUnchanged && schedulePersists === 0 ? 0 : round(schedulePersists * withSchedules.dbFileBytes * perHour, 0),
    reloads_per_hour_with_schedules: round(withSchedules.reports.reduce((s, r) => s + r.reloads, 0) * perHour),
    panel_pushes_per_hour_with_schedules: round(withSchedules.reports.reduce((s, r) => s + r.panelSnapshots, 0) * perHour),
    cpu_ms_per_window_hour_with_schedules: round(cpuPerWindowHour(withSchedules.reports), 0),
    cpu_ratio_with_schedules_to_without: round(cpuPerWindowHour(withSchedules.reports) / cpuPerWindowHour(run.reports), 2),
    db_file_bytes: run.dbFileBytes,
    goals: {
      db_bytes_written_per_hour: 0,
      total_bytes_written_per_hour: 100_000,
      reloads_per_hour: 0,
      cpu_ms_per_window_hour: 2000,
      panel_pushes_per_hour: 0,
      db_bytes_written_per_hour_with_schedules: 0,
      cpu_ratio_with_schedules_to_without: 1.1,
    },
    per_window: run.reports,
    per_window_with_schedules: withSchedules.reports,
    notes:
      `Real window processes (HostEngine + PanelController, bundled with esbuild), lease ttl ${DEFAULT_LEASE_TTL_MS / 60_000} min, renewed by setting the lease file mtime a few times per ttl. ` +
      `An idle window wakes for one timer, the lease tick every ${DEFAULT_LEASE_TICK_MS / 1000} s: it checks the lease, looks at the DB file's generation (the store's own backup poll, ${WATCHED_POLL_MS / 1000} s, is re-armed by every look and so never fires) and, in the holder, re-checks the scheduler (no timer of its own while nothing is due). ` +
      "Other windows' writes arrive through a directory watch. " +
      'total_bytes_written_per_hour = Linux write_bytes of the window processes (bytes sent to storage, metadata pages included). ' +
      'per_window.syscallBytesWritten (wchar) also counts IPC with the bench and eventfd wake-ups, not files. ' +
      `*_with_schedules: the same 3 windows on a second globalStorage whose DB also holds ${schedules} daily and weekday schedules, all due 6 h or more after the run, measured at the same time as the run without (the sync loop's one planned wake-up covers them; the lease tick does not plan again while the DB is unchanged). ` +
      `floor_cpu_ms_per_hour = CPU of a bare Node process waking as often as an idle window (${DEFAULT_LEASE_TICK_MS / 1000} s and the window process's 60 s keep-alive timers, a directory watch), measured during the same period: each wake-up costs CPU on its own.`,
    machine: {
      node: process.version,
      cpus: cpus().length,
      loadavg_1m: round(loadavg()[0], 2),
      loadavg_5m: round(loadavg()[1], 2),
      at: new Date().toISOString(),
    },
  };
  publish('idle', result);
}

void main();
