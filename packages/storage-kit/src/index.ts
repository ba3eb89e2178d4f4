export {
  type DeltaCheckpointOptions,
  DeltaCheckpointSaver,
  fromRanges,
  isMessagesRef,
  type MessagesRef,
  toRanges,
} from "./delta-saver.js";
export { MemoryMessageLog, type MessageLogRow, type ThreadMessageLog } from "./message-log.js";
