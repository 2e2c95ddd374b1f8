// The reference gateway deploys on its own (docs/gateway.md#deploy-it): a production install of this
// repository (`npm ci --omit=dev`, no dev dependency) runs the bundle's --help and a start on
// SQLite; the container's health check (deploy/gateway-healthcheck.mjs) passes against a real
// gateway's ops address and fails when it should; the Dockerfile and the systemd unit have the
// structure a deployment relies on. No Docker engine or systemd runs here, so those two files are
// checked as text (CI builds the image only where Docker exists).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { npmCli } from '../../scripts/test-all';
import {
  buildGatewayBundle,
  GatewayTestClient,
  killGateways,
  spawnGateway,
  TempDir,
  ticketIdOf,
  type RunningGateway,
} from './gateway-helpers';

const root = path.resolve(__dirname, '../..');
const healthcheck = path.join(root, 'deploy/gateway-healthcheck.mjs');
const KEY = 'alice-key-0123456789';

function run(argv: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function stop(gateway: RunningGateway): Promise<number | null> {
  if (gateway.child.exitCode === null) gateway.child.kill('SIGTERM');
  return gateway.exited;
}

describe('the reference gateway deploys on its own (docs/gateway.md#deploy-it)', function () {
  this.timeout(300_000);
  let dir: TempDir;
  const running: RunningGateway[] = [];

  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(async () => {
    await killGateways(running);
    dir.remove();
  });

  it('a production install (npm ci --omit=dev) runs dist/gateway.js: --help, then a start on SQLite that keeps a ticket across a restart', async () => {
    const app = dir.file('app');
    mkdirSync(path.join(app, 'dist'), { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(root, file), path.join(app, file));
    // From npm's cache where it has the packages (the project's own install filled it). Install
    // scripts are skipped: the one that matters, better-sqlite3's native build, would compile
    // SQLite for minutes; its result for this same locked version and this Node is copied instead.
    const install = await run([npmCli(), 'ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: app,
    });
    assert.equal(install.code, 0, install.out);
    for (const runtime of ['better-sqlite3', 'mysql2']) {
      assert.ok(
        existsSync(path.join(app, 'node_modules', runtime, 'package.json')),
        `the production install lacks ${runtime}, which dist/gateway.js loads at run time`,
      );
    }
    assert.ok(!existsSync(path.join(app, 'node_modules/esbuild')), 'a dev dependency was installed: not a production install');
    const native = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
    mkdirSync(path.dirname(path.join(app, native)), { recursive: true });
    copyFileSync(path.join(root, native), path.join(app, native));
    const bundle = path.join(app, 'dist/gateway.js');
    await buildGatewayBundle(bundle);

    const help = await run([bundle, '--help'], { cwd: app });
    assert.equal(help.code, 0, help.out);
    assert.match(help.out, /usage: node dist\/gateway\.js/);
    assert.match(help.out, /--ops-listen/);

    const db = dir.file('gateway.sqlite');
    const args = [
      '--port',
      '0',
      '--db',
      db,
      '--user',
      `alice:${KEY}`,
      '--always-open',
      '--promote-interval-ms',
      '50',
      '--log-level',
      'warn',
    ];
    const first = await spawnGateway(args, { bundle });
    running.push(first);
    const id = ticketIdOf(await new GatewayTestClient(first.url, KEY).take('deployed-task'));
    assert.equal(await stop(first), 0);
    assert.ok(existsSync(db), 'the SQLite file was written');

    const second = await spawnGateway(args, { bundle });
    running.push(second);
    const again = new GatewayTestClient(second.url, KEY);
    assert.equal(ticketIdOf(await again.take('deployed-task')), id, 'the ticket came back from the SQLite file');
    assert.equal(await stop(second), 0);
  });

  it('the health check passes on the ops address with the ops token and fails without it, on a wrong token or with nothing listening', async () => {
    const port = await freePort();
    const token = 'ops-token-0123456789abcdef';
    const g = await spawnGateway(
      ['--port', '0', '--store', 'memory', '--user', `alice:${KEY}`, '--ops-listen', `127.0.0.1:${port}`, '--log-level', 'silent'],
      {
        env: { OFFPEAK_GATEWAY_OPS_TOKEN: token },
      },
    );
    running.push(g);
    const check = (env: NodeJS.ProcessEnv) => run([healthcheck], { cwd: root, env: { OFFPEAK_GATEWAY_OPS_TOKEN: '', ...env } });
    // The image's wildcard listen address (0.0.0.0) is checked on loopback.
    const healthy = await check({ OFFPEAK_GATEWAY_OPS_LISTEN: `0.0.0.0:${port}`, OFFPEAK_GATEWAY_OPS_TOKEN: token });
    assert.deepEqual([healthy.code, healthy.out.trim()], [0, 'healthz 200']);
    const noToken = await check({ OFFPEAK_GATEWAY_OPS_LISTEN: `127.0.0.1:${port}` });
    assert.deepEqual([noToken.code, noToken.out.trim()], [1, 'healthz 401']);
    const wrongToken = await check({
      OFFPEAK_GATEWAY_OPS_LISTEN: `127.0.0.1:${port}`,
      OFFPEAK_GATEWAY_OPS_TOKEN: 'not-the-token-0123456789',
    });
    assert.equal(wrongToken.code, 1, wrongToken.out);
    assert.equal(await stop(g), 0);
    const gone = await check({ OFFPEAK_GATEWAY_OPS_LISTEN: `127.0.0.1:${port}`, OFFPEAK_GATEWAY_OPS_TOKEN: token });
    assert.equal(gone.code, 1);
    assert.match(gone.out, /unreachable/);
  });

  it('the Dockerfile builds from the bundle and the production dependencies, runs as a non-root user, health-checked on the ops address (its text: no Docker engine here)', () => {
    const text = readFileSync(path.join(root, 'deploy/gateway.Dockerfile'), 'utf8');
    const lines = text.split('\n').filter((line) => line.trim() && !line.startsWith('#'));
    const stages = lines.filter((line) => /^FROM /.test(line));
    assert.ok(stages.length >= 1 && stages.every((line) => /^FROM node:20/.test(line)), stages.join('\n'));
    const runtime = lines.slice(lines.lastIndexOf(stages[stages.length - 1]!));
    assert.ok(
      lines.some((line) => /npm ci --omit=dev/.test(line)),
      'production dependencies only',
    );
    assert.ok(
      runtime.some((line) => /^COPY dist\/gateway\.js /.test(line)),
      'the bundle is copied into the final image',
    );
    const user = runtime.filter((line) => /^USER /.test(line)).pop();
    assert.ok(user && !/^USER (root|0)(:|\s*$)/.test(user), `the final image runs as a non-root user: ${user}`);
    assert.ok(runtime.indexOf(user) < runtime.findIndex((line) => /^ENTRYPOINT /.test(line)), 'USER comes before ENTRYPOINT');
    assert.match(text, /HEALTHCHECK [^\n]*\\\n\s*CMD \["node", "deploy\/gateway-healthcheck\.mjs"\]/);
    assert.match(text, /OFFPEAK_GATEWAY_OPS_LISTEN=0\.0\.0\.0:8788/);
    assert.match(text, /ENTRYPOINT \["node", "dist\/gateway\.js"\]/);
    assert.doesNotMatch(text, /OFFPEAK_UPSTREAM_API_KEY|OFFPEAK_GATEWAY_OPS_TOKEN|--user /, 'no secret baked into the image');
    // Every file copied from the build context exists (the bundle after `npm run build`) and the
    // context's ignore file lets it through.
    const ignore = readFileSync(path.join(root, 'deploy/gateway.Dockerfile.dockerignore'), 'utf8');
    for (const line of lines.filter((l) => /^COPY (?!--from)/.test(l))) {
      const sources = line
        .replace(/^COPY\s+/, '')
        .split(/\s+/)
        .slice(0, -1);
      for (const source of sources) {
        assert.ok(source === 'dist/gateway.js' || existsSync(path.join(root, source)), `${source} is in the repository`);
        assert.ok(ignore.split('\n').includes(`!${source}`), `${source} is let into the build context`);
      }
    }
  });

  it('the systemd unit runs dist/gateway.js as an unprivileged service, SQLite in its state directory, no key on its command line', () => {
    const text = readFileSync(path.join(root, 'deploy/offpeak-gateway.service'), 'utf8');
    const service = /\[Service\]\n([\s\S]*?)\n\[/.exec(text)?.[1] ?? '';
    const settings = new Map<string, string[]>();
    for (const line of service.split('\n').filter((l) => /^\w+=/.test(l))) {
      const [key, value] = [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)];
      settings.set(key, [...(settings.get(key) ?? []), value]);
    }
    assert.match(settings.get('ExecStart')?.[0] ?? '', /^\/usr\/bin\/node \S+\/dist\/gateway\.js$/);
    assert.ok(settings.get('DynamicUser')?.[0] === 'yes' || (settings.get('User')?.[0] ?? 'root') !== 'root', 'not root');
    assert.equal(settings.get('StateDirectory')?.[0], 'offpeak-gateway');
    assert.ok(settings.get('Environment')?.includes('OFFPEAK_GATEWAY_DB=/var/lib/offpeak-gateway/gateway.sqlite'));
    assert.ok(settings.get('Environment')?.some((e) => e.startsWith('OFFPEAK_GATEWAY_OPS_LISTEN=')));
    assert.equal(settings.get('Restart')?.[0], 'on-failure');
    assert.equal(settings.get('NoNewPrivileges')?.[0], 'yes');
    assert.ok(settings.has('EnvironmentFile'), 'secrets come from a file');
    assert.doesNotMatch(service, /OFFPEAK_UPSTREAM_API_KEY=|OFFPEAK_GATEWAY_OPS_TOKEN=|--user /, 'no secret in the unit itself');
    assert.match(text, /\[Install\]\nWantedBy=multi-user\.target/);
  });
});
