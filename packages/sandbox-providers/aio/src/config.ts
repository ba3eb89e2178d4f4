import { z } from "zod";
import { DEFAULT_AIO_IMAGE, DEFAULT_SIDECAR_IMAGE } from "./docker.js";
import { egressPolicySchema } from "./sidecar/policy.js";

/** `plugins[i].config` of `@antler/sandbox-aio`. */
export const aioConfigSchema = z
  .strictObject({
    backend: z
      .enum(["provisioner", "docker"])
      .optional()
      .describe("Where containers come from; default provisioner when provisioner_url is set, else docker."),
    provisioner_url: z.url().optional().describe("Base URL of the sandbox provisioner (POST/GET/DELETE /api/sandboxes)."),
    provisioner_api_key: z.string().min(1).optional().describe("Bearer token for the provisioner; write it as $ENV_NAME."),
    sandbox_api_key: z.string().min(1).optional().describe("Bearer token for each sandbox's AIO API (the image's SANDBOX_API_KEY)."),
    image: z.string().min(1).default(DEFAULT_AIO_IMAGE).describe("AIO image for the docker backend (and passed to the provisioner)."),
    replicas: z.number().int().min(0).default(3).describe("Most released sandboxes kept warm."),
    idle_timeout_seconds: z.number().positive().default(600).describe("A warm sandbox unused this long is destroyed."),
    acquire_timeout_seconds: z.number().positive().default(120).describe("Deadline for starting a new sandbox and its readiness."),
    request_timeout_seconds: z.number().positive().default(30).describe("Deadline of one AIO API call; commands use their own timeout."),
    container_root: z
      .string()
      .regex(/^\/./, "an absolute path other than /")
      .optional()
      .describe(
        "Container folder the virtual /mnt tree maps to; default the container's home. /mnt when the provisioner mounts thread data natively.",
      ),
    mount_thread_data: z
      .boolean()
      .default(true)
      .describe(
        "Docker backend: bind-mount the thread's host user-data folder at <container_root>/user-data (container_root then defaults to /mnt), so uploads reach the container and outputs reach present_files and the gateway.",
      ),
    docker_command: z.string().min(1).default("docker").describe("Docker-compatible CLI for the docker backend."),
    docker_run_args: z.array(z.string()).default([]).describe("Extra `docker run` arguments (e.g. --memory=2g)."),
    network: z
      .strictObject({
        mode: z
          .enum(["open", "restricted"])
          .default("open")
          .describe("restricted: internal network only, egress through a per-sandbox sidecar."),
        policy: egressPolicySchema.optional().describe("What a restricted sandbox may reach; required for restricted."),
      })
      .default({ mode: "open" })
      .describe("Docker backend: the sandbox's network."),
    sidecar_image: z.string().min(1).default(DEFAULT_SIDECAR_IMAGE).describe("Image of the egress sidecar (sidecar/Dockerfile)."),
    relay_secret: z
      .string()
      .min(16)
      .optional()
      .describe("Secret the sidecar relay tokens derive from; set it ($ENV_NAME) so a restarted gateway can reuse restricted sandboxes."),
    orphan_grace_seconds: z
      .number()
      .min(0)
      .default(300)
      .describe("A found sandbox of another policy or network mode is replaced only when older than this."),
  })
  .superRefine((config, ctx) => {
    if (config.backend === "provisioner" && !config.provisioner_url) {
      ctx.addIssue({
        code: "custom",
        path: ["provisioner_url"],
        message: "backend: provisioner needs provisioner_url (e.g. http://provisioner:8002)",
      });
    }
    if (config.network.mode === "restricted" && !config.network.policy) {
      ctx.addIssue({
        code: "custom",
        path: ["network", "policy"],
        message: "network.mode restricted needs a policy, e.g. { label: research, allow: [pypi.org, '*.pythonhosted.org'] }",
      });
    }
    if (config.network.mode === "restricted" && config.backend === "provisioner") {
      ctx.addIssue({ code: "custom", path: ["network", "mode"], message: "restricted network mode needs the docker backend" });
    }
  });

export type AioConfig = z.output<typeof aioConfigSchema>;
export type AioConfigInput = z.input<typeof aioConfigSchema>;
