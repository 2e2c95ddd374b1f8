// The one-shot hand-over of a model API key from `npm start -- --personal` to the first window
// (src/personal/model-key-handover.ts, docs/architecture.md#personal-mode). Real files in a temp
// folder standing in for the extension's globalStorage.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  modelKeyHandoverPath,
  removeModelKeyHandover,
  takeModelKeyHandover,
  writeModelKeyHandover,
} from '../../src/personal/model-key-handover';

const KEY = 'sk-ant-api03-handover-test-0123456789';

describe('model API key hand-over (npm start --personal → the first window)', () => {
  let storageDir: string;
  beforeEach(() => {
    storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-handover-'));
  });
  afterEach(() => fs.rmSync(storageDir, { recursive: true, force: true }));

  const leftovers = () => fs.readdirSync(path.dirname(modelKeyHandoverPath(storageDir))).filter((name) => name.startsWith('model-key'));

  it('the first take gets the key and deletes every copy; a second take finds none', () => {
    writeModelKeyHandover(storageDir, `  ${KEY}\n`);
    assert.equal(takeModelKeyHandover(storageDir), KEY);
    assert.deepEqual(leftovers(), []);
    assert.equal(takeModelKeyHandover(storageDir), undefined);
  });

  it('nothing handed over (no personal/ folder yet): undefined, nothing created', () => {
    assert.equal(takeModelKeyHandover(storageDir), undefined);
    assert.deepEqual(fs.readdirSync(storageDir), []);
  });

  it('a newer hand-over replaces an older one that nobody took', () => {
    writeModelKeyHandover(storageDir, 'sk-old-key');
    writeModelKeyHandover(storageDir, KEY);
    assert.equal(takeModelKeyHandover(storageDir), KEY);
    assert.deepEqual(leftovers(), []);
  });

  it('a file that is not a key (empty, spaces) is refused and deleted all the same', () => {
    for (const text of ['', 'two words', 'x'.repeat(5000)]) {
      fs.mkdirSync(path.dirname(modelKeyHandoverPath(storageDir)), { recursive: true });
      fs.writeFileSync(modelKeyHandoverPath(storageDir), text);
      assert.throws(() => takeModelKeyHandover(storageDir), /empty, has spaces or is too long|too large/);
      assert.deepEqual(leftovers(), [], `nothing left after ${JSON.stringify(text.slice(0, 10))}`);
    }
    assert.throws(() => writeModelKeyHandover(storageDir, 'two words'), /empty, has spaces/);
  });

  it('the start removes a hand-over nobody took', () => {
    writeModelKeyHandover(storageDir, KEY);
    removeModelKeyHandover(storageDir);
    assert.deepEqual(leftovers(), []);
    assert.equal(takeModelKeyHandover(storageDir), undefined);
  });

  it('copies left by a window or start that died meanwhile (claimed, half written) are removed after a minute, a fresh one is left alone', () => {
    const dir = path.dirname(writeModelKeyHandover(storageDir, KEY));
    assert.equal(takeModelKeyHandover(storageDir), KEY);
    const stale = path.join(dir, 'model-key.handover.taken-dead');
    const half = path.join(dir, 'model-key.handover.tmp-dead');
    const fresh = path.join(dir, 'model-key.handover.taken-alive');
    for (const file of [stale, half, fresh]) fs.writeFileSync(file, KEY);
    const old = new Date(Date.now() - 5 * 60_000);
    fs.utimesSync(stale, old, old);
    fs.utimesSync(half, old, old);
    assert.equal(takeModelKeyHandover(storageDir), undefined);
    assert.deepEqual(leftovers(), ['model-key.handover.taken-alive']);
  });

  it('POSIX only: the hand-over is 0600 in a 0700 folder, and a link put in its place is not followed', () => {
    const file = writeModelKeyHandover(storageDir, KEY);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
    fs.rmSync(file);
    const secret = path.join(storageDir, 'elsewhere.txt');
    fs.writeFileSync(secret, 'not-for-the-window');
    fs.symlinkSync(secret, file);
    assert.throws(() => takeModelKeyHandover(storageDir), /not a regular file/);
    assert.deepEqual(leftovers(), []);
    assert.equal(fs.readFileSync(secret, 'utf8'), 'not-for-the-window', 'the link target is untouched');
  });
});
