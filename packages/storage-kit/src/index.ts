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
  MemoryMessageLog,
  type MessageLogRow,
  normalizeRanges,
  type ThreadMessageLog,
} from "./message-log.js";
