// The away notifications' target in SecretStorage (the URL is a credential), its two commands and
// its settings (docs/flows.md#away-notifications). The machine setting `offPeak.notify.target` only
// says which kind is set, so the Settings editor shows whether one is; emptying it removes the target.
import * as vscode from 'vscode';
import { INCLUDE_NOTHING, type NotifyInclude } from '../notify/notify-include';
import { parseQuietHours, QuietHoursError } from '../notify/quiet-hours';
import type { NotifyTarget, NotifyTargetKind } from '../protocol/notify';

// The target's rules, the messages, zod and ky load at the first use, not at activation.
const targetRules = () => import('../notify/notify-target');
const targetCommand = () => import('../notify/target-command');

const SECRET_KEY = 'offPeak.notify.target';

export class NotifyTargetStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;
  /** Whether a target is set, as last read (events are written to the outbox only while one is). */
  private set = false;

  constructor(private readonly secrets: vscode.SecretStorage) {
    // Another window may set or remove it: SecretStorage tells every window.
    this.subscription = secrets.onDidChange((e) => {
      if (e.key === SECRET_KEY) void this.refresh().then(() => this.changed.fire());
    });
    void this.refresh();
  }

  get isSet(): boolean {
    return this.set;
  }

  async get(): Promise<NotifyTarget | undefined> {
    const text = await this.secrets.get(SECRET_KEY);
    if (!text) return undefined;
    try {
      return (await targetRules()).targetOf(JSON.parse(text));
    } catch {
      return undefined;
    }
  }

  async save(target: NotifyTarget): Promise<void> {
    await this.secrets.store(SECRET_KEY, JSON.stringify(target));
    this.set = true;
    await showKindInSettings(target.kind);
  }

  async remove(): Promise<void> {
    await this.secrets.delete(SECRET_KEY);
    this.set = false;
    await showKindInSettings('');
  }

  /** Reads the secret again and brings the setting in line with it. */
  async refresh(): Promise<void> {
    const target = await this.get();
    this.set = target !== undefined;
    await showKindInSettings(target?.kind ?? '');
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** The machine setting that says which kind is set (never the URL); written only when it differs. */
async function showKindInSettings(kind: NotifyTargetKind | ''): Promise<void> {
  const config = vscode.workspace.getConfiguration('offPeak');
  if ((config.inspect<string>('notify.target')?.globalValue ?? '') === kind) return;
  await Promise.resolve(config.update('notify.target', kind === '' ? undefined : kind, vscode.ConfigurationTarget.Global)).catch(
    () => undefined,
  );
}

/** `offPeak.notify.include.*` and `offPeak.notify.quietHours`, read at each send. */
export function readNotifySettings(): { include: NotifyInclude; quietHours: string } {
  const c = vscode.workspace.getConfiguration('offPeak.notify');
  const include = Object.fromEntries(
    Object.keys(INCLUDE_NOTHING).map((k) => [k, c.get<boolean>(`include.${k}`, false) === true]),
  ) as unknown as NotifyInclude;
  return { include, quietHours: c.get<string>('quietHours', '') };
}

export function registerNotifyCommands(context: vscode.ExtensionContext, targets: NotifyTargetStore, log: (line: string) => void): void {
  context.subscriptions.push(
    targets,
    vscode.commands.registerCommand('offPeak.setNotificationTarget', async () => {
      const [{ NOTIFY_TARGET_LABELS }, { setNotificationTarget }, { NOTIFY_TARGET_KINDS }] = await Promise.all([
        targetRules(),
        targetCommand(),
        import('../protocol/notify'),
      ]);
      const outcome = await setNotificationTarget({
        askUrl: () =>
          Promise.resolve(
            vscode.window.showInputBox({
              title: 'Off-Peak: notification target',
              prompt:
                'An ntfy topic URL, a Slack- or Discord-compatible incoming webhook, or a JSON webhook. Kept in SecretStorage. Empty removes it.',
              password: true,
              ignoreFocusOut: true,
            }),
          ),
        pickKind: async (guess) => {
          const items = [guess, ...NOTIFY_TARGET_KINDS.filter((k) => k !== guess)].map((target) => ({
            label: NOTIFY_TARGET_LABELS[target],
            target,
          }));
          return (await vscode.window.showQuickPick(items, { title: 'Which kind of receiver is it?', ignoreFocusOut: true }))?.target;
        },
        keepAfterFailure: async (error) =>
          (await vscode.window.showWarningMessage(
            `Off-Peak: the test notification did not arrive (${error}). Keep this target anyway?`,
            { modal: true },
            'Keep',
          )) === 'Keep',
        save: (t) => targets.save(t),
        remove: () => targets.remove(),
        now: () => Date.now(),
      });
      if (outcome.kind === 'invalid') void vscode.window.showErrorMessage(`Off-Peak: ${outcome.error}`);
      else if (outcome.kind === 'removed') void vscode.window.showInformationMessage('Off-Peak: notification target removed.');
      else if (outcome.kind === 'saved')
        void vscode.window.showInformationMessage(
          `Off-Peak: notification target set (${outcome.target})${outcome.test.ok ? '; the test notification arrived.' : '.'}`,
        );
      if (outcome.kind === 'saved' || outcome.kind === 'not-saved')
        log(`notify: test notification ${outcome.test.ok ? 'sent' : `failed: ${outcome.test.error}`}`);
    }),
    vscode.commands.registerCommand('offPeak.sendTestNotification', async () => {
      const target = await targets.get();
      if (!target) {
        const set = await vscode.window.showInformationMessage('Off-Peak: no notification target is set.', 'Set Notification Target…');
        if (set) await vscode.commands.executeCommand('offPeak.setNotificationTarget');
        return;
      }
      const result = await (await targetCommand()).sendTestNotification(target, Date.now());
      log(`notify: test notification ${result.ok ? 'sent' : `failed: ${result.error}`}`);
      if (result.ok) void vscode.window.showInformationMessage(`Off-Peak: test notification sent (${target.kind}).`);
      else void vscode.window.showErrorMessage(`Off-Peak: the test notification failed: ${result.error}.`);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // Emptied in the Settings editor: the target goes.
      if (
        e.affectsConfiguration('offPeak.notify.target') &&
        !vscode.workspace.getConfiguration('offPeak').get<string>('notify.target') &&
        targets.isSet
      )
        void targets.remove();
      if (e.affectsConfiguration('offPeak.notify.quietHours')) {
        try {
          parseQuietHours(readNotifySettings().quietHours);
        } catch (error) {
          if (error instanceof QuietHoursError)
            void vscode.window.showWarningMessage(`Off-Peak: ${error.message}; until it is fixed, notifications are not held.`);
        }
      }
    }),
  );
}
