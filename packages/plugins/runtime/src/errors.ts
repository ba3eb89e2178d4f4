/**
 * The runtime's error codes, in the kernel's `ANTLER_ERR_*` shape: threads, runs, uploads, artifacts and custom
 * agents are the runtime's concepts, so their codes live here (the gateway maps them to HTTP statuses).
 */
export const RuntimeErrorCodes = Object.freeze({
  /** A write that conflicts with what is stored (a thread that exists with `if_exists: raise`, ...). */
  STATE_CONFLICT: "ANTLER_ERR_STATE_CONFLICT",
  /** A run was refused because another run holds its thread (multitask strategy `reject`). */
  THREAD_BUSY: "ANTLER_ERR_THREAD_BUSY",
  UPLOAD_INVALID: "ANTLER_ERR_UPLOAD_INVALID",
  ARTIFACT_NOT_FOUND: "ANTLER_ERR_ARTIFACT_NOT_FOUND",
  THREAD_NOT_FOUND: "ANTLER_ERR_THREAD_NOT_FOUND",
  RUN_NOT_FOUND: "ANTLER_ERR_RUN_NOT_FOUND",
  /** A checkpoint id the thread does not have (or no longer keeps, after `storage.checkpoint.keep`). */
  CHECKPOINT_NOT_FOUND: "ANTLER_ERR_CHECKPOINT_NOT_FOUND",
  /** A branch named a message the thread does not hold. */
  MESSAGE_NOT_FOUND: "ANTLER_ERR_MESSAGE_NOT_FOUND",
  /** No such custom agent for this user (another user's agent is indistinguishable on purpose). */
  AGENT_NOT_FOUND: "ANTLER_ERR_AGENT_NOT_FOUND",
  /** A bad agent name, or an agent config.yaml that does not validate. */
  AGENT_INVALID: "ANTLER_ERR_AGENT_INVALID",
  /** Creating an agent that exists, or changing one that ships with the distribution. */
  AGENT_CONFLICT: "ANTLER_ERR_AGENT_CONFLICT",
  /**
   * The instance already holds its most live runs (`maxActiveRuns`, the gateway's `runs.max_active`): the run was
   * refused before it started; 503 with Retry-After over HTTP. `details.retry_after_seconds` says when to retry.
   */
  RUNS_AT_CAPACITY: "ANTLER_ERR_RUNS_AT_CAPACITY",
  /** The caller's role may not use the model a run asked for (authorization layer 1); 403 over HTTP. */
  MODEL_FORBIDDEN: "ANTLER_ERR_MODEL_FORBIDDEN",
  /** Resuming a run that is not paused (running, or ended): 409 over HTTP. `details.status` says what it is. */
  RUN_NOT_PAUSED: "ANTLER_ERR_RUN_NOT_PAUSED",
  /** A resume's decision does not fit the pause (unknown call id, edited arguments the tool's schema refuses): 400. */
  RESUME_INVALID: "ANTLER_ERR_RESUME_INVALID",
  /** The user's runs today (UTC) cost as much as a `budgets:` entry allows; `details.budget` names it. 402 over HTTP. */
  BUDGET_EXCEEDED: "ANTLER_ERR_BUDGET_EXCEEDED",
  /** A run whose process stopped `runs.max_attempts` times is not taken over again; it ends as an error with this code. */
  RUN_ATTEMPTS_EXHAUSTED: "ANTLER_ERR_RUN_ATTEMPTS_EXHAUSTED",
  /** This instance no longer holds the run (another instance took it over after its lease expired); its writes are refused. */
  RUN_TAKEN_OVER: "ANTLER_ERR_RUN_TAKEN_OVER",
  /**
   * The instance running the run is shutting down and handed it over (`handOverAll`): the run is not over, it
   * continues from its last checkpoint on another instance, or on this one after a restart. A stream that gets it
   * joins the run again (its event log resumes where it stopped). 503 over HTTP.
   */
  RUN_HANDED_OVER: "ANTLER_ERR_RUN_HANDED_OVER",
});
