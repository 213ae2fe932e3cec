// What of a local plan belongs to this machine only and must not reach a DynamoGraphDeployment.
// The operator sets discovery, ports and health probes itself, and Kubernetes gives each worker
// pod its own GPU and network (FACTS §8). The plan's env and argv change as Dynamo releases do, so
// the rule is explicit (a table of keys and flags, each with its reason) plus two catch-alls (any
// `*_PORT` key, any value naming a loopback address or a path on this machine). The round-trip test
// over every built-in recipe fails when the plan gains something the rule does not know.

export type LocalReason = 'discovery' | 'system' | 'ports' | 'devices' | 'address' | 'stop' | 'path';

/** One line each, after the dropped items: why they stay on this machine. */
export const REASON_TEXT: Record<LocalReason, string> = {
  discovery: 'discovery and transports of this machine; the operator sets them on a cluster',
  system: "this machine's per-process system server; the operator sets it and its health probes per pod",
  ports: "ports of this machine; every pod has its own network",
  devices: "GPU numbering of this machine; on a cluster a pod's GPUs come from its resources",
  address: 'a loopback address; pods reach each other by pod IP',
  stop: "fast local stops; a cluster keeps Dynamo's default drain grace",
  path: 'a path on this machine; pods cannot see it',
};

/** Env keys the plan (or a recipe) sets for one machine. */
export const LOCAL_ONLY_ENV: Readonly<Record<string, LocalReason>> = {
  DYN_DISCOVERY_BACKEND: 'discovery',
  DYN_FILE_KV: 'discovery',
  // ZMQ events and TCP requests so one machine needs no NATS or etcd (src/plan/build.ts); the
  // platform the operator runs with decides on a cluster.
  DYN_EVENT_PLANE: 'discovery',
  DYN_REQUEST_PLANE: 'discovery',
  DYN_SYSTEM_PORT: 'system',
  DYN_SYSTEM_ENABLED: 'system',
  DYN_HTTP_PORT: 'ports',
  VLLM_NIXL_SIDE_CHANNEL_PORT: 'ports',
  // 127.0.0.1 on one host (FACTS §4); on a cluster Dynamo must find the pod's routable IP itself.
  VLLM_NIXL_SIDE_CHANNEL_HOST: 'address',
  CUDA_VISIBLE_DEVICES: 'devices',
  CUDA_DEVICE_ORDER: 'devices',
  // 0 locally so stops are quick (FACTS §4 "Stopping"); pods should drain with the default.
  DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: 'stop',
};

/** Flags the plan adds for one machine; each takes one value (`--flag v` or `--flag=v`). */
export const LOCAL_ONLY_FLAGS: Readonly<Record<string, LocalReason>> = {
  '--http-port': 'ports',
  '--discovery-backend': 'discovery',
};

/** Where the plan keeps things of this machine: a value containing one of these is local. */
export interface LocalMarkers {
  /** runs/<id>, the state directory, the user's home: absolute paths. */
  paths: string[];
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;

/** Why an env entry stays on this machine, or null when it carries over. */
export function localEnvReason(key: string, value: string, markers: LocalMarkers): LocalReason | null {
  const listed = LOCAL_ONLY_ENV[key];
  if (listed) return listed;
  if (/_PORT$/.test(key)) return 'ports';
  if (LOOPBACK.test(value.trim())) return 'address';
  if (containsLocalPath(value, markers)) return 'path';
  return null;
}

export function containsLocalPath(value: string, markers: LocalMarkers): boolean {
  return markers.paths.some((p) => p.length > 1 && value.includes(p));
}

/** A KV-events publisher binds this inside its pod; every replica shares one spec, and every pod its own ports.
 * The port is the one upstream's cluster examples use
 * (ai-dynamo/dynamo examples/backends/vllm/deploy/v1beta1/agg_router.yaml). */
export const CLUSTER_KV_EVENTS_ENDPOINT = 'tcp://*:20080';

/** The container command for a Dynamo module in the runtime images (upstream examples: python3 -m dynamo.vllm). */
export const CONTAINER_PYTHON = 'python3';
