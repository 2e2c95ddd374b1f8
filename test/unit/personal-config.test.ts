// Personal mode's settings (docs/architecture.md#personal-mode): which mode, the model API base,
// the local authority's gateway configuration; and the sql.js file the authority's tickets live in.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveGatewayConfig } from '../../src/gateway/config';
import { parseModelBaseUrl, personalGatewayConfig, PersonalSettingError, resolveMode } from '../../src/personal/personal-config';
import { SqlJsFileDatabase } from '../../src/personal/sqljs-database';

describe('personal mode settings', () => {
  it('offPeak.mode auto is personal while the gateway URL is empty, gateway otherwise; an explicit mode wins', () => {
    assert.equal(resolveMode('auto', ''), 'personal');
    assert.equal(resolveMode('auto', '  '), 'personal');
    assert.equal(resolveMode('auto', 'https://gw.example'), 'gateway');
    assert.equal(resolveMode('personal', 'https://gw.example'), 'personal');
    assert.equal(resolveMode('gateway', ''), 'gateway');
  });

  it('offPeak.personal.baseUrl: default Anthropic, http(s) only, no credentials in the URL', () => {
    assert.equal(parseModelBaseUrl(''), 'https://api.anthropic.com');
    assert.equal(parseModelBaseUrl('https://llm.example/anthropic/'), 'https://llm.example/anthropic');
    assert.throws(() => parseModelBaseUrl('ftp://x'), PersonalSettingError);
    assert.throws(() => parseModelBaseUrl('https://user:pw@x.example'), /no user name or password/);
    assert.throws(() => parseModelBaseUrl('not a url'), /is not a URL/);
  });

  it('item 5: offPeak.personal.baseUrl refuses plain http:// to anything but loopback (the login and key would travel in clear)', () => {
    for (const url of ['http://llm.example/anthropic', 'http://10.0.0.5:8080', 'http://127.0.0.1.nip.io', 'http://localhost.example.com']) {
      assert.throws(() => parseModelBaseUrl(url), /https/, url);
    }
    assert.equal(parseModelBaseUrl('http://127.0.0.1:4000/'), 'http://127.0.0.1:4000');
    assert.equal(parseModelBaseUrl('http://127.8.9.10:4000'), 'http://127.8.9.10:4000');
    assert.equal(parseModelBaseUrl('http://[::1]:4000'), 'http://[::1]:4000');
    assert.equal(parseModelBaseUrl('https://llm.example'), 'https://llm.example');
  });

  it('item 5: offPeak.personal.baseUrl over plain http takes only a literal loopback address: localhost is refused (it may resolve to ::1 first, which another user can bind)', () => {
    for (const url of ['http://localhost:4000', 'http://LOCALHOST:4000/v1', 'http://localhost.:4000', 'http://localhost6:4000']) {
      assert.throws(() => parseModelBaseUrl(url), /127\.0\.0\.1/, url);
    }
    assert.equal(parseModelBaseUrl('http://[::1]:4000'), 'http://[::1]:4000');
    assert.equal(parseModelBaseUrl('http://127.1:4000'), 'http://127.0.0.1:4000', 'the URL parser writes the address out');
    assert.equal(parseModelBaseUrl('https://localhost:4000'), 'https://localhost:4000', 'https proves the server, wherever it is');
  });

  it('the local authority: loopback only, one user by the hash of the local key (never the key), passthrough on, the hours as off-peak windows, a valid gateway configuration', () => {
    const settings = personalGatewayConfig({
      localKey: 'opk-local-abc',
      port: 0,
      hours: '01:00-07:00',
      modelBaseUrl: 'https://api.anthropic.com',
      timeZone: 'Europe/Berlin',
    });
    const config = resolveGatewayConfig(settings);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.passClientCredential, true);
    assert.deepEqual(config.offPeak, ['01:00-07:00']);
    assert.equal(config.timeZone, 'Europe/Berlin');
    assert.equal(config.users.length, 1);
    assert.ok(!JSON.stringify(config).includes('opk-local-abc'), 'the key itself is in no configuration');
    assert.equal(config.upstreamApiKey, null, 'the model key is read at each request, not configured');
    assert.equal(config.openaiUpstreamUrl, 'https://api.openai.com', "Codex's Responses requests go to OpenAI's API");
    assert.equal(config.openaiUpstreamApiKey, null);
  });
});

describe('the sql.js ticket file (personal/sqljs-database.ts)', () => {
  it('a committed write is on disk at once; a rolled-back transaction leaves the file as it was', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-sqljs-file-')), 'g.sqlite');
    const db = await SqlJsFileDatabase.open(file, { durable: false });
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)');
    const inserted = db.prepare('INSERT INTO t (v) VALUES (?)').run('one');
    assert.equal(inserted.lastInsertRowid, 1);
    const reopened = await SqlJsFileDatabase.open(file);
    assert.deepEqual(reopened.prepare('SELECT v FROM t').all(), [{ v: 'one' }]);
    reopened.close();
    const before = fs.readFileSync(file);
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('two');
    assert.deepEqual(fs.readFileSync(file), before, 'nothing written inside the transaction');
    db.exec('ROLLBACK');
    assert.deepEqual(fs.readFileSync(file), before);
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('three');
    db.exec('COMMIT');
    const after = await SqlJsFileDatabase.open(file);
    assert.deepEqual(after.prepare('SELECT v FROM t ORDER BY id').all(), [{ v: 'one' }, { v: 'three' }]);
    assert.equal(after.pragma('user_version', { simple: true }), 0);
    db.close();
    after.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('a file that is not a database is refused and left untouched', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-sqljs-file-')), 'g.sqlite');
    fs.writeFileSync(file, 'not sqlite at all, just text that is long enough to be read as a header');
    await assert.rejects(SqlJsFileDatabase.open(file), /not a database|file is not a database|malformed/i);
    assert.equal(fs.readFileSync(file, 'utf8'), 'not sqlite at all, just text that is long enough to be read as a header');
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
