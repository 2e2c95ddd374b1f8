// The ticket store the gateway configuration names (memory, SQLite file, or MySQL).
import type { GatewayConfig } from '../config/schema';
import { MysqlTicketStore } from './mysql-store';
import { SqliteTicketStore } from './sqlite-store';
import { MemoryTicketStore, type TicketStore } from './store';

/** The store the configuration names. */
export async function openTicketStore(config: GatewayConfig): Promise<TicketStore> {
  if (config.store === 'memory') return new MemoryTicketStore();
  if (config.store === 'sqlite') return new SqliteTicketStore(config.db);
  return MysqlTicketStore.open({ url: config.mysqlUrl as string, password: config.mysqlPassword, poolSize: config.mysqlPoolSize });
}
