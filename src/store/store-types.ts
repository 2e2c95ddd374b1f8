/**
 * What the task store's callers see besides the TaskStore class: how to open it, what a mutation
 * or a read function gets, the change events it fires and its counters.
 */
import type { Clock } from '../core/clock';
import type { Generation, StoreFs } from './db/db-file';
import type { DispatchRepo } from './repos/dispatch-repo';
import type { StoreNotice } from './errors';
import type { FileLockOptions } from './db/file-lock';
import type { FollowUpRepo } from './repos/follow-up-repo';
import type { AskRepo } from './questions/ask-repo';
import type { ArchiveRepo } from './archive/archive-repo';
import type { NotifyRepo } from './repos/notify-repo';
import type { OutcomeRepo } from './repos/outcome-repo';
import type { QuestionRepo } from './questions/question-repo';
import type { RuntimeRepo } from './repos/runtime-repo';
import type { IsolationRepo } from './repos/isolation-repo';
import type { PullRequestRepo } from './repos/pull-request-repo';
import type { CheckRepo } from './repos/check-repo';
import type { ScheduleRepo } from './repos/schedule-repo';
import type { StoreTopic } from './migrations/change-counters';
import type { TaskRepo } from './repos/task-repo';
import type { TicketRepo } from './repos/ticket-repo';
import type { WindowRepo } from './repos/window-repo';

export interface TaskStoreOptions {
  /** Where tasks-index.sqlite lives (the extension passes its globalStorage path). Created if missing. */
  directory: string;
  /** Defaults to tasks-index.sqlite. */
  fileName?: string;
  /** Time source for created_at/updated_at, transitions and leases. */
  clock?: Clock;
  /** Path of sql-wasm.wasm; see sqljs.ts for the default. */
  wasmPath?: string;
  lock?: Omit<FileLockOptions, 'onNotice'>;
  /** fsync file and directory on every persist. Default true. */
  durable?: boolean;
  /**
   * Watch the file for other processes' writes (default true). A slow poll backs the watcher up:
   * it looks at the file once pollMs passed without any look (a read, a mutation,
   * checkForExternalChange), so a caller that checks more often on its own never lets it fire.
   * pollMs defaults to 60000 while the directory watcher runs, 1000 when it could not start.
   */
  watch?: boolean | { pollMs?: number };
  /** Called for every notice (corrupt file moved aside, lock taken over...). */
  onNotice?: (notice: StoreNotice) => void;
  /** File operations on the DB and lease files (default node:fs). */
  fs?: StoreFs;
  /** Failed system calls are retried `attempts` times in all, waiting baseDelayMs, 2x, 4x... Default 6 x 10 ms. */
  ioRetry?: { attempts?: number; baseDelayMs?: number };
}

/** What a mutation function gets: typed repositories bound to one transaction and its time. */
export interface StoreTx {
  readonly now: number;
  readonly tasks: TaskRepo;
  readonly tickets: TicketRepo;
  readonly windows: WindowRepo;
  readonly dispatch: DispatchRepo;
  readonly runtime: RuntimeRepo;
  readonly outcomes: OutcomeRepo;
  readonly asks: AskRepo;
  readonly questions: QuestionRepo;
  readonly followUps: FollowUpRepo;
  readonly isolation: IsolationRepo;
  /** The away notifications' outbox (docs/flows.md#away-notifications). */
  readonly notify: NotifyRepo;
  readonly checks: CheckRepo;
  /** The history archive's side in the task DB (docs/flows.md#archive). */
  readonly archive: ArchiveRepo;
  /** Repeating schedules and their runs (docs/flows.md#schedules-and-chains). */
  readonly schedules: ScheduleRepo;
  /** A task's pull request on its forge (docs/flows.md#pull-requests). */
  readonly pullRequests: PullRequestRepo;
}

/** What a read function gets: the read-only half of the repositories. */
export interface StoreReadTx {
  readonly now: number;
  readonly tasks: Pick<TaskRepo, 'get' | 'list' | 'count' | 'dueForDispatch' | 'countZombieClaims' | 'oldestClaimAt'>;
  readonly tickets: Pick<TicketRepo, 'get' | 'list' | 'forTask' | 'pendingSettles' | 'live'>;
  readonly windows: Pick<WindowRepo, 'get' | 'list' | 'handOffAnswer' | 'pendingHandOffs'>;
  readonly dispatch: Pick<DispatchRepo, 'get' | 'nextEnd'>;
  readonly runtime: Pick<RuntimeRepo, 'get'>;
  readonly outcomes: Pick<OutcomeRepo, 'unnotified' | 'notifiedBy' | 'unseen' | 'lastSeenAt'>;
  readonly asks: Pick<AskRepo, 'list'>;
  readonly questions: Pick<
    QuestionRepo,
    'get' | 'forTask' | 'parkedOpen' | 'storedDecision' | 'unstated' | 'interruptedOpen' | 'denials' | 'allowedNotRun'
  >;
  readonly followUps: Pick<FollowUpRepo, 'get' | 'all' | 'liveUsersOfSession' | 'sessionInUse'>;
  readonly isolation: Pick<IsolationRepo, 'get' | 'all' | 'sharersOf' | 'inPlaceHolder'>;
  readonly notify: Pick<NotifyRepo, 'get' | 'all' | 'due' | 'nextAttemptAt' | 'keysLike'>;
  readonly checks: Pick<CheckRepo, 'get' | 'all' | 'lastCommandFor'>;
  readonly archive: Pick<ArchiveRepo, 'schema' | 'duePlan' | 'stillMovable' | 'rowsOf' | 'allTaskIds' | 'freeShare'>;
  readonly schedules: Pick<ScheduleRepo, 'get' | 'list' | 'titles' | 'getRun' | 'runsOf' | 'lastQueued' | 'runsByTask'>;
  readonly pullRequests: Pick<PullRequestRepo, 'get' | 'all' | 'openOfBranch'>;
}

export interface StoreChange {
  /** local: this store persisted; external: another process (window) did. */
  origin: 'local' | 'external';
  generation: Generation;
  /** What changed (never empty: a write or reload that changed no topic fires no event). */
  topics: ReadonlySet<StoreTopic>;
}

/** True when a change touched any of `topics`. */
export function changeConcerns(change: StoreChange, ...topics: StoreTopic[]): boolean {
  return topics.some((topic) => change.topics.has(topic));
}

/** Counters for tests and diagnostics. */
export interface StoreStats {
  persists: number;
  reloads: number;
  mutations: number;
  lockRetries: number;
  /** Attempts repeated after a failed system call. */
  ioRetries: number;
  /** Mutations (or lease changes) that failed with 'IO' after their retries. */
  ioFailures: number;
  /** Lease files written or removed under the lock (a new holding, a release). */
  leaseWrites: number;
  /** Lockless renewals (the lease file's mtime set, no data written). */
  leaseRenewals: number;
  /** Renames of the DB file that had to wait for another handle on it to close (Windows), and the longest wait. */
  renameWaits: number;
  renameWaitMaxMs: number;
}
