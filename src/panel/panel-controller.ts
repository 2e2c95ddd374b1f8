// Host side of the Off-Peak Tasks webview, vscode-free: validates what the webview sends, runs
// the operation, and pushes whole versioned snapshots. Nothing is posted before the webview's
// `ready`; a webview that reloads says `ready` again and gets the current snapshot.
import type { CheckView } from '../protocol/check-view';
import type { PendingAsk } from '../core/ask-types';
import type { Clock } from '../core/clock';
import { Disposable, type DisposableLike } from '../core/disposable';
import { machineTimeZone } from '../core/zoned-time';
import type { OffPeakTask, TicketRecord } from '../core/types';
import type { HistoryRow } from '../core/history';
import type { FollowUpLink } from '../store';
import {
  describeInvalidMessage,
  HISTORY_PAGE_ROWS,
  PanelRequests,
  WebviewToHostSchema,
  type HostToWebview,
  type PanelMethod,
  type PanelState,
  type RefusalCount,
  type AllowedNotRunView,
  type RequestHandlers,
  type WorkplaceView,
  type ScheduleRunMark,
  type ScheduleView,
} from '../protocol/webview';
import { broughtHomeOf, scheduledForOf, toTaskCard, withFollowUps } from './task-card';
import { typicalSpendText } from '../core/spend';
import { totalUsage } from '../core/usage';
import { historyRowView } from './history-panel';
import { accountBar, latestAccountReading } from '../core/account-bar';

/** The message channel to one webview (a VS Code Webview, or a MessagePort in tests). */
export interface WebviewPort {
  postMessage(message: HostToWebview): unknown;
  onDidReceiveMessage(listener: (message: unknown) => void): DisposableLike;
  /** Whether VS Code shows the webview now (absent: always). */
  visible?(): boolean;
}

/** Requests the controller answers itself (the results on screen it holds until the panel is left). */
type ControllerRequests = 'showing';

/** What the panel needs from the rest of the extension: what it shows, and one handler per request. */
export interface PanelBackend extends Omit<RequestHandlers, ControllerRequests> {
  listTasks(): OffPeakTask[];
  /** Every ledger row, by task: one read for the whole snapshot. */
  ticketsByTask(): Map<string, TicketRecord[]>;
  history(): HistoryRow[];
  /** An archive of older History exists (docs/flows.md#archive; absent: none). */
  historyArchived?(): boolean;
  /** The open permission questions of the agents this window runs. */
  pendingAsks(): PendingAsk[];
  /** Follow-up tasks' links, by task id (absent: none). */
  followUpLinks?(): Map<string, FollowUpLink>;
  /** Where tasks work and what they changed, by task id (docs/flows.md#isolation; absent: none). */
  workplaces?(): Map<string, WorkplaceView>;
  /** Every task's check, by task id (docs/flows.md#checks). */
  checks?(): ReadonlyMap<string, CheckView>;
  /** The repeating schedules, and by task id the schedule that queued it, worded at `now` in `zone` (docs/flows.md#schedules-and-chains; absent: none). */
  schedules?(now: number, zone: string): ScheduleView[];
  scheduleRuns?(now: number, zone: string): ReadonlyMap<string, ScheduleRunMark>;
  /** Finished tasks whose result no panel has shown yet (shared by all windows). */
  unseenTaskIds(): ReadonlySet<string>;
  /** When a panel last showed a result, or null when never (optional: absent reads as never). */
  lastSeenAt?(): number | null;
  /** Denied questions by task ("N actions denied (M automatically)"); absent: none recorded. */
  refusals?(): ReadonlyMap<string, RefusalCount>;
  /** By task, the last action the user allowed after a park that never ran; absent: none. */
  allowedNotRun?(): ReadonlyMap<string, AllowedNotRunView>;
  availability(): PanelState['availability'];
  hasApiKey(): Promise<boolean>;
  models(): string[];
  workspaces(): PanelState['workspaces'] | Promise<PanelState['workspaces']>;
  notice(): string | undefined;
  /** The mode, agent, credential, model API and hours line (absent: not shown). */
  setup?(): Promise<PanelState['setup']>;
  /** The reserve of the account's windows (docs/flows.md#capacity-and-cost; absent: none). */
  reserve?(): number | null;
  /** Fires whenever anything the panel shows may have changed (this window or another). */
  onDidChange(listener: () => void): DisposableLike;
}

export class PanelController extends Disposable {
  private ready = false;
  private version = 0;
  private pushQueued = false;
  /** Posts made before `ready` (e.g. focusForm from a command) wait here. */
  private readonly held: HostToWebview[] = [];
  /** Unseen results the visible panel shows now: seen once the panel is hidden or closed. */
  private readonly onScreen = new Set<string>();

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

  /**
   * VS Code showed or hid the panel: once hidden, what it showed counts as seen (the "New" marks,
   * the tab title's and the status bar's counts all go then); a fresh snapshot says which.
   */
  viewStateChanged(): void {
    if (!(this.port.visible?.() ?? true)) this.flushSeen();
    this.schedulePush();
  }

  override dispose(): void {
    // The panel closed (or reconnects): what it showed has been seen.
    this.flushSeen();
    super.dispose();
  }

  private flushSeen(): void {
    if (this.onScreen.size === 0) return;
    const taskIds = [...this.onScreen].slice(0, 1000);
    this.onScreen.clear();
    void this.backend.markSeen({ taskIds }).catch((e: unknown) => this.log(`panel: could not mark results seen: ${errorText(e)}`));
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
    const zone = machineTimeZone();
    const tickets = this.backend.ticketsByTask();
    const asks = new Map<string, PendingAsk[]>();
    for (const ask of this.backend.pendingAsks()) asks.set(ask.taskId, [...(asks.get(ask.taskId) ?? []), ask]);
    const unseen = this.backend.unseenTaskIds();
    const links = this.backend.followUpLinks?.() ?? new Map<string, FollowUpLink>();
    const refusals = this.backend.refusals?.() ?? new Map<string, RefusalCount>();
    const notRun = this.backend.allowedNotRun?.() ?? new Map<string, AllowedNotRunView>();
    const workplaces = this.backend.workplaces?.() ?? new Map<string, WorkplaceView>();
    const history = this.backend.history();
    const checks = this.backend.checks?.() ?? new Map<string, CheckView>();
    const runs = this.backend.scheduleRuns?.(now, zone) ?? new Map<string, ScheduleRunMark>();
    const setup = await this.backend.setup?.();
    // Follow-ups add to the task they continue (docs/flows.md#capacity-and-cost).
    const withFollowUpsOf = (taskId: string) => {
      const total = withFollowUps(taskId, (id) => totalUsage(tickets.get(id) ?? []), links);
      return total ? { withFollowUps: total } : {};
    };
    const tasks = this.backend.listTasks().map((t) => {
      const run = runs.get(t.id);
      const workplace = workplaces.get(t.id);
      const card = {
        ...toTaskCard(
          t,
          tickets.get(t.id) ?? [],
          asks.get(t.id),
          unseen.has(t.id),
          links.get(t.id),
          refusals.get(t.id),
          notRun.get(t.id),
          checks.get(t.id),
          setup?.mode === 'personal',
          broughtHomeOf(workplace),
          workplace?.mergedIn,
        ),
        ...scheduledForOf(t, now, zone),
        ...(run ? { scheduleRun: run } : {}),
        ...withFollowUpsOf(t.id),
      };
      return workplace ? { ...card, workplace } : card;
    });
    return {
      version: ++this.version,
      now,
      tasks,
      // History shows each task's total tokens, summed from its ledger rows like the card's, and what it was refused.
      // The first page only: the panel asks for more (`historyPage`, docs/flows.md#archive).
      history: history
        .slice(0, HISTORY_PAGE_ROWS)
        .map((row) =>
          historyRowView(row, tickets.get(row.taskId) ?? [], refusals.get(row.taskId), notRun.get(row.taskId), checks.get(row.taskId)),
        ),
      historyTotal: history.length,
      historyArchived: this.backend.historyArchived?.() ?? false,
      availability: this.backend.availability(),
      hasApiKey: await this.backend.hasApiKey(),
      models: this.backend.models(),
      workspaces: withTypicalSpend(await this.backend.workspaces(), this.backend.listTasks(), tickets),
      notice: this.backend.notice(),
      setup,
      visible: this.port.visible?.() ?? true,
      lastSeenAt: this.backend.lastSeenAt?.() ?? null,
      schedules: this.backend.schedules?.(now, zone) ?? [],
      timeZone: zone,
      // From the ledger rows the cards already read: the header costs no request of its own.
      account: accountBar(latestAccountReading([...tickets.values()].flat()), this.backend.reserve?.() ?? null, now),
    };
  }

  private async pushState(): Promise<void> {
    if (!this.ready || this.isDisposed) return;
    try {
      this.post({ type: 'state', state: await this.snapshot() });
    } catch (e) {
      this.log(`panel: could not build a snapshot: ${errorText(e)}`);
    }
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = WebviewToHostSchema.safeParse(raw);
    if (!parsed.success) {
      const why = describeInvalidMessage(parsed.error);
      this.log(`panel: refused a malformed webview message (${why})`);
      const requestId =
        typeof raw === 'object' && raw !== null && typeof (raw as { requestId?: unknown }).requestId === 'string'
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
      // The panel just opened (or reloaded): what it shows about availability must be current.
      void this.backend.refresh({}).catch((e: unknown) => this.log(`panel: refresh failed: ${errorText(e)}`));
      return;
    }
    const { requestId, method } = message;
    const params = PanelRequests[method].params.safeParse(message.params);
    if (!params.success) {
      const why = describeInvalidMessage(params.error);
      this.log(`panel: refused ${method} (${why})`);
      this.post({ type: 'result', requestId, ok: false, error: `Invalid request: ${why}` });
      return;
    }
    try {
      const result = await this.handle(method, params.data);
      this.post({ type: 'result', requestId, ok: true, result });
    } catch (e) {
      this.log(`panel: ${method} failed: ${errorText(e)}`);
      const code = (e as { code?: unknown } | undefined)?.code;
      this.post({ type: 'result', requestId, ok: false, error: errorText(e), ...(typeof code === 'string' ? { code } : {}) });
    }
    this.schedulePush();
  }

  private handle(method: PanelMethod, params: unknown): Promise<unknown> {
    if (method === 'showing') {
      for (const id of (params as { taskIds: string[] }).taskIds) if (this.onScreen.size < 1000) this.onScreen.add(id);
      // A panel VS Code does not show cannot be looked at: nothing waits then.
      if (!(this.port.visible?.() ?? true)) this.flushSeen();
      return Promise.resolve({ held: this.onScreen.size });
    }
    // Params were validated against this method's schema just above.
    const handler = this.backend[method as Exclude<PanelMethod, ControllerRequests>] as (p: unknown) => Promise<unknown>;
    return handler.call(this.backend, params);
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** How many of a folder's last finished tasks the form's "will it fit" reads. */
const TYPICAL_OF = 10;

/** Each folder with what its last finished tasks spent (docs/flows.md#capacity-and-cost), from the rows the cards read. */
function withTypicalSpend(
  workspaces: PanelState['workspaces'],
  tasks: readonly OffPeakTask[],
  tickets: ReadonlyMap<string, readonly TicketRecord[]>,
): PanelState['workspaces'] {
  return workspaces.map((w) => {
    const last = tasks
      .filter((t) => t.workspacePath === w.path && t.endedAt !== null && (t.status === 'completed' || t.status === 'failed'))
      .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0))
      .slice(0, TYPICAL_OF);
    const text = typicalSpendText(last.map((t) => totalUsage(tickets.get(t.id) ?? [])));
    return text ? { ...w, typicalSpend: text } : w;
  });
}
