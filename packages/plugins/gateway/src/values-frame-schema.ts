import { serializedMessageSchema, valuesEventSchema } from "@antler/plugin-runtime";
import { z } from "zod";

const messagesOpSchema = z.union([
  z.object({ keep: z.number().int().nonnegative() }).strict(),
  z.object({ drop: z.number().int().nonnegative() }).strict(),
  z.object({ add: z.array(serializedMessageSchema) }).strict(),
]);

const valuesStateSchema = valuesEventSchema.shape.data;

/** The `data` of a gateway SSE `values` frame (README "`values` frames are deltas"); `?values=full` sends `valuesStateSchema`. */
export const valuesFrameSchema = z.union([
  z
    .object({
      patch: z
        .object({
          set: valuesStateSchema.omit({ messages: true }).partial().strict().optional(),
          unset: z.array(z.string()).optional(),
          messages: z
            .object({ base: z.number().int().nonnegative(), ops: z.array(messagesOpSchema) })
            .strict()
            .optional(),
        })
        .strict(),
    })
    .strict(),
  z.object({ snapshot: valuesStateSchema }).strict(),
]);
