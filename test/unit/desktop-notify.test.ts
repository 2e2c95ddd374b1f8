// The OS-level notification when no VS Code window has focus (docs/flows.md#desktop-notifications):
// each platform's notifier and its argv (the platform and PATH injected, so every branch runs
// here), and the focus shared between windows through one file (real files in a temp dir).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutableHost } from '../../src/core/executable-path';
import { desktopNotifyCommand, WindowFocus } from '../../src/notify/desktop-notify';

const host = (platform: NodeJS.Platform, files: string[] = [], env: Record<string, string> = {}): ExecutableHost => ({
  platform,
  env,
  isFile: (f) => files.includes(f),
});
const HOSTILE_TITLE = 'x" & calc.exe & "$(touch /tmp/pwned)`';

describe('desktop notifications: the OS notifier of each platform', () => {
  it('Linux: notify-send from PATH, the title and body as their own arguments after --; none without notify-send', () => {
    const linux = host('linux', ['/usr/bin/notify-send'], { PATH: '/usr/bin:.' });
    assert.deepEqual(desktopNotifyCommand(HOSTILE_TITLE, 'body\nline', linux), {
      command: '/usr/bin/notify-send',
      args: ['--app-name=Visual Studio Code', '--', HOSTILE_TITLE, 'body line'],
    });
    assert.equal(desktopNotifyCommand('t', 'b', host('linux', [], { PATH: '/usr/bin' })), undefined);
    // A notify-send in a relative PATH entry (e.g. a task's repository) is never used.
    assert.equal(desktopNotifyCommand('t', 'b', host('linux', ['notify-send', './notify-send'], { PATH: '.' })), undefined);
  });

  it("macOS: osascript by its full path, the text passed as the script's argv (never inside the script)", () => {
    const cmd = desktopNotifyCommand(HOSTILE_TITLE, 'the body', host('darwin'))!;
    assert.equal(cmd.command, '/usr/bin/osascript');
    assert.deepEqual(cmd.args.slice(-2), [HOSTILE_TITLE, 'the body']);
    assert.ok(cmd.args.slice(0, -2).every((a) => !a.includes('calc') && !a.includes('the body')));
  });

  it('Windows: Windows PowerShell under SystemRoot, a constant script, the text in the environment', () => {
    const cmd = desktopNotifyCommand(HOSTILE_TITLE, 'the body', host('win32', [], { SystemRoot: 'D:\\Win' }))!;
    assert.equal(cmd.command, 'D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    assert.deepEqual(cmd.env, { OFFPEAK_TOAST_TITLE: HOSTILE_TITLE, OFFPEAK_TOAST_BODY: 'the body' });
    assert.ok(cmd.args.every((a) => !a.includes('calc') && !a.includes('the body')));
    assert.match(cmd.args.at(-1)!, /\$env:OFFPEAK_TOAST_TITLE/);
  });
});

describe('desktop notifications: which window has focus', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'offpeak-focus-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a window sees another window's focus; a late blur of the window that lost focus does not hide the one that gained it", () => {
    const file = path.join(dir, 'window-focus.json');
    const alive = () => true;
    const a = new WindowFocus(file, 'a', 1, alive);
    const b = new WindowFocus(file, 'b', 2, alive);
    assert.equal(a.otherWindowFocused(), false, 'nothing recorded yet');
    a.changed(true);
    assert.deepEqual([a.otherWindowFocused(), b.otherWindowFocused()], [false, true]);
    b.changed(true);
    a.changed(false); // A's blur arrives after B's focus
    assert.equal(a.otherWindowFocused(), true, 'B still has focus');
    b.changed(false);
    assert.deepEqual([a.otherWindowFocused(), b.otherWindowFocused()], [false, false], 'no window has focus');
  });

  it('the focus of a window whose process is gone does not count', () => {
    const file = path.join(dir, 'window-focus.json');
    new WindowFocus(file, 'gone', 99, () => true).changed(true);
    assert.equal(new WindowFocus(file, 'me', 1, () => false).otherWindowFocused(), false);
  });
});
