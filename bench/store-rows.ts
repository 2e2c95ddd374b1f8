/**
 * The cost of reading a task row into its record (src/store/repos/rows.ts, through the compiled
 * `cellReader` of cells.ts) against the floor: the same mapping written out field by field here.
 * Every snapshot maps every task row, so the generic reader must cost what a written-out one does:
 * `task_row_vs_written_out_ratio` is the median of paired rounds (each times both, order alternating).
 */
import type { SqlRow } from '../src/store/db/sql';
import { bool, num, numOrNull, str, strOrNull } from '../src/store/repos/cells';
import { taskFromRow } from '../src/store/repos/rows';
import { sized } from './mode';

const ROW: SqlRow = {
  off_peak_task_id: 'task-1',
  title: 'Fix the build',
  prompt: 'Fix the build and add a test',
  permission_mode: 'acceptEdits',
  model: null,
  thought_level: null,
  workspace_key: 'k',
  workspace_path: '/w',
  workspace_identity: null,
  conversation_id: 'c',
  session_id: 's',
  status: 'queued',
  queued_at: 1,
  started_at: null,
  ended_at: null,
  failure_reason: null,
  files_changed: null,
  server_ticket_id: 't',
  registered_at: 2,
  schedulable: 1,
  queue_position: 3,
  next_poll_at: 4,
  claim_running: 0,
  claimed_at: null,
  attempt_count: 0,
  last_error: null,
  not_before: null,
  after_task_id: null,
  after_title: null,
  continue_in_branch: 0,
  settled_at: null,
  history_deleted_at: null,
  created_at: 5,
  updated_at: 6,
};

/** The floor: every field read by hand (the shape rows.ts had before the compiled reader). */
const writtenOut = (r: SqlRow) => ({
  id: str(r.off_peak_task_id),
  title: str(r.title),
  prompt: str(r.prompt),
  permissionMode: str(r.permission_mode),
  model: strOrNull(r.model),
  thoughtLevel: strOrNull(r.thought_level),
  workspaceKey: str(r.workspace_key),
  workspacePath: str(r.workspace_path),
  workspaceIdentity: strOrNull(r.workspace_identity),
  conversationId: strOrNull(r.conversation_id),
  sessionId: strOrNull(r.session_id),
  status: str(r.status),
  queuedAt: num(r.queued_at),
  startedAt: numOrNull(r.started_at),
  endedAt: numOrNull(r.ended_at),
  failureReason: strOrNull(r.failure_reason),
  filesChanged: numOrNull(r.files_changed),
  serverTicketId: strOrNull(r.server_ticket_id),
  registeredAt: numOrNull(r.registered_at),
  schedulable: bool(r.schedulable),
  queuePosition: numOrNull(r.queue_position),
  nextPollAt: numOrNull(r.next_poll_at),
  claimRunning: bool(r.claim_running),
  claimedAt: numOrNull(r.claimed_at),
  attemptCount: num(r.attempt_count),
  lastError: strOrNull(r.last_error),
  notBefore: numOrNull(r.not_before),
  afterTaskId: strOrNull(r.after_task_id),
  afterTitle: strOrNull(r.after_title),
  continueInBranch: bool(r.continue_in_branch),
  settledAt: numOrNull(r.settled_at),
  historyDeletedAt: numOrNull(r.history_deleted_at),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
});

function timeRows(map: (r: SqlRow) => { queuedAt: number }, rows: number): number {
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < rows; i++) sink += map(ROW).queuedAt;
  if (sink !== rows) throw new Error('the mapping read the wrong cell');
  return performance.now() - started;
}

export function rowMappingFigures(): Record<string, number> {
  const rows = sized(100_000, 10_000);
  const rounds = sized(21, 5);
  timeRows(taskFromRow, rows);
  timeRows(writtenOut, rows);
  const ratios: number[] = [];
  const reader: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const first = i % 2 === 0 ? taskFromRow : writtenOut;
    const firstMs = timeRows(first, rows);
    const secondMs = timeRows(first === taskFromRow ? writtenOut : taskFromRow, rows);
    const [readerMs, floorMs] = first === taskFromRow ? [firstMs, secondMs] : [secondMs, firstMs];
    reader.push((readerMs * 1000) / rows);
    ratios.push(readerMs / floorMs);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return {
    task_row_read_us: Math.round(median(reader) * 1000) / 1000,
    task_row_vs_written_out_ratio: Math.round(median(ratios) * 1000) / 1000,
  };
}
