/** Something that holds a resource until disposed (VS Code's shape, without importing vscode). */
export interface DisposableLike {
  dispose(): void;
}

export function toDisposable(fn: () => void): DisposableLike {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Base class that owns child disposables and releases them once, in reverse order. */
export abstract class Disposable implements DisposableLike {
  private readonly owned: DisposableLike[] = [];
  private disposed = false;

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  protected _register<T extends DisposableLike>(child: T): T {
    if (this.disposed) child.dispose();
    else this.owned.push(child);
    return child;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const child of this.owned.splice(0).reverse()) {
      try {
        child.dispose();
      } catch {
        // One failing child must not keep the others alive.
      }
    }
  }
}
