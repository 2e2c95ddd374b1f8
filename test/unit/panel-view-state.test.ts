// The panel's own view state (webview/view-state.ts): what VS Code keeps with the panel across a
// window reload, through the webview's getState/setState (a plain object stands in for it here).
import assert from 'node:assert/strict';
import { PanelViewState, type StateStore } from '../../webview/view-state';

function memoryStore(initial?: unknown): StateStore & { saved: unknown } {
  const store = { saved: initial, getState: () => store.saved, setState: (s: unknown) => (store.saved = s) };
  return store;
}

describe('panel view state (kept across a window reload)', () => {
  it('item 8: scroll and expanded cards saved by one webview come back in the next', () => {
    const store = memoryStore();
    const before = new PanelViewState(store);
    before.setExpanded('t1', true);
    before.setExpanded('t2', true);
    before.setExpanded('t2', false);
    before.setExpanded('t3', true);
    before.setScrollY(412.4);
    // The reload: a new webview, the same stored state.
    const after = new PanelViewState(memoryStore(JSON.parse(JSON.stringify(store.saved))));
    assert.equal(after.scrollY, 412);
    assert.deepEqual(
      ['t1', 't2', 't3'].map((id) => after.isExpanded(id)),
      [true, false, true],
    );
    after.keepOnly(new Set(['t3']));
    assert.equal(after.isExpanded('t1'), false, 'a deleted task is forgotten');
  });

  it('item 8: a missing or malformed saved state starts at the top with nothing expanded', () => {
    for (const saved of [undefined, null, 'x', { scrollY: 'far', expanded: 'all' }, { scrollY: -5, expanded: [1, null] }]) {
      const state = new PanelViewState(memoryStore(saved));
      assert.equal(state.scrollY, 0);
      assert.equal(state.isExpanded('1'), false);
    }
  });
});
