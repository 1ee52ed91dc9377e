// Opening a run's network: the one helper every engine uses (the JavaScript engines through their
// fetch bridge, Pyodide through its sidecar's frames, native through the jail's proxy). The network's
// deadline is the run's (its budget from now), and the gate stops what is still open GRACE.networkMs
// after it; whoever settles the run closes the network — given an owner (a run's scope), the owner
// does, on every path the run can end.

import { Deadline } from "../kit/deadline.ts";
import type { EventInput } from "../core/events.ts";
import type { EngineName } from "../core/types.ts";
import { RunNetwork } from "./run-network.ts";
import type { NetworkPolicy } from "./policy.ts";

/** What opening a run's network needs of its request (options/request.ts's ResolvedRequest has it). */
export interface NetworkedRequest {
  readonly network?: NetworkPolicy | undefined;
  readonly limits: { readonly timeoutMs: number };
  readonly signal?: AbortSignal | undefined;
  readonly emit?: ((event: EventInput) => void) | undefined;
}

/** Something that closes what it owns when a run settles (kit/scope.ts's RunScope is one). */
export interface NetworkOwner {
  own<T extends { close(): void }>(resource: T): T;
}

/**
 * The run's network, or undefined when the run has none; owned by `owner` when one is given. Its
 * deadline is the engine's own for the run when the engine holds one on this thread's clock (the
 * sidecar's and the jail's kill timers), else the run's budget from now.
 */
export function openRunNetwork(
  req: NetworkedRequest,
  engine: EngineName,
  at: { owner?: NetworkOwner; deadline?: Deadline } = {},
): RunNetwork | undefined {
  if (!req.network) return undefined;
  const network = new RunNetwork(req.network, {
    engine,
    deadline: at.deadline ?? new Deadline(req.limits.timeoutMs),
    ...(req.signal ? { signal: req.signal } : {}),
    emit: req.emit,
  });
  return at.owner ? at.owner.own(network) : network;
}

/** Tells the event channel that a run with no network tried to reach one (every tier says it alike). */
export function emitNoNetwork(emit: ((event: EventInput) => void) | undefined, engine: EngineName, method = ""): void {
  emit?.({
    type: "egress",
    engine,
    method,
    host: "",
    port: 0,
    allowed: false,
    reason: "no-network",
    bytesSent: 0,
    bytesReceived: 0,
  });
}
