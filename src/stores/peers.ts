// The optional peer dependencies, loaded when a feature that needs them is first used — never when a
// wasmcell entry is imported. `npm i wasmcell` installs neither bullmq nor ioredis (with them: 17
// more packages, 16 MB more, and bullmq's msgpackr-extract install script); the queue
// (`wasmcell/queue`) needs both, the Redis session store ioredis, and each says so with the install
// command when they are missing.
//
// Loaded with require from this file's place: both are CommonJS packages, so this is the same
// module instance an `import` would give, and it works in a constructor (RedisSessionStore's), which
// cannot wait for an import(). They resolve as any dependency of wasmcell does, from the application's
// node_modules.

import { createRequire } from "node:module";
import type * as BullMQ from "bullmq";
import type * as IORedis from "ioredis";
import { MissingDependencyError } from "../core/errors.ts";

const require = createRequire(import.meta.url);

/** What the queue needs installed (BullMQ on ioredis); the Redis session store needs ioredis only. */
export const QUEUE_PEERS = ["bullmq", "ioredis"] as const;

/** ioredis, or MissingDependencyError naming `feature`, what it `needs` and the install command. */
export function loadIORedis(feature: string, needs: readonly string[] = ["ioredis"]): typeof IORedis {
  return load<typeof IORedis>("ioredis", feature, needs);
}

/** bullmq, or MissingDependencyError naming `feature`, both queue peers and the install command. */
export function loadBullMQ(feature: string): typeof BullMQ {
  return load<typeof BullMQ>("bullmq", feature, QUEUE_PEERS);
}

function load<T>(name: string, feature: string, needs: readonly string[]): T {
  try {
    return require(name) as T;
  } catch (error) {
    // Only the package itself missing: a broken install (one of its own files or dependencies
    // missing) is rethrown as it is, since the install command would not be the fix.
    const code = (error as { code?: unknown } | null)?.code;
    const message = error instanceof Error ? error.message : "";
    if (code === "MODULE_NOT_FOUND" && message.startsWith(`Cannot find module '${name}'`)) {
      throw new MissingDependencyError(feature, needs, { cause: error });
    }
    throw error;
  }
}
