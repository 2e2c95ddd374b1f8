// What the panel keeps of its own view across a window reload (and a webview reload): the scroll
// position and which cards are expanded. VS Code stores it with the panel (vscode.setState) and
// hands it back to the restored webview (vscode.getState); it holds ids and a number, no task text.
import { createContext } from 'preact';

/** The webview API's state store (acquireVsCodeApi()); a plain object in tests. */
export interface StateStore {
  getState(): unknown;
  setState(state: unknown): void;
}

interface Saved {
  scrollY: number;
  expanded: string[];
}

/** More expanded ids than this are not kept (the oldest go first). */
const MAX_EXPANDED = 200;

export class PanelViewState {
  private readonly expanded: Set<string>;
  private scroll: number;

  constructor(private readonly store: StateStore) {
    const saved = store.getState() as Partial<Saved> | undefined;
    this.scroll = typeof saved?.scrollY === 'number' && Number.isFinite(saved.scrollY) && saved.scrollY > 0 ? saved.scrollY : 0;
    this.expanded = new Set(
      Array.isArray(saved?.expanded) ? saved.expanded.filter((id): id is string => typeof id === 'string').slice(-MAX_EXPANDED) : [],
    );
  }

  get scrollY(): number {
    return this.scroll;
  }

  isExpanded(taskId: string): boolean {
    return this.expanded.has(taskId);
  }

  setExpanded(taskId: string, open: boolean): void {
    if (open === this.expanded.has(taskId)) return;
    if (open) this.expanded.add(taskId);
    else this.expanded.delete(taskId);
    while (this.expanded.size > MAX_EXPANDED) this.expanded.delete(this.expanded.values().next().value as string);
    this.save();
  }

  setScrollY(y: number): void {
    const rounded = Math.max(0, Math.round(y));
    if (rounded === this.scroll) return;
    this.scroll = rounded;
    this.save();
  }

  /** Forgets cards that are gone (deleted tasks), keeping the state small. */
  keepOnly(taskIds: ReadonlySet<string>): void {
    let changed = false;
    for (const id of this.expanded) {
      if (!taskIds.has(id)) {
        this.expanded.delete(id);
        changed = true;
      }
    }
    if (changed) this.save();
  }

  private save(): void {
    const state: Saved = { scrollY: this.scroll, expanded: [...this.expanded] };
    this.store.setState(state);
  }
}

/** The panel's view state, for the cards (absent: nothing is kept, e.g. a test rendering). */
export const ViewStateContext = createContext<PanelViewState | undefined>(undefined);
