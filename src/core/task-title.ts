// How notifications and terminals name a task: its own title, else the first line of its prompt
// (an automatic title), else its id.
export function shortTaskTitle(task: { title: string; prompt: string } | undefined, taskId: string, maxChars = 40): string {
  return task?.title || task?.prompt.split('\n')[0].slice(0, maxChars) || taskId;
}
