// How the MySQL ticket store reaches its database: the driver, loaded only when a MySQL store opens,
// and the pool options from --mysql-url (a password never in the URL).
import type mysql from 'mysql2/promise';

/**
 * mysql2 (kept out of dist/gateway.js) is loaded when a MySQL store opens, not with the bundle:
 * the demo gateway keeps tickets in memory and so runs where the module is not installed, e.g.
 * from the extension's .vsix.
 */
export function loadMysql2(): typeof mysql {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('mysql2/promise') as typeof mysql;
}

/** Parses the URL into pool options; a password in it is an error (it would end up in argv or logs). */
export function mysqlConnectionOptions(url: string, password: string | null | undefined): mysql.PoolOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid --mysql-url ${JSON.stringify(url)}: expected mysql://user@host:port/database`);
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:')
    throw new Error(`invalid --mysql-url: the scheme must be mysql:// (got ${parsed.protocol})`);
  if (parsed.password)
    throw new Error(
      'invalid --mysql-url: it must not hold a password; set OFFPEAK_GATEWAY_MYSQL_PASSWORD or mysqlPassword in the config file',
    );
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new Error('invalid --mysql-url: name the database, e.g. mysql://offpeak@db:3306/offpeak');
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || 'root'),
    password: password ?? undefined,
    database,
    socketPath: parsed.searchParams.get('socket') ?? undefined,
  };
}
