import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { GuardrailProviderFactory, GuardrailProviderRegistry } from "./contract.js";

const USE_NAME = /^[a-z][a-z0-9_-]{0,40}$/;

/** A registry of guardrail provider kinds by their `use:` name; one per kernel. */
export function createGuardrailProviderRegistry(): GuardrailProviderRegistry {
  const factories = new Map<string, GuardrailProviderFactory>();
  return {
    add(factory) {
      if (!factory || typeof factory.use !== "string" || !USE_NAME.test(factory.use)) {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `guardrail provider name ${JSON.stringify(factory?.use)} is not valid`, {
          hint: "Provider names are lower-case letters, digits, _ and -, starting with a letter (config.yaml names them with `use:`).",
        });
      }
      if (typeof factory.create !== "function") {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `guardrail provider "${factory.use}" has no create(config, context)`);
      }
      if (factories.has(factory.use)) {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `guardrail provider "${factory.use}" is registered twice`, {
          hint: "Each provider name is registered by one plugin; remove the duplicate plugin entry from config.yaml.",
        });
      }
      factories.set(factory.use, factory);
    },
    get: (use) => factories.get(use),
    names: () => [...factories.keys()].sort(),
  };
}
