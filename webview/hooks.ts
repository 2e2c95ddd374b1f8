// Panel hooks: the ticking clock, page visibility, and the "New" marks held while the panel is shown.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PanelState } from '../src/protocol/webview';
import type { HostChannel } from './host-channel';

/**
 * `state.now` advanced by the time since the snapshot arrived, every second. A new snapshot's
 * `now` is taken in the render that shows it (an effect setting it afterwards rendered the whole
 * panel a second time for every snapshot, 1000 cards compared again).
 */
export function useTickingNow(state: PanelState | undefined): number {
  const [clock] = useState(() => ({
    version: undefined as number | undefined,
    receivedAt: Date.now(),
    base: state?.now ?? Date.now(),
    now: state?.now ?? Date.now(),
  }));
  const [, setTick] = useState(0);
  if (state && state.version !== clock.version) {
    clock.version = state.version;
    clock.receivedAt = Date.now();
    clock.base = state.now;
    clock.now = state.now;
  }
  useEffect(() => {
    const timer = setInterval(() => {
      clock.now = clock.base + (Date.now() - clock.receivedAt);
      setTick((n) => n + 1);
    }, 1000);
    return () => clearInterval(timer);
  }, []);
  return clock.now;
}

/** Whether the page is on screen (the browser tab of code-server, or the window, may be hidden). */
export function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const listener = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', listener);
    return () => document.removeEventListener('visibilitychange', listener);
  }, []);
  return visible;
}

/**
 * Unseen results on screen: while the panel is visible, the unseen cards it lists are reported
 * to the host as showing. They keep their "New" mark, and the status bar its count, while the user
 * looks; the host marks them seen when VS Code hides or closes the panel, and this hook when the
 * page itself is hidden (the browser tab of code-server): one rule for every place that counts.
 */
export function useShowingResults(onScreenUnseen: readonly string[], channel: HostChannel, shownByVsCode: boolean): void {
  const pageVisible = usePageVisible();
  const [reported] = useState(() => new Set<string>());
  const key = onScreenUnseen.join('\n');
  useEffect(() => {
    if (!pageVisible) {
      // The host cannot see a hidden browser tab: say what was looked at before it went.
      const taskIds = [...reported].slice(0, 1000);
      reported.clear();
      if (taskIds.length > 0) void channel.request('markSeen', { taskIds }).catch(() => undefined);
      return;
    }
    if (!shownByVsCode) {
      reported.clear();
      return;
    }
    const fresh = onScreenUnseen.filter((id) => !reported.has(id)).slice(0, 1000);
    if (fresh.length === 0) return;
    for (const id of fresh) reported.add(id);
    void channel.request('showing', { taskIds: fresh }).catch(() => undefined);
  }, [pageVisible, shownByVsCode, key, channel]);
}

/**
 * The same array as last time while its items are the same: each snapshot carries a new models
 * list, and a memoized card compares its props by identity (a new list would re-render every card).
 */
export function useSameList<T>(list: T[] | undefined): T[] {
  const kept = useRef<T[]>(list ?? []);
  const next = list ?? [];
  if (next.length !== kept.current.length || next.some((item, i) => item !== kept.current[i])) kept.current = next;
  return kept.current;
}
