import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  DEFAULT_CONFIG,
  GATEWAY_OPTIONS,
  loadGatewayConfig,
  parseListenAddress,
  resolveGatewayConfig,
} from '../../src/gateway/config';
import { mysqlConnectionOptions } from '../../src/gateway/stores/mysql-connection';

describe('gateway configuration', () => {
  const file = JSON.stringify({ users: [{ id: 'u', apiKey: 'file-key-123456' }], readyTtlMs: 1000, segmentCapacity: 9 });

  it('precedence: defaults < config file < env < flags', () => {
    const { config } = loadGatewayConfig(
      ['--config', 'x.json', '--ready-ttl-ms', '3000'],
      { OFFPEAK_GATEWAY_READY_TTL_MS: '2000', OFFPEAK_GATEWAY_SEGMENT_CAPACITY: '7' },
      () => file,
    );
    assert.equal(config.readyTtlMs, 3000);
    assert.equal(config.segmentCapacity, 7);
    assert.equal(config.activeWindowMs, DEFAULT_CONFIG.activeWindowMs);
    assert.equal(config.users[0].id, 'u');
  });

  it('repeatable and comma-separated lists; --no-<bool>; users from flags', () => {
    const { config } = loadGatewayConfig(
      ['--user', 'a:key-aaaaaaaa', '--user', 'b:key-bbbbbbbb:free', '--peak', '09:00-12:00,13:00-17:00', '--no-exposure'],
      {},
    );
    assert.deepEqual(
      config.users.map((u) => [u.id, u.plan]),
      [
        ['a', undefined],
        ['b', 'free'],
      ],
    );
    assert.deepEqual(config.peak, ['09:00-12:00', '13:00-17:00']);
    assert.equal(config.exposure, false);
  });

  it('demo mode presets: memory store and always-open windows unless windows are given', () => {
    assert.deepEqual([resolveGatewayConfig({ demo: true }).store, resolveGatewayConfig({ demo: true }).alwaysOpen], ['memory', true]);
    assert.equal(resolveGatewayConfig({ demo: true, peak: ['14:00-18:00'] }).alwaysOpen, false);
  });

  it('bad input is a ConfigError that says what is wrong', () => {
    assert.throws(
      () => loadGatewayConfig(['--port', 'eighty'], {}),
      (e: Error) => e instanceof ConfigError && /--port: expected a whole number/.test(e.message),
    );
    assert.throws(() => loadGatewayConfig(['--bogus'], {}), /unknown option --bogus/);
    assert.throws(() => loadGatewayConfig([], {}), /no users configured/);
    assert.throws(() => loadGatewayConfig(['--config', 'x.json'], {}, () => '{"nope": 1, "users": []}'), /unknown keys nope/);
    assert.throws(() => loadGatewayConfig(['--config', 'x.json'], {}, () => '{oops'), /not valid JSON/);
    assert.throws(() => resolveGatewayConfig({ demo: true, readyTtlMs: -5 }), /readyTtlMs/);
    assert.throws(() => resolveGatewayConfig({ demo: true, alwaysOpen: true, windowsClosed: true }), /contradict/);
    assert.throws(
      () => resolveGatewayConfig({ demo: true, timeZone: 'Mars/Olympus' }),
      (e: Error) => e instanceof ConfigError && /unknown time zone/.test(e.message),
    );
    assert.throws(
      () => resolveGatewayConfig({ demo: true, peak: ['14:00-28:00'] }),
      (e: Error) => e instanceof ConfigError && /invalid time range/.test(e.message),
    );
  });

  it('hardening options: ops address and token, unknown-model policy, per-user and server-wide limits', () => {
    const { config } = loadGatewayConfig(
      [
        '--demo',
        '--ops-listen',
        '[::1]:9090',
        '--unknown-model',
        'reject',
        '--max-long-polls-per-user',
        '2',
        '--max-model-concurrency-per-user',
        '3',
        '--body-read-timeout-ms',
        '500',
        '--max-connections',
        '50',
      ],
      { OFFPEAK_GATEWAY_OPS_TOKEN: 'ops-token-0123456789' },
    );
    assert.deepEqual(parseListenAddress(config.opsListen as string), { host: '::1', port: 9090 });
    assert.deepEqual(
      [
        config.opsToken,
        config.unknownModel,
        config.maxLongPollsPerUser,
        config.maxModelRequestsPerUser,
        config.bodyReadTimeoutMs,
        config.maxConnections,
      ],
      ['ops-token-0123456789', 'reject', 2, 3, 500, 50],
    );
    assert.equal(GATEWAY_OPTIONS.find((o) => o.key === 'opsToken')?.flag, '', 'the ops token is a secret: env or file only');
    assert.throws(
      () => resolveGatewayConfig({ demo: true, opsListen: '9090' }),
      (e: Error) => e instanceof ConfigError && /opsListen: expected host:port/.test(e.message),
    );
    assert.throws(() => resolveGatewayConfig({ demo: true, opsToken: 'short' }), /opsToken/);
    assert.throws(() => resolveGatewayConfig({ demo: true, unknownModel: 'drop' as 'reject' }), /unknownModel/);
    assert.throws(
      () => resolveGatewayConfig({ demo: true, defaultModel: 'claude-unlisted' }),
      (e: Error) => e instanceof ConfigError && /claude-unlisted is not one of the allowed models/.test(e.message),
    );
    assert.throws(() => resolveGatewayConfig({ demo: true, maxConnections: 0 }), /maxConnections/);
  });

  it('every option has a distinct flag and env name, and the upstream key is env-only', () => {
    const flags = GATEWAY_OPTIONS.map((o) => o.flag).filter(Boolean);
    assert.equal(new Set(flags).size, flags.length);
    assert.equal(new Set(GATEWAY_OPTIONS.map((o) => o.env)).size, GATEWAY_OPTIONS.length);
    assert.equal(GATEWAY_OPTIONS.find((o) => o.key === 'upstreamApiKey')?.flag, '');
  });

  it('docs/gateway.md documents every option (flag and env name) in its Options table', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../docs/gateway.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Options'));
    assert.ok(doc.includes('## Options'), 'docs/gateway.md has its Options section');
    for (const o of GATEWAY_OPTIONS) {
      if (o.flag) assert.ok(section.includes(`\`${o.flag}`), `docs/gateway.md lacks ${o.flag}`);
      assert.ok(section.includes(o.env), `docs/gateway.md lacks ${o.env}`);
    }
  });

  it('--store mysql: the URL is a flag, the password only env or config file, and a URL holding a password is refused', () => {
    assert.throws(
      () => loadGatewayConfig(['--store', 'mysql', '--user', 'a:key-aaaaaaaa'], {}),
      (e: Error) => e instanceof ConfigError && /--mysql-url/.test(e.message),
    );
    assert.throws(
      () => loadGatewayConfig(['--mysql-password', 'pw'], {}),
      (e: Error) => e instanceof ConfigError && /unknown option --mysql-password/.test(e.message),
    );
    const { config } = loadGatewayConfig(
      ['--store', 'mysql', '--mysql-url', 'mysql://offpeak@db.internal:3307/queue', '--user', 'a:key-aaaaaaaa'],
      { OFFPEAK_GATEWAY_MYSQL_PASSWORD: 's3cret' },
    );
    assert.deepEqual([config.store, config.mysqlUrl, config.mysqlPassword], ['mysql', 'mysql://offpeak@db.internal:3307/queue', 's3cret']);
    const options = mysqlConnectionOptions(config.mysqlUrl as string, config.mysqlPassword);
    assert.deepEqual(
      [options.host, options.port, options.user, options.password, options.database],
      ['db.internal', 3307, 'offpeak', 's3cret', 'queue'],
    );
    assert.throws(() => mysqlConnectionOptions('mysql://offpeak:pw@db/queue', null), /must not hold a password/);
    assert.throws(() => mysqlConnectionOptions('mysql://offpeak@db/', null), /name the database/);
  });
});
