// A throwaway MariaDB for the MySQL suites: `mariadb-install-db` into a temp directory, then
// `mariadbd` as the current user on a free loopback port (no socket shared with a system server).
// Each test gets its own database on it (`createDatabase`), so suites never see each other's rows.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';

const SEARCH_PATH = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/usr/local/mysql/bin'];

/** Where a server binary is (only in OFFPEAK_MARIADB_BIN_DIR when that is set), or null. */
export function findBinary(name: string): string | null {
  const only = process.env.OFFPEAK_MARIADB_BIN_DIR;
  for (const dir of only ? [only] : [...(process.env.PATH ?? '').split(path.delimiter), ...SEARCH_PATH]) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** True when this machine can start a MariaDB for the tests. */
export function mariadbAvailable(): boolean {
  return findBinary('mariadbd') !== null && findBinary('mariadb-install-db') !== null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export class MariadbServer {
  private databases = 0;

  private constructor(
    readonly port: number,
    private readonly dataDir: string,
    private readonly process: ChildProcess,
    private readonly log: () => string,
  ) {}

  /** Installs a fresh data directory and starts the server; resolves once it accepts connections. */
  static async start(): Promise<MariadbServer> {
    const mariadbd = findBinary('mariadbd');
    const installDb = findBinary('mariadb-install-db');
    if (!mariadbd || !installDb) throw new Error('MariaDB is not installed (mariadbd and mariadb-install-db are needed)');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-mariadb-'));
    const dataDir = path.join(dir, 'data');
    // mariadbd refuses to run as root unless told to; as anyone else it runs as that user.
    const asUser = process.getuid?.() === 0 ? ['--user=root'] : [];
    const install = spawnSync(
      installDb,
      [`--datadir=${dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--no-defaults', ...asUser],
      { encoding: 'utf8' },
    );
    if (install.status !== 0) throw new Error(`mariadb-install-db failed: ${install.stderr || install.stdout}`);
    const port = await freePort();
    let output = '';
    const child = spawn(
      mariadbd,
      [
        '--no-defaults',
        ...asUser,
        `--datadir=${dataDir}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(dir, 'mysqld.sock')}`,
        `--pid-file=${path.join(dir, 'mysqld.pid')}`,
        '--skip-name-resolve',
        '--innodb-buffer-pool-size=64M',
        '--innodb-log-file-size=16M',
        // Throwaway data: no fsync per commit (durability is the server's business, not the test's).
        '--innodb-flush-log-at-trx-commit=0',
        '--max-connections=400',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const server = new MariadbServer(port, dir, child, () => output);
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null) break;
      try {
        const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
        await connection.end();
        return server;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await server.stop();
    throw new Error(`mariadbd did not start:\n${output.slice(-4000)}`);
  }

  /** A new empty database; returns its URL (root, no password, loopback). */
  async createDatabase(): Promise<string> {
    const name = `offpeak_t${process.pid}_${++this.databases}`;
    const connection = await mysql.createConnection({ host: '127.0.0.1', port: this.port, user: 'root' });
    try {
      await connection.query(`CREATE DATABASE ${name}`);
    } finally {
      await connection.end();
    }
    return `mysql://root@127.0.0.1:${this.port}/${name}`;
  }

  /** Server output so far (for failure messages). */
  output(): string {
    return this.log();
  }

  async stop(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      const exited = new Promise((resolve) => this.process.once('exit', resolve));
      this.process.kill('SIGTERM');
      const timer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

let shared: Promise<MariadbServer> | undefined;

/** One server per test process, started on first use and stopped when mocha ends (root hook in the MySQL config). */
export function sharedMariadb(): Promise<MariadbServer> {
  shared ??= MariadbServer.start();
  return shared;
}

export async function stopSharedMariadb(): Promise<void> {
  if (!shared) return;
  const server = await shared.catch(() => undefined);
  shared = undefined;
  await server?.stop();
}
