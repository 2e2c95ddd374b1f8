// Webview side of the host protocol: typed requests with results, and versioned snapshots.
import { HostToWebviewSchema, type PanelState, type WebviewToHost } from '../src/protocol/webview';

type Request = Exclude<WebviewToHost, { type: 'ready' }>;
/** A request as the UI writes it: the channel adds the request id. */
export type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, 'requestId'> : never) : never;

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
  private readonly pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();

  constructor(
    private readonly target: MessageTarget,
    private readonly events: HostChannelEvents,
  ) {}

  /** Tells the host we can receive; it answers with the current snapshot. */
  ready(): void {
    this.target.postMessage({ type: 'ready' } satisfies WebviewToHost);
  }

  /** Sends a request; resolves when the host reports success, rejects with its error. */
  request(body: RequestBody): Promise<void> {
    const requestId = `r${++this.seq}`;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject });
      this.target.postMessage({ ...body, requestId });
    });
  }

  /** Feed every message event's data here. */
  receive(data: unknown): void {
    const parsed = HostToWebviewSchema.safeParse(data);
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
        this.events.onState(message.state);
        return;
      case 'result': {
        const waiting = this.pending.get(message.requestId);
        if (!waiting) return;
        this.pending.delete(message.requestId);
        if (message.ok) waiting.resolve();
        else waiting.reject(new Error(message.error ?? 'The request failed'));
        return;
      }
      case 'focusForm':
        this.events.onFocusForm();
        return;
    }
  }
}
