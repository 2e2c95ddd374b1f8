// `offPeak.setApiKey` and `offPeak.setModelApiKey` with the key as their argument (automation,
// another extension, a command link): they may set a key where none is stored, but replacing the
// stored key asks the user first, as a modal (docs/architecture.md#layers: vscode-free, so tested
// in plain Node).
import type { Confirmation } from './confirmations';

/** The key storage as this command sees it (src/vscode/api-key.ts over SecretStorage). */
export interface ApiKeySlot {
  get(): Promise<string | undefined>;
  set(key: string): Promise<void>;
}

export const REPLACE_KEY_CONFIRMATION: Confirmation = {
  message: 'Replace your Off-Peak gateway API key?',
  detail:
    'A command (from another extension, a link or automation) asks to store a different key. Your tasks would then run, and be billed, under that key. Replace it only if you started this yourself.',
  action: 'Replace Key',
};

export const REPLACE_MODEL_KEY_CONFIRMATION: Confirmation = {
  message: 'Replace your model API key?',
  detail:
    'A command (from another extension, a link or automation) asks to store a different model API key for personal mode. Your tasks would then send their model requests, and be billed, under that key. Replace it only if you started this yourself.',
  action: 'Replace Key',
};

/** Stores `key` unless it would replace a different stored key and the user declines. True when `key` is the stored key afterwards. */
export async function setApiKeyFromArgument(
  slot: ApiKeySlot,
  key: string,
  confirm: (question: Confirmation) => Promise<boolean>,
  question: Confirmation = REPLACE_KEY_CONFIRMATION,
): Promise<boolean> {
  const trimmed = key.trim();
  if (trimmed === '' || /\s/.test(trimmed)) throw new Error('an API key is a non-empty string without spaces');
  const stored = await slot.get();
  if (stored === trimmed) return true;
  if (stored !== undefined && !(await confirm(question))) return false;
  await slot.set(trimmed);
  return true;
}

/** The handler of `offPeak.setModelApiKey`: a key argument is stored as `setApiKeyFromArgument` says; without one, the password box asks. */
export async function setModelApiKeyCommand(
  slot: ApiKeySlot & { prompt(): Promise<boolean> },
  key: unknown,
  confirm: (question: Confirmation) => Promise<boolean>,
): Promise<boolean> {
  if (typeof key === 'string') return setApiKeyFromArgument(slot, key, confirm, REPLACE_MODEL_KEY_CONFIRMATION);
  return slot.prompt();
}
