// URL state: the panel keeps run, host, finding, a job's cycle and the table view (table, group, sort, order,
// filter, names) in TensorBoard's URL hash (keys `p.gpu_advisor.<key>`), and builds links to share
// and to the Profile tab's trace viewer.
// Pure functions, unit-tested.

export const PLUGIN = 'gpu_advisor';
const PREFIX = `p.${PLUGIN}.`;
export const STATE_KEYS = [
  'run',
  'host',
  'finding',
  'compare',
  'compare_host',
  'cycle',
  'view',
  'table',
  'group',
  'sort',
  'order',
  'filter',
  'names',
] as const;
/** The host picker's value for the view of all hosts of a run. */
export const ALL_HOSTS = '*';

export interface PanelState {
  run?: string;
  host?: string;
  finding?: string; // "<check id>" or "<check id>:<evidence index>"
  compare?: string; // the base run this one is compared with
  compare_host?: string;
  cycle?: string; // the job's profiling cycle (0 the first), kept while a rank of it is open
  view?: string; // 'tables' while a table is shown, 'overview' on the overview; absent on the findings
  table?: string; // kernels | ops | memory | input | idle
  group?: string;
  sort?: string;
  order?: string; // asc | desc
  filter?: string; // the text filter (the route's `q`)
  names?: string; // a finding's exact names, as a JSON array (the route's repeated `name`)
}

/** A JSON array of names (the `names` key) as a list; anything else as none, never an error. */
export function parseNames(v: string | undefined): string[] {
  if (!v) return [];
  try {
    const a: unknown = JSON.parse(v);
    return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function formatNames(names: readonly string[]): string | undefined {
  return names.length ? JSON.stringify(names) : undefined;
}

/** A table view as the URL keeps it. */
export interface TableView {
  table: string;
  group?: string;
  sort?: string;
  order?: 'asc' | 'desc';
  filter?: string;
  names?: string[];
}

/** The table view a state names, or null on the findings. */
export function tableOf(s: PanelState): TableView | null {
  if (s.view !== 'tables') return null;
  const v: TableView = {table: s.table || 'kernels'};
  if (s.group) v.group = s.group;
  if (s.sort) v.sort = s.sort;
  if (s.order === 'asc' || s.order === 'desc') v.order = s.order;
  if (s.filter) v.filter = s.filter;
  const names = parseNames(s.names);
  if (names.length) v.names = names;
  return v;
}

/** The state keys of a table view. */
export function tableState(v: TableView): PanelState {
  const s: PanelState = {view: 'tables', table: v.table};
  if (v.group) s.group = v.group;
  if (v.sort) s.sort = v.sort;
  if (v.order) s.order = v.order;
  if (v.filter) s.filter = v.filter;
  const names = formatNames(v.names ?? []);
  if (names) s.names = names;
  return s;
}

export interface ParsedHash {
  tab: string;
  params: [string, string][];
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** TensorBoard's hash: `#<tab>&key=value&...` (values URI-encoded). */
export function parseHash(hash: string): ParsedHash {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  let tab = '';
  const params: [string, string][] = [];
  for (const part of body.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    if (eq < 0) {
      if (!tab) tab = decode(part);
      continue;
    }
    params.push([decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
  }
  return {tab, params};
}

export function formatHash(parsed: ParsedHash): string {
  const parts = parsed.tab ? [encodeURIComponent(parsed.tab)] : [];
  for (const [k, v] of parsed.params) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return '#' + parts.join('&');
}

export function readState(hash: string): PanelState {
  const out: PanelState = {};
  for (const [k, v] of parseHash(hash).params) {
    if (!k.startsWith(PREFIX)) continue;
    const key = k.slice(PREFIX.length);
    if ((STATE_KEYS as readonly string[]).includes(key) && v) out[key as keyof PanelState] = v;
  }
  return out;
}

/** The hash with this panel's state written in (other tabs' keys kept, our tab selected). */
export function writeState(hash: string, state: PanelState): string {
  const parsed = parseHash(hash);
  const params = parsed.params.filter(([k]) => !k.startsWith(PREFIX));
  for (const key of STATE_KEYS) {
    const v = state[key];
    if (v) params.push([PREFIX + key, v]);
  }
  return formatHash({tab: PLUGIN, params});
}

/** The call of the MCP server's tool (`tb-gpu-advisor mcp LOGDIR`) that gives a coding agent what a view
 * shows, as the agent skill and the command's markdown write it: `analyze {"run": "r", "host": "h"}`.
 * The overview is list_runs, a job's hosts job, a comparison diff, a table table, a selected finding
 * evidence, a host's findings analyze. */
export function mcpCall(s: PanelState): string {
  const call = (tool: string, args: Record<string, unknown>): string => {
    const body = Object.entries(args)
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return `${tool} {${body.join(', ')}}`;
  };
  if (!s.run || s.view === 'overview') return call('list_runs', {});
  if (s.host === ALL_HOSTS) {
    const cycle = s.cycle !== undefined && /^-?\d+$/.test(s.cycle) ? Number(s.cycle) : undefined;
    return call('job', {run: s.run, cycle});
  }
  if (s.compare)
    return call('diff', {before: s.compare, after: s.run, before_host: s.compare_host, after_host: s.host});
  const t = tableOf(s);
  if (t) {
    const names = t.names?.length ? t.names : undefined;
    return call('table', {
      run: s.run,
      host: s.host,
      kind: t.table,
      group: t.group,
      sort: t.sort,
      order: t.order,
      q: t.filter,
      names,
    });
  }
  if (s.finding) return call('evidence', {run: s.run, host: s.host, finding: s.finding.split(':')[0]});
  return call('analyze', {run: s.run, host: s.host});
}

/** A TensorBoard URL that opens this tab on the same run, host and finding. */
export function shareUrl(href: string, state: PanelState): string {
  const i = href.indexOf('#');
  const base = i < 0 ? href : href.slice(0, i);
  return base + writeState(i < 0 ? '' : href.slice(i), state);
}

/** TensorBoard's base path, from the panel's own location (`<base>/data/plugin_entry.html`):
 * '' normally, '/tb' under --path_prefix, '/experiment/<id>' for experiments. */
export function tbBase(pathname: string): string {
  const i = pathname.indexOf('/data/');
  return i < 0 ? '' : pathname.slice(0, i);
}

/** The window a trace viewer opens on for an evidence window: the evidence with a tenth of its length
 * (at least 10 µs) on each side. */
export function viewWindow(startMs: number, endMs: number): [number, number] {
  const margin = Math.max((endMs - startMs) * 0.1, 0.01);
  return [Math.max(0, startMs - margin), endMs + margin];
}

/** The profile plugin's trace viewer page on the advisor's own export of a finding's evidence (the
 * run's events around it, and a "GPU Advisor" track whose slices carry the advice), opened on the
 * evidence window. Times are ms from the profile's start, the viewer's own zero. */
export function traceViewerUrl(
  base: string,
  run: string,
  host: string,
  check: string,
  evidence: number,
  startMs: number,
  endMs: number,
): string {
  const data =
    `${base}/data/plugin/gpu_advisor/export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}` +
    `&finding=${encodeURIComponent(check)}&evidence=${evidence}`;
  const [a, b] = viewWindow(startMs, endMs);
  const q = [
    'is_streaming=false',
    'is_oss=true',
    `trace_data_url=${encodeURIComponent(data)}`,
    `view_start=${roundMs(a)}`,
    `view_end=${roundMs(b)}`,
  ];
  return `${base}/data/plugin/profile/trace_viewer_index.html?${q.join('&')}`;
}

/** The Profile tab (inside TensorBoard) on the same run and host, in its trace viewer. The tab reads
 * run, tool and host from the query string; it has no parameter for a time window, so the window is
 * given for the reader (view_start/view_end, ms in the trace viewer's time base). */
export function profileTabUrl(base: string, run: string, host: string, startMs?: number, endMs?: number): string {
  const q = [
    `run=${encodeURIComponent(run)}`,
    `tool=${encodeURIComponent('trace_viewer@')}`,
    `host=${encodeURIComponent(host)}`,
  ];
  if (startMs !== undefined && endMs !== undefined) {
    const [a, b] = viewWindow(startMs, endMs);
    q.push(`view_start=${roundMs(a)}`, `view_end=${roundMs(b)}`);
  }
  return `${base}/?${q.join('&')}#profile`;
}

/** The trace viewer on the advisor's export of a time window (a table row's longest instance): the
 * events from a window around it (its length, at least 1 ms, either side, for context), opened on the
 * instance with the margin viewWindow gives. */
export function traceViewerWindowUrl(base: string, run: string, host: string, startMs: number, endMs: number): string {
  const pad = Math.max(endMs - startMs, 1);
  const data =
    `${base}/data/plugin/gpu_advisor/export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}` +
    `&start_ms=${roundMs(Math.max(0, startMs - pad))}&end_ms=${roundMs(endMs + pad)}`;
  const [a, b] = viewWindow(startMs, endMs);
  const q = [
    'is_streaming=false',
    'is_oss=true',
    `trace_data_url=${encodeURIComponent(data)}`,
    `view_start=${roundMs(a)}`,
    `view_end=${roundMs(b)}`,
  ];
  return `${base}/data/plugin/profile/trace_viewer_index.html?${q.join('&')}`;
}

function roundMs(v: number): string {
  return String(Math.round(v * 1e6) / 1e6);
}

/** Why a link's comparison cannot open: its run to compare with is not in the logdir, or has several
 * hosts and the link names none of them (`compare_host`). */
export function compareHostMissing(compare: string, hosts: string[]): string {
  if (!hosts.length) return `Cannot compare: the run ${compare} is not in this logdir.`;
  const some = hosts.slice(0, 5).join(', ') + (hosts.length > 5 ? `, and ${hosts.length - 5} more` : '');
  return (
    `Cannot compare with ${compare}: it has ${hosts.length} hosts (${some}) and the link names none. ` +
    'Pick one in the Before picker, or add compare_host to the link.'
  );
}
