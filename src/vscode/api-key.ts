// The gateway API key lives only in VS Code's SecretStorage (never in settings, files or logs).
import * as vscode from 'vscode';

const SECRET_KEY = 'offPeak.apiKey';

export class ApiKeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    // Another window may set or clear the key: SecretStorage tells every window.
    this.subscription = secrets.onDidChange((e) => {
      if (e.key === SECRET_KEY) this.changed.fire();
    });
  }

  async get(): Promise<string | undefined> {
    const key = (await this.secrets.get(SECRET_KEY))?.trim();
    return key ? key : undefined;
  }

  async has(): Promise<boolean> {
    return (await this.get()) !== undefined;
  }

  /** Asks for the key in a password box; returns whether one was stored. */
  async prompt(): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: 'Off-Peak Gateway API key',
      prompt: 'Stored in VS Code SecretStorage; the agent never sees it.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'The key is empty' : /\s/.test(v.trim()) ? 'A key has no spaces' : undefined),
    });
    if (!key) return false;
    await this.secrets.store(SECRET_KEY, key.trim());
    return true;
  }

  /** Stores a key given programmatically (automation, tests); same validation as the prompt. */
  async set(key: string): Promise<void> {
    const trimmed = key.trim();
    if (trimmed === '' || /\s/.test(trimmed)) throw new Error('an API key is a non-empty string without spaces');
    await this.secrets.store(SECRET_KEY, trimmed);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_KEY);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
