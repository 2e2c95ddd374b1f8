// How notifications and terminals name a task: its own title, else the first line of its prompt
// (an automatic title), else its id.
export function shortTaskTitle(task: { title: string; prompt: string } | undefined, taskId: string, maxChars = 40): string {
  return task?.title || task?.prompt.split('\n')[0].slice(0, maxChars) || taskId;
}

/** The length of a task's short id. */
const SHORT_ID_CHARS = 8;

/**
 * "4ea89496": the short id an away notification names a task by (its title is private by default),
 * and the card shows, so the one leads to the other (docs/flows.md#away-notifications).
 */
export function shortTaskId(taskId: string): string {
  return taskId.slice(0, SHORT_ID_CHARS);
}
