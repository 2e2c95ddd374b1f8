// The gateway API key, and personal mode's model API key, live only in VS Code's SecretStorage
// (never in settings, files or logs).
import * as vscode from 'vscode';

const SECRET_KEY = 'offPeak.apiKey';
/** Personal mode's model API key (docs/architecture.md#personal-mode). */
export const MODEL_SECRET_KEY = 'offPeak.modelApiKey';

export class ApiKeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly secretKey = SECRET_KEY,
    private readonly title = 'Off-Peak Gateway API key',
  ) {
    // Another window may set or clear the key: SecretStorage tells every window.
    this.subscription = secrets.onDidChange((e) => {
      if (e.key === this.secretKey) this.changed.fire();
    });
  }

  async get(): Promise<string | undefined> {
    const key = (await this.secrets.get(this.secretKey))?.trim();
    return key ? key : undefined;
  }

  async has(): Promise<boolean> {
    return (await this.get()) !== undefined;
  }

  /** Asks for the key in a password box; returns whether one was stored. */
  async prompt(): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: this.title,
      prompt: 'Stored in VS Code SecretStorage; the agent never sees it.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'The key is empty' : /\s/.test(v.trim()) ? 'A key has no spaces' : undefined),
    });
    if (!key) return false;
    await this.secrets.store(this.secretKey, key.trim());
    return true;
  }

  /** Stores a key given programmatically (automation, tests); same validation as the prompt. */
  async set(key: string): Promise<void> {
    const trimmed = key.trim();
    if (trimmed === '' || /\s/.test(trimmed)) throw new Error('an API key is a non-empty string without spaces');
    await this.secrets.store(this.secretKey, trimmed);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(this.secretKey);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
