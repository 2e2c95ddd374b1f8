/**
 * The project's one event style (VS Code's shape, without importing vscode): a class keeps an
 * `Emitter` private and exposes its `event`; subscribing returns a disposable that unsubscribes.
 */
import { toDisposable, type DisposableLike } from './disposable';

export type Event<T> = (listener: (value: T) => void) => DisposableLike;

export class Emitter<T> {
  // Entries, not the bare functions: one function subscribed twice is called twice and each
  // subscription is disposed on its own.
  private readonly listeners = new Set<{ listener: (value: T) => void }>();

  /** @param onListenerError where a throwing listener's error goes (default: dropped). */
  constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

  readonly event: Event<T> = (listener) => {
    const entry = { listener };
    this.listeners.add(entry);
    return toDisposable(() => this.listeners.delete(entry));
  };

  /** Calls every listener subscribed now; one that throws does not keep the others (or the owner) from going on. */
  fire(value: T): void {
    for (const { listener } of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  /** Drops every listener. */
  dispose(): void {
    this.listeners.clear();
  }
}
