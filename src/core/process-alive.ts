import { isAlive } from './process-control';

/** Whether a process with this pid exists on this machine (signal 0 probes without signalling). */
export function isProcessAlive(pid: number): boolean {
  return isAlive(pid, { kill: (p, signal) => process.kill(p, signal) });
}
