// `npm run test:mysql`: the gateway suites against a throwaway MariaDB (test/.mocharc.mysql.json),
// plus the multi-instance tests. Without a MariaDB server binary they cannot run: in CI (CI=true or
// OFFPEAK_REQUIRE_MYSQL=1) that is a failure; elsewhere this says so plainly and exits 0 WITHOUT
// reporting anything as passed.
import { spawnSync } from 'node:child_process';
import { mariadbAvailable } from '../test/mysql/mariadb-server';

if (!mariadbAvailable()) {
  const message = 'MariaDB not installed: MySQL suites not run (install mariadb-server; CI installs it).';
  if (process.env.CI === 'true' || process.env.OFFPEAK_REQUIRE_MYSQL === '1') {
    process.stderr.write(`test:mysql: ${message}\n`);
    process.exit(1);
  }
  process.stdout.write(`test:mysql: ${message}\n`);
  process.exit(0);
}

const run = spawnSync(
  process.execPath,
  ['node_modules/mocha/bin/mocha.js', '--config', 'test/.mocharc.mysql.json', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: { ...process.env, OFFPEAK_GATEWAY_TEST_STORES: 'mysql' },
  },
);
process.exit(run.status ?? 1);
