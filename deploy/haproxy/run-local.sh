#!/usr/bin/env bash
# Three stateless replicas on loopback ports 8801-8803 and HAProxy on 127.0.0.1:8787 in front of them.
# Ctrl-C stops everything (the replicas drain first). Needs `npm run build` and `apt-get install haproxy`.
set -euo pipefail
cd "$(dirname "$0")/../.."
pids=()
for port in 8801 8802 8803; do
  node dist/cli/main.js mcp --http --stateless --port "$port" --timeout-ms 10000 & pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' EXIT
haproxy -db -f deploy/haproxy/haproxy.cfg
