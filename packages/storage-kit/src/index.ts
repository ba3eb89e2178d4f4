export { COMPACT_SUMMARY, COMPACT_USAGE, type CompactTarget, formatBytes, runCompactCommand } from "./compact-command.js";
export {
  type DeltaCheckpointOptions,
  DeltaCheckpointSaver,
  fromRanges,
  isMessagesRef,
  type MessagesRef,
  toRanges,
} from "./delta-saver.js";
export {
  complementRanges,
  dataBytes,
  inNormalizedRanges,
  MemoryMessageLog,
  type MessageLogRow,
  normalizeRanges,
  type ThreadMessageLog,
} from "./message-log.js";
export {
  type CheckpointHead,
  CheckpointRetention,
  type CheckpointTables,
  DEFAULT_RETENTION,
  planRetention,
  type RetentionPolicy,
  type RetentionReport,
  type RetentionRunOptions,
} from "./retention.js";
