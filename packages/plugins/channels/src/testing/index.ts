export {
  type ChannelConformanceOptions,
  type ChannelConformanceSubject,
  type ChannelTestPlatform,
  type PlatformMessage,
  runChannelConformance,
  type TestUserMessage,
} from "./conformance.js";
