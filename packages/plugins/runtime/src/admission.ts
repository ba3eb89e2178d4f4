import { isAntlerError, type Kernel, type ModelInfo, type PluginContext, type Token } from "@antler/kernel";
import { RuntimeErrorCodes } from "./errors.js";

/** What a run asks for, as admission checks see it before the run starts (nothing is recorded yet). */
export interface RunAdmissionRequest {
  readonly userId: string;
  /** The caller's role (the gateway's API-key `role`, or `RunCallOptions.userRole`); undefined when none was given. */
  readonly userRole: string | undefined;
  /** The configured model the run will use (after the request, the custom agent and the default). */
  readonly modelName: string;
  readonly agentName: string | undefined;
  /** The internal principal (the scheduler) is asking. */
  readonly internal: boolean;
  readonly traceId: string | undefined;
  /**
   * USD the user's recorded runs created since `since` (ISO-8601) cost. Given by `AntlerClient` for a run it is
   * about to start; absent where no run follows (model listings) or none is recorded (a subagent).
   */
  readonly spentSince?: ((since: string) => Promise<number>) | undefined;
}

/**
 * Refuses a run before it starts by throwing a coded `AntlerError` (the gateway answers with its status, e.g.
 * 403 for `ANTLER_ERR_MODEL_FORBIDDEN`); returning admits it. Checks are also asked, with no run following, which
 * models a caller may use (`AntlerClient.listModels`, `GET /api/models`), so a check must not count or record
 * anything: it only decides.
 */
export type RunAdmissionCheck = (request: RunAdmissionRequest) => void | Promise<void>;

function runAdmissionToken(pluginName: string): Token<RunAdmissionCheck> {
  return Object.freeze({
    key: Symbol.for(`@antler/plugin-runtime/run-admission:${pluginName}`),
    name: `plugin-runtime.run-admission:${pluginName}`,
  });
}

/**
 * Contributes a check every run passes before it starts (`AntlerClient.stream`, `invoke`, `chat`, the gateway's
 * run routes). One check per plugin; checks run in plugin load order.
 */
export function provideRunAdmission(ctx: Pick<PluginContext<unknown>, "provide" | "plugin">, check: RunAdmissionCheck): void {
  ctx.provide(runAdmissionToken(ctx.plugin.name), { useValue: check });
}

/** Runs every loaded plugin's admission check; the first refusal throws. */
export async function admitRun(kernel: Kernel, request: RunAdmissionRequest): Promise<void> {
  for (const plugin of kernel.plugins) {
    const check = kernel.scope.tryResolve(runAdmissionToken(plugin.name));
    if (check) await check(request);
  }
}

/**
 * The models a caller may run on: those every admission check admits. A model refused with
 * `ANTLER_ERR_MODEL_FORBIDDEN` is left out; any other refusal or failure throws, as the run would.
 */
export async function admittedModels(
  kernel: Kernel,
  caller: Omit<RunAdmissionRequest, "modelName" | "agentName">,
  models: readonly ModelInfo[] = kernel.listModels(),
): Promise<ModelInfo[]> {
  const admitted: ModelInfo[] = [];
  for (const model of models) {
    try {
      await admitRun(kernel, { ...caller, modelName: model.name, agentName: undefined });
      admitted.push(model);
    } catch (error) {
      if (!isAntlerError(error, RuntimeErrorCodes.MODEL_FORBIDDEN)) throw error;
    }
  }
  return admitted;
}
