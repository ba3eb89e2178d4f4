import { z } from "zod";
import { DEFAULT_AIO_IMAGE } from "./docker.js";

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
  })
  .superRefine((config, ctx) => {
    if (config.backend === "provisioner" && !config.provisioner_url) {
      ctx.addIssue({
        code: "custom",
        path: ["provisioner_url"],
        message: "backend: provisioner needs provisioner_url (e.g. http://provisioner:8002)",
      });
    }
  });

export type AioConfig = z.output<typeof aioConfigSchema>;
export type AioConfigInput = z.input<typeof aioConfigSchema>;
