/** The durable-task tools the agent gets while a server lists `tasks:`. */
export const LIST_BACKGROUND_TASKS_TOOL = "list_background_tasks";
export const CANCEL_BACKGROUND_TASK_TOOL = "cancel_background_task";
