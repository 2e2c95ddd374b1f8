// What `npm start` shows of the demo gateway's output (scripts/start.ts): its banner (URL, demo API
// key) as it is; its structured log (one JSON object a line, src/gateway/http/logger.ts) goes to a
// log file, named on the console once, and only its warnings and errors are shown, as readable lines.
import { appendFileSync, writeFileSync } from 'node:fs';
import { terminalSafeText } from '../src/core/untrusted-text';

/** A gateway log record, or undefined for any other line (the banner). */
function logRecord(line: string): { level: string; msg: string; error?: unknown } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { level, msg, error } = value as Record<string, unknown>;
    return typeof level === 'string' && typeof msg === 'string' ? { level, msg, error } : undefined;
  } catch {
    return undefined;
  }
}

function readable(record: { level: string; msg: string; error?: unknown }): string {
  const error = record.error as { message?: unknown } | string | undefined;
  const why = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : undefined;
  // A log field may carry an upstream's text.
  return terminalSafeText(`${record.level}: ${record.msg}${why ? ` (${why})` : ''}`.replace(/\n/g, ' '));
}

/**
 * Returns the sink for the gateway's stdout and stderr chunks (split anywhere). `print` writes to
 * the console; `logFile` is emptied now and receives the gateway's JSON log lines.
 */
export function gatewayOutputPrinter(print: (text: string) => void, logFile: string): (chunk: string) => void {
  writeFileSync(logFile, '');
  let pending = '';
  let named = false;
  return (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const record = logRecord(line);
      if (!record) {
        if (line.trim() !== '') print(`[gateway] ${terminalSafeText(line)}\n`);
        continue;
      }
      appendFileSync(logFile, `${line}\n`);
      if (!named) {
        named = true;
        print(`[start] the demo gateway's log (JSON lines; warnings and errors are also shown here): ${logFile}\n`);
      }
      if (record.level === 'warn' || record.level === 'error') print(`[gateway] ${readable(record)}\n`);
    }
  };
}
