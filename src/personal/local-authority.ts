// Personal mode's local authority (docs/architecture.md#personal-mode): the reference gateway's
// ticket rules for this user on this machine, one for all windows, on a channel only this user can
// use (personal/authority-channel.ts; never a loopback port another user could bind). Whichever
// window needs it first takes the lock file and runs the gateway in its own extension host
// process (no child process: nothing to find on argv or in the environment, and a take-over costs
// one listen, not a Node start); the others follow. Each start listens on fresh random names,
// published in authority.json, and every connection proves both ends hold the local key before
// anything else crosses it (personal/channel-proof.ts). Each follower keeps one proven idle
// connection to the runner's presence channel: when the runner's process ends or closes the
// authority, that connection closes, and the followers race for the lock at once; the winner
// listens on new names with the same SQLite file, so tickets keep their ids; the windows and
// their segments dial the name this window knows now at each new connection (`connect`).
// Between the two, requests are refused and the ticket proxy holds them (docs/flows.md#segments).
import net from 'node:net';
import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import type { GatewayConfig } from '../gateway/config';
import { silentLogger } from '../gateway/http/logger';
import { GatewayServer } from '../gateway/http/server';
import { SqliteTicketStore } from '../gateway/stores/sqlite-store';
import { FileLock, type LockHandle } from '../store/db/file-lock';
import {
  AUTHORITY_URL,
  checkChannelFolder,
  clearStaleSocket,
  isOwnChannel,
  newAuthorityChannels,
  removeOldSockets,
} from './authority-channel';
import { ChannelProofError, connectProven, proofGate } from './channel-proof';
import { authorityPaths, readDiscovery, readOrCreateLocalKey, writeDiscovery, type AuthorityPaths } from './authority-files';
import { personalGatewayConfig } from './personal-config';
import { SqlJsFileDatabase } from './sqljs-database';

export interface LocalAuthorityOptions {
  /** globalStorage: the authority's files go to `<storageDir>/personal/`. */
  storageDir: string;
  /** Read when this window starts the authority (`offPeak.personal.hours`, `offPeak.personal.baseUrl`). */
  settings: () => { hours: string; modelBaseUrl: string; stopAtUtilization?: number | null };
  /** The model API key (SecretStorage), read at each model request that carries no login of its own. */
  modelApiKey: () => Promise<string | undefined>;
  /** Gateway settings over personal mode's (tests shorten timers). */
  gatewayOverrides?: Partial<GatewayConfig>;
  clock?: Clock;
  wasmPath?: string;
  /** fsync each ticket write (default true). */
  durable?: boolean;
  /** How long `start` waits for an authority to run (own or another window's). Default 10 s. */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
  /** This window started serving the authority (`takeover`: after another window's ended). */
  onServing?: (event: { at: number; takeover: boolean }) => void;
  /** Why the authority cannot run now (a take-over failed; tried again every 5 s), or undefined once it runs again. */
  onProblem?: (problem: string | undefined) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class LocalAuthority {
  readonly key: string;
  private readonly paths: AuthorityPaths;
  private readonly lock: FileLock;
  private lockHandle: LockHandle | undefined;
  private gateway: GatewayServer | undefined;
  private presence: net.Server | undefined;
  private readonly presenceSockets = new Set<net.Socket>();
  private watch: net.Socket | undefined;
  /** The gateway's channel this window knows now: its own, or the one authority.json named when it followed. */
  private address = '';
  private disposed = false;
  private ensuring: Promise<void> | undefined;
  private readonly log: (line: string) => void;
  private currentProblem: string | undefined;

  private constructor(private readonly options: LocalAuthorityOptions) {
    this.paths = authorityPaths(options.storageDir);
    this.key = readOrCreateLocalKey(this.paths);
    // Staleness by owner pid (same machine) is immediate; the heartbeat only guards a frozen owner.
    this.lock = new FileLock(this.paths.lock, { staleMs: 10 * 60_000, acquireTimeoutMs: 0 });
    this.log = options.log ?? (() => undefined);
  }

  /** Resolves once an authority runs (this window's or another's) and this window knows where. */
  static async start(options: LocalAuthorityOptions): Promise<LocalAuthority> {
    const authority = new LocalAuthority(options);
    await authority.ensure(false);
    return authority;
  }

  /** The base URL for gateway calls; they go over `socketPath` (the host resolves nowhere). */
  get url(): string {
    return AUTHORITY_URL;
  }

  /** The gateway's Unix domain socket / named pipe now: each start of the authority has its own (logs, tests). */
  get socketPath(): string {
    return this.address;
  }

  /**
   * A connection to the authority's API, proven to hold the local key before it is handed out
   * (gateway-client/socket-fetch.ts sends over it). Dials the name this window knows now, so a
   * segment's requests follow a take-over; a server there that cannot prove itself gets nothing,
   * and this window treats the authority it followed as gone (it re-reads authority.json, or takes over).
   */
  readonly connect = async (): Promise<net.Socket> => {
    const address = this.address;
    checkChannelFolder(address);
    try {
      return await connectProven(address, this.key);
    } catch (error) {
      if (error instanceof ChannelProofError && !this.serving && !this.disposed) {
        this.log(`local authority: ${address} did not prove itself (${error.message}); looking for the authority again`);
        this.watch?.destroy();
      }
      throw error;
    }
  };

  /** True while this window runs the authority. */
  get serving(): boolean {
    return this.gateway !== undefined;
  }

  /** The running gateway (this window's), for tests and the Output channel. */
  get server(): GatewayServer | undefined {
    return this.gateway;
  }

  /** Why no authority runs now (the panel shows it), or undefined. */
  get problem(): string | undefined {
    return this.currentProblem;
  }

  private setProblem(problem: string | undefined): void {
    if (problem === this.currentProblem) return;
    this.currentProblem = problem;
    this.options.onProblem?.(problem);
  }

  private ensure(takeover: boolean): Promise<void> {
    this.ensuring ??= this.serveOrFollow(takeover).finally(() => (this.ensuring = undefined));
    return this.ensuring;
  }

  private async serveOrFollow(takeover: boolean): Promise<void> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 10_000);
    for (;;) {
      if (this.disposed) return;
      const handle = this.lock.tryAcquire();
      if (handle) {
        await this.serve(handle, takeover);
        return;
      }
      const found = readDiscovery(this.paths);
      if (
        found &&
        isOwnChannel(found.address, this.paths.dir, this.key) &&
        isOwnChannel(found.presence, this.paths.dir, this.key) &&
        (await this.follow(found.presence))
      ) {
        this.address = found.address;
        this.setProblem(undefined);
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`the local authority did not start within ${this.options.readyTimeoutMs ?? 10_000} ms (lock ${this.paths.lock})`);
      await sleep(20);
    }
  }

  private async serve(handle: LockHandle, takeover: boolean): Promise<void> {
    this.lockHandle = handle;
    try {
      const settings = this.options.settings();
      let channels = newAuthorityChannels(this.paths.dir, this.key);
      try {
        this.gateway = await this.startGateway(settings, channels.api);
      } catch (error) {
        // A name in use (a random one: hardly ever) or a bind or store error: once more on new names.
        this.log(`local authority: cannot serve on ${channels.api} (${(error as Error).message}); trying new names`);
        channels = newAuthorityChannels(this.paths.dir, this.key);
        this.gateway = await this.startGateway(settings, channels.api);
      }
      this.address = channels.api;
      const presence = await this.listenPresence(channels.presence);
      removeOldSockets(channels);
      writeDiscovery(this.paths, { version: 2, address: this.address, presence, pid: process.pid, startedAt: Date.now() }, () =>
        handle.isHeld(),
      );
      this.log(`local authority: serving on ${this.address}${takeover ? ' (taken over from a closed window)' : ''}`);
      this.setProblem(undefined);
      this.options.onServing?.({ at: Date.now(), takeover });
    } catch (error) {
      await this.stopServing();
      throw error;
    }
  }

  /** One gateway on its own store handle: a failed start closes its store, so nothing reuses it. */
  private async startGateway(settings: ReturnType<LocalAuthorityOptions['settings']>, address: string): Promise<GatewayServer> {
    checkChannelFolder(address);
    clearStaleSocket(address);
    const db = await SqlJsFileDatabase.open(this.paths.store, { durable: this.options.durable, wasmPath: this.options.wasmPath });
    const store = new SqliteTicketStore(this.paths.store, db as unknown as ConstructorParameters<typeof SqliteTicketStore>[1]);
    return GatewayServer.start({
      config: {
        ...personalGatewayConfig({
          localKey: this.key,
          port: 0,
          hours: settings.hours,
          modelBaseUrl: settings.modelBaseUrl,
          stopAtUtilization: settings.stopAtUtilization,
        }),
        ...this.options.gatewayOverrides,
      },
      store,
      clock: this.options.clock ?? systemClock,
      log: silentLogger,
      upstreamApiKey: this.options.modelApiKey,
      listenPath: address,
      // Only connections that proved they hold the local key reach the gateway (and its connection limits).
      connectionGate: proofGate({ key: this.key, address }),
    });
  }

  /** Listens on `address` for followers; resolves with it. */
  private listenPresence(address: string): Promise<string> {
    checkChannelFolder(address);
    clearStaleSocket(address);
    const gate = proofGate({ key: this.key, address });
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        socket.on('error', () => undefined);
        gate(socket, (proven) => {
          // Followers only wait for this connection to close; anything they send is dropped.
          this.presenceSockets.add(proven);
          proven.on('data', () => undefined);
          proven.on('close', () => this.presenceSockets.delete(proven));
        });
      });
      server.once('error', reject);
      server.listen(address, () => {
        this.presence = server;
        resolve(address);
      });
    });
  }

  /**
   * Connects to the runner's presence channel; true once the runner there proved it holds the
   * local key (the connection's close starts the take-over). False when nothing is there or what
   * is there cannot prove itself: this window treats the authority as gone.
   */
  private async follow(presence: string): Promise<boolean> {
    let socket: net.Socket;
    try {
      checkChannelFolder(presence);
      socket = await connectProven(presence, this.key, 5_000);
    } catch (error) {
      if (error instanceof ChannelProofError || /private folder/.test((error as Error).message))
        this.log(`local authority: ${presence} is not the authority's (${(error as Error).message}); not following it`);
      return false;
    }
    if (this.disposed) {
      socket.destroy();
      return false;
    }
    socket.setKeepAlive(true);
    socket.unref();
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    this.watch = socket;
    socket.once('close', () => {
      if (this.watch === socket) this.watch = undefined;
      if (this.disposed) return;
      this.log('local authority: the window running it closed (or did not prove itself); taking over');
      this.takeOver();
    });
    return true;
  }

  /** Serves or follows the next runner; tried again every few seconds until it works or this is disposed. */
  private takeOver(): void {
    this.ensure(true).catch((error: unknown) => {
      this.log(`local authority: take-over failed (${(error as Error).message}); trying again in 5 s`);
      if (!this.disposed)
        this.setProblem(`Personal mode's local authority cannot start (${(error as Error).message}); trying again every 5 s.`);
      if (!this.disposed) setTimeout(() => !this.disposed && this.takeOver(), 5_000).unref();
    });
  }

  private async stopServing(graceMs = 1_000): Promise<void> {
    const gateway = this.gateway;
    this.gateway = undefined;
    await gateway?.close(graceMs);
    this.lockHandle?.release();
    this.lockHandle = undefined;
    // The listener first: closing it removes its socket file, which must happen before a follower
    // can make its own at the same path. Then the connections: their end is what tells the
    // followers to take over (the lock is free by now).
    const presence = this.presence;
    this.presence = undefined;
    const closed = new Promise<void>((resolve) => (presence ? presence.close(() => resolve()) : resolve()));
    for (const socket of this.presenceSockets) socket.destroy();
    await closed;
  }

  /** Stops serving (another window takes over) or following. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.watch?.destroy();
    await this.ensuring?.catch(() => undefined);
    await this.stopServing();
  }
}

/**
 * Connections to whichever authority authority.json names at each connect, proven like a window's
 * (for a process that does not run or follow one itself: the benches, tools).
 */
export function connectPublished(storageDir: string): () => Promise<net.Socket> {
  const paths = authorityPaths(storageDir);
  return async () => {
    const found = readDiscovery(paths);
    if (!found) throw Object.assign(new Error(`no local authority is published in ${paths.discovery}`), { code: 'ENOENT' });
    checkChannelFolder(found.address);
    return connectProven(found.address, readOrCreateLocalKey(paths));
  };
}
