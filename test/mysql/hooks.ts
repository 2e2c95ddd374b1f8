// Root hooks of the MySQL suites: the shared throwaway MariaDB stops when the run ends.
import { stopSharedMariadb } from './mariadb-server';

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await stopSharedMariadb();
  },
};
