// The fields of an away notification a user may let out (docs/flows.md#away-notifications), each
// off by default (`offPeak.notify.include.<field>`). Apart from the message rules so that reading
// the settings at activation loads nothing else.

export interface NotifyInclude {
  /** The task's title (its first line or the title the user gave: prompt text). */
  taskTitle: boolean;
  /** The name of the task's folder. */
  folder: boolean;
  /** A question's one-line summary (it quotes the tool call: a command, a path, code). */
  question: boolean;
  /** A failure's reason and a failed check's output. */
  failureReason: boolean;
  /** The check command the user typed. */
  checkCommand: boolean;
}

export const INCLUDE_NOTHING: NotifyInclude = {
  taskTitle: false,
  folder: false,
  question: false,
  failureReason: false,
  checkCommand: false,
};
