// `npm start` shows the demo gateway's banner (URL, demo API key) as readable lines; its structured
// JSON log lines go to a log file, and the console says where (scripts/start-gateway-output.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/gateway/http/logger';
import { gatewayOutputPrinter } from '../../scripts/start-gateway-output';

describe('npm start: the demo gateway output (scripts/start-gateway-output.ts)', () => {
  let dir = '';
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-gateway-output-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("item 8: the console gets the banner and no raw JSON log line; the gateway's JSON lines are in the log file it names", () => {
    let printed = '';
    const logFile = path.join(dir, 'gateway.log');
    const sink = gatewayOutputPrinter((text) => (printed += text), logFile);
    // The gateway's own logger writes the JSON lines (stderr), the banner comes on stdout.
    const json: string[] = [];
    const log = createLogger('info', (line) => json.push(line));
    log.info('gateway listening', { url: 'http://127.0.0.1:1234' });
    log.info('ticket active', { ticket_id: 't-1' });
    log.warn('upstream request failed', { ticket_id: 't-1', error: 'connect ECONNREFUSED' });
    sink('Off-Peak Gateway listening on http://127.0.0.1:1234\n  Demo API key: opk_demo_x\n');
    // Chunks split anywhere, also inside a JSON line.
    const all = json.join('');
    sink(all.slice(0, 20));
    sink(all.slice(20, 70));
    sink(all.slice(70));

    const lines = printed.split('\n').filter((l) => l.trim() !== '');
    const raw = lines.filter((l) => /\{\s*"/.test(l));
    assert.deepEqual(raw, [], `raw JSON log lines on the console:\n${printed}`);
    assert.match(printed, /^\[gateway\] Off-Peak Gateway listening on http:\/\/127\.0\.0\.1:1234$/m);
    assert.match(printed, /^\[gateway\] {3}Demo API key: opk_demo_x$/m);
    // A warning is still seen, as a readable line; the log file is named once.
    assert.match(printed, /^\[gateway\] warn: upstream request failed \(connect ECONNREFUSED\)/m);
    assert.equal(printed.split(logFile).length - 1, 1, `the log file is named once:\n${printed}`);
    const logged = readFileSync(logFile, 'utf8').trim().split('\n');
    assert.deepEqual(
      logged.map((l) => (JSON.parse(l) as { msg: string }).msg),
      ['gateway listening', 'ticket active', 'upstream request failed'],
    );
  });
});
