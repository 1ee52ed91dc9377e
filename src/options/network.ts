// `network`: the allowlist and caps the host enforces for every tier, the sandbox's and a request's
// narrower one. The option, its defaults, its schemas and its resolution side by side.

import { z } from "zod";
import { InvalidOptionError } from "../core/errors.ts";
import { AllowEntryError, parseAllowEntry, type AllowEntryInput, type AllowRule } from "../network/allowlist.ts";
import { narrowPolicy, type NetworkPolicy, type Resolver } from "../network/policy.ts";
import type { NetworkCaps, RunRequest } from "../core/types.ts";
import { positiveInt } from "./limits.ts";
import { stripUndefined } from "./zod.ts";

/**
 * Network access, enforced by the host for every tier. Off unless given: no option, or `false`, means
 * the guest has no network at all. Caps count per run; a request's `network` may lower them.
 */
export interface NetworkOptions extends NetworkCaps {
  /**
   * Where the guest may connect: `"api.example.com"`, `"*.example.com"` (subdomains only),
   * `"host:8443"`, or an IP literal `"127.0.0.1:8080"` (the only way to reach a non-public address).
   * Without a port an entry allows the scheme's default port only (80 for http, 443 for https).
   * The object form adds `headers` the host injects (the guest never sees them).
   */
  allow: AllowEntryInput[];
  /**
   * Resolves a host name to its addresses. The host checks every address it returns.
   * @defaultValue the operating system's resolver
   */
  resolve?: Resolver;
}

export const DEFAULT_NETWORK = Object.freeze({
  maxRequests: 32,
  maxRequestBytes: 1024 * 1024,
  maxResponseBytes: 8 * 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
});

export const networkCapsShape = {
  maxRequests: z.number().int().nonnegative().max(100_000),
  maxRequestBytes: z
    .number()
    .int()
    .nonnegative()
    .max(1 << 30),
  maxResponseBytes: z
    .number()
    .int()
    .nonnegative()
    .max(1 << 30),
  maxTotalBytes: z
    .number()
    .int()
    .nonnegative()
    .max(2 ** 40),
  timeoutMs: positiveInt(24 * 3600 * 1000),
  maxRedirects: z.number().int().nonnegative().max(20),
  methods: z.array(z.string().regex(/^[A-Za-z]{1,32}$/, "must be an HTTP method name")).max(32),
};
export const allowSchema = z.array(z.union([z.string(), z.object({}).passthrough()])).max(1_000);
export const networkSchema = z.union([
  z.literal(false),
  z
    .object({
      allow: allowSchema,
      ...networkCapsShape,
      resolve: z.custom<Resolver>((v) => typeof v === "function", "must be a function"),
    })
    .partial()
    .required({ allow: true })
    .strict(),
]);
export const requestNetworkSchema = z.union([
  z.literal(false),
  z
    .object({ allow: allowSchema, ...networkCapsShape })
    .partial()
    .strict(),
]);

export function parseRules(entries: readonly AllowEntryInput[], field: string): AllowRule[] {
  return entries.map((entry, i) => {
    try {
      return parseAllowEntry(entry);
    } catch (error) {
      if (error instanceof AllowEntryError) throw new InvalidOptionError(`${field}.allow[${i}]`, error.message);
      throw error;
    }
  });
}

export function resolveNetwork(network: NetworkOptions): NetworkPolicy {
  return {
    ...DEFAULT_NETWORK,
    ...stripUndefined({ ...network, allow: undefined, methods: undefined, resolve: undefined }),
    rules: parseRules(network.allow, "network"),
    methods: network.methods?.map((m) => m.toUpperCase()),
    resolve: network.resolve,
  };
}

/** A run's network: the sandbox's, or narrower (never wider). */
export function resolveRequestNetwork(
  request: RunRequest,
  sandbox: NetworkPolicy | undefined,
): NetworkPolicy | undefined {
  const asked = request.network;
  if (asked === undefined) return sandbox;
  if (asked === false) return undefined;
  if (!sandbox) throw new InvalidOptionError("request.network", "the sandbox has no network to narrow");
  const { allow, methods, ...caps } = asked;
  const narrowed = narrowPolicy(sandbox, {
    ...stripUndefined(caps),
    ...(allow ? { rules: parseRules(allow, "request.network") } : {}),
    ...(methods ? { methods } : {}),
  });
  if (Array.isArray(narrowed)) throw new InvalidOptionError(`request.network.${narrowed[0]}`, narrowed[1]);
  return narrowed;
}
