// The OS-level notification of a question or a result when no VS Code window has focus
// (docs/flows.md#desktop-notifications). VS Code's extension API has no OS notification: its
// toasts live inside the window (an unfocused window keeps them until it is focused again). So a
// local desktop window asks the operating system's own notifier, started with argv (the text is
// an argument or an environment value, never part of a command line or script), by full path:
//   Linux    notify-send (libnotify), when it is on PATH; nothing otherwise;
//   macOS    /usr/bin/osascript `display notification`, the text passed as the script's argv;
//   Windows  Windows PowerShell's WinRT toast, under VS Code's application id, the text in the
//            environment.
// A remote or web window never does: its extension host is not on the user's machine.
import fs from 'node:fs';
import path from 'node:path';
import { envOf, findOnPath, type ExecutableHost } from '../core/executable-path';
import { isProcessAlive } from '../core/process-alive';
import { plainNotificationText } from '../core/untrusted-text';

export interface DesktopCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The script PowerShell runs: constant; the title and body come from the environment. */
const WINDOWS_TOAST_SCRIPT = [
  '[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null',
  '$t = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)',
  '$x = $t.GetElementsByTagName("text")',
  '$x.Item(0).AppendChild($t.CreateTextNode($env:OFFPEAK_TOAST_TITLE)) > $null',
  '$x.Item(1).AppendChild($t.CreateTextNode($env:OFFPEAK_TOAST_BODY)) > $null',
  '[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier("Microsoft.VisualStudioCode").Show([Windows.UI.Notifications.ToastNotification]::new($t))',
].join('; ');

/** How this platform shows an OS notification, or undefined when it cannot (no notifier found). */
export function desktopNotifyCommand(title: string, body: string, host: ExecutableHost): DesktopCommand | undefined {
  const t = plainNotificationText(title, 120);
  const b = plainNotificationText(body, 300);
  switch (host.platform) {
    case 'darwin':
      return {
        command: '/usr/bin/osascript',
        args: ['-e', 'on run argv', '-e', 'display notification (item 2 of argv) with title (item 1 of argv)', '-e', 'end run', t, b],
      };
    case 'win32': {
      const root = envOf(host, 'SYSTEMROOT') ?? 'C:\\Windows';
      return {
        command: path.win32.join(root, 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe'),
        args: ['-NoProfile', '-NonInteractive', '-Command', WINDOWS_TOAST_SCRIPT],
        env: { OFFPEAK_TOAST_TITLE: t, OFFPEAK_TOAST_BODY: b },
      };
    }
    default: {
      const notifySend = findOnPath('notify-send', host);
      return notifySend ? { command: notifySend, args: ['--app-name=Visual Studio Code', '--', t, b] } : undefined;
    }
  }
}

/**
 * Which window of this user has focus, shared through one small file in globalStorage (windows
 * share nothing else that is cheap to write on every focus change; the task DB would make every
 * window reload). A window writes `focused: true` when it gains focus and `false` when it loses it,
 * the latter only while the file still names it (another window may have gained focus first).
 */
export class WindowFocus {
  constructor(
    private readonly file: string,
    private readonly windowId: string,
    private readonly pid: number = process.pid,
    private readonly alive: (pid: number) => boolean = isProcessAlive,
  ) {}

  changed(focused: boolean): void {
    try {
      if (!focused && this.read()?.windowId !== this.windowId) return;
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${this.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ windowId: this.windowId, pid: this.pid, focused }), { mode: 0o600 });
      fs.renameSync(tmp, this.file);
    } catch {
      // Not knowing another window's focus only means one more OS notification.
    }
  }

  /** True when some other VS Code window (whose process still runs) has focus now. */
  otherWindowFocused(): boolean {
    const at = this.read();
    return at !== undefined && at.windowId !== this.windowId && at.focused && this.alive(at.pid);
  }

  private read(): { windowId: string; pid: number; focused: boolean } | undefined {
    try {
      const v = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { windowId?: unknown; pid?: unknown; focused?: unknown };
      return typeof v.windowId === 'string' && typeof v.pid === 'number'
        ? { windowId: v.windowId, pid: v.pid, focused: v.focused === true }
        : undefined;
    } catch {
      return undefined;
    }
  }
}
