// Panel hooks: the ticking clock, page visibility, and the "New" marks held while the panel is shown.
import { useEffect, useState } from 'preact/hooks';
import type { PanelState } from '../src/protocol/webview';
import type { HostChannel } from './host-channel';

/** `state.now` advanced by the time since the snapshot arrived, every second. */
export function useTickingNow(state: PanelState | undefined): number {
  const [offset] = useState(() => ({ receivedAt: Date.now(), base: state?.now ?? Date.now() }));
  const [now, setNow] = useState(state?.now ?? Date.now());
  useEffect(() => {
    if (!state) return;
    offset.receivedAt = Date.now();
    offset.base = state.now;
    setNow(state.now);
  }, [state?.version]);
  useEffect(() => {
    const timer = setInterval(() => setNow(offset.base + (Date.now() - offset.receivedAt)), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
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
 * Unseen results: while the panel is visible, the unseen cards it lists are reported seen (so the
 * count and the marks go in every window), and keep their "New" mark here until the panel is
 * hidden, so the user still sees which ones are new. `since` is when the user had last looked
 * before these marks were taken (`lastSeenAt` of that moment), for the summary's "Since 18:40".
 */
export function useNewMarks(
  onScreenUnseen: readonly string[],
  channel: HostChannel,
  shownByVsCode: boolean,
  lastSeenAt: number | null,
): { held: ReadonlySet<string>; since: number | null } {
  const visible = usePageVisible() && shownByVsCode;
  const [held, setHeld] = useState<{ ids: ReadonlySet<string>; since: number | null }>(() => ({ ids: new Set(), since: null }));
  const key = onScreenUnseen.join('\n');
  useEffect(() => {
    if (!visible) {
      if (held.ids.size > 0) setHeld({ ids: new Set(), since: null });
      return;
    }
    if (onScreenUnseen.length === 0) return;
    setHeld((before) => ({ ids: new Set([...before.ids, ...onScreenUnseen]), since: before.ids.size > 0 ? before.since : lastSeenAt }));
    void channel.request('markSeen', { taskIds: onScreenUnseen.slice(0, 1000) }).catch(() => undefined);
  }, [visible, key, channel]);
  return { held: held.ids, since: held.ids.size > 0 ? held.since : lastSeenAt };
}
