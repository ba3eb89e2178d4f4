import { channelStoreSuite } from "./store-suite.js";

channelStoreSuite(() => ({ backend: "sqlite" }));
