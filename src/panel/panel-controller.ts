// Host side of the Off-Peak Tasks webview, vscode-free: validates what the webview sends, runs
// the operation, and pushes whole versioned snapshots. Nothing is posted before the webview's
// `ready`; a webview that reloads says `ready` again and gets the current snapshot.
import type { Clock } from '../core/clock';
import { Disposable, type DisposableLike } from '../core/disposable';
import type { OffPeakTask, TicketRecord } from '../core/types';
import type { HistoryRow } from '../core/history';
import {
  describeInvalidMessage,
  WebviewToHostSchema,
  type CreateTaskInput,
  type HostToWebview,
  type PanelState,
  type WebviewToHost,
} from '../protocol/webview';
import { toTaskCard } from './task-card';

/** The message channel to one webview (a VS Code Webview, or a MessagePort in tests). */
export interface WebviewPort {
  postMessage(message: HostToWebview): unknown;
  onDidReceiveMessage(listener: (message: unknown) => void): DisposableLike;
}

export type EditPatch = Extract<WebviewToHost, { type: 'editTask' }>['patch'];

/** What the panel needs from the rest of the extension (the task service and a few VS Code bits). */
export interface PanelBackend {
  listTasks(): OffPeakTask[];
  ticketsOf(taskId: string): TicketRecord[];
  history(): HistoryRow[];
  availability(): PanelState['availability'];
  hasApiKey(): Promise<boolean>;
  models(): string[];
  workspaces(): PanelState['workspaces'];
  notice(): string | undefined;
  create(input: CreateTaskInput): Promise<unknown>;
  edit(taskId: string, patch: EditPatch): Promise<unknown>;
  pause(taskId: string): Promise<unknown>;
  continue(taskId: string): Promise<unknown>;
  cancel(taskId: string): Promise<unknown>;
  delete(taskId: string): Promise<unknown>;
  deleteFromHistory(taskId: string): Promise<unknown>;
  openTerminal(taskId: string): Promise<unknown>;
  setApiKey(): Promise<unknown>;
  refresh(): Promise<unknown>;
  /** Fires whenever anything the panel shows may have changed (this window or another). */
  onDidChange(listener: () => void): DisposableLike;
}

export class PanelController extends Disposable {
  private ready = false;
  private version = 0;
  private pushQueued = false;
  /** Posts made before `ready` (e.g. focusForm from a command) wait here. */
  private readonly held: HostToWebview[] = [];

  constructor(
    private readonly port: WebviewPort,
    private readonly backend: PanelBackend,
    private readonly clock: Clock,
    private readonly log: (line: string) => void = () => {},
  ) {
    super();
    this._register(port.onDidReceiveMessage((raw) => void this.receive(raw)));
    this._register(backend.onDidChange(() => this.schedulePush()));
  }

  /** Sends a message now if the webview is ready, else when it becomes ready. */
  post(message: HostToWebview): void {
    if (this.isDisposed) return;
    if (!this.ready) {
      this.held.push(message);
      return;
    }
    void this.port.postMessage(message);
  }

  /** Coalesces bursts of change events into one snapshot. */
  schedulePush(): void {
    if (this.pushQueued || this.isDisposed) return;
    this.pushQueued = true;
    queueMicrotask(() => {
      this.pushQueued = false;
      void this.pushState();
    });
  }

  async snapshot(): Promise<PanelState> {
    const now = this.clock.now();
    const tasks = this.backend.listTasks().map((t) => toTaskCard(t, this.backend.ticketsOf(t.id)));
    return {
      version: ++this.version,
      now,
      tasks,
      history: this.backend.history(),
      availability: this.backend.availability(),
      hasApiKey: await this.backend.hasApiKey(),
      models: this.backend.models(),
      workspaces: this.backend.workspaces(),
      notice: this.backend.notice(),
    };
  }

  private async pushState(): Promise<void> {
    if (!this.ready || this.isDisposed) return;
    try {
      this.post({ type: 'state', state: await this.snapshot() });
    } catch (e) {
      this.log(`panel: could not build a snapshot: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = WebviewToHostSchema.safeParse(raw);
    if (!parsed.success) {
      const why = describeInvalidMessage(parsed.error);
      this.log(`panel: refused a malformed webview message (${why})`);
      const requestId = typeof raw === 'object' && raw !== null && typeof (raw as { requestId?: unknown }).requestId === 'string'
        ? (raw as { requestId: string }).requestId
        : undefined;
      if (requestId) this.post({ type: 'result', requestId: requestId.slice(0, 64), ok: false, error: `Invalid request: ${why}` });
      return;
    }
    const message = parsed.data;
    if (message.type === 'ready') {
      this.ready = true;
      await this.pushState();
      for (const held of this.held.splice(0)) this.post(held);
      return;
    }
    try {
      await this.run(message);
      this.post({ type: 'result', requestId: message.requestId, ok: true });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.log(`panel: ${message.type} failed: ${error}`);
      this.post({ type: 'result', requestId: message.requestId, ok: false, error });
    }
    this.schedulePush();
  }

  private run(message: Exclude<WebviewToHost, { type: 'ready' }>): Promise<unknown> {
    const b = this.backend;
    switch (message.type) {
      case 'createTask':
        return b.create(message.input);
      case 'editTask':
        return b.edit(message.taskId, message.patch);
      case 'pause':
        return b.pause(message.taskId);
      case 'continue':
        return b.continue(message.taskId);
      case 'cancel':
        return b.cancel(message.taskId);
      case 'delete':
        return b.delete(message.taskId);
      case 'deleteHistory':
        return b.deleteFromHistory(message.taskId);
      case 'openTerminal':
        return b.openTerminal(message.taskId);
      case 'setApiKey':
        return b.setApiKey();
      case 'refresh':
        return b.refresh();
    }
  }
}
