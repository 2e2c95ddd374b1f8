// Personal mode's local authority (docs/architecture.md#personal-mode): the reference gateway's
// ticket rules for this user on this machine, one for all windows, on 127.0.0.1 only. Whichever
// window needs it first takes the lock file and runs the gateway in its own extension host
// process (no child process: nothing to find on argv or in the environment, and a take-over costs
// one listen, not a Node start); the others follow. Each follower keeps one idle connection to
// the runner's presence port: when the runner's process ends or closes the authority, that
// connection closes, and the followers race for the lock at once; the winner listens on the same
// port with the same SQLite file, so tickets keep their ids and every URL the windows and their
// segments hold stays valid. Between the two, requests are refused and the ticket proxy holds
// them (docs/flows.md#segments).
import net from 'node:net';
import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import type { GatewayConfig } from '../gateway/config';
import { silentLogger } from '../gateway/logger';
import { GatewayServer } from '../gateway/server';
import { SqliteTicketStore } from '../gateway/sqlite-store';
import { FileLock, type LockHandle } from '../store/file-lock';
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
  /**
   * After a take-over the authority listens on another port than before (another program took
   * the old one): what holds the old URL (this window's engine) must start again on `url`.
   */
  onMoved?: (url: string) => void;
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
  private port = 0;
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
    this.port = readDiscovery(this.paths)?.port ?? 0;
  }

  /** Resolves once an authority runs (this window's or another's) and this window knows where. */
  static async start(options: LocalAuthorityOptions): Promise<LocalAuthority> {
    const authority = new LocalAuthority(options);
    await authority.ensure(false);
    return authority;
  }

  /** `http://127.0.0.1:<port>`: the same across take-overs (the next runner listens on it again). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

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
    const before = this.port;
    await this.serveOrFollowOnce(takeover);
    if (takeover && before !== 0 && this.port !== before && !this.disposed) this.options.onMoved?.(this.url);
  }

  private async serveOrFollowOnce(takeover: boolean): Promise<void> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 10_000);
    for (;;) {
      if (this.disposed) return;
      const handle = this.lock.tryAcquire();
      if (handle) {
        await this.serve(handle, takeover);
        return;
      }
      const found = readDiscovery(this.paths);
      if (found && (await this.follow(found.presencePort))) {
        this.port = found.port;
        this.setProblem(undefined);
        return;
      }
      if (Date.now() > deadline) throw new Error(`the local authority did not start within ${this.options.readyTimeoutMs ?? 10_000} ms (lock ${this.paths.lock})`);
      await sleep(20);
    }
  }

  private async serve(handle: LockHandle, takeover: boolean): Promise<void> {
    this.lockHandle = handle;
    try {
      const settings = this.options.settings();
      try {
        this.gateway = await this.startGateway(settings, this.port);
      } catch (error) {
        // The last runner's address is not ours any more (another program took it, a bind or store
        // error): a fresh start on a new address. Windows that follow read it from authority.json;
        // `onMoved` restarts what holds the old one.
        if (this.port === 0) throw error;
        this.log(`local authority: cannot serve on port ${this.port} again (${(error as Error).message}); listening on a new port`);
        this.gateway = await this.startGateway(settings, 0);
      }
      this.port = this.gateway.port;
      this.presence = await this.listenPresence();
      const presencePort = (this.presence.address() as net.AddressInfo).port;
      writeDiscovery(this.paths, { version: 1, port: this.port, presencePort, pid: process.pid, startedAt: Date.now() }, () => handle.isHeld());
      this.log(`local authority: serving on ${this.url}${takeover ? ' (taken over from a closed window)' : ''}`);
      this.setProblem(undefined);
      this.options.onServing?.({ at: Date.now(), takeover });
    } catch (error) {
      await this.stopServing();
      throw error;
    }
  }

  /** One gateway on its own store handle: a failed start closes its store, so nothing reuses it. */
  private async startGateway(settings: ReturnType<LocalAuthorityOptions['settings']>, port: number): Promise<GatewayServer> {
    const db = await SqlJsFileDatabase.open(this.paths.store, { durable: this.options.durable, wasmPath: this.options.wasmPath });
    const store = new SqliteTicketStore(this.paths.store, db as unknown as ConstructorParameters<typeof SqliteTicketStore>[1]);
    return GatewayServer.start({
      config: { ...personalGatewayConfig({ localKey: this.key, port, hours: settings.hours, modelBaseUrl: settings.modelBaseUrl, stopAtUtilization: settings.stopAtUtilization }), ...this.options.gatewayOverrides },
      store,
      clock: this.options.clock ?? systemClock,
      log: silentLogger,
      upstreamApiKey: this.options.modelApiKey,
    });
  }

  private listenPresence(): Promise<net.Server> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        // Followers only wait for this connection to close; anything they send is dropped.
        this.presenceSockets.add(socket);
        socket.on('data', () => undefined);
        socket.on('error', () => undefined);
        socket.on('close', () => this.presenceSockets.delete(socket));
      });
      server.maxConnections = 256;
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  }

  /** Connects to the runner's presence port; true once connected (its close starts the take-over). */
  private follow(presencePort: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: presencePort });
      let connected = false;
      socket.once('connect', () => {
        connected = true;
        socket.setKeepAlive(true);
        socket.unref();
        this.watch = socket;
        resolve(true);
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        if (!connected) return resolve(false);
        if (this.watch === socket) this.watch = undefined;
        if (this.disposed) return;
        this.log('local authority: the window running it closed; taking over');
        this.takeOver();
      });
    });
  }

  /** Serves or follows the next runner; tried again every few seconds until it works or this is disposed. */
  private takeOver(): void {
    this.ensure(true).catch((error: unknown) => {
      this.log(`local authority: take-over failed (${(error as Error).message}); trying again in 5 s`);
      if (!this.disposed) this.setProblem(`Personal mode's local authority cannot start (${(error as Error).message}); trying again every 5 s.`);
      if (!this.disposed) setTimeout(() => !this.disposed && this.takeOver(), 5_000).unref();
    });
  }

  private async stopServing(graceMs = 1_000): Promise<void> {
    const gateway = this.gateway;
    this.gateway = undefined;
    await gateway?.close(graceMs);
    this.lockHandle?.release();
    this.lockHandle = undefined;
    // Last: closing these is what tells the followers to take over (the lock is free by now).
    for (const socket of this.presenceSockets) socket.destroy();
    await new Promise<void>((resolve) => (this.presence ? this.presence.close(() => resolve()) : resolve()));
    this.presence = undefined;
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
