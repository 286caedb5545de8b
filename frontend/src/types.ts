// The JSON the plugin serves (see the report schema in README.md).

export interface Metric {
  name: string;
  value: number | string | null;
  unit: string;
  label: string;
}
export interface Evidence {
  where: string;
  device_id: number | null;
  stream_id: number | null;
  thread: string | null;
  start_ms: number;
  end_ms: number;
  label: string;
  events: string[];
}
export interface Finding {
  id: string;
  title: string;
  section: string;
  status: string;
  summary: string;
  reason: string | null;
  metrics: Metric[];
  thresholds: {name: string; value: number; unit: string}[];
  saving_ms: number | null;
  saving_pct: number | null;
  saving_basis: string | null;
  evidence: Evidence[];
  details: Record<string, unknown>[];
  recommendation: string;
  snippet: string | null;
  link: string;
}
export interface Device {
  id: number;
  name: string;
  compute_capability: string | null;
  sm_count: number | null;
  memory_gib: number | null;
}
export interface Report {
  schema: string;
  run: string;
  host: string;
  devices: Device[];
  steps: {
    count: number;
    source: string;
    marker: string | null;
    mean_ms: number;
    stdev_ms: number;
    min_ms: number;
    max_ms: number;
  } | null;
  headline: {
    device_busy_pct: number | null;
    device_op_time_pct: number | null;
    fp16_compute_pct: number | null;
    per_gpu: {device_id: number; device_busy_pct: number | null; fp16_compute_pct: number | null; kernels: number}[];
  } | null;
  breakdown_ms: Record<string, number> | null;
  step_breakdown?: {step: number; start_ms: number; end_ms: number; breakdown_ms: Record<string, number>}[];
  extent_ms?: number;
  checks: Finding[];
  errors: string[];
}
export interface HostState {
  host: string;
  size: number;
  mtime: number | null;
  analysis: {state: string; progress: number; error?: string; worst?: {id: string; status: string} | null};
}
export interface RunsResponse {
  runs: {run: string; hosts: HostState[]}[];
  legacy: {run: string; message: string}[];
}
export interface CatalogueEntry {
  id: string;
  title: string;
  section: string;
  section_order: number;
}
export interface TimelineTrack {
  id: string;
  group: string;
  label: string;
  kind: string;
  device_id?: number;
  stream_id?: number;
  threads?: string[];
  segments: [number, number, number, string][];
}
export interface TimelineResponse {
  extent: {start_ms: number; end_ms: number};
  window: {start_ms: number; end_ms: number; width: number; resolution_ms: number};
  tracks: TimelineTrack[];
  steps: {number: number; start_ms: number; end_ms: number}[];
  findings: {
    check: string;
    status: string;
    index: number;
    where: string;
    device_id: number | null;
    stream_id: number | null;
    thread: string | null;
    start_ms: number;
    end_ms: number;
    label: string;
  }[];
}
