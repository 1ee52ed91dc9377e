// The sentence of the tool description that tells the model what network it has: none, or exactly
// which hosts (and how to reach them from each language). Built from the sandbox's resolved policy,
// so the description never promises more than the host enforces.

import type { PythonEngine } from "../../core/types.ts";
import type { NetworkPolicy } from "../../network/policy.ts";

const MAX_LISTED = 20;

/** How Python reaches the allowed hosts, per engine (docs/network.md says how each is carried). */
const PYTHON_NETWORK: Record<PythonEngine, string> = {
  pyodide: "Python: urllib.request or http.client (no raw sockets).",
  native: "Python: requests, urllib.request or http.client, through the proxy the environment names (no raw sockets).",
};

export function describeNetwork(network: NetworkPolicy | undefined, pythonEngine: PythonEngine): string {
  if (!network || network.rules.length === 0)
    return "There is no network and no access to the host's files or processes; only the files you pass in `files` exist.";
  const hosts = network.rules.slice(0, MAX_LISTED).map((r) => r.source);
  const more = network.rules.length > MAX_LISTED ? ` and ${network.rules.length - MAX_LISTED} more` : "";
  const python = PYTHON_NETWORK[pythonEngine];
  return [
    `Network: HTTP(S) requests may reach only ${hosts.join(", ")}${more} (entries without a port mean ports 80/443; *.domain means its subdomains); anything else, private addresses and redirects elsewhere are refused with an error naming the host.`,
    `At most ${network.maxRequests} requests per call. JavaScript: fetch(). ${python}`,
    "There is no access to the host's files or processes; only the files you pass in `files` exist.",
  ].join(" ");
}
