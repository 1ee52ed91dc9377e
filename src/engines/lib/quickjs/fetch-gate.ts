// The Node side of the guest's fetch: opens the run's gated fetch (src/network/run-network.ts, which needs
// node:http, node:https and node:dns) and joins its bridge to the request's host functions. It is kept
// out of fetch.ts so the edge build, which has no gate, never bundles a Node-only module: there the
// engine is given no gate, and a run granted network is refused with a result that says why.

import type { ResolvedRequest } from "../../../options/index.ts";
import { openRunNetwork } from "../../../network/open.ts";
import type { RunScope } from "../../../kit/scope.ts";
import { bridge, type NetworkGate } from "./fetch.ts";

/** The request whose host functions include the bridge; the run's network is the scope's to close. */
export const withNetwork: NetworkGate = (req: ResolvedRequest, scope: RunScope) => {
  const network = openRunNetwork(req, "quickjs", { owner: scope });
  if (!network) return req;
  return { ...req, hostFunctions: { ...req.hostFunctions, ...bridge(network, req) } };
};
