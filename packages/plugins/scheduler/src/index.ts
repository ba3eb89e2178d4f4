export { schedulerCommands } from "./cli.js";
export { type SchedulerConfig, type SchedulerConfigInput, schedulerConfigSchema, type TaskInput, taskInputSchema } from "./config.js";
export { isSchedulerError, type SchedulerErrorCode, SchedulerErrorCodes, schedulerError } from "./errors.js";
export { type PublicRun, type PublicTask, publicRun, publicTask, schedulerRoutes } from "./http.js";
export { default, PLUGIN_NAME, PLUGIN_VERSION, SCHEDULER } from "./plugin.js";
export { assertTimezone, nextCronFire, nextCronFires, parseRunAt, validateCron, zonedTimeToUtc } from "./schedule.js";
export {
  type Occurrence,
  type OccurrenceResult,
  type OccurrenceRunner,
  type PollResult,
  SCHEDULER_FIRING_CHANNEL,
  type ScheduledTaskView,
  Scheduler,
  type SchedulerFiringEvent,
  type SchedulerOptions,
  type TriggerResult,
} from "./scheduler.js";
export {
  RUNS_TABLE,
  type RunStatus,
  type RunTrigger,
  type ScheduledRun,
  type ScheduledTask,
  type SchedulerTables,
  schedulerMigrations,
  TASKS_TABLE,
  type TaskKind,
  type TaskState,
  type ThreadPolicy,
} from "./store.js";
