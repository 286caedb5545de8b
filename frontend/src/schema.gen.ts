// Generated from tb_gpu_advisor/schema.json by frontend/gen-types.mjs; do not edit.
/* eslint-disable */

export type Status = 'critical' | 'warning' | 'error' | 'info' | 'pass' | 'not-applicable';

export type Judgement = 'good' | 'moderate' | 'bad' | null;

/** Time per step in each category, ms; the categories add up to the step time. */
export interface Breakdown {
  device_compute: number;
  device_collectives: number;
  memcpy_h2d: number;
  memcpy_d2h: number;
  memcpy_d2d: number;
  host_input_wait: number;
  kernel_launch_wait: number;
  idle_other: number;
}

export interface Device {
  id: number;
  name: string;
  /** NVIDIA or AMD, from the file's vendor field, the GPU's name or its runtime calls; null when the file does not tell */
  vendor: string | null;
  /** The architecture as its maker names it ("NVIDIA Volta", "AMD CDNA2 (gfx90a)"), which the precision and Tensor Core advice follow; null when unknown */
  architecture: string | null;
  compute_capability: string | null;
  sm_count: number | null;
  clock_mhz: number | null;
  memory_gib: number | null;
  memory_bandwidth_gbps: number | null;
}

export interface StepSummary {
  count: number;
  source: 'host-markers' | 'device-steps-line' | 'device-groups' | 'step-function-calls' | 'whole-capture';
  marker: string | null;
  mean_ms: number;
  stdev_ms: number;
  min_ms: number;
  max_ms: number;
  device_id?: number;
  per_gpu?: StepSummary[];
}

export interface GpuHeadline {
  device_id: number;
  device_busy_pct: number | null;
  compute_ms_per_step: number;
  fp16_compute_pct: number | null;
  fp16_kernels: number;
  kernels: number;
  steps: number;
  step_ms: number;
  gpu_utilization_pct: number | null;
  sm_efficiency_pct: number | null;
  achieved_occupancy_pct: number | null;
  comm_overlap_pct: number | null;
}

export interface Headline {
  device_busy_pct: number | null;
  compute_ms_per_step: number | null;
  device_op_time_pct: number | null;
  fp16_compute_pct: number | null;
  fp16_kernels: number;
  kernels: number;
  device_op_ms: number;
  host_op_ms: number;
  active_gpus: number[];
  copy_only_gpus: number[];
  idle_gpus: number[];
  per_gpu: GpuHeadline[];
  judged: {
    device_busy_pct: Judgement;
    device_op_time_pct: Judgement;
    fp16_compute_pct: Judgement;
  };
}

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
  /** the problem with its number when the check fires; what passing means otherwise */
  title: string;
  check_title: string;
  section: string;
  status: Status;
  device_id: number | null;
  summary: string;
  reason: string | null;
  metrics: Metric[];
  thresholds: ({
    name: string;
    value: number;
    unit: string;
  })[];
  saving_ms: number | null;
  saving_pct: number | null;
  saving_low_ms: number | null;
  saving_high_ms: number | null;
  saving_basis: string | null;
  evidence: Evidence[];
  details: (Record<string, string | number | boolean | null>)[];
  recommendation: string;
  snippet: string | null;
  link: string;
  /** the table rows that are the finding's evidence */
  table: null | TableLink;
  measures: string;
  /** the step re-timed with the finding's fix: its saving, where the fix can be simulated */
  whatif: null | WhatIf;
  /** the other fixes the finding's advice offers, each re-timed on its own (precision.mixed-off: TF32 beside bf16); empty where it offers one */
  alternatives: WhatIf[];
}

export interface StepRow {
  step: number;
  start_ms: number;
  end_ms: number;
  breakdown_ms: Breakdown;
  gpu_utilization_pct: number | null;
  sm_efficiency_pct: number | null;
  achieved_occupancy_pct: number | null;
}

export interface Report {
  schema: 'tb-gpu-advisor/report@1';
  failure: 'unreadable' | 'analysis-failed' | null;
  advisor_version: string;
  run: string;
  host: string;
  framework?: 'tensorflow' | 'jax' | 'pytorch' | 'unknown';
  devices: Device[];
  steps: StepSummary | null;
  headline: Headline | null;
  breakdown_ms: Breakdown | null;
  breakdown_ms_per_gpu: Record<string, Breakdown>;
  step_breakdown?: StepRow[];
  step_breakdown_per_gpu?: Record<string, StepRow[]>;
  extent_ms?: number;
  time_base?: 'profile-start' | 'first-event';
  warnings: string[];
  capture_errors?: string[];
  checks: Finding[];
  errors: string[];
  rank_measures?: RankMeasures;
  step_model?: null | StepModel;
}

/** a host in the `report` route without `host`: what the all-hosts view and the job comparison read of its report (report.host_summary); the whole report is the route with `host` */
export interface HostSummary {
  run: string;
  host: string;
  failure: 'unreadable' | 'analysis-failed' | null;
  errors: string[];
  framework?: 'tensorflow' | 'jax' | 'pytorch' | 'unknown';
  steps?: StepSummary | null;
  headline?: Headline | null;
  rank_measures?: RankMeasures;
  checks: ({
    id: string;
    /** the problem with its number when the check fires; what passing means otherwise */
    title: string;
    status: Status;
    saving_ms: number | null;
  })[];
}

/** A job: its ranks in the picked profiling cycle side by side, and the job checks. */
export interface AcrossHosts {
  run: string;
  hosts: ({
    host: string;
    step_mean_ms: number | null;
    device_busy_pct: number | null;
    worst: string | null;
  })[];
  slowest_host: string | null;
  stragglers: string[];
  world_size: number | null;
  ranks_captured: number;
  cycles: number;
  cycle: number;
  complete_cycles: number[];
  /** per profiling cycle (by index): the ranks with a file in it, and those with a step with work */
  cycle_ranks: ({
    files: number;
    with_steps: number;
  })[];
  ranks: ({
    /** the job: the run folder (XSpace sessions are its cycles) */
    job: string;
    /** the process: the trace's name without its span, or the XSpace host */
    worker: string;
    /** the profiling cycle: the trace's span, or the XSpace session */
    cycle: string;
    rank: number | null;
    world_size: number | null;
    steps: number;
    step_ms: number | null;
    source: 'device' | 'host';
    compute_ms: number | null;
    collective_ms: number | null;
    exposed_collective_ms: number | null;
    input_ms: number | null;
    collective_overlap_pct: number | null;
    /** collective calls per step: NCCL kernels per GPU on a GPU job, the host's collective calls (gloo:/nccl: spans, else c10d:: ops; TensorFlow's collective ops) on a CPU-only one */
    collective_calls: number | null;
    /** all-reduce calls per step, named by the host's spans where it has them, else by the NCCL kernels' names (job.allreduce-count) */
    allreduce_calls: number | null;
    /** bytes all-reduced per step, from the tensors the backend's all-reduce spans record (`gloo:all_reduce`, `nccl:all_reduce` with `Input Dims`); null when a call does not say (job.allreduce-count) */
    allreduce_bytes?: number | null;
    /** per step number, [step, the end of the step's last collective in ns on the file's own clock]: in a synchronous job every rank's end together, so their differences measure the hosts' clock skew (job.clock-skew) */
    collective_ends_ns?: number[][];
    /** the machine the rank ran on, as its name tells: an XSpace host, or the <hostname> of torch.profiler's default worker name <hostname>_<pid> (else the worker): ranks on one machine share its clock (job.clock-skew) */
    machine?: string;
    /** per step number, [step, collectives in it, their kinds (a letter each), and per collective 5 numbers in ns: its duration, the gap before it (from the end of the rank's previous collective in the step, or the step's start), the rank's own work and its input wait in that gap, its end after the end of the step's first collective]: the job pairs them across ranks by step and order (the last to arrive has the shortest duration, the transfer; the rest is waiting: job.straggler, job.wait); the first steps, at most 256 collectives */
    collective_arrivals?: ([number, number, string, number[]])[];
    run: string;
    host: string;
    cycles: number;
    straggler: boolean;
    device_busy_pct: number | null;
    worst: string | null;
    /** of its collective time per step, the wait for the straggler: the excess over the straggler's collective time (null without a straggler, and on the straggler) */
    straggler_wait_ms: number | null;
    /** rank 3 (vm_2258), or the worker */
    label: string;
    /** the measures in which this rank stands out from the others (robust z) */
    outliers: ('step_ms' | 'compute_ms' | 'collective_ms' | 'exposed_collective_ms' | 'input_ms')[];
    /** its collectives paired with the other ranks' (job.wait), per step: its time in them waiting for ranks that arrive later (null where not paired) */
    wait_ms?: number | null;
    /** the paired collectives' transfer per step: each one's shortest time on any rank (null where not paired) */
    transfer_ms?: number | null;
    /** the other ranks' mean wait in the paired collectives it reached last, per step: the wait charged to it (null where not paired) */
    charged_ms?: number | null;
    /** the paired collectives it reached last, per step (null where not paired) */
    last_arrivals?: number | null;
  })[];
  checks: Finding[];
  /** the ranks' collectives paired by step and order (measures/arrival.py); null where none are */
  arrivals: {
    /** steps paired on every rank */
    steps: number;
    /** collectives paired per step */
    per_step: number;
    /** the collectives with the longest waits (16 at most), longest first */
    longest: ({
      /** the step number */
      step: number;
      /** its place among the step's collectives, from 1 */
      collective: number;
      /** all-reduce, all-to-all, send/recv, ... */
      kind: string;
      /** the rank that arrived last (its label) */
      last: string;
      /** the rank that arrived first */
      first: string;
      /** the last arrival behind the first: the longest wait */
      lag_ms: number;
      /** the last arrival behind the next-latest */
      alone_ms: number;
      /** the shortest time in it on any rank: the transfer */
      transfer_ms: number;
      /** the other ranks' mean wait in it, charged to the last rank */
      charged_ms: number;
      /** the last rank's arrival behind the median rank's, ms, by what made it late: entering the step late (its step's first collective), its own compute and input wait before the collective beyond the median rank's, and the rest, its host */
      late: {
        before_step_ms: number;
        compute_ms: number;
        input_ms: number;
        host_ms: number;
      };
    })[];
  } | null;
}

/** A row of the overview: a host of a run, or a job's own row above its ranks; runs worst first (the largest saving, ties by status) */
export interface OverviewRow {
  run: string;
  /** the host, or "*" on a job's own row (all its ranks) */
  host: string;
  /** the job's own row: its job findings (a straggler, exposed communication), above its ranks' rows */
  job: boolean;
  /** on a job's row: how many ranks it has in the picked cycle */
  ranks?: number;
  status: string;
  check: string | null;
  title: string | null;
  step_ms: number | null;
  device_busy_pct: number | null;
  top_saving_ms: number;
  /** the worst finding is a capture note (what the capture lacks, no cost) */
  note: boolean;
}

/** `tb-gpu-advisor analyze --format json` */
export interface AnalyzeOutput {
  reports: Report[];
  runs: AcrossHosts[];
  overview: OverviewRow[];
  /** with --offset/--limit (MCP: detail=full with offset or limit): the reports in all */
  total_reports?: number;
  /** the first report of this page */
  offset?: number;
  /** where the next page starts; null on the last */
  next_offset?: number | null;
}

/** `tb-gpu-advisor analyze --brief` (the MCP server's analyze by default): the hosts in a line each, the jobs, and the problems ranked with their savings and fixes, a page at a time */
export interface AnalyzeBrief {
  detail: 'brief';
  hosts: BriefHost[];
  jobs: BriefJob[];
  problems: BriefProblem[];
  /** problems in all (a problem on several hosts counts once) */
  total: number;
  offset: number;
  /** where the next page starts; null on the last */
  next_offset: number | null;
  /** how to ask for the rest: the next page, the full detail, evidence, tables */
  more: string;
  /** without --findings-only (MCP: all_checks): the checks that pass */
  passed?: string[];
  not_applicable?: string[];
}

export interface BriefHost {
  run: string;
  host: string;
  rank: number | null;
  framework: string | null;
  gpus: string;
  step_ms: number | null;
  unprofiled_step_ms: number | null;
  bound: string | null;
  device_busy_pct: number | null;
  /** its critical and warning findings */
  problems: number;
  error: string | null;
}

export interface BriefJob {
  run: string;
  ranks_captured: number;
  world_size: number | null;
  cycle: number | null;
  stragglers: string[];
}

/** a finding as the brief answer gives it; one that fired on several hosts is one entry, shown as its costliest */
export interface BriefProblem {
  check: string;
  status: string;
  title: string;
  /** the job's own finding, or the hosts it fired on (the first 8, then how many more) */
  where: 'job' | string[];
  saving_ms: number | null;
  saving_low_ms: number | null;
  saving_high_ms: number | null;
  saving_pct: number | null;
  /** what to change: the recommendation's first paragraph */
  fix: string;
  snippet: string | null;
  /** the what-if's change its saving is (whatif) */
  change: string | null;
  new_step_ms: number | null;
  alternatives: ({
    change: string;
    saving_ms: number;
    new_step_ms: number;
  })[];
  /** its evidence windows (evidence(run, finding, host) lists them) */
  evidence: number;
  /** the table its evidence is in (table(run, kind, host)) */
  table: string | null;
}

export interface RunListHost {
  host: string;
  rank: number | null;
  status: string;
  check: string | null;
  title: string | null;
  step_ms: number | null;
  device_busy_pct: number | null;
  top_saving_ms: number;
}

/** one run: what the overview shows of its worst host, its hosts (worst first, at most 16) and its job */
export interface RunListRow {
  run: string;
  frameworks: string[];
  /** its worst host's worst status (critical, error, warning, pass) */
  status: string;
  check: string | null;
  title: string | null;
  /** the host with the worst finding */
  host: string;
  step_ms: number | null;
  device_busy_pct: number | null;
  /** the largest estimated saving per step on any of its hosts */
  top_saving_ms: number;
  hosts_total: number;
  hosts: RunListHost[];
  job: null | {
    ranks: number;
    world_size: number | null;
    cycles: number;
    cycle: number;
    stragglers: ({
      host: string;
      rank: number | null;
      label: string;
    })[];
    /** the job checks that fired (critical, warning) */
    problems: ({
      id: string;
      status: string;
      title: string;
      saving_ms: number | null;
    })[];
  };
}

/** `tb-gpu-advisor runs --analyse --json`; the MCP server's list_runs adds its `logdir` */
export interface RunList {
  logdir?: string;
  runs: RunListRow[];
}

export interface EvidenceEvent {
  name: string;
  /** `GPU 0 · <stream>` or `host · <thread>` */
  track: string;
  /** kernel, collective, memcpy_h2d, ..., framework_op, launch, host_other, ... */
  kind: string;
  op: string | null;
  start_ms: number;
  dur_ms: number;
  /** index into the answer's `stacks` */
  stack: number | null;
}

/** an evidence window of the report and the events that overlap it */
export interface EvidenceWindow {
  where: string;
  device_id: number | null;
  stream_id: number | null;
  thread: string | null;
  start_ms: number;
  end_ms: number;
  label: string;
  events: string[];
  in_window: {
    total: number;
    shown: number;
    /** the names with the most time in the window */
    by_name: ({
      name: string;
      calls: number;
      total_ms: number;
    })[];
    /** the events the finding names first, then the longest; in time order */
    events: EvidenceEvent[];
  };
}

/** `tb-gpu-advisor evidence --format json`, the MCP server's evidence tool */
export interface EvidenceOutput {
  run: string;
  host: string;
  framework: string | null;
  finding: {
    id: string;
    /** the problem with its number when the check fires; what passing means otherwise */
    title: string;
    status: Status;
    summary: string;
    saving_ms: number | null;
    saving_pct: number | null;
    saving_low_ms: number | null;
    saving_high_ms: number | null;
    saving_basis: string | null;
    recommendation: string;
    link: string;
  };
  /** the table rows that are the finding's evidence */
  table: null | TableLink;
  /** the rows of the finding's table that it names (its table's first rows where it names none) */
  table_rows: null | TableResponse;
  windows: EvidenceWindow[];
  /** each distinct stack once: its frames, innermost first (`file(line): function`) */
  stacks: string[][];
  notes: string[];
}

/** the `report` route without `host`: every host of a run */
export interface RunReports {
  reports: HostSummary[];
  runs: AcrossHosts[];
}

export interface AnalysisState {
  state: 'new' | 'queued' | 'running' | 'done' | 'error';
  progress: number;
  error?: string;
  seconds?: number;
  worst?: null | {
    id: string;
    status: Status;
    title: string;
    /** a capture note (what the capture lacks, no cost) */
    note: boolean;
  };
  counts?: Record<string, number>;
  step_ms?: number | null;
  top_saving_ms?: number;
  device_busy_pct?: number | null;
}

export interface RunsResponse {
  advisor_version: string;
  runs: ({
    run: string;
    hosts: ({
      host: string;
      size: number;
      mtime: number | null;
      analysis: AnalysisState;
    })[];
    /** the run's job (two or more ranks), once every host is analysed: its own row, with its job findings */
    job?: OverviewRow;
  })[];
  legacy: ({
    run: string;
    message: string;
  })[];
  /** where TensorBoard's logdir is itself a profile file (it accepts one and finds no run in it): the file's name, so that the panel says to pass its folder */
  logdir_file?: string;
}

export interface TimelineTrack {
  id: string;
  group: string;
  label: string;
  kind: 'stream' | 'host';
  device_id?: number;
  stream_id?: number | null;
  threads?: string[];
  /** [start_ms, end_ms, busy share 0..1, dominant class] */
  segments: ([number, number, number, string])[];
}

export interface TimelineMark {
  check: string;
  status: Status;
  index: number;
  where: string;
  device_id: number | null;
  stream_id: number | null;
  thread: string | null;
  start_ms: number;
  end_ms: number;
  label: string;
}

export interface TimelineResponse {
  run: string;
  host: string;
  extent: {
    start_ms: number;
    end_ms: number;
  };
  window: {
    start_ms: number;
    end_ms: number;
    width: number;
    resolution_ms: number;
  };
  tracks: TimelineTrack[];
  steps: ({
    number: number;
    start_ms: number;
    end_ms: number;
  })[];
  findings: TimelineMark[];
}

export interface EventResponse {
  event: null | {
    name: string;
    start_ms: number;
    dur_ms: number;
    op: string | null;
    type: string | null;
    thread?: string;
  };
}

export interface CatalogueEntry {
  id: string;
  title: string;
  problem: string;
  section: string;
  section_order: number;
  link: string;
  measures: string;
  source: string;
  frameworks: string[];
  thresholds: ({
    name: string;
    default: number;
    unit: string;
    description: string;
  })[];
  recommendation: string;
  snippet: string | null;
  /** host: run on each profile file; job: on the ranks of a job (tb_gpu_advisor/job/) */
  scope: 'host' | 'job';
  /** the table its evidence is in (its findings link to its rows there) */
  table: null | TableName;
  /** its measure per step, which diff weighs against the steps' noise (a check whose measure is a share of the step) */
  noise: string | null;
  /** it reads a rank's collective time as transfer: in a job with a straggler, most of that time on the other ranks is waiting for it */
  collective_time: boolean;
  /** the headline number it judges: left unjudged where the check does not apply */
  headline: string | null;
}

export interface CatalogueTable {
  id: TableName;
  /** the tab's label */
  label: string;
  /** what a row is: "the finding's 3 kernels" */
  noun: string;
  /** [value, label] of each grouping, the default first */
  groups: ([string, string])[];
  /** can be limited to one step (step=N) */
  per_step: boolean;
}

export interface CatalogueResponse {
  checks: CatalogueEntry[];
  /** the tables, in their order (the panel's tabs): each declared by its module (tb_gpu_advisor/tables/) */
  tables: CatalogueTable[];
  /** what each headline number measures */
  definitions: Record<string, string>;
}

export interface ErrorResponse {
  error: {
    status: number;
    message: string;
  };
}

/** 202 from `report`, `timeline`, `export` or `event` while an analysis runs */
export interface PendingResponse {
  pending: true;
  run: string;
  host?: string;
  hosts?: (Record<string, unknown>)[];
  state?: 'new' | 'queued' | 'running' | 'done' | 'error';
  progress?: number;
  error?: string;
  seconds?: number;
  /** all hosts of a run: ranks and bytes done so far */
  job?: {
    ranks_done: number;
    ranks: number;
    bytes_done: number;
    bytes: number;
  };
  [key: string]: unknown;
}

/** `tb-gpu-advisor diff --format json`, the MCP `diff` tool and the `compare` route: the new run against the base. */
export interface Diff {
  schema: 'tb-gpu-advisor/diff@2';
  base: {
    run: string;
    host: string;
    framework: string | null;
  };
  new: {
    run: string;
    host: string;
    framework: string | null;
  };
  summary: {
    /** the step's verdict (`verdict.verdict`) */
    step: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    basis: 'captured' | 'unprofiled';
    /** the captured steps' verdict, by the noise rule alone */
    captured_step: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    fixed: string[];
    new: string[];
    worse: string[];
    better: string[];
    /** checks that fire (or fire more severely) after the change while their own time did not grow */
    exposed: string[];
    /** checks whose status fell while their own time did not move beyond the noise */
    within_noise: string[];
    /** checks unchanged (listed in `checks` only when all were asked for) */
    unchanged: number;
  };
  /** The step's verdict, the basis it was judged on and the change on that basis with its interval. */
  verdict: {
    verdict: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    /** captured: the captured steps (the profiler's cost under 10% of both); unprofiled: the steps without the profiler, with the model's measured error */
    basis: 'captured' | 'unprofiled';
    delta_ms: number | null;
    delta_pct: number | null;
    /** the basis's interval: the captured steps' bootstrap interval widened by the difference of the profiler's cost between the captures, or the range the model's error band allows */
    interval_ms: [number, number] | null;
    /** why the verdict is uncertain */
    reason: string | null;
    /** the captured steps' verdict, by the noise rule alone */
    captured: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
  };
  /** The captured steps of both runs and the change of their mean. */
  steps: {
    base: {
      count: number | null;
      mean_ms: number | null;
      stdev_ms: number | null;
      min_ms: number | null;
      max_ms: number | null;
    };
    new: {
      count: number | null;
      mean_ms: number | null;
      stdev_ms: number | null;
      min_ms: number | null;
      max_ms: number | null;
    };
    delta_ms: number | null;
    delta_pct: number | null;
    /** the intervals' confidence level */
    confidence: number;
    /** 95% bootstrap interval of the change (low, high), null with fewer than 3 steps in a run */
    interval_ms: [number, number] | null;
    /** whether the change exceeds the steps' own variation (and 5% of the base's step time); null without an interval */
    significant: boolean | null;
  };
  /** The two captures' steps without the profiler (docs/whatif.md), the device's and the host's work apart. */
  apart: {
    base: {
      captured_step_ms: number;
      /** the step without the profiler (the report's step model) */
      step_ms: number;
      device_ms: number;
      host_ms: number;
      profiler_ms: number;
      profiler_pct: number;
      bound: string;
      /** The measured error of the step without the profiler (the model's step / the timed step - 1) on captures of one kind. */
      error: {
        /** the kind of capture the band was measured on */
        kind: string;
        low_pct: number;
        high_pct: number;
        /** where it was measured */
        source: string;
      };
    };
    new: {
      captured_step_ms: number;
      /** the step without the profiler (the report's step model) */
      step_ms: number;
      device_ms: number;
      host_ms: number;
      profiler_ms: number;
      profiler_pct: number;
      bound: string;
      /** The measured error of the step without the profiler (the model's step / the timed step - 1) on captures of one kind. */
      error: {
        /** the kind of capture the band was measured on */
        kind: string;
        low_pct: number;
        high_pct: number;
        /** where it was measured */
        source: string;
      };
    };
    step_delta_ms: number;
    step_delta_pct: number | null;
    device_delta_ms: number;
    host_delta_ms: number;
    /** the change's range given each estimate's error band */
    interval_ms: [number, number];
    /** the verdict on this basis alone */
    verdict: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    /** the profiler's cost is 10% or more of either captured step */
    profiled_apart: boolean;
  } | null;
  /** Predicted against realised (report/realised.py, docs/whatif.md): the before-run's findings that the after-run no longer has, the saving the before-run predicted for their fixes (simulated together), and what the step did, both steps without the profiler. */
  realised: {
    /** the before-run's findings the after-run no longer has */
    findings: string[];
    /** their fixes, simulated together on the before-run (`whatif` change names) */
    change: string;
    /** the saving a step the before-run predicted */
    predicted_ms: number;
    /** the low end of the range it stated */
    low_ms: number;
    /** the high end of the range it stated */
    high_ms: number;
    /** the step it predicted after the fixes, without the profiler */
    predicted_step_ms: number;
    /** the saving realised: before_step_ms - after_step_ms */
    realised_ms: number;
    /** the before-run's step without the profiler (its report's step model) */
    before_step_ms: number;
    /** the after-run's step without the profiler */
    after_step_ms: number;
    /** the realised saving's range that each step's measured error allows (`apart`'s, negated) */
    realised_interval_ms: [number, number];
    /** the prediction's error, % of the realised saving; null where nothing was saved */
    error_pct: number | null;
    /** the realised saving lies inside the stated range; null where the steps' measured error allows either sign of the step's change (`apart.verdict` uncertain): the step cannot judge the prediction */
    inside: boolean | null;
    /** how each run's profiler cost was taken out (capture, logged) */
    profiler: string[];
    /** the line the text, the markdown and the tab show */
    sentence: string;
  } | null;
  breakdown_ms: ({
    category: string;
    base_ms: number | null;
    new_ms: number | null;
    delta_ms: number | null;
    delta_pct: number | null;
  })[];
  headline: ({
    key: string;
    label: string;
    unit: string;
    base: number | null;
    new: number | null;
    delta: number | null;
  })[];
  /** the checks that changed, exposed or within the noise, worst first; every check with `--all` */
  checks: ({
    id: string;
    title: string;
    base_status: string | null;
    new_status: string | null;
    base_title: string | null;
    new_title: string | null;
    /** the label of its measure (its first metric) */
    label: string | null;
    unit: string | null;
    base_value: number | number | string | null;
    new_value: number | number | string | null;
    base_saving_ms: number | null;
    new_saving_ms: number | null;
    verdict: 'fixed' | 'new' | 'worse' | 'better' | 'exposed' | 'unchanged';
    /** its status changed while its own time did not move beyond the noise */
    within_noise: boolean;
    /** A check's own time per step in both runs (`@check(time=...)`) and whether it moved beyond the noise. */
    time: {
      /** what the time is */
      measure: string;
      /** a wait: its growth counts only as far as the step grew */
      wait: boolean;
      base_ms: number | null;
      new_ms: number | null;
      delta_ms: number | null;
      /** 95% bootstrap interval of the change; null where the check has no per-step samples */
      interval_ms: [number, number] | null;
      /** its growth beyond the noise (for a wait, no more than the step's), the interval's low end where there is one; null when it did not grow beyond the noise */
      grown_ms: number | null;
      /** it fell beyond the noise */
      cut: boolean;
      /** A share-of-the-step check's share in both runs (its thresholds' basis), with the noise. */
      share: {
        base_pct: number;
        new_pct: number;
        delta_pts: number;
        interval_pts: [number, number];
        significant: boolean;
      } | null;
    } | null;
  })[];
  /** whether `checks` lists the unchanged checks too */
  all_checks: boolean;
  /** the kernels whose device time per step changed most */
  kernels: ({
    name: string;
    base_ms: number;
    new_ms: number;
    delta_ms: number;
  })[];
  /** the ops whose device time per step changed most */
  ops: ({
    name: string;
    base_ms: number;
    new_ms: number;
    delta_ms: number;
  })[];
}

/** What one file says of its rank in the job (per step, ms; durations only). */
export interface RankMeasures {
  /** the job: the run folder (XSpace sessions are its cycles) */
  job: string;
  /** the process: the trace's name without its span, or the XSpace host */
  worker: string;
  /** the profiling cycle: the trace's span, or the XSpace session */
  cycle: string;
  rank: number | null;
  world_size: number | null;
  steps: number;
  step_ms: number | null;
  source: 'device' | 'host';
  compute_ms: number | null;
  collective_ms: number | null;
  exposed_collective_ms: number | null;
  input_ms: number | null;
  collective_overlap_pct: number | null;
  /** collective calls per step: NCCL kernels per GPU on a GPU job, the host's collective calls (gloo:/nccl: spans, else c10d:: ops; TensorFlow's collective ops) on a CPU-only one */
  collective_calls: number | null;
  /** all-reduce calls per step, named by the host's spans where it has them, else by the NCCL kernels' names (job.allreduce-count) */
  allreduce_calls: number | null;
  /** bytes all-reduced per step, from the tensors the backend's all-reduce spans record (`gloo:all_reduce`, `nccl:all_reduce` with `Input Dims`); null when a call does not say (job.allreduce-count) */
  allreduce_bytes?: number | null;
  /** per step number, [step, the end of the step's last collective in ns on the file's own clock]: in a synchronous job every rank's end together, so their differences measure the hosts' clock skew (job.clock-skew) */
  collective_ends_ns?: number[][];
  /** the machine the rank ran on, as its name tells: an XSpace host, or the <hostname> of torch.profiler's default worker name <hostname>_<pid> (else the worker): ranks on one machine share its clock (job.clock-skew) */
  machine?: string;
  /** per step number, [step, collectives in it, their kinds (a letter each), and per collective 5 numbers in ns: its duration, the gap before it (from the end of the rank's previous collective in the step, or the step's start), the rank's own work and its input wait in that gap, its end after the end of the step's first collective]: the job pairs them across ranks by step and order (the last to arrive has the shortest duration, the transfer; the rest is waiting: job.straggler, job.wait); the first steps, at most 256 collectives */
  collective_arrivals?: ([number, number, string, number[]])[];
}

export interface TableColumn {
  key: string;
  label: string;
  /** us, ms, pct, bytes, or null */
  unit: string | null;
  numeric: boolean;
}

/** the row's longest instance, for the trace viewer */
export interface TableTrace {
  start_ms: number;
  end_ms: number;
  device: number | null;
}

/** kernels: one kernel name (and op with group=name_op) on one GPU */
export interface KernelRow {
  short_name: string;
  op: string;
  device: number;
  calls: number;
  total_us: number | null;
  mean_us: number | null;
  min_us: number | null;
  max_us: number | null;
  device_share_pct: number | null;
  grid: string;
  block: string;
  registers: number | null;
  shared_memory_bytes: number | null;
  sm_efficiency_pct: number | null;
  occupancy_pct: number | null;
  tensor_cores: boolean;
  name: string;
  trace: null | TableTrace;
}

/** ops: one framework op (and input shape with group=op_shape) */
export interface OpRow {
  name: string;
  input_shapes: string;
  calls: number;
  device_us: number | null;
  device_total_us: number | null;
  host_self_us: number | null;
  host_total_us: number | null;
  stack: string;
  trace: null | TableTrace;
}

/** memory: one device (-1: the host), or with XSpace one allocator */
export interface MemoryRow {
  label: string;
  device: number;
  /** XSpace: the allocator's name (GPU_0_bfc, mklcpu, gpu_host_bfc); PyTorch: empty */
  allocator: string;
  peak_allocated_bytes: number | null;
  /** PyTorch: the caching allocator's most reserved memory; null for XSpace */
  peak_reserved_bytes: number | null;
  /** XSpace: TensorFlow's stack-reserved bytes at the peak (the peak is heap allocated plus this) */
  stack_reserved_bytes: number | null;
  peak_time_ms: number | null;
  /** XSpace: the allocator's free memory at the peak */
  free_bytes: number | null;
  /** XSpace: the allocator's fragmentation at the peak */
  fragmentation_pct: number | null;
  /** XSpace: the allocator's peak bytes in use since the program started, at its last event */
  lifetime_peak_bytes: number | null;
  capacity_bytes: number | null;
  headroom_bytes: number | null;
  trace: null | TableTrace;
}

/** input: one tf.data stage */
export interface InputRow {
  stage: string;
  /** `stage` (a tf.data stage); PyTorch: `wait` (the DataLoader's __next__), `copy` (the batch's host-to-device copies), `pin thread` (the DataLoader's pin-memory thread) */
  part: string;
  calls: number;
  self_us: number | null;
  total_us: number | null;
  /** PyTorch: its time in the host's steps, over the steps */
  per_step_us: number | null;
  /** PyTorch: its time in the step where it takes most */
  max_step_us: number | null;
  /** PyTorch: of its time in the steps, what the step waits on: a wait while the GPU has nothing else to do (without a GPU, all of it), a copy not under the GPU's compute; null: not measured */
  waited_us: number | null;
  slowest: boolean;
  trace: null | TableTrace;
}

/** idle: one GPU stream */
export interface IdleRow {
  device: number;
  stream: number;
  idle_us: number | null;
  host_wait_us: number | null;
  kernel_wait_us: number | null;
  other_us: number | null;
  idle_pct: number | null;
  trace: null | TableTrace;
}

/** /table and `tb-gpu-advisor table --format json` */
export interface TableResponse {
  table: TableName;
  group: string | null;
  columns: TableColumn[];
  rows: (KernelRow | OpRow | MemoryRow | InputRow | IdleRow)[];
  /** rows that match the filter */
  total: number;
  /** rows before the filter */
  all: number;
  offset: number;
  sort: string;
  order: 'asc' | 'desc';
  notes: string[];
  /** present when the rows are one step's (the kernels table with step=N): the step's number as the report numbers steps */
  step?: number;
  series?: ({
    device: number;
    allocator: string;
    label: string;
    capacity_bytes: number | null;
    points: ([number, number, number | null])[];
  })[];
  around_peak?: ({
    device: number;
    allocator: string;
    name: string;
    bytes: number;
    t_ms: number;
  })[];
  prefetch?: boolean;
  parallel_map?: boolean;
  /** PyTorch: the DataLoader loads in worker processes; null: no DataLoader */
  workers?: boolean | null;
  /** PyTorch: the batch's copies come from pinned memory or a pin-memory thread runs; null: no copy of the batch and no such thread */
  pin_memory?: boolean | null;
  launch_delay?: {
    count: number;
    mean_us: number | null;
    p50_us: number | null;
    p95_us: number | null;
    max_us: number | null;
  };
}

/** a finding's evidence rows: the table filtered to these names */
export interface TableLink {
  table: TableName;
  name: string[];
  q: string | null;
  at_ms: number | null;
}

/** `diff --format json` on two jobs: every rank pair's step change, the job checks, and the median rank's comparison in full. */
export interface JobDiff {
  schema: 'tb-gpu-advisor/job-diff@2';
  base: {
    run: string;
    ranks: number;
    world_size: number | null;
    cycle: number;
  };
  new: {
    run: string;
    ranks: number;
    world_size: number | null;
    cycle: number;
  };
  summary: {
    step: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    ranks: {
      faster: number;
      slower: number;
      same: number;
      uncertain: number;
      unknown: number;
    };
    fixed: string[];
    new: string[];
    worse: string[];
    better: string[];
  };
  median_rank: string;
  median: Diff;
  ranks: ({
    rank: number | null;
    label: string;
    base_host: string;
    new_host: string;
    base_step_ms: number | null;
    new_step_ms: number | null;
    delta_ms: number | null;
    delta_pct: number | null;
    interval_ms: [number, number] | null;
    step: 'faster' | 'slower' | 'same' | 'uncertain' | 'unknown';
    fixed: string[];
    new: string[];
    worse: string[];
    better: string[];
  })[];
  job_checks: ({
    id: string;
    title: string;
    base_status: string | null;
    new_status: string | null;
    verdict: 'fixed' | 'new' | 'worse' | 'better' | 'exposed' | 'unchanged';
  })[];
  only_base: string[];
  only_new: string[];
  errors: string[];
}

/** the tables (tb_gpu_advisor/tables/) */
export type TableName = 'kernels' | 'ops' | 'memory' | 'input' | 'idle';

/** a step re-timed with a fix applied (docs/whatif.md): the step without the profiler, as it is and with the fix */
export interface WhatIf {
  /** the fix simulated: input, syncs, graph, fusion, compile, bf16, fp16, tf32, channels_last, reduce-overhead, padding, host, overlap, allocator, warmup, or several joined by + */
  change: string;
  /** the step without the profiler, as it is */
  step_ms: number;
  /** the step without the profiler, with the fix */
  new_step_ms: number;
  saving_ms: number;
  /** the saving's range: the model's error on held-out pairs of this kind of fix, the profiler's cost's range and the host's pace (docs/whatif.md) */
  saving_low_ms: number;
  saving_high_ms: number;
  /** the model's relative error on held-out pairs of this kind of fix, which the range holds */
  error_pct: number;
  /** what sets the step before the fix */
  bound: 'GPU' | 'host' | 'input';
  /** what sets it after */
  new_bound: 'GPU' | 'host' | 'input';
  /** the model, in a sentence */
  basis: string;
  /** on what basis the profiler's cost was taken out: capture (its events at the constants, with their spread), logged (met to the step time logged beside it), profiled (kept, as a second capture would have it); the report's step_model.profiler says how */
  profiler: 'capture' | 'logged' | 'profiled';
  /** why the evidence cannot support a saving (then none is stated); absent where it can */
  withheld?: string;
  /** step 43.8 → 42.9 ms; the host sets it now and after the fix */
  sentence: string;
}

/** the steps re-timed by their graph (docs/whatif.md): as captured, without the profiler, and every finding's fix together */
export interface StepModel {
  /** the steady state's step as captured */
  captured_step_ms: number;
  /** the same without the profiler's own cost */
  step_ms: number;
  profiler_ms: number;
  /** the profiler's cost, share of the captured step */
  profiler_pct: number;
  /** the step without the profiler at the ends of its cost's range */
  step_range_ms: number[];
  /** how the profiler's cost was taken out (docs/whatif.md, "The profiler's own cost") */
  profiler: {
    /** capture: its events at the constants, with the spread seen over timed captures; logged: scaled to meet the step time logged as a TensorBoard scalar */
    basis: 'capture' | 'logged';
    logged_step_ms: number | null;
    sentence: string;
  };
  /** what sets the step without the profiler */
  bound: 'GPU' | 'host' | 'input';
  /** every finding's fix simulated together: savings that never double count */
  all: null | WhatIf;
  /** findings' fixes left out of `all`: each made the simulated step slower */
  left_out: string[];
  /** the findings whose fixes make `all` */
  findings: string[];
  /** the device's work per step (its ops' time, every stream) */
  device_ms: number;
  /** the host's own work per step without the profiler, its waits for the GPU left out */
  host_ms: number;
}
