// Webview side of the host protocol: typed requests with results, and versioned snapshots.
// `request` is typed from the same request map the host's handlers implement.
import {
  HostToWebviewSchema,
  PanelRequests,
  type PanelMethod,
  type PanelParams,
  type PanelResult,
  type PanelState,
  type WebviewToHost,
} from '../src/protocol/webview';

export interface MessageTarget {
  postMessage(message: unknown): void;
}

export interface HostChannelEvents {
  onState(state: PanelState): void;
  onFocusForm(): void;
  onInvalidMessage(why: string): void;
}

export class HostChannel {
  private seq = 0;
  private shownVersion = -1;
  private readonly pending = new Map<string, { method: PanelMethod; resolve: (result: unknown) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly target: MessageTarget,
    private readonly events: HostChannelEvents,
  ) {}

  /** Tells the host we can receive; it answers with the current snapshot. */
  ready(): void {
    this.target.postMessage({ type: 'ready' } satisfies WebviewToHost);
  }

  /** Sends a request; resolves with the host's result, rejects with its error. */
  request<M extends PanelMethod>(method: M, params: PanelParams<M>): Promise<PanelResult<M>> {
    const requestId = `r${++this.seq}`;
    return new Promise<PanelResult<M>>((resolve, reject) => {
      this.pending.set(requestId, { method, resolve: resolve as (r: unknown) => void, reject });
      this.target.postMessage({ type: 'request', requestId, method, params } satisfies WebviewToHost);
    });
  }

  /** Feed every message event's data here. */
  receive(data: unknown): void {
    const parsed = parseHostMessage(data);
    if (!parsed.success) {
      this.events.onInvalidMessage(parsed.error.issues[0]?.message ?? 'invalid message');
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'state':
        // Snapshots are whole; an older one arriving late must not roll the view back.
        if (message.state.version <= this.shownVersion) return;
        this.shownVersion = message.state.version;
        // The arrival check covered the envelope; the rows are the host's own TaskCard/HistoryRow.
        this.events.onState(message.state as PanelState);
        return;
      case 'result': {
        const waiting = this.pending.get(message.requestId);
        if (!waiting) return;
        this.pending.delete(message.requestId);
        if (!message.ok) {
          waiting.reject(Object.assign(new Error(message.error), message.code !== undefined ? { code: message.code } : {}));
          return;
        }
        const result = PanelRequests[waiting.method].result.safeParse(message.result);
        if (result.success) waiting.resolve(result.data);
        else waiting.reject(new Error(`The extension answered ${waiting.method} with an unexpected result.`));
        return;
      }
      case 'focusForm':
        this.events.onFocusForm();
        return;
    }
  }
}

/** The arrival check's test of a card or History row (src/protocol/webview.ts: an object with a string id). */
function rowsHave(rows: unknown, key: string): rows is Record<string, unknown>[] {
  if (!Array.isArray(rows)) return false;
  for (const row of rows)
    if (typeof row !== 'object' || row === null || typeof (row as Record<string, unknown>)[key] !== 'string') return false;
  return true;
}

/**
 * HostToWebviewSchema's verdict on a message, the same as `HostToWebviewSchema.safeParse(data)`.
 * A snapshot's card and History rows are checked only for their ids (PanelStateArrivalSchema);
 * zod spent a run and a result per row on that (a quarter of the check's time at 1000 cards), so
 * they are checked here in one loop and the rest of the snapshot by the schema. A snapshot with a
 * row that fails goes through the schema whole, for its own error.
 */
export function parseHostMessage(data: unknown): ReturnType<typeof HostToWebviewSchema.safeParse> {
  const state = (data as { type?: unknown; state?: unknown } | null)?.type === 'state' ? (data as { state: unknown }).state : undefined;
  if (typeof state !== 'object' || state === null) return HostToWebviewSchema.safeParse(data);
  const { tasks, history } = state as { tasks?: unknown; history?: unknown };
  if (!rowsHave(tasks, 'id') || !rowsHave(history, 'taskId')) return HostToWebviewSchema.safeParse(data);
  const parsed = HostToWebviewSchema.safeParse({ ...(data as object), state: { ...state, tasks: [], history: [] } });
  if (!parsed.success || parsed.data.type !== 'state') return parsed;
  // The schema returns new arrays of the same row objects: the rows are handed on as they came.
  return {
    ...parsed,
    data: { ...parsed.data, state: { ...parsed.data.state, tasks: [...tasks], history: [...history] } },
  } as typeof parsed;
}
