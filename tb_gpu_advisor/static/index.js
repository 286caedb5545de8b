// Built from frontend/src by frontend/build.mjs; do not edit.

// src/dom.ts
var HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
function shown(text) {
  return text.replace(HIDDEN, (c) => {
    const n = c.charCodeAt(0);
    if (c === "\r") return "\\r";
    return n < 256 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}
var READ = /* @__PURE__ */ new Set(["title"]);
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === void 0 || v === false) continue;
    if (typeof v === "function") {
      node.addEventListener(k.replace(/^on/, ""), v);
    } else if (k === "class") {
      node.className = String(v);
    } else if (k.startsWith("data-") || k.startsWith("aria-") || [
      "role",
      "title",
      "href",
      "target",
      "rel",
      "type",
      "id",
      "tabindex",
      "for",
      "download",
      "readonly",
      "value",
      "name",
      "colspan"
    ].includes(k)) {
      if (k === "href" && !/^(https?:|\/|\.\/|\?|#)/.test(String(v))) continue;
      const text = v === true ? "" : String(v);
      node.setAttribute(k, READ.has(k) || k.startsWith("aria-") ? shown(text) : text);
    }
  }
  append(node, ...children);
  return node;
}
function append(node, ...children) {
  for (const c of children) {
    if (c === null || c === void 0 || c === false) continue;
    node.appendChild(
      typeof c === "string" ? document.createTextNode(shown(c)) : typeof c === "number" ? document.createTextNode(String(c)) : c
    );
  }
}
function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}
var SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  append(node, ...children);
  return node;
}

// src/api.ts
async function getJson(route, params = {}) {
  const q = Object.entries(params).flatMap(([k, v]) => v === void 0 ? [] : typeof v === "object" ? v.map((x) => [k, x]) : [[k, v]]).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&");
  const res = await fetch(`./${route}${q ? `?${q}` : ""}`, { headers: { Accept: "application/json" } });
  let body;
  try {
    body = await res.json();
  } catch {
    body = { error: { status: res.status, message: `${res.status} ${res.statusText}` } };
  }
  return { status: res.status, body };
}
function errorMessage(body) {
  const e = body?.error;
  return e?.message ?? "unknown error";
}
function exportUrl(run, host) {
  return `./export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}&download=1`;
}

// src/loader.ts
var POLL_WAIT_S = 2;
var Loader = class {
  constructor() {
    this.token = 0;
  }
  /** A new view: loads for the one before it are dropped. */
  begin() {
    return ++this.token;
  }
  isCurrent(token) {
    return token === this.token;
  }
  /** A route asked until it answers (200 or an error); `pending` hears the progress (0–1) of each 202.
   * Null when the view was left meanwhile. */
  async poll(token, route, params, pending) {
    for (; ; ) {
      const res = await getJson(route, { ...params, wait: POLL_WAIT_S });
      if (!this.isCurrent(token)) return null;
      if (res.status === 202) {
        pending?.(res.body.progress ?? 0);
        continue;
      }
      const out = res.status === 200 ? { ok: true, body: res.body } : { ok: false, status: res.status, message: errorMessage(res.body) };
      return out;
    }
  }
  /** One host's report. */
  report(token, run, host, pending) {
    return this.poll(token, "report", { run, host }, pending);
  }
  /** Every host of a run (one profiling cycle of a job), compared. */
  runReports(token, run, cycle) {
    return this.poll(token, "report", { run, cycle });
  }
  /** A run against the run before a change, every check listed (the view shows the unchanged on request). */
  compare(token, run, host, baseRun, baseHost) {
    return this.poll(token, "compare", { run, host, base_run: baseRun, base_host: baseHost, all_checks: "1" });
  }
};
async function loadRuns() {
  const [runs, checks] = await Promise.all([getJson("runs"), getJson("checks")]);
  return {
    runs: runs.status === 200 ? { ok: true, body: runs.body } : { ok: false, status: runs.status, message: errorMessage(runs.body) },
    checks: checks.status === 200 ? checks.body : null
  };
}
async function reloadRuns() {
  const res = await getJson("runs");
  return res.status === 200 ? res.body : null;
}
async function timelineWindow(run, host, w, width) {
  const res = await getJson("timeline", { run, host, start_ms: w.start, end_ms: w.end, width });
  return res.status === 200 ? res.body : null;
}
async function eventAt(run, host, track, t, tolerance) {
  const res = await getJson("event", { run, host, track, t_ms: t, tolerance_ms: tolerance });
  return res.status === 200 ? res.body : null;
}

// src/urlstate.ts
var PLUGIN = "gpu_advisor";
var PREFIX = `p.${PLUGIN}.`;
var STATE_KEYS = [
  "run",
  "host",
  "finding",
  "compare",
  "compare_host",
  "cycle",
  "view",
  "table",
  "group",
  "sort",
  "order",
  "filter",
  "names"
];
var ALL_HOSTS = "*";
function parseNames(v) {
  if (!v) return [];
  try {
    const a = JSON.parse(v);
    return Array.isArray(a) ? a.filter((x) => typeof x === "string") : [];
  } catch {
    return [];
  }
}
function formatNames(names) {
  return names.length ? JSON.stringify(names) : void 0;
}
function tableOf(s) {
  if (s.view !== "tables") return null;
  const v = { table: s.table || "kernels" };
  if (s.group) v.group = s.group;
  if (s.sort) v.sort = s.sort;
  if (s.order === "asc" || s.order === "desc") v.order = s.order;
  if (s.filter) v.filter = s.filter;
  const names = parseNames(s.names);
  if (names.length) v.names = names;
  return v;
}
function tableState(v) {
  const s = { view: "tables", table: v.table };
  if (v.group) s.group = v.group;
  if (v.sort) s.sort = v.sort;
  if (v.order) s.order = v.order;
  if (v.filter) s.filter = v.filter;
  const names = formatNames(v.names ?? []);
  if (names) s.names = names;
  return s;
}
function decode(s) {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}
function parseHash(hash) {
  const body = hash.startsWith("#") ? hash.slice(1) : hash;
  let tab = "";
  const params = [];
  for (const part of body.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    if (eq < 0) {
      if (!tab) tab = decode(part);
      continue;
    }
    params.push([decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
  }
  return { tab, params };
}
function formatHash(parsed) {
  const parts = parsed.tab ? [encodeURIComponent(parsed.tab)] : [];
  for (const [k, v] of parsed.params) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return "#" + parts.join("&");
}
function readState(hash) {
  const out = {};
  for (const [k, v] of parseHash(hash).params) {
    if (!k.startsWith(PREFIX)) continue;
    const key = k.slice(PREFIX.length);
    if (STATE_KEYS.includes(key) && v) out[key] = v;
  }
  return out;
}
function writeState(hash, state) {
  const parsed = parseHash(hash);
  const params = parsed.params.filter(([k]) => !k.startsWith(PREFIX));
  for (const key of STATE_KEYS) {
    const v = state[key];
    if (v) params.push([PREFIX + key, v]);
  }
  return formatHash({ tab: PLUGIN, params });
}
function mcpCall(s) {
  const call = (tool, args) => {
    const body = Object.entries(args).filter(([, v]) => v !== void 0 && v !== "").map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return `${tool} {${body.join(", ")}}`;
  };
  if (!s.run || s.view === "overview") return call("list_runs", {});
  if (s.host === ALL_HOSTS) {
    const cycle = s.cycle !== void 0 && /^-?\d+$/.test(s.cycle) ? Number(s.cycle) : void 0;
    return call("job", { run: s.run, cycle });
  }
  if (s.compare)
    return call("diff", { before: s.compare, after: s.run, before_host: s.compare_host, after_host: s.host });
  const t = tableOf(s);
  if (t) {
    const names = t.names?.length ? t.names : void 0;
    return call("table", {
      run: s.run,
      host: s.host,
      kind: t.table,
      group: t.group,
      sort: t.sort,
      order: t.order,
      q: t.filter,
      names
    });
  }
  if (s.finding) return call("evidence", { run: s.run, host: s.host, finding: s.finding.split(":")[0] });
  return call("analyze", { run: s.run, host: s.host });
}
function shareUrl(href, state) {
  const i = href.indexOf("#");
  const base = i < 0 ? href : href.slice(0, i);
  return base + writeState(i < 0 ? "" : href.slice(i), state);
}
function tbBase(pathname) {
  const i = pathname.indexOf("/data/");
  return i < 0 ? "" : pathname.slice(0, i);
}
function viewWindow(startMs, endMs) {
  const margin = Math.max((endMs - startMs) * 0.1, 0.01);
  return [Math.max(0, startMs - margin), endMs + margin];
}
function traceViewerUrl(base, run, host, check, evidence, startMs, endMs) {
  const data = `${base}/data/plugin/gpu_advisor/export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}&finding=${encodeURIComponent(check)}&evidence=${evidence}`;
  const [a, b] = viewWindow(startMs, endMs);
  const q = [
    "is_streaming=false",
    "is_oss=true",
    `trace_data_url=${encodeURIComponent(data)}`,
    `view_start=${roundMs(a)}`,
    `view_end=${roundMs(b)}`
  ];
  return `${base}/data/plugin/profile/trace_viewer_index.html?${q.join("&")}`;
}
function profileTabUrl(base, run, host, startMs, endMs) {
  const q = [
    `run=${encodeURIComponent(run)}`,
    `tool=${encodeURIComponent("trace_viewer@")}`,
    `host=${encodeURIComponent(host)}`
  ];
  if (startMs !== void 0 && endMs !== void 0) {
    const [a, b] = viewWindow(startMs, endMs);
    q.push(`view_start=${roundMs(a)}`, `view_end=${roundMs(b)}`);
  }
  return `${base}/?${q.join("&")}#profile`;
}
function traceViewerWindowUrl(base, run, host, startMs, endMs) {
  const pad = Math.max(endMs - startMs, 1);
  const data = `${base}/data/plugin/gpu_advisor/export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}&start_ms=${roundMs(Math.max(0, startMs - pad))}&end_ms=${roundMs(endMs + pad)}`;
  const [a, b] = viewWindow(startMs, endMs);
  const q = [
    "is_streaming=false",
    "is_oss=true",
    `trace_data_url=${encodeURIComponent(data)}`,
    `view_start=${roundMs(a)}`,
    `view_end=${roundMs(b)}`
  ];
  return `${base}/data/plugin/profile/trace_viewer_index.html?${q.join("&")}`;
}
function roundMs(v) {
  return String(Math.round(v * 1e6) / 1e6);
}
function compareHostMissing(compare, hosts) {
  if (!hosts.length) return `Cannot compare: the run ${compare} is not in this logdir.`;
  const some = hosts.slice(0, 5).join(", ") + (hosts.length > 5 ? `, and ${hosts.length - 5} more` : "");
  return `Cannot compare with ${compare}: it has ${hosts.length} hosts (${some}) and the link names none. Pick one in the Before picker, or add compare_host to the link.`;
}

// src/router.ts
function parentWindow() {
  try {
    return window.parent !== window && window.parent.location.href ? window.parent : null;
  } catch {
    return null;
  }
}
function sameState(a, b) {
  return STATE_KEYS.every((k) => (a[k] ?? "") === (b[k] ?? ""));
}
var Router = class {
  constructor() {
    /** The view shown (or being opened). */
    this.state = {};
    this.top = parentWindow();
    // the next write replaces the history entry instead of adding one: the first view, and a view
    // applied from the URL (Back, Forward, a pasted link)
    this.replaceNext = true;
  }
  /** The state the URL names when the panel opens. */
  initial() {
    return readState((this.top ?? window).location.hash);
  }
  /** Calls `apply` with the state the URL names when Back, Forward or a pasted link changes it to
   * another view of this tab. */
  listen(apply) {
    const changed = () => {
      const top = this.top;
      if (!top || parseHash(top.location.hash).tab !== PLUGIN) return;
      const wanted = readState(top.location.hash);
      if (sameState(wanted, this.state)) return;
      if (!Object.keys(wanted).length) {
        this.write(true);
        return;
      }
      this.replaceNext = true;
      apply(wanted);
    };
    this.top?.addEventListener("popstate", changed);
    this.top?.addEventListener("hashchange", changed);
  }
  /** Show `state`: in the URL, a new history entry for each view the user opens, so that Back returns
   * to the one before it (the first view and one applied from the URL replace theirs; so does
   * `replace`, for a change within a view). */
  set(state, replace = false) {
    this.state = state;
    this.write(replace);
  }
  write(replaceThis = false) {
    const replace = this.replaceNext || replaceThis;
    this.replaceNext = false;
    const top = this.top;
    if (!top) return;
    try {
      const hash = writeState(top.location.hash, this.state);
      if (hash === top.location.hash) return;
      const url = top.location.pathname + top.location.search + hash;
      if (replace) top.history.replaceState(top.history.state, "", url);
      else top.history.pushState(top.history.state, "", url);
    } catch {
    }
  }
  /** Opens another tab of TensorBoard (`href`: a URL of TensorBoard's page, the tab in its hash) the
   * way TensorBoard moves between its tabs: a new history entry, the page not reloaded. The Profile tab
   * reads its run, tool and host from the page's query, so the query changes too, which a hash link
   * cannot do without a reload. False when TensorBoard's page cannot be reached: the link then opens
   * itself. */
  openTab(href) {
    const top = this.top;
    if (!top) return false;
    try {
      const url = new URL(href, top.location.href);
      if (url.origin !== top.location.origin) return false;
      const old = top.location.href;
      top.history.pushState(null, "", url.pathname + url.search + url.hash);
      top.dispatchEvent(new PopStateEvent("popstate", { state: null }));
      top.dispatchEvent(new HashChangeEvent("hashchange", { oldURL: old, newURL: top.location.href }));
      return true;
    } catch {
      return false;
    }
  }
  /** A TensorBoard URL that opens this view. */
  shareUrl() {
    return shareUrl((this.top ?? window).location.href, this.state);
  }
};

// src/style.ts
var CATEGORY_COLORS = {
  device_compute: "#4285f4",
  device_collectives: "#a142f4",
  memcpy_h2d: "#fa7b17",
  memcpy_d2h: "#f439a0",
  memcpy_d2d: "#b06000",
  host_input_wait: "#ea4335",
  kernel_launch_wait: "#f9ab00",
  idle_other: "#bdbdbd"
};
var CATEGORY_LABELS = {
  device_compute: "Device compute",
  device_collectives: "Collectives",
  memcpy_h2d: "Memcpy H2D",
  memcpy_d2h: "Memcpy D2H",
  memcpy_d2d: "Memcpy D2D/P2P",
  host_input_wait: "Waiting for input",
  kernel_launch_wait: "Kernel launch wait",
  idle_other: "Idle / other"
};
var SEGMENT_COLORS = {
  compute: "#4285f4",
  collective: "#a142f4",
  copy: "#fa7b17",
  input: "#ea4335",
  launch: "#f9ab00",
  op: "#12b5cb",
  other: "#9aa0a6"
};
var STATUS_COLORS = {
  critical: "#d93025",
  warning: "#e37400",
  info: "#1a73e8",
  pass: "#188038",
  "not-applicable": "#80868b"
};
var CSS = `
:root { --fg: #212121; --fg2: #616161; --bg: #fff; --card: #fff; --line: #e0e0e0; --hover: #f5f5f5;
  --accent: #f57c00; --link: #1a73e8; --code: #f6f8fa; }
body.dark { --fg: #e8eaed; --fg2: #9aa0a6; --bg: #202124; --card: #2d2e30; --line: #3c4043; --hover: #35363a;
  --accent: #ff9800; --link: #8ab4f8; --code: #303134; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 13px/1.45 Roboto, 'Helvetica Neue', Arial, sans-serif; color: var(--fg); background: var(--bg); }
button, select, input { font: inherit; color: inherit; }
button { cursor: pointer; background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: 3px 10px; }
button:hover { background: var(--hover); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
a { color: var(--link); }
select { background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: 3px 6px; max-width: 260px; }
.bar { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; padding: 10px 16px; border-bottom: 1px solid var(--line); }
.bar h1 { font-size: 16px; font-weight: 500; margin: 0 8px 0 0; }
.bar label { color: var(--fg2); display: flex; gap: 6px; align-items: center; }
.bar .spacer { flex: 1; }
.share { width: 380px; font-size: 12px; border: 1px solid var(--line); background: var(--code); padding: 3px 6px; border-radius: 4px; }
.meta { color: var(--fg2); padding: 6px 16px 0; }
.layout { display: grid; grid-template-columns: minmax(0, 1.25fr) minmax(0, 1fr); gap: 14px; padding: 12px 16px 24px; align-items: start; }
.layout.single { grid-template-columns: minmax(0, 1fr); }
.layout > .wide { grid-column: 1 / -1; min-width: 0; }
@media (max-width: 900px) { .layout { grid-template-columns: minmax(0, 1fr); } }
.col { display: flex; flex-direction: column; gap: 14px; min-width: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card h2 { font-size: 13px; font-weight: 500; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: var(--fg2); }
.headline { display: flex; gap: 10px; flex-wrap: wrap; }
.kpi { flex: 1 1 120px; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.kpi .v { font-size: 22px; font-weight: 500; }
.kpi .l { color: var(--fg2); font-size: 12px; }
.kpi .meter { height: 4px; background: var(--line); border-radius: 2px; margin-top: 4px; overflow: hidden; }
.kpi .meter > div { height: 100%; background: var(--accent); }
.kpi[data-judged="good"] .meter > div { background: #188038; }
.kpi[data-judged="moderate"] .meter > div { background: #e37400; }
.kpi[data-judged="bad"] .meter > div { background: #d93025; }
.kpi[data-judged="bad"] .v { color: #d93025; }
.kpi .judged { font-size: 11px; color: var(--fg2); text-transform: uppercase; letter-spacing: .03em; margin-top: 2px; }
.kpi .info { cursor: help; display: inline-block; width: 13px; height: 13px; line-height: 13px; border: 1px solid var(--fg2); border-radius: 50%; text-align: center; font-size: 9px; }
.per-gpu { margin-top: 8px; }
table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; padding: 2px 6px 2px 0; vertical-align: top; }
th { color: var(--fg2); font-weight: 500; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.chip { display: inline-block; min-width: 64px; text-align: center; border-radius: 10px; padding: 0 8px; font-size: 11px;
  font-weight: 500; color: #fff; text-transform: uppercase; }
.finding { border: 1px solid var(--line); border-radius: 6px; margin-bottom: 8px; background: var(--card); }
.finding.selected { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.finding > .head { display: grid; grid-template-columns: auto 1fr auto; gap: 8px; align-items: center; width: 100%;
  text-align: left; border: 0; background: transparent; padding: 8px 10px; }
.finding > .head .id { font-family: 'Roboto Mono', monospace; font-size: 12px; color: var(--fg2); }
.finding > .head .title { font-weight: 500; }
.finding > .head .saving { color: var(--fg2); white-space: nowrap; }
.finding .body { padding: 0 12px 10px; overflow-wrap: anywhere; }
.check { overflow-wrap: anywhere; }
.finding .summary { margin: 0 0 8px; }
.finding .summary-line { margin: -4px 12px 8px 94px; color: var(--fg2); }
.finding.open .summary-line { color: var(--fg); }
.finding .job-wait { margin: -4px 12px 8px 94px; color: var(--fg); font-weight: 500; }
.finding .rec { margin: 8px 0; }
.finding .rec p { margin: 4px 0; }
code { font-family: 'Roboto Mono', monospace; font-size: 12px; background: var(--code); border-radius: 3px; padding: 0 3px; }
pre code { background: none; padding: 0; }
pre { background: var(--code); border-radius: 4px; padding: 8px; overflow-x: auto; margin: 4px 0; font-size: 12px; max-width: 100%; }
pre.snippet { white-space: pre; }
.measures { font-size: 12px; }
.whatif { margin: 6px 0; padding: 4px 8px; border-left: 3px solid var(--accent); }
.step-model { margin: 8px 0 0; font-size: 13px; }
.notice { color: #b06000; }
.badge { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 8px; background: #d93025; color: #fff; font-size: 11px; }
table.overview tr.run-row, table.hosts tr.host-row { cursor: pointer; }
table.overview tr.run-row:hover, table.hosts tr.host-row:hover { background: var(--hover); }
table.overview td, table.hosts td { padding: 4px 8px 4px 0; border-top: 1px solid var(--line); }
table.overview .run-name { font-family: 'Roboto Mono', monospace; font-size: 12px; overflow-wrap: anywhere; }
table.overview caption { caption-side: top; text-align: left; color: var(--fg2); font-size: 12px; padding-bottom: 4px; }
th button.sort { border: 0; background: none; padding: 0; color: var(--fg2); font-weight: 500; }
.breakdown-chart .step-bar { cursor: pointer; }
.breakdown-chart .step-bar:hover rect:last-child { fill: rgba(128,128,128,0.12); }
.tl-wrap { position: relative; }
.tl-tip { position: absolute; z-index: 5; max-width: 360px; background: var(--card); color: var(--fg); border: 1px solid var(--line);
  border-radius: 4px; padding: 6px 8px; box-shadow: 0 2px 6px rgba(0,0,0,.2); font-size: 12px; pointer-events: none; overflow-wrap: anywhere; }
.tl-tip-title { font-weight: 500; }
#checklist .row { margin-bottom: 4px; justify-content: space-between; }
.compare { display: flex; flex-direction: column; gap: 14px; }
.compare table td, .compare table th { padding: 3px 10px 3px 0; border-top: 1px solid var(--line); }
.compare .delta { font-weight: 500; }
.compare .movers .name { font-family: 'Roboto Mono', monospace; font-size: 12px; overflow-wrap: anywhere; }
.long-name { font-family: 'Roboto Mono', monospace; font-size: 12px; cursor: help; }
.compare i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
#compare-basis.step-faster strong { color: #188038; }
#compare-basis.step-slower strong { color: #d93025; }
.chip.verdict { min-width: 70px; }
.row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
.evidence li { margin: 4px 0; }
.evidence .where { color: var(--fg2); }
.muted { color: var(--fg2); }
.check { display: grid; grid-template-columns: 76px 1fr; gap: 8px; padding: 3px 0; align-items: baseline; }
.check .id { font-family: 'Roboto Mono', monospace; font-size: 12px; }
.check button.link { border: 0; background: none; padding: 0; color: var(--link); text-decoration: underline; }
.section { font-weight: 500; margin: 10px 0 4px; }
.legend { display: flex; gap: 10px; flex-wrap: wrap; font-size: 12px; color: var(--fg2); margin-top: 6px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.progress { height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; width: 320px; }
.progress > div { height: 100%; background: var(--accent); transition: width .2s; }
.message { padding: 24px 16px; }
.error { color: #d93025; white-space: pre-wrap; }
.tl-tools { display: flex; gap: 6px; align-items: center; margin-bottom: 6px; flex-wrap: wrap; }
canvas.timeline { width: 100%; display: block; border: 1px solid var(--line); border-radius: 4px; cursor: grab; }
canvas.timeline.dragging { cursor: grabbing; }
details > summary { cursor: pointer; color: var(--fg2); }
.view-tabs, .table-tabs { display: flex; gap: 4px; flex-wrap: wrap; }
.view-tabs { padding: 10px 16px 0; }
.view-tabs [role="tab"], .table-tabs [role="tab"] { border-radius: 4px 4px 0 0; }
.view-tabs [aria-selected="true"], .table-tabs [aria-selected="true"] { border-color: var(--accent); box-shadow: inset 0 -2px 0 var(--accent); }
.table-tabs { border-bottom: 1px solid var(--line); margin-bottom: 8px; }
.table-tools { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: 6px; }
.table-tools input[type="search"] { width: 260px; background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: 3px 6px; }
.names-filter { border: 1px solid var(--accent); border-radius: 10px; padding: 0 4px 0 8px; }
.names-filter button { border: 0; background: none; padding: 0 4px; }
.table-info p { margin: 4px 0; }
.vt-scroll { max-height: 60vh; overflow: auto; border: 1px solid var(--line); border-radius: 4px; }
table.vt { table-layout: fixed; width: 100%; }
table.vt thead th { position: sticky; top: 0; background: var(--card); z-index: 1; border-bottom: 1px solid var(--line); padding: 4px 5px; vertical-align: bottom; font-size: 12px; }
table.vt th button.sort { white-space: normal; overflow: hidden; max-width: 100%; line-height: 1.25; overflow-wrap: break-word; }
table.vt th.num button.sort { text-align: right; }
table.vt td { height: 24px; padding: 0 5px; font-size: 12px; font-variant-numeric: tabular-nums; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; vertical-align: middle; }
table.vt tr.vt-spacer td { padding: 0; }
table.vt tr.vt-row:hover { background: var(--hover); }
table.vt td.name { font-family: 'Roboto Mono', monospace; font-size: 12px; }
table.vt tr.slowest td { font-weight: 500; }
.slowest-badge { background: #e37400; }
.idle-bar { display: flex; height: 12px; border-radius: 2px; overflow: hidden; background: var(--line); margin-top: 6px; }
.idle-bar > span { display: block; height: 100%; }
.memory-device h4 { font-size: 12px; font-weight: 500; margin: 8px 0 2px; color: var(--fg2); }
.memory-device h3, .memory-view h3 { font-size: 13px; font-weight: 500; margin: 10px 0 2px; }
svg.memory-chart { width: 100%; max-width: 1000px; height: auto; display: block; }
svg.memory-chart .grid { stroke: var(--line); }
svg.memory-chart .axis { fill: var(--fg2); font-size: 11px; }
svg.memory-chart .allocated { fill: none; stroke: #4285f4; stroke-width: 1.5; }
svg.memory-chart .reserved { fill: none; stroke: #fa7b17; stroke-width: 1; stroke-dasharray: 4 3; }
svg.memory-chart .capacity { stroke: #d93025; stroke-dasharray: 6 4; }
svg.memory-chart .capacity-label { fill: #d93025; font-size: 11px; }
svg.memory-chart .peak-line, svg.memory-chart .at-marker { stroke: var(--accent); stroke-dasharray: 2 3; }
svg.memory-chart .peak-marker { fill: var(--accent); }
svg.memory-chart .peak-label { fill: var(--fg); font-size: 12px; font-weight: 500; }
table.around-peak td, table.around-peak th { border-top: 1px solid var(--line); padding: 3px 10px 3px 0; }
table.around-peak td.name { font-family: 'Roboto Mono', monospace; font-size: 12px; overflow-wrap: anywhere; }
canvas.rank-strip { width: 100%; display: block; margin: 6px 0 2px; }
.strip-key { margin-left: 10px; padding: 0 4px; border: 2px solid #e37400; border-radius: 2px; }
.strip-key.straggler { border-color: #d93025; }
table.hosts tr.straggler td:first-child { box-shadow: inset 3px 0 0 #d93025; padding-left: 6px; }
table.hosts td.outlier { color: #e37400; font-weight: 500; }
table.hosts tr.straggler td.outlier { color: #d93025; }
.cycle-pick { color: var(--fg2); display: inline-flex; gap: 6px; align-items: center; margin: 0 0 8px; }
`;

// src/theme.ts
function applyTheme(onDark) {
  const style = document.createElement("style");
  style.textContent = CSS;
  document.head.appendChild(style);
  const top = parentWindow();
  const apply = () => {
    const dark = !!top && top.document.body.classList.contains("dark-mode");
    document.body.classList.toggle("dark", dark);
    onDark(dark);
  };
  apply();
  if (top) new MutationObserver(apply).observe(top.document.body, { attributes: true, attributeFilter: ["class"] });
}

// src/format.ts
var STATUS_ORDER = ["critical", "warning", "info", "pass", "not-applicable"];
function statusRank(s) {
  const i = STATUS_ORDER.indexOf(s);
  return i < 0 ? STATUS_ORDER.length : i;
}
function statusLabel(s) {
  return s === "not-applicable" ? "n/a" : s;
}
function fmtPct(v, digits = 1) {
  if (v === null || v === void 0 || !Number.isFinite(v)) return "n/a";
  return `${v.toFixed(digits)}%`;
}
function fmtDuration(ms) {
  if (ms === null || ms === void 0 || !Number.isFinite(ms)) return "n/a";
  const a = Math.abs(ms);
  if (a >= 1e3) return `${(ms / 1e3).toFixed(a >= 1e4 ? 1 : 2)} s`;
  if (a >= 1) return `${ms.toFixed(a >= 100 ? 1 : 2)} ms`;
  if (a >= 1e-3) return `${(ms * 1e3).toFixed(a >= 0.1 ? 0 : 1)} µs`;
  if (a === 0) return "0 ms";
  return `${(ms * 1e6).toFixed(0)} ns`;
}
function fmtWindow(startMs, endMs) {
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) return "n/a";
  const d = Math.abs(endMs - startMs);
  const decimals = d > 0 ? Math.min(Math.max(Math.ceil(-Math.log10(d)) + 2, 0), 6) : 3;
  return `${startMs.toFixed(decimals)}–${endMs.toFixed(decimals)} ms (${fmtDuration(d)})`;
}
function fmtBytes(n) {
  if (n === null || n === void 0 || !Number.isFinite(n)) return "n/a";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}
function fmtValue(value, unit) {
  if (value === null || value === void 0) return "n/a";
  if (typeof value === "string") return value;
  if (typeof value !== "number" || !Number.isFinite(value)) return String(value);
  if (unit === "%") return fmtPct(value);
  if (unit === "ms") return fmtDuration(value);
  const s = Number.isInteger(value) ? String(value) : value.toFixed(Math.abs(value) >= 100 ? 1 : 3).replace(/\.?0+$/, "");
  return unit ? `${s} ${unit}` : s;
}
function fmtSaving(ms, pct) {
  if (ms === null || ms === void 0) return "";
  return `${fmtDuration(ms)}/step` + (pct === null || pct === void 0 ? "" : ` (${fmtPct(pct)})`);
}
function fmtDurationRange(lo, hi) {
  const a = Math.max(Math.abs(lo), Math.abs(hi));
  const [scale, unit] = a >= 1e3 ? [1e-3, "s"] : a >= 1 || a === 0 ? [1, "ms"] : a >= 1e-3 ? [1e3, "µs"] : [1e6, "ns"];
  const top = a * scale;
  const digits = top > 0 ? Math.max(0, 2 - Math.floor(Math.log10(top))) : 0;
  const ends = (d) => [(lo * scale).toFixed(d), (hi * scale).toFixed(d)];
  const [l, h] = ends(digits);
  if (l !== h) return `${l}–${h} ${unit}`;
  for (let d = digits + 1; d <= digits + 2; d++) {
    const [l2, h2] = ends(d);
    if (l2 !== h2) return `${l2}–${h2} ${unit}`;
  }
  return `${l} ${unit}`;
}
function fmtSavingRange(f) {
  const lo = f.saving_low_ms;
  const hi = f.saving_high_ms;
  if (typeof lo !== "number" || typeof hi !== "number" || !Number.isFinite(lo) || !Number.isFinite(hi)) return "";
  return `${fmtDurationRange(lo, hi)}/step`;
}
function savingText(f) {
  const range = fmtSavingRange(f);
  return range ? `saves ${range}` : fmtSaving(f.saving_ms, f.saving_pct);
}
var NAME_MAX = 60;
function shortName(name, max = NAME_MAX) {
  return name.length <= max ? name : name.slice(0, max - 1) + "…";
}

// src/views/common.ts
var PROBLEMS = ["critical", "warning", "info"];
function chip(status) {
  const c = el("span", { class: "chip", "data-status": status }, statusLabel(status));
  c.style.background = STATUS_COLORS[status] ?? "#80868b";
  return c;
}
function card(id, title, ...children) {
  return el("section", { class: "card", id }, el("h2", {}, title), ...children);
}

// src/views/compare.ts
var VERDICT_COLORS = {
  fixed: STATUS_COLORS.pass,
  better: "#34a853",
  new: STATUS_COLORS.critical,
  worse: STATUS_COLORS.warning,
  exposed: "#80868b",
  unchanged: STATUS_COLORS["not-applicable"]
};
function signed(v, unit = "ms") {
  if (v === null) return "—";
  const s = unit === "ms" ? fmtDuration(Math.abs(v)) : `${Math.abs(v).toFixed(1)} ${unit}`;
  return `${v < 0 ? "−" : v > 0 ? "+" : "±"}${s}`;
}
function verdictChip(v) {
  const c = el("span", { class: "chip verdict", "data-verdict": v }, v);
  c.style.background = VERDICT_COLORS[v] ?? "#80868b";
  return c;
}
var STEP_WORDS = {
  faster: "faster",
  slower: "slower",
  same: "unchanged (within noise)",
  uncertain: "uncertain",
  unknown: "unknown"
};
function interval(iv, what = "95% interval") {
  if (!iv) return "";
  return `, ${what} ${signed(iv[0])} to ${signed(iv[1])}`;
}
function pctOf(v) {
  return v === null ? "" : ` (${v > 0 ? "+" : ""}${v.toFixed(1)}%)`;
}
function band(e) {
  const p = (v) => `${v > 0 ? "+" : v < 0 ? "−" : "±"}${Math.abs(v).toFixed(1)}%`;
  return `${p(e.low_pct)} to ${p(e.high_pct)}`;
}
function basisText(d) {
  const v = d.verdict;
  const a = d.apart;
  let where;
  let why;
  if (v.basis === "unprofiled" && a) {
    where = `on the steps without the profiler, as the model estimates them (${fmtDuration(a.base.step_ms)} → ${fmtDuration(a.new.step_ms)})`;
    why = ` (the model's measured error: ${band(a.base.error)} before, ${band(a.new.error)} after)`;
  } else {
    where = "on the captured steps";
    const s = d.steps.interval_ms;
    const widened = a && v.interval_ms && s && (v.interval_ms[0] !== s[0] || v.interval_ms[1] !== s[1]);
    why = widened && a ? ` (the steps' 95% interval, widened by the profiler's cost, ${fmtDuration(a.base.profiler_ms)} → ${fmtDuration(a.new.profiler_ms)} a step)` : v.interval_ms ? " (the steps' 95% interval)" : " (too few steps for an interval: by size alone)";
  }
  const reason = v.reason ? `; ${v.reason}` : "";
  return `${STEP_WORDS[v.verdict] ?? v.verdict}, ${where}: ${signed(v.delta_ms)}${pctOf(v.delta_pct)}${interval(v.interval_ms, "interval")}${why}${reason}`;
}
function compareView(d, back, swap) {
  const s = d.steps;
  const noise = d.summary.within_noise;
  const head = card(
    "comparison",
    "Comparison",
    el(
      "p",
      { class: "compare-title" },
      el("span", { class: "muted" }, "before "),
      el("strong", { id: "compare-before" }, d.base.run),
      ` (${d.base.host})`,
      el("span", { class: "muted" }, " → after "),
      el("strong", { id: "compare-after" }, d.new.run),
      ` (${d.new.host})`,
      " ",
      el(
        "button",
        { type: "button", id: "compare-swap", title: "Exchange before and after", onclick: swap },
        "Swap before/after"
      ),
      " ",
      el("button", { type: "button", id: "compare-back", onclick: back }, "Back to the run")
    ),
    el(
      "p",
      { id: "compare-steps" },
      "Step time ",
      el("strong", {}, `${fmtDuration(s.base.mean_ms)} ± ${fmtDuration(s.base.stdev_ms)}`),
      ` (${s.base.count} steps) → `,
      el("strong", {}, `${fmtDuration(s.new.mean_ms)} ± ${fmtDuration(s.new.stdev_ms)}`),
      ` (${s.new.count} steps), as captured: `,
      el("strong", {}, `${signed(s.delta_ms)}${pctOf(s.delta_pct)}`),
      ` per step${interval(s.interval_ms)}.`
    ),
    // green or red only for a verdict its basis supports; an uncertain one in the text's colour
    el(
      "p",
      { id: "compare-basis", class: `step-${d.verdict.verdict}` },
      "Verdict: ",
      el("strong", {}, basisText(d)),
      "."
    ),
    ...d.realised ? [
      el(
        "p",
        { id: "compare-realised", "data-inside": String(d.realised.inside) },
        "Predicted against realised: ",
        el("strong", {}, d.realised.sentence),
        "."
      )
    ] : [],
    el(
      "p",
      { id: "compare-summary" },
      ...["fixed", "new", "worse", "better", "exposed"].flatMap((k) => [
        verdictChip(k),
        " ",
        d.summary[k].length ? d.summary[k].join(", ") : "none",
        "  "
      ])
    ),
    ...noise.length ? [el("p", { id: "compare-noise", class: "muted" }, `Unchanged (within noise): ${noise.join(", ")}.`)] : []
  );
  return el("div", { class: "compare" }, head, breakdownCard(d), checksCard(d), moversCard(d));
}
function breakdownCard(d) {
  const rows = d.breakdown_ms;
  const total = (k) => rows.reduce((a, r) => a + (r[k] ?? 0), 0);
  const max = Math.max(total("base_ms"), total("new_ms"), 1e-9);
  const W3 = 640;
  const H3 = 70;
  const g = svg("svg", {
    viewBox: `0 0 ${W3} ${H3}`,
    width: "100%",
    role: "img",
    "aria-label": "Step time breakdown, base and new"
  });
  ["base_ms", "new_ms"].forEach((k, i) => {
    let x = 50;
    const y = 8 + i * 30;
    g.appendChild(
      svg("text", { x: 0, y: y + 15, "font-size": 11, fill: "currentColor" }, k === "base_ms" ? "base" : "new")
    );
    for (const r of rows) {
      const v = r[k] ?? 0;
      if (v <= 0) continue;
      const w = v / max * (W3 - 60);
      g.appendChild(
        svg(
          "rect",
          { x, y, width: w, height: 22, fill: CATEGORY_COLORS[r.category] ?? "#999" },
          svg(
            "title",
            {},
            `${k === "base_ms" ? "base" : "new"}: ${CATEGORY_LABELS[r.category] ?? r.category} ${fmtDuration(v)}`
          )
        )
      );
      x += w;
    }
  });
  const t = el(
    "table",
    { class: "compare-breakdown" },
    el(
      "tr",
      {},
      el("th", {}, "per step"),
      el("th", { class: "num" }, "base"),
      el("th", { class: "num" }, "new"),
      el("th", { class: "num" }, "delta")
    )
  );
  for (const r of rows) {
    const i = el("i");
    i.style.background = CATEGORY_COLORS[r.category] ?? "#999";
    t.appendChild(
      el(
        "tr",
        { "data-category": r.category },
        el("td", {}, i, " ", CATEGORY_LABELS[r.category] ?? r.category),
        el("td", { class: "num" }, fmtDuration(r.base_ms)),
        el("td", { class: "num" }, fmtDuration(r.new_ms)),
        el("td", { class: "num delta" }, signed(r.delta_ms))
      )
    );
  }
  for (const h of d.headline)
    t.appendChild(
      el(
        "tr",
        { "data-headline": h.key },
        el("td", {}, h.label),
        el("td", { class: "num" }, h.unit === "%" ? fmtPct(h.base) : fmtDuration(h.base)),
        el("td", { class: "num" }, h.unit === "%" ? fmtPct(h.new) : fmtDuration(h.new)),
        el("td", { class: "num delta" }, signed(h.delta, h.unit === "%" ? "pts" : "ms"))
      )
    );
  return card("compare-breakdown-card", "Step time and headline, base and new", g, t);
}
function checksCard(d) {
  const t = el(
    "table",
    { class: "compare-checks" },
    el(
      "tr",
      {},
      el("th", {}, "Check"),
      el("th", {}, "Verdict"),
      el("th", {}, "Before"),
      el("th", {}, "After"),
      el("th", { class: "num" }, "Saving per step")
    )
  );
  const show = el("input", { type: "checkbox", id: "compare-all" });
  const draw = () => {
    while (t.rows.length > 1) t.deleteRow(1);
    for (const c of d.checks) {
      if (c.verdict === "unchanged" && !c.within_noise && !show.checked) continue;
      const own = c.time;
      const measured = own ? el(
        "div",
        { class: "muted noise" },
        `${own.measure}: ${fmtDuration(own.base_ms)} → ${fmtDuration(own.new_ms)} per step, ${signed(own.delta_ms)}${interval(own.interval_ms)}`
      ) : "";
      t.appendChild(
        el(
          "tr",
          { "data-check": c.id, "data-verdict": c.verdict, "data-within-noise": String(c.within_noise) },
          el("td", {}, el("div", { class: "id" }, c.id), el("div", { class: "muted" }, c.new_title ?? c.title), measured),
          el("td", {}, verdictChip(c.verdict), c.within_noise ? el("div", { class: "muted" }, "within noise") : ""),
          el(
            "td",
            {},
            c.base_status ? chip(c.base_status) : "—",
            " ",
            c.label ? fmtValue(c.base_value, c.unit ?? "") : ""
          ),
          el(
            "td",
            {},
            c.new_status ? chip(c.new_status) : "—",
            " ",
            c.label ? fmtValue(c.new_value, c.unit ?? "") : ""
          ),
          el("td", { class: "num" }, `${fmtDuration(c.base_saving_ms)} → ${fmtDuration(c.new_saving_ms)}`)
        )
      );
    }
  };
  show.addEventListener("change", draw);
  draw();
  const unchanged = d.summary.unchanged;
  return card(
    "compare-checks-card",
    "Checks",
    el("label", { for: "compare-all" }, show, ` Show the ${unchanged} unchanged checks`),
    t
  );
}
function moversCard(d) {
  const table = (rows, id) => {
    const t = el(
      "table",
      { class: "movers", id },
      el(
        "tr",
        {},
        el("th", { class: "num" }, "delta"),
        el("th", { class: "num" }, "base"),
        el("th", { class: "num" }, "new"),
        el("th", {}, "name")
      )
    );
    for (const r of rows.filter((x) => Math.abs(x.delta_ms) > 1e-6))
      t.appendChild(
        el(
          "tr",
          {},
          el("td", { class: "num delta" }, signed(r.delta_ms)),
          el("td", { class: "num" }, fmtDuration(r.base_ms)),
          el("td", { class: "num" }, fmtDuration(r.new_ms)),
          el("td", { class: "name", title: r.name }, shortName(r.name))
        )
      );
    return t;
  };
  return card(
    "compare-movers",
    "What moved (device time per step)",
    el("strong", {}, "Kernels"),
    table(d.kernels, "movers-kernels"),
    el("strong", {}, "Ops"),
    table(d.ops, "movers-ops")
  );
}

// src/views/rankstrip.ts
var STRIP_BANDS = [
  ["compute_ms", "Compute"],
  ["collective_ms", "Collective wait"],
  ["step_ms", "Step"]
];
var GUTTER = 118;
var BAND_GAP = 16;
var MAX_COLS = 64;
var MAX_CELL_W = 40;
function stripLayout(n, width) {
  const cols = Math.max(1, Math.min(n, MAX_COLS));
  const rows = Math.max(1, Math.ceil(n / cols));
  const cellW = Math.max(1, Math.min(MAX_CELL_W, (width - GUTTER) / cols));
  const cellH = Math.max(3, Math.min(22, Math.floor(160 / rows)));
  const bandTop = STRIP_BANDS.map((_, b) => BAND_GAP + b * (rows * cellH + BAND_GAP));
  return { cols, rows, cellW, cellH, gutter: GUTTER, bandTop, height: bandTop[bandTop.length - 1] + rows * cellH + 2 };
}
function rankAt(layout, n, x, y) {
  const col = Math.floor((x - layout.gutter) / layout.cellW);
  if (col < 0 || col >= layout.cols) return -1;
  for (const top of layout.bandTop) {
    const row = Math.floor((y - top) / layout.cellH);
    if (y >= top && row < layout.rows) {
      const i = row * layout.cols + col;
      return i < n ? i : -1;
    }
  }
  return -1;
}
function cellOrigin(layout, i, b) {
  return [
    layout.gutter + i % layout.cols * layout.cellW,
    layout.bandTop[b] + Math.floor(i / layout.cols) * layout.cellH
  ];
}
function shade(v, lo, hi) {
  if (v === null || !Number.isFinite(v)) return null;
  return hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
}
function shadeColor(t, dark) {
  const [a, b] = dark ? [
    [40, 52, 74],
    [138, 180, 248]
  ] : [
    [232, 240, 254],
    [23, 78, 166]
  ];
  const c = a.map((x, k) => Math.round(x + (b[k] - x) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
function bandRange(ranks, key) {
  const vs = ranks.map((r) => r[key]).filter((v) => v !== null && Number.isFinite(v));
  return vs.length ? [Math.min(...vs), Math.max(...vs)] : null;
}
var RankStrip = class {
  constructor(ranks, open) {
    this.ranks = ranks;
    this.open = open;
    this.tip = el("div", { class: "tl-tip", id: "rank-tip", role: "status" });
    this.layout = stripLayout(0, 800);
    this.cursor = -1;
    this.dark = false;
    this.ranges = STRIP_BANDS.map(([key]) => bandRange(ranks, key));
    this.canvas = el("canvas", {
      class: "rank-strip",
      id: "rank-strip",
      tabindex: 0,
      role: "img",
      "aria-label": `${ranks.length} ranks: compute, collective wait and step time per rank, the stronger the colour the more; arrow keys move between ranks, Enter opens one`
    });
    this.tip.hidden = true;
    const legend3 = el(
      "div",
      { class: "legend" },
      "Each cell a rank; the stronger the colour, the more (each band on its own scale). ",
      el("span", { class: "strip-key straggler" }, "straggler"),
      el("span", { class: "strip-key outlier" }, "stands out")
    );
    this.element = el("div", { class: "tl-wrap strip-wrap" }, this.canvas, this.tip, legend3);
    this.canvas.addEventListener("mousemove", (e) => this.hover(this.indexAt(e)));
    this.canvas.addEventListener("mouseleave", () => this.hover(-1, false));
    this.canvas.addEventListener("click", (e) => {
      const i = this.indexAt(e);
      if (i >= 0) this.open(this.ranks[i].host);
    });
    this.canvas.addEventListener("keydown", (e) => this.key(e));
    this.canvas.addEventListener("blur", () => this.hover(-1, false));
    const watch = new MutationObserver(() => this.canvas.isConnected ? this.draw() : watch.disconnect());
    watch.observe(document.body, { attributes: true, attributeFilter: ["class"] });
    let width = 0;
    const resize = new ResizeObserver(() => {
      if (!this.canvas.isConnected) return resize.disconnect();
      if (this.canvas.clientWidth !== width) {
        width = this.canvas.clientWidth;
        this.draw();
      }
    });
    resize.observe(this.canvas);
  }
  indexAt(e) {
    const box = this.canvas.getBoundingClientRect();
    return rankAt(this.layout, this.ranks.length, e.clientX - box.left, e.clientY - box.top);
  }
  key(e) {
    const n = this.ranks.length;
    const step = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: this.layout.cols,
      ArrowUp: -this.layout.cols
    };
    if (e.key in step) {
      e.preventDefault();
      const from = this.cursor < 0 ? 0 : this.cursor + step[e.key];
      this.hover(Math.min(n - 1, Math.max(0, from)));
    } else if (e.key === "Enter" && this.cursor >= 0) {
      this.open(this.ranks[this.cursor].host);
    }
  }
  /** Lays the cells out for the canvas's width and paints them; the layout goes in `data-layout` (the
   * browser tests click a rank's cell from it). */
  draw() {
    this.dark = document.body.classList.contains("dark");
    const width = Math.max(this.canvas.clientWidth || this.element.clientWidth || 800, GUTTER + 40);
    this.layout = stripLayout(this.ranks.length, width);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.style.height = `${this.layout.height}px`;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(this.layout.height * dpr);
    const g = this.canvas.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, this.layout.height);
    const fg = this.dark ? "#e8eaed" : "#212121";
    const fg2 = this.dark ? "#9aa0a6" : "#616161";
    const { cellW, cellH } = this.layout;
    const gap = cellW >= 4 ? 1 : 0;
    g.font = "12px Roboto, Arial, sans-serif";
    g.textBaseline = "top";
    STRIP_BANDS.forEach(([key, label], b) => {
      const top = this.layout.bandTop[b];
      const range = this.ranges[b];
      g.fillStyle = fg;
      g.fillText(label, 0, top);
      g.fillStyle = fg2;
      g.fillText(range ? `${fmtDuration(range[0])} – ${fmtDuration(range[1])}` : "n/a", 0, top + 14);
      for (let i = 0; i < this.ranks.length; i++) {
        const [x, y] = cellOrigin(this.layout, i, b);
        const t = range ? shade(this.ranks[i][key], range[0], range[1]) : null;
        g.fillStyle = t === null ? this.dark ? "#3c4043" : "#e0e0e0" : shadeColor(t, this.dark);
        g.fillRect(x, y, Math.max(1, cellW - gap), Math.max(1, cellH - gap));
      }
      for (let i = 0; i < this.ranks.length; i++) {
        const r = this.ranks[i];
        const odd = r.outliers.includes(key);
        if (!r.straggler && !odd && i !== this.cursor) continue;
        const [x, y] = cellOrigin(this.layout, i, b);
        g.strokeStyle = i === this.cursor ? fg : r.straggler ? "#d93025" : "#e37400";
        g.lineWidth = 2;
        g.strokeRect(x + 1, y + 1, Math.max(1, cellW - gap - 2), Math.max(1, cellH - gap - 2));
      }
    });
    this.canvas.dataset.layout = JSON.stringify(this.layout);
    this.canvas.dataset.ranks = String(this.ranks.length);
  }
  /** Show rank `i`'s numbers beside its cell (-1 hides them). */
  hover(i, keep = true) {
    const was = this.cursor;
    this.cursor = keep ? i : -1;
    if (was !== this.cursor) this.draw();
    if (i < 0 || !keep) {
      this.tip.hidden = true;
      this.canvas.style.cursor = "";
      return;
    }
    const r = this.ranks[i];
    this.canvas.style.cursor = "pointer";
    this.tip.textContent = "";
    this.tip.append(
      el("div", { class: "tl-tip-title" }, r.label, r.straggler ? " · straggler" : ""),
      el(
        "div",
        {},
        `compute ${fmtDuration(r.compute_ms)} · collectives ${fmtDuration(r.collective_ms)} · step ${fmtDuration(r.step_ms)}`
      ),
      el("div", { class: "muted" }, r.host)
    );
    this.tip.hidden = false;
    const [x, y] = cellOrigin(this.layout, i, 0);
    const w = this.canvas.clientWidth || 800;
    this.tip.style.left = `${Math.min(x + this.layout.cellW + 6, Math.max(0, w - 360))}px`;
    this.tip.style.top = `${y}px`;
  }
};

// src/views/hosts.ts
function collectiveTimeChecks(catalogue) {
  return catalogue.filter((c) => c.collective_time).map((c) => c.id);
}
function jobWaitText(runs, host) {
  for (const job of runs) {
    const rank = job.ranks.find((r) => r.host === host);
    if (!rank?.straggler_wait_ms) continue;
    const who = job.ranks.filter((r) => r.straggler).map((r) => r.label).join(", ");
    return `In the job: ${fmtDuration(rank.straggler_wait_ms)} of it per step is waiting for the straggler ${who} (job.straggler): fix that first.`;
  }
  return "";
}
function shownReports(reports, across) {
  const picked = new Set((across?.ranks ?? []).map((r) => r.host));
  return picked.size ? reports.filter((r) => picked.has(r.host) || r.failure) : reports;
}
function jobRows(reports, across) {
  const ranks = new Map((across?.ranks ?? []).map((r) => [r.host, r]));
  return shownReports(reports, across).map((r) => {
    const worst = PROBLEMS.slice(0, 2).map((s) => r.checks.find((x) => x.status === s)).find((x) => x !== void 0);
    const m = r.rank_measures;
    const k = ranks.get(r.host);
    return {
      host: r.host,
      label: k?.label ?? r.host,
      rank: k?.rank ?? m?.rank ?? null,
      straggler: !!k?.straggler,
      outliers: k?.outliers ?? [],
      step_ms: r.steps?.mean_ms ?? null,
      busy: r.headline?.device_busy_pct ?? null,
      compute_ms: m?.compute_ms ?? null,
      collective_ms: m?.collective_ms ?? null,
      exposed_ms: m?.exposed_collective_ms ?? null,
      input_ms: m?.input_ms ?? null,
      wait_ms: k?.straggler_wait_ms ?? null,
      status: worst?.status ?? (r.failure ? "error" : "pass"),
      worst: worst?.title ?? r.errors[0] ?? "no problem found",
      worst_id: worst?.id ?? null
    };
  });
}
var STATUS_RANK = { critical: 0, error: 1, warning: 2, info: 3, pass: 4 };
function sortJobRows(rows, key, descending) {
  const value = (r) => key === "status" ? -(STATUS_RANK[r.status] ?? 5) : key === "rank" ? r.rank ?? null : r[key];
  const order = new Map(rows.map((r, i) => [r, i]));
  return [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    if (x === null || y === null) return x === y ? order.get(a) - order.get(b) : x === null ? 1 : -1;
    return (descending ? y - x : x - y) || order.get(a) - order.get(b);
  });
}
function cycleLabel(across, k) {
  const c = across.cycle_ranks[k];
  const ranks = across.ranks_captured;
  const head = `cycle ${k + 1} of ${across.cycles}`;
  if (!c) return head;
  if (c.with_steps === ranks) return `${head} · ${ranks} ranks`;
  return `${head} · ${c.with_steps} of ${ranks} ranks with a step`;
}
var JobView = class {
  constructor(reports, across, options) {
    this.options = options;
    this.strip = null;
    this.sort = null;
    this.table = el("table", { class: "hosts", id: "rank-table" });
    const c = card("all-hosts", across ? `Job ${across.run}` : "All hosts of this run");
    this.rows = jobRows(reports, across);
    if (across) {
      const stragglers = across.ranks.filter((r) => r.straggler).map((r) => r.label);
      const captured = across.world_size ? `${across.ranks_captured} of ${across.world_size} ranks` : `${across.ranks_captured} rank${across.ranks_captured === 1 ? "" : "s"}`;
      const cycles = across.cycles > 1 ? `, ${across.cycles} profiling cycles (cycle ${across.cycle + 1} compared)` : "";
      c.appendChild(
        el(
          "p",
          { id: "stragglers" },
          `Job ${across.run}: ${captured}${cycles}. `,
          across.ranks.length < 2 ? "" : stragglers.length ? `Straggler (its own work an outlier while the other ranks wait in collectives): ${stragglers.join(", ")}.` : "No straggler: no rank works longer while the others wait in collectives."
        )
      );
      if (across.cycles > 1) c.appendChild(this.cyclePicker(across));
      const fired = across.checks.filter((x) => x.status !== "pass");
      if (fired.length)
        c.appendChild(
          el(
            "ul",
            { id: "job-checks" },
            ...fired.map(
              (x) => el("li", { "data-check": x.id }, chip(x.status), " ", el("b", {}, x.title), ". ", x.summary)
            )
          )
        );
      if (across.ranks.length) {
        this.strip = new RankStrip(across.ranks, options.open);
        c.appendChild(this.strip.element);
      }
    }
    c.appendChild(this.table);
    this.element = c;
    this.drawTable();
  }
  /** Show it in `main`; `arrived` is when its answer was parsed. */
  mount(main, arrived) {
    main.appendChild(el("div", { class: "layout single" }, this.element));
    this.strip?.draw();
    requestAnimationFrame(() => {
      this.element.dataset.paintedAt = performance.now().toFixed(1);
      this.element.dataset.renderMs = (performance.now() - arrived).toFixed(1);
    });
  }
  cyclePicker(across) {
    const select = el("select", { id: "cycle-select", "aria-label": "Profiling cycle" });
    for (let k = 0; k < across.cycles; k++) select.appendChild(new Option(cycleLabel(across, k), String(k)));
    select.value = String(across.cycle);
    select.addEventListener("change", () => this.options.pickCycle(Number(select.value)));
    return el(
      "label",
      { for: "cycle-select", class: "cycle-pick", title: "The profiling cycle whose ranks are compared" },
      "Profiling cycle ",
      select
    );
  }
  drawTable() {
    const cols = [
      ["rank", "Rank", ""],
      ["step_ms", "Step", "num"],
      ["busy", "GPU busy", "num"],
      ["compute_ms", "Compute", "num"],
      ["collective_ms", "Collectives (exposed)", "num"],
      ["input_ms", "Input wait", "num"],
      ["status", "Worst finding", ""]
    ];
    this.table.textContent = "";
    this.table.appendChild(
      el(
        "tr",
        {},
        ...cols.map(([key, label, cls]) => {
          const on = this.sort?.key === key;
          return el(
            "th",
            { class: cls, "aria-sort": on ? this.sort.descending ? "descending" : "ascending" : "none" },
            el(
              "button",
              {
                type: "button",
                class: "sort",
                "data-key": key,
                onclick: () => {
                  this.sort = { key, descending: on ? !this.sort.descending : key !== "rank" };
                  this.drawTable();
                }
              },
              label,
              on ? this.sort.descending ? " ▼" : " ▲" : ""
            )
          );
        })
      )
    );
    const rows = this.sort ? sortJobRows(this.rows, this.sort.key, this.sort.descending) : this.rows;
    const median = medians(this.rows);
    const num = (r, key, text, measure = key) => {
      const odd = r.outliers.includes(measure);
      const v = r[key];
      const up = odd && v !== null && v > (median[key] ?? v);
      return el(
        "td",
        odd ? { class: "num outlier", title: `${up ? "more" : "less"} than the other ranks` } : { class: "num" },
        text,
        odd ? el(
          "span",
          { class: "outlier-mark", "aria-label": up ? "stands out high" : "stands out low" },
          up ? " ▲" : " ▼"
        ) : null
      );
    };
    for (const r of rows) {
      const row = el(
        "tr",
        {
          class: r.straggler ? "host-row straggler" : "host-row",
          tabindex: 0,
          "data-host": r.host,
          "data-rank": r.rank ?? void 0,
          "data-outliers": r.outliers.join(" ") || void 0,
          role: "link"
        },
        el("td", {}, r.label, r.straggler ? el("span", { class: "badge" }, "straggler") : null),
        num(r, "step_ms", fmtDuration(r.step_ms)),
        el("td", { class: "num" }, fmtPct(r.busy)),
        num(r, "compute_ms", fmtDuration(r.compute_ms)),
        num(
          r,
          "collective_ms",
          r.collective_ms != null ? `${fmtDuration(r.collective_ms)} (${fmtDuration(r.exposed_ms)})` : "—"
        ),
        num(r, "input_ms", fmtDuration(r.input_ms)),
        el("td", {}, chip(r.status), " ", r.worst, waitNote(r, this.options.collectiveTime))
      );
      row.addEventListener("click", () => this.options.open(r.host));
      row.addEventListener("keydown", (e) => {
        if (e.key === "Enter") this.options.open(r.host);
      });
      this.table.appendChild(row);
    }
  }
};
function waitText(r, collectiveTime) {
  if (!r.wait_ms || !collectiveTime.includes(r.worst_id ?? "")) return "";
  return ` (${fmtDuration(r.wait_ms)} of it waiting for the straggler)`;
}
function waitNote(r, collectiveTime) {
  const text = waitText(r, collectiveTime);
  return text ? el("span", { class: "muted wait-note" }, text) : null;
}
function medians(rows) {
  const out = {};
  for (const key of ["step_ms", "compute_ms", "collective_ms", "input_ms"]) {
    const v = rows.map((r) => r[key]).filter((x) => x !== null).sort((a, b) => a - b);
    if (v.length) out[key] = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
  return out;
}

// src/views/messages.ts
function progressView(text, bar = false) {
  const label = el("p", { id: "progress-label" }, text);
  const fill2 = el("div");
  fill2.style.width = "0%";
  const element = el("div", { class: "message", id: "progress" }, label, bar && el("div", { class: "progress" }, fill2));
  const set = (progress) => {
    const p = Math.round(100 * progress);
    fill2.style.width = `${p}%`;
    label.textContent = shown(`${text} ${p}%`);
  };
  return { element, set };
}
function errorView(message) {
  return el("div", { class: "message" }, el("p", { class: "error", role: "alert" }, message));
}
function emptyView(legacy, logdirFile) {
  return el(
    "div",
    { class: "message" },
    logdirFile ? el(
      "p",
      { id: "logdir-file" },
      `The logdir is a profile file, ${logdirFile}: TensorBoard reads runs from folders. Pass its folder: tensorboard --logdir <the folder that holds ${logdirFile}>.`
    ) : el("p", {}, "No profile runs in this logdir."),
    el(
      "p",
      { class: "muted" },
      "TensorFlow and JAX write <logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb: the Keras TensorBoard callback (profile_batch=(10, 15)) under log_dir/train, tf.profiler.experimental.start(logdir), jax.profiler.trace(logdir)."
    ),
    el(
      "p",
      { class: "muted" },
      "PyTorch writes <logdir>/<run>/<worker>.<span>.pt.trace.json or .pt.trace.json.gz: torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir/run))."
    ),
    ...legacy.map((l) => el("p", { class: "muted" }, `${l.run}: ${l.message}`))
  );
}

// src/views/overview.ts
var RANK = { critical: 0, error: 1, warning: 2, info: 3, pass: 4 };
function overviewRows(runs) {
  const rows = [];
  for (const r of runs.runs) {
    if (r.job)
      rows.push({
        run: r.run,
        host: ALL_HOSTS,
        job: true,
        ranks: r.job.ranks ?? r.hosts.length,
        state: "done",
        progress: 1,
        status: r.job.status,
        title: r.job.title ?? "no problem found across ranks",
        step_ms: r.job.step_ms,
        busy: r.job.device_busy_pct,
        saving: r.job.top_saving_ms,
        note: r.job.note
      });
    for (const h of r.hosts) {
      const a = h.analysis;
      const done = a.state === "done";
      rows.push({
        run: r.run,
        host: h.host,
        job: false,
        ranks: 0,
        state: a.state,
        progress: a.progress,
        status: a.state === "error" ? "error" : done ? a.worst?.status ?? "pass" : a.state,
        title: a.state === "error" ? a.error ?? "could not be read" : done ? a.worst?.title ?? "no problem found" : "",
        step_ms: a.step_ms ?? null,
        busy: a.device_busy_pct ?? null,
        saving: a.top_saving_ms ?? 0,
        note: a.worst?.note ?? false
      });
    }
  }
  return rows;
}
function overviewProgress(runs) {
  const out = { done: 0, total: 0, bytesRead: 0, bytes: 0 };
  for (const r of runs.runs)
    for (const h of r.hosts) {
      const finished = h.analysis.state === "done" || h.analysis.state === "error";
      out.total += 1;
      out.done += finished ? 1 : 0;
      out.bytes += h.size;
      out.bytesRead += finished ? h.size : h.size * Math.min(Math.max(h.analysis.progress || 0, 0), 1);
    }
  return out;
}
function progressText(p) {
  return `Analysing: ${p.done} of ${p.total} profiles done, ${fmtBytes(p.bytesRead)} of ${fmtBytes(p.bytes)} read`;
}
function worstFirst(a, b) {
  return Number(a.note) - Number(b.note) || b.saving - a.saving || (RANK[a.status] ?? 5) - (RANK[b.status] ?? 5);
}
function sortRows(rows, key, descending) {
  if (key === "status") {
    const out2 = [...rows].sort(
      (a, b) => (RANK[a.status] ?? 5) - (RANK[b.status] ?? 5) || worstFirst(a, b) || a.run.localeCompare(b.run) || a.host.localeCompare(b.host)
    );
    return descending ? out2.reverse() : out2;
  }
  if (key === "worst") {
    const byRun = /* @__PURE__ */ new Map();
    for (const r of rows) byRun.set(r.run, [...byRun.get(r.run) ?? [], r]);
    const groups = [...byRun.values()].map(
      (g) => g.sort((a, b) => Number(b.job) - Number(a.job) || worstFirst(a, b) || a.host.localeCompare(b.host))
    );
    const best = (g) => [...g].sort(worstFirst)[0];
    groups.sort((a, b) => worstFirst(best(a), best(b)) || a[0].run.localeCompare(b[0].run));
    const out2 = groups.flat();
    return descending ? out2.reverse() : out2;
  }
  const value = (r) => r[key] ?? (typeof r[key] === "string" ? "" : -Infinity);
  const out = [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return c || a.run.localeCompare(b.run) || a.host.localeCompare(b.host);
  });
  return descending ? out.reverse() : out;
}
var OverviewView = class {
  constructor(open) {
    this.open = open;
    this.rows = [];
    this.sort = { key: "worst", descending: false };
    this.table = el("table", { class: "overview", id: "overview-table" });
    this.note = el("p", { class: "muted", id: "overview-note" });
    this.bar = el("div");
    this.progress = el(
      "div",
      { class: "progress", id: "overview-progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100" },
      this.bar
    );
    this.stopped = false;
    this.element = card("overview", "All runs", this.note, this.progress, this.table);
  }
  stop() {
    this.stopped = true;
  }
  async start() {
    let last = null;
    while (!this.stopped) {
      const res = await getJson("runs", { analyse: "all" });
      if (this.stopped) break;
      if (res.status !== 200) {
        this.note.textContent = shown(`Could not list runs: ${errorMessage(res.body)}`);
        return null;
      }
      last = res.body;
      this.rows = overviewRows(res.body);
      const pending = this.rows.filter((r) => r.state !== "done" && r.state !== "error").length;
      const p = overviewProgress(res.body);
      const pct = p.bytes ? Math.round(100 * p.bytesRead / p.bytes) : 100;
      this.bar.style.width = `${pct}%`;
      this.progress.setAttribute("aria-valuenow", String(pct));
      this.progress.hidden = !pending;
      this.element.dataset.progress = `${p.done}/${p.total}`;
      this.note.textContent = pending ? `${progressText(p)}…` : `${this.rows.length} profile${this.rows.length === 1 ? "" : "s"}: click one to open it; click a column to sort.`;
      this.element.dataset.pending = String(pending);
      this.draw();
      if (!pending) break;
      await new Promise((r) => setTimeout(r, 1e3));
    }
    return last;
  }
  draw() {
    const cols = [
      ["status", "Status", ""],
      ["run", "Run", ""],
      ["host", "Host", ""],
      ["title", "Worst finding", ""],
      ["step_ms", "Step", "num"],
      ["busy", "GPU busy", "num"],
      ["saving", "Top saving", "num"]
    ];
    this.table.textContent = "";
    if (this.sort.key === "worst")
      this.table.appendChild(
        el("caption", { id: "overview-order" }, "Worst first: the largest saving first, then the most severe status")
      );
    this.table.appendChild(
      el(
        "tr",
        {},
        ...cols.map(([key, label, cls]) => {
          const on = this.sort.key === key;
          return el(
            "th",
            { class: cls, "aria-sort": on ? this.sort.descending ? "descending" : "ascending" : "none" },
            el(
              "button",
              {
                type: "button",
                class: "sort",
                "data-key": key,
                onclick: () => {
                  this.sort = { key, descending: on ? !this.sort.descending : key === "saving" || key === "step_ms" };
                  this.draw();
                }
              },
              label,
              on ? this.sort.descending ? " ▼" : " ▲" : ""
            )
          );
        })
      )
    );
    for (const r of sortRows(this.rows, this.sort.key, this.sort.descending)) {
      const running = r.state !== "done" && r.state !== "error";
      const row = el(
        "tr",
        {
          class: r.job ? "run-row job-row" : "run-row",
          tabindex: 0,
          "data-run": r.run,
          "data-host": r.host,
          "data-status": r.status,
          role: "link"
        },
        el("td", {}, chip(running ? "not-applicable" : r.status)),
        el("td", { class: "run-name" }, r.run),
        el("td", {}, r.job ? `all ${r.ranks} ranks (the job)` : r.host),
        el("td", {}, running ? `${r.state}${r.progress ? ` ${Math.round(100 * r.progress)}%` : ""}…` : r.title),
        el("td", { class: "num" }, fmtDuration(r.step_ms)),
        el("td", { class: "num" }, fmtPct(r.busy)),
        el("td", { class: "num" }, r.saving ? `${fmtDuration(r.saving)}/step` : "—")
      );
      row.addEventListener("click", () => this.open(r.run, r.host));
      row.addEventListener("keydown", (e) => {
        if (e.key === "Enter") this.open(r.run, r.host);
      });
      this.table.appendChild(row);
    }
  }
};

// src/scale.ts
var MIN_SPAN_MS = 1e-3;
function clampWindow(w, extent) {
  const full = Math.max(extent.end - extent.start, MIN_SPAN_MS);
  let span = Math.min(Math.max(w.end - w.start, MIN_SPAN_MS), full);
  let start = Math.min(Math.max(w.start, extent.start), extent.start + full - span);
  if (!Number.isFinite(start)) start = extent.start;
  if (!Number.isFinite(span)) span = full;
  return { start, end: start + span };
}
function toX(w, width, t) {
  return (t - w.start) / (w.end - w.start) * width;
}
function toTime(w, width, x) {
  return w.start + x / width * (w.end - w.start);
}
function zoom(w, factor, anchorFrac, extent) {
  const anchor = w.start + anchorFrac * (w.end - w.start);
  const span = (w.end - w.start) * factor;
  return clampWindow({ start: anchor - anchorFrac * span, end: anchor - anchorFrac * span + span }, extent);
}
function pan(w, frac, extent) {
  const d = (w.end - w.start) * frac;
  return clampWindow({ start: w.start + d, end: w.end + d }, extent);
}
function fit(start, end, extent, margin = 0.15) {
  const span = Math.max(end - start, MIN_SPAN_MS);
  return clampWindow({ start: start - span * margin, end: end + span * margin }, extent);
}
function ticks(w, target = 8) {
  const span = w.end - w.start;
  if (!(span > 0)) return [];
  const raw = span / target;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let t = Math.ceil(w.start / step) * step; t <= w.end + 1e-12; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}
function tickLabels(tickTimes, w) {
  const span = w.end - w.start;
  const [unit, scale] = span >= 2e3 ? ["s", 1e-3] : span >= 2 ? ["ms", 1] : span >= 2e-3 ? ["µs", 1e3] : ["ns", 1e6];
  const step = tickTimes.length > 1 ? Math.abs(tickTimes[1] - tickTimes[0]) * scale : span * scale;
  const decimals = step > 0 ? Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9))) : 0;
  return tickTimes.map((t) => `${(t * scale).toFixed(decimals)} ${unit}`);
}
function lanes(spans, gap = 2, maxLanes = 4) {
  const order = spans.map((_, i) => i).sort((a, b) => spans[a][0] - spans[b][0]);
  const ends = [];
  const out = new Array(spans.length).fill(0);
  for (const i of order) {
    const [x0, x1] = spans[i];
    let lane = ends.findIndex((e) => e + gap <= x0);
    if (lane < 0) lane = ends.length < maxLanes ? ends.length : maxLanes - 1;
    ends[lane] = Math.max(ends[lane] ?? -Infinity, x1);
    out[i] = lane;
  }
  return out;
}

// src/timeline.ts
var LABEL_W = 240;
var AXIS_H = 20;
var STEP_H = 16;
var LANE_H = 7;
var ROW_H = 17;
function trackHolds(track, where) {
  if (where.thread !== null) {
    if (track.kind !== "host") return false;
    const group = where.thread.split("/")[0].split(" (")[0];
    return (track.threads ?? []).some((t) => t === where.thread) || track.id === `host/${group}`;
  }
  if (where.device_id === null || track.kind !== "stream" || track.device_id !== where.device_id) return false;
  return where.stream_id === null || track.stream_id === where.stream_id;
}
var TimelineView = class {
  constructor(opts) {
    this.opts = opts;
    this.extent = { start: 0, end: 1 };
    this.home = { start: 0, end: 1 };
    this.window = { start: 0, end: 1 };
    this.data = null;
    this.highlight = null;
    this.hits = [];
    this.markTop = AXIS_H + STEP_H;
    this.rowsTop = AXIS_H + STEP_H + LANE_H + 4;
    this.seq = 0;
    this.hoverSeq = 0;
    this.drag = null;
    this.dark = false;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "timeline";
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute(
      "aria-label",
      "Timeline of GPU streams and host threads. Arrow keys pan, plus and minus zoom, 0 shows the steps."
    );
    this.canvas.dataset.loaded = "0";
    this.info = document.createElement("div");
    this.info.className = "muted tl-info";
    this.tip = document.createElement("div");
    this.tip.className = "tl-tip";
    this.tip.hidden = true;
    this.tip.setAttribute("role", "tooltip");
    this.element = document.createElement("div");
    this.element.className = "tl-wrap";
    this.element.append(this.canvas, this.tip);
    this.canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.canvas.addEventListener("mousedown", (e) => this.onDown(e));
    this.canvas.addEventListener("mouseleave", () => this.hideTip());
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", () => this.onUp());
    this.canvas.addEventListener("keydown", (e) => this.onKey(e));
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }
  setDark(dark) {
    this.dark = dark;
    this.draw();
  }
  /** A new profile: frame its steps (the whole capture when it has none). */
  reset(extentMs, steps) {
    this.extent = { start: 0, end: Math.max(extentMs, 1e-3) };
    this.home = steps && steps.end > steps.start ? fit(steps.start, steps.end, this.extent, 0.02) : { ...this.extent };
    this.highlight = null;
    this.canvas.dataset.highlight = "";
    this.canvas.dataset.highlightRows = "";
    this.data = null;
    this.setWindow({ ...this.home });
  }
  get visible() {
    return this.window;
  }
  setWindow(w) {
    this.window = clampWindow(w, this.extent);
    this.canvas.dataset.windowStart = String(this.window.start);
    this.canvas.dataset.windowEnd = String(this.window.end);
    this.draw();
    this.schedule();
  }
  /** Zoom to a finding's evidence window and mark it on the rows that hold it. */
  show(check, index, start, end, where = null) {
    this.highlight = { check, index, start, end, where };
    this.canvas.dataset.highlight = `${check}:${index}`;
    this.canvas.dataset.highlightStart = String(start);
    this.canvas.dataset.highlightEnd = String(end);
    this.setWindow(fit(start, end, this.extent));
  }
  /** Zoom to a time range (a step clicked in the breakdown). */
  zoomTo(start, end) {
    this.setWindow(fit(start, end, this.extent, 0.05));
  }
  zoomBy(factor) {
    this.setWindow(zoom(this.window, factor, 0.5, this.extent));
  }
  panBy(frac) {
    this.setWindow(pan(this.window, frac, this.extent));
  }
  /** Back to the steps. */
  resetZoom() {
    this.setWindow({ ...this.home });
  }
  showAll() {
    this.setWindow({ ...this.extent });
  }
  plotWidth() {
    return Math.max(50, this.canvas.clientWidth - LABEL_W);
  }
  schedule() {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => void this.fetch(), 120);
  }
  async fetch() {
    const id = ++this.seq;
    const w = { ...this.window };
    const res = await this.opts.load(w, Math.round(this.plotWidth()));
    if (id !== this.seq || !res) return;
    this.data = res;
    this.canvas.dataset.tracks = String(res.tracks.length);
    this.canvas.dataset.loaded = String(Number(this.canvas.dataset.loaded) + 1);
    this.draw();
  }
  resize() {
    this.draw();
    this.schedule();
  }
  onWheel(e) {
    e.preventDefault();
    const rect = this.canvas.getBoundingClientRect();
    const frac = Math.min(1, Math.max(0, (e.clientX - rect.left - LABEL_W) / this.plotWidth()));
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      this.setWindow(pan(this.window, (e.deltaX || e.deltaY) / 800, this.extent));
    } else {
      this.setWindow(zoom(this.window, Math.exp(e.deltaY / 400), frac, this.extent));
    }
  }
  onDown(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left - LABEL_W;
    const y = e.clientY - rect.top;
    const hit = this.hits.find((h) => x >= h.x0 - 3 && x <= h.x1 + 3 && y >= h.y0 && y <= h.y1);
    if (hit) {
      this.opts.onSelect(hit.check, hit.index);
      return;
    }
    this.drag = { x: e.clientX, window: { ...this.window } };
    this.canvas.classList.add("dragging");
    this.hideTip();
  }
  hideTip() {
    this.tip.hidden = true;
    window.clearTimeout(this.hoverTimer);
  }
  placeTip(x, y, lines) {
    this.tip.textContent = "";
    lines.forEach((line, i) => {
      const d = document.createElement("div");
      if (i === 0) d.className = "tl-tip-title";
      d.textContent = shown(line);
      this.tip.appendChild(d);
    });
    this.tip.hidden = false;
    const w = this.element.clientWidth;
    this.tip.style.left = `${Math.min(x + 14, Math.max(0, w - 360))}px`;
    this.tip.style.top = `${y + 14}px`;
  }
  onMove(e) {
    const rect = this.canvas.getBoundingClientRect();
    if (this.drag) {
      const dx = e.clientX - this.drag.x;
      const span = this.drag.window.end - this.drag.window.start;
      const d = -dx / this.plotWidth() * span;
      this.setWindow({ start: this.drag.window.start + d, end: this.drag.window.end + d });
      return;
    }
    const px = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    if (px < 0 || y < 0 || px > rect.width || y > rect.height) return;
    const row = Math.floor((y - this.rowsTop) / ROW_H);
    const track = this.data && row >= 0 ? this.data.tracks[row] : void 0;
    if (px < LABEL_W) {
      if (track) this.placeTip(px, y, [`${track.group} · ${track.label}`, ...(track.threads ?? []).slice(0, 8)]);
      else this.hideTip();
      return;
    }
    const t = toTime(this.window, this.plotWidth(), px - LABEL_W);
    this.info.textContent = shown(`${fmtDuration(t)}` + (track ? ` · ${track.group} · ${track.label}` : ""));
    this.canvas.dataset.cursor = String(t);
    if (!track) {
      this.hideTip();
      return;
    }
    const tolerance = 1.5 * (this.window.end - this.window.start) / this.plotWidth();
    window.clearTimeout(this.hoverTimer);
    const id = ++this.hoverSeq;
    this.hoverTimer = window.setTimeout(async () => {
      const res = await this.opts.hover(track.id, t, tolerance);
      if (id !== this.hoverSeq) return;
      const ev = res?.event;
      const lines = ev ? [
        ev.name,
        ...ev.op ? [`op ${ev.op}${ev.type ? ` (${ev.type})` : ""}`] : [],
        `${fmtDuration(ev.dur_ms)}, from ${fmtDuration(ev.start_ms)}`,
        ...ev.thread ? [`thread ${ev.thread}`] : [],
        `cursor ${fmtDuration(t)} · ${track.group} · ${track.label}`
      ] : [`nothing running at ${fmtDuration(t)}`, `${track.group} · ${track.label}`];
      this.canvas.dataset.hovered = ev ? ev.name : "";
      this.placeTip(px, y, lines);
    }, 80);
  }
  onUp() {
    if (this.drag) {
      this.drag = null;
      this.canvas.classList.remove("dragging");
    }
  }
  onKey(e) {
    const actions = {
      ArrowLeft: () => this.panBy(-0.2),
      ArrowRight: () => this.panBy(0.2),
      "+": () => this.zoomBy(0.5),
      "=": () => this.zoomBy(0.5),
      "-": () => this.zoomBy(2),
      "0": () => this.resetZoom()
    };
    const act = actions[e.key];
    if (act) {
      e.preventDefault();
      act();
    }
  }
  fitLabel(ctx, label, width) {
    const text = shown(label);
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (ctx.measureText(text.slice(0, mid) + "…").width <= width) lo = mid;
      else hi = mid - 1;
    }
    return text.slice(0, lo) + "…";
  }
  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const W3 = this.plotWidth();
    const w = this.window;
    const X = (t) => LABEL_W + toX(w, W3, t);
    const marks = this.data?.findings ?? [];
    const spans = marks.map((f) => {
      const x0 = Math.max(LABEL_W, X(f.start_ms));
      return [x0, Math.max(x0 + 3, Math.min(LABEL_W + W3, X(f.end_ms)))];
    });
    const laneOf = lanes(spans);
    const laneCount = Math.max(1, ...laneOf.map((l) => l + 1));
    this.markTop = AXIS_H + STEP_H;
    this.rowsTop = this.markTop + laneCount * LANE_H + 4;
    const rows = this.data ? this.data.tracks.length : 0;
    const cssW = c.clientWidth || 800;
    const cssH = this.rowsTop + Math.max(rows, 1) * ROW_H + 6;
    c.style.height = `${cssH}px`;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
    }
    const ctx = c.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fg = this.dark ? "#e8eaed" : "#212121";
    const fg2 = this.dark ? "#9aa0a6" : "#616161";
    const line = this.dark ? "#3c4043" : "#e0e0e0";
    ctx.fillStyle = this.dark ? "#202124" : "#ffffff";
    ctx.fillRect(0, 0, cssW, cssH);
    ctx.font = "11px Roboto, Arial, sans-serif";
    ctx.textBaseline = "middle";
    ctx.fillStyle = fg2;
    const tickTimes = ticks(w, Math.max(2, Math.floor(W3 / 110)));
    const labels = tickLabels(tickTimes, w);
    tickTimes.forEach((t, i) => {
      const x = X(t);
      ctx.fillRect(x, AXIS_H - 4, 1, 4);
      ctx.fillText(labels[i], x + 3, AXIS_H / 2);
    });
    c.dataset.ticks = labels.join("|");
    ctx.fillText("steps", 6, AXIS_H + STEP_H / 2);
    ctx.fillText("findings", 6, this.markTop + laneCount * LANE_H / 2);
    const highlightRows = /* @__PURE__ */ new Set();
    if (this.data) {
      if (this.highlight?.where)
        this.data.tracks.forEach((tr, r) => {
          if (trackHolds(tr, this.highlight.where)) highlightRows.add(r);
        });
      this.data.steps.forEach((s, i) => {
        const x0 = Math.max(LABEL_W, X(s.start_ms));
        const x1 = Math.min(LABEL_W + W3, X(s.end_ms));
        if (x1 <= x0) return;
        ctx.fillStyle = i % 2 ? this.dark ? "#303134" : "#f1f3f4" : this.dark ? "#3c4043" : "#e8eaed";
        ctx.fillRect(x0, AXIS_H, x1 - x0, STEP_H - 2);
        if (x1 - x0 > 24) {
          ctx.fillStyle = fg2;
          ctx.fillText(String(s.number), x0 + 3, AXIS_H + STEP_H / 2 - 1);
        }
        ctx.fillStyle = line;
        ctx.fillRect(X(s.start_ms), this.rowsTop, 1, rows * ROW_H);
      });
      this.hits = [];
      marks.forEach((f, i) => {
        const [x0, x1] = spans[i];
        const y0 = this.markTop + laneOf[i] * LANE_H;
        ctx.fillStyle = STATUS_COLORS[f.status] ?? fg2;
        const on = this.highlight && this.highlight.check === f.check && this.highlight.index === f.index;
        ctx.globalAlpha = on ? 1 : 0.75;
        ctx.fillRect(x0, y0 + 1, x1 - x0, LANE_H - 2);
        ctx.globalAlpha = 1;
        this.hits.push({ x0: x0 - LABEL_W, x1: x1 - LABEL_W, y0, y1: y0 + LANE_H, check: f.check, index: f.index });
      });
      c.dataset.lanes = String(laneCount);
      this.data.tracks.forEach((tr, r) => {
        const y = this.rowsTop + r * ROW_H;
        ctx.fillStyle = r % 2 ? this.dark ? "#242528" : "#fafafa" : this.dark ? "#202124" : "#ffffff";
        ctx.fillRect(LABEL_W, y, W3, ROW_H);
        ctx.fillStyle = fg;
        ctx.fillText(this.fitLabel(ctx, `${tr.group} · ${tr.label}`, LABEL_W - 12), 6, y + ROW_H / 2);
        for (const [s, e, density, cls] of tr.segments) {
          const x0 = X(s);
          const x1 = Math.max(x0 + 1, X(e));
          if (x1 < LABEL_W || x0 > LABEL_W + W3) continue;
          ctx.fillStyle = SEGMENT_COLORS[cls] ?? "#9aa0a6";
          ctx.globalAlpha = 0.35 + 0.65 * Math.min(1, Math.max(0, density));
          ctx.fillRect(Math.max(LABEL_W, x0), y + 2, Math.min(LABEL_W + W3, x1) - Math.max(LABEL_W, x0), ROW_H - 4);
        }
        ctx.globalAlpha = 1;
      });
    } else {
      ctx.fillStyle = fg2;
      ctx.fillText("loading…", LABEL_W + 8, this.rowsTop + ROW_H / 2);
    }
    c.dataset.highlightRows = [...highlightRows].join(",");
    c.dataset.rowsTop = String(this.rowsTop);
    c.dataset.rowHeight = String(ROW_H);
    c.dataset.labelWidth = String(LABEL_W);
    if (this.highlight) {
      const x0 = Math.max(LABEL_W, X(this.highlight.start));
      const x1 = Math.min(LABEL_W + W3, Math.max(X(this.highlight.end), x0 + 2));
      if (x1 > x0) {
        ctx.fillStyle = this.dark ? "rgba(255,152,0,0.18)" : "rgba(245,124,0,0.14)";
        ctx.strokeStyle = "#f57c00";
        ctx.lineWidth = 1.5;
        const bands = highlightRows.size ? [...highlightRows].map((r) => [this.rowsTop + r * ROW_H, ROW_H]) : [[this.rowsTop, rows * ROW_H]];
        for (const [y, h] of bands) {
          ctx.fillRect(x0, y, x1 - x0, h);
          ctx.strokeRect(x0, y + 0.5, x1 - x0, h - 1);
        }
      }
    }
    ctx.fillStyle = line;
    ctx.fillRect(LABEL_W - 1, 0, 1, cssH);
  }
};

// src/kernelfigures.ts
var KERNEL_FIGURES = [
  { key: "gpu_utilization_pct", label: "kernels running" },
  { key: "sm_efficiency_pct", label: "est. SM efficiency" },
  { key: "achieved_occupancy_pct", label: "est. achieved occupancy" }
];
var known = (v) => v !== null && v !== void 0 && Number.isFinite(v);
function missingReason(key, value, device) {
  if (known(value)) return "";
  if (key === "sm_efficiency_pct")
    return device && device.sm_count ? "no kernel in the trace gives its grid size" : "the trace gives neither the GPU's SM count nor its kernels' blocks per SM";
  if (key === "achieved_occupancy_pct") return "no kernel in the trace gives its achieved occupancy";
  return "no steps to measure in";
}
function kernelFiguresLine(f) {
  return KERNEL_FIGURES.map(({ key, label }) => `${label} ${fmtPct(f[key])}`).join(" · ");
}
function missingNotes(perGpu, devices) {
  const lines = [];
  for (const { key, label } of KERNEL_FIGURES) {
    const byReason = /* @__PURE__ */ new Map();
    for (const g of perGpu) {
      const why = missingReason(
        key,
        g[key],
        devices.find((d) => d.id === g.device_id)
      );
      if (why) byReason.set(why, [...byReason.get(why) ?? [], g.device_id]);
    }
    for (const [why, gpus] of byReason) lines.push(`${label} n/a on GPU ${gpus.join(", GPU ")}: ${why}.`);
  }
  return lines;
}
function figuresNote(framework) {
  const how = framework === "pytorch" ? "computed as the PyTorch profiler plugin computes them," : "measured";
  return `Kernels running, est. SM efficiency and est. achieved occupancy are ${how} over the steps; hover a column for how.`;
}

// src/views/breakdown.ts
var W = 640;
var H = 190;
var PAD_L = 58;
var PAD_B = 34;
var PAD_T = 8;
var CATS = Object.keys(CATEGORY_COLORS);
function breakdownView(r, onStep) {
  const c = card("breakdown", "Step time breakdown");
  const all = r.step_breakdown ?? [];
  if (!all.length || !r.breakdown_ms) return c;
  const perGpu = r.step_breakdown_per_gpu ?? {};
  const chartBox = el("div");
  const legendBox = el("div");
  const show = (gpu) => {
    const steps = gpu === "mean" ? all : perGpu[gpu] ?? all;
    const totals = gpu === "mean" ? r.breakdown_ms : r.breakdown_ms_per_gpu[gpu] ?? r.breakdown_ms;
    clear(chartBox);
    clear(legendBox);
    chartBox.appendChild(chart(steps, onStep));
    append(legendBox, legend(totals));
  };
  const gpus = Object.keys(perGpu);
  if (gpus.length) {
    const select = el("select", { id: "breakdown-gpu", "aria-label": "GPU shown in the breakdown" });
    select.appendChild(new Option("mean of the GPUs", "mean"));
    for (const g of gpus) select.appendChild(new Option(`GPU ${g}`, g));
    select.addEventListener("change", () => show(select.value));
    c.appendChild(el("div", { class: "row" }, el("label", { for: "breakdown-gpu" }, "Show ", select)));
  }
  append(c, chartBox, legendBox, el("p", { class: "muted" }, "Click a step to show it on the timeline."));
  show("mean");
  return c;
}
function niceMax(v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
function chart(steps, onStep) {
  const total = (s) => CATS.reduce((a, k) => a + (s.breakdown_ms[k] ?? 0), 0);
  const max = niceMax(Math.max(...steps.map(total), 1e-9));
  const plotH = H - PAD_B - PAD_T;
  const g = svg("svg", {
    viewBox: `0 0 ${W} ${H}`,
    width: "100%",
    role: "img",
    class: "breakdown-chart",
    "aria-label": "Stacked step time breakdown per step: milliseconds per step against the step number"
  });
  for (let i = 0; i <= 4; i++) {
    const v = max * i / 4;
    const y = PAD_T + plotH - v / max * plotH;
    g.appendChild(svg("line", { x1: PAD_L, x2: W, y1: y, y2: y, stroke: "currentColor", "stroke-opacity": 0.12 }));
    g.appendChild(
      svg(
        "text",
        { x: PAD_L - 4, y: y + 3, "text-anchor": "end", "font-size": 10, fill: "currentColor" },
        fmtDuration(v)
      )
    );
  }
  g.appendChild(
    svg(
      "text",
      {
        x: 10,
        y: PAD_T + plotH / 2,
        "font-size": 10,
        fill: "currentColor",
        transform: `rotate(-90 10 ${PAD_T + plotH / 2})`,
        "text-anchor": "middle"
      },
      "time per step"
    )
  );
  const bw = (W - PAD_L) / steps.length;
  const labelEvery = Math.max(1, Math.ceil(steps.length / 12));
  steps.forEach((s, i) => {
    const x = PAD_L + i * bw;
    const bar = svg("g", {
      class: "step-bar",
      "data-step": s.step,
      tabindex: 0,
      role: "button",
      "aria-label": `step ${s.step}`
    });
    let y = PAD_T + plotH;
    for (const k of CATS) {
      const v = s.breakdown_ms[k] ?? 0;
      if (v <= 0) continue;
      const h = v / max * plotH;
      y -= h;
      bar.appendChild(
        svg(
          "rect",
          { x: x + bw * 0.1, y, width: Math.max(bw * 0.8, 0.5), height: h, fill: CATEGORY_COLORS[k] },
          svg("title", {}, `step ${s.step}: ${CATEGORY_LABELS[k]} ${fmtDuration(v)}`)
        )
      );
    }
    bar.appendChild(
      svg(
        "rect",
        { x, y: PAD_T, width: bw, height: plotH, fill: "transparent" },
        svg(
          "title",
          {},
          `step ${s.step}: ${fmtDuration(total(s))} · ${kernelFiguresLine(s)}; click to show it on the timeline`
        )
      )
    );
    bar.addEventListener("click", () => onStep(s.start_ms, s.end_ms, s.step));
    bar.addEventListener("keydown", (e) => {
      if (e.key === "Enter") onStep(s.start_ms, s.end_ms, s.step);
    });
    g.appendChild(bar);
    if (i % labelEvery === 0)
      g.appendChild(
        svg(
          "text",
          { x: x + bw / 2, y: PAD_T + plotH + 12, "text-anchor": "middle", "font-size": 10, fill: "currentColor" },
          String(s.step)
        )
      );
  });
  g.appendChild(
    svg(
      "text",
      { x: PAD_L + (W - PAD_L) / 2, y: H - 4, "text-anchor": "middle", "font-size": 10, fill: "currentColor" },
      "step"
    )
  );
  return g;
}
function legend(totals) {
  return el(
    "div",
    { class: "legend" },
    ...CATS.map((k) => {
      const i = el("i");
      i.style.background = CATEGORY_COLORS[k];
      return el("span", {}, i, `${CATEGORY_LABELS[k]} ${fmtDuration(totals[k])}`);
    })
  );
}

// src/views/checklist.ts
function checklistView(r, catalogue, select) {
  const c = card("checklist", "The checklist");
  const problems = r.checks.some((x) => PROBLEMS.includes(x.status));
  const filter = el("input", { type: "checkbox", id: "checklist-filter" });
  filter.checked = problems;
  const counts = /* @__PURE__ */ new Map();
  for (const x of r.checks) counts.set(x.status, (counts.get(x.status) ?? 0) + 1);
  const summary = el(
    "span",
    { class: "muted" },
    ["critical", "warning", "info", "pass", "not-applicable"].filter((s) => counts.get(s)).map((s) => `${counts.get(s)} ${s === "not-applicable" ? "n/a" : s}`).join(" · ")
  );
  c.appendChild(
    el(
      "div",
      { class: "row" },
      el("label", { for: "checklist-filter" }, filter, " Hide passed and not applicable"),
      summary
    )
  );
  const list = el("div", { class: "checks" });
  c.appendChild(list);
  const byId = new Map(r.checks.map((x) => [x.id, x]));
  const order = catalogue.length ? catalogue : [...r.checks].sort((a, b) => statusRank(a.status) - statusRank(b.status));
  const draw = () => {
    list.textContent = "";
    let section = "";
    for (const entry of order) {
      const f = byId.get(entry.id);
      if (!f) continue;
      if (filter.checked && !PROBLEMS.includes(f.status)) continue;
      if (f.section !== section) {
        section = f.section;
        list.appendChild(el("div", { class: "section" }, section));
      }
      const name = PROBLEMS.includes(f.status) ? el("button", { type: "button", class: "link", onclick: () => select(f.id) }, f.id) : el("span", { class: "id" }, f.id);
      list.appendChild(
        el(
          "div",
          { class: "check", "data-check": f.id, "data-status": f.status },
          chip(f.status),
          el(
            "div",
            {},
            name,
            " ",
            f.title,
            el("div", { class: "muted" }, f.status === "not-applicable" ? f.reason ?? "" : f.summary)
          )
        )
      );
    }
  };
  filter.addEventListener("change", draw);
  draw();
  return c;
}

// src/text.ts
function inlinePieces(text) {
  const out = [];
  let rest = text;
  for (; ; ) {
    const a = rest.indexOf("`");
    const b = a < 0 ? -1 : rest.indexOf("`", a + 1);
    if (a < 0 || b < 0) {
      if (rest) out.push([rest, false]);
      return out;
    }
    if (a > 0) out.push([rest.slice(0, a), false]);
    if (b > a + 1) out.push([rest.slice(a + 1, b), true]);
    rest = rest.slice(b + 1);
  }
}
function paragraphs(text) {
  return text.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
}
function richText(text) {
  return paragraphs(text).map(
    (p) => el("p", {}, ...inlinePieces(p).map(([s, code]) => code ? el("code", {}, s) : s))
  );
}

// src/tablemath.ts
function visibleRange(scrollTop, viewportHeight, rowHeight, total, overscan = 8) {
  if (total <= 0 || rowHeight <= 0) return { first: 0, last: 0 };
  const top = Math.max(0, scrollTop);
  const first = Math.min(total - 1, Math.floor(top / rowHeight));
  const last = Math.min(total, Math.ceil((top + Math.max(0, viewportHeight)) / rowHeight));
  return { first: Math.max(0, first - overscan), last: Math.min(total, Math.max(last, first + 1) + overscan) };
}
function pagesFor(range, pageSize) {
  const out = [];
  if (range.last <= range.first || pageSize <= 0) return out;
  const start = Math.floor(range.first / pageSize) * pageSize;
  for (let o = start; o < range.last; o += pageSize) out.push(o);
  return out;
}
function nextSort(sort, order, column, numeric) {
  if (sort === column) return { sort: column, order: order === "asc" ? "desc" : "asc" };
  return { sort: column, order: numeric ? "desc" : "asc" };
}
function debounce(fn, ms) {
  let timer;
  return (...a) => {
    if (timer !== void 0) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = void 0;
      fn(...a);
    }, ms);
  };
}
function shownColumns(columns) {
  const hasShort = columns.some((c) => c.key === "short_name");
  return columns.filter((c) => !(hasShort && c.key === "name"));
}
function fmtNumber(v, digits) {
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
function cellText(c, v) {
  if (v === null || v === void 0 || v === "") return "";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return "";
    const u = c.unit ?? "";
    if (u === "bytes" || u === "B") return fmtBytes(v);
    if (u === "us" || u === "µs") return fmtNumber(v, 1);
    if (u === "ms") return fmtNumber(v, 3);
    if (u === "%" || u === "pct") return fmtNumber(v, 1);
    return Number.isInteger(v) ? fmtNumber(v, 0) : fmtNumber(v, 2);
  }
  return String(v);
}
var TRACE_WIDTH = 60;
var NAME_MIN = { short_name: 220, name: 220, op: 120, stack: 140, input_shapes: 140 };
var NAME_WEIGHT = { short_name: 4, name: 4, op: 2, stack: 2, input_shapes: 2 };
var FIXED = {
  device: 40,
  calls: 56,
  registers: 66,
  // "Registers" on a line of its own
  grid: 70,
  block: 60,
  slowest: 64,
  tensor_cores: 60,
  sm_efficiency_pct: 68,
  // "efficiency"
  occupancy_pct: 68
  // "occupancy"
};
function fixedWidth(c) {
  const by = FIXED[c.key];
  if (by !== void 0) return by;
  const u = c.unit ?? "";
  if (u === "us" || u === "µs" || u === "ms") return 78;
  if (u === "pct" || u === "%") return 58;
  if (u === "bytes" || u === "B") return 70;
  return c.numeric ? 72 : 90;
}
function isNameColumn(c) {
  return c.key in NAME_MIN || c.key === "stage" || c.key === "label";
}
var CHAR_PX = 7;
var PAD_PX = 10;
function contentWidth(c, rows) {
  const most = fixedWidth(c);
  if (!rows || !rows.length) return most;
  const word = Math.max(...c.label.split(/\s+/).map((w) => w.length));
  const value = Math.max(0, ...rows.map((r) => cellText(c, r[c.key]).length));
  return Math.min(most, Math.max(word * CHAR_PX + PAD_PX + 6, value * CHAR_PX + PAD_PX, 36));
}
function columnWidths(columns, available, extra = TRACE_WIDTH, rows) {
  const widths = columns.map((c) => isNameColumn(c) ? NAME_MIN[c.key] ?? 160 : contentWidth(c, rows));
  const names = columns.map((c, i) => isNameColumn(c) ? i : -1).filter((i) => i >= 0);
  let spare = available - extra - widths.reduce((a, b) => a + b, 0);
  const need = names.map(
    (i) => rows && rows.length ? Math.ceil(Math.max(...rows.map((r) => String(r[columns[i].key] ?? "").length)) * 7.3 + 10) : Infinity
  );
  let open = names.map((_, k) => k).filter((k) => widths[names[k]] < need[k]);
  while (spare > 0 && open.length) {
    const weight = open.reduce((a, k) => a + (NAME_WEIGHT[columns[names[k]].key] ?? 2), 0);
    let given = 0;
    for (const [j, k] of open.entries()) {
      const share = j === open.length - 1 ? spare - given : Math.floor(spare * (NAME_WEIGHT[columns[names[k]].key] ?? 2) / weight);
      const add = Math.min(share, Math.max(need[k] - widths[names[k]], 0));
      widths[names[k]] += add;
      given += add;
    }
    spare -= given;
    const still = open.filter((k) => widths[names[k]] < need[k]);
    if (!given || still.length === open.length) break;
    open = still;
  }
  if (spare > 0 && names.length) widths[names[0]] += spare;
  return widths;
}
function middleEllipsis(name, chars) {
  if (name.length <= chars) return name;
  if (chars < 5) return name.slice(0, Math.max(chars - 1, 0)) + "…";
  const headLen = Math.floor((chars - 1) * 0.4);
  let head = name.slice(0, headLen);
  let tail = name.slice(name.length - (chars - 1 - headLen));
  const cut = head.lastIndexOf("_");
  if (cut >= headLen / 2) head = head.slice(0, cut + 1);
  const from = tail.indexOf("_");
  if (from > 0 && from <= tail.length / 3) tail = tail.slice(from);
  return head + "…" + tail;
}
function commonWords(names) {
  const families = /* @__PURE__ */ new Map();
  for (const n of new Set(names)) {
    const words = n.split("_");
    families.set(words[0], [...families.get(words[0]) ?? [], words]);
  }
  const out = /* @__PURE__ */ new Map();
  const withPrefixes = (words) => [
    ...words.slice(1),
    ...words.slice(1).flatMap((w) => PREFIXED.exec(w) ? [`${PREFIXED.exec(w)[1]}*`] : [])
  ];
  for (const [first, members] of families) {
    if (members.length < 2) continue;
    const common = new Set(withPrefixes(members[0]));
    for (const m of members.slice(1)) {
      const has = new Set(withPrefixes(m));
      for (const w of common) if (!has.has(w)) common.delete(w);
    }
    out.set(first, common);
  }
  return out;
}
var PREFIXED = /^([A-Za-z]{4,})(\d\w*)$/;
function distinctName(name, chars, common) {
  if (name.length <= chars) return name;
  const words = name.split("_");
  const shared = common.get(words[0]);
  if (!shared || words.length < 3) return middleEllipsis(name, chars);
  const runs = [];
  for (let i = 1; i < words.length - 1; i++) {
    if (!shared.has(words[i])) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  const cost = ([a, b]) => words.slice(a, b).join("_").length;
  const cut = /* @__PURE__ */ new Set();
  const text = () => {
    const out = [];
    for (let i = 0; i < words.length; i++) {
      const r = runs.findIndex(([a]) => a === i);
      if (r >= 0 && cut.has(r)) {
        out.push("…");
        i = runs[r][1] - 1;
      } else out.push(words[i]);
    }
    return out.join("_");
  };
  const order = runs.map((_, k) => k).sort((x, y) => cost(runs[y]) - cost(runs[x]));
  let shown2 = name;
  for (const k of order) {
    if (shown2.length <= chars || cost(runs[k]) <= 1) break;
    cut.add(k);
    shown2 = text();
  }
  for (let i = 1; i < words.length - 1 && shown2.length > chars; i++) {
    const m = PREFIXED.exec(words[i]);
    if (m && shared.has(`${m[1]}*`) && !shared.has(words[i])) {
      words[i] = m[2];
      shown2 = text();
    }
  }
  return shown2.length <= chars ? shown2 : middleEllipsis(shown2, chars);
}
function charsIn(width) {
  return Math.max(4, Math.floor((width - 10) / 7.3));
}

// src/views/memory.ts
var W2 = 800;
var H2 = 220;
var LEFT = 64;
var RIGHT = 12;
var TOP = 12;
var BOTTOM = 24;
function memoryView(base, run, host, atMs) {
  const root = el("div", { class: "memory-view", id: "memory-view", "data-loading": "true" });
  void (async () => {
    for (; ; ) {
      const res = await getJson("table", { run, host, table: "memory" });
      if (res.status === 202) continue;
      root.dataset.loading = "false";
      if (res.status !== 200) {
        root.appendChild(el("p", { class: "error", role: "alert" }, errorMessage(res.body)));
        return;
      }
      fill(root, res.body, atMs, (t) => traceViewerWindowUrl(base, run, host, t, t));
      return;
    }
  })();
  return root;
}
function fill(root, a, atMs, traceAt) {
  clear(root);
  for (const n of a.notes ?? []) root.appendChild(el("p", { class: "notice table-note" }, n));
  const series = a.series ?? [];
  const around = a.around_peak ?? [];
  for (const row of a.rows) {
    const same = (x) => x.device === row.device && x.allocator === (row.allocator ?? "");
    const s = series.find(same);
    const view = deviceView(row, s, atMs, traceAt);
    const ops = around.filter(same);
    if (ops.length) append(view, el("h4", {}, "Ops allocating around the peak"), aroundPeak(ops));
    root.appendChild(view);
  }
}
function aroundPeak(ops) {
  const t = el(
    "table",
    { class: "around-peak" },
    el("tr", {}, el("th", {}, "Op"), el("th", { class: "num" }, "Allocated"), el("th", { class: "num" }, "At"))
  );
  for (const o of ops)
    t.appendChild(
      el(
        "tr",
        {},
        el("td", { class: "name", title: o.name }, o.name || "(no op)"),
        el("td", { class: "num", title: `${o.bytes} bytes` }, fmtBytes(o.bytes)),
        el("td", { class: "num" }, `${o.t_ms.toFixed(3)} ms`)
      )
    );
  return t;
}
function deviceView(row, s, atMs, traceAt) {
  const num = (k) => typeof row[k] === "number" ? row[k] : null;
  const peak = num("peak_allocated_bytes");
  const peakT = num("peak_time_ms");
  const cap = num("capacity_bytes");
  const headroom = num("headroom_bytes");
  const bytes = { key: "", label: "", unit: "bytes", numeric: true };
  const facts = el(
    "p",
    { class: "memory-facts" },
    el("span", { class: "peak" }, `Peak allocated ${cellText(bytes, peak) || "n/a"}`),
    peakT !== null ? ` at ${peakT.toFixed(3)} ms` : "",
    // TensorFlow's allocators have stack-reserved memory, not PyTorch's caching-allocator reserve
    num("stack_reserved_bytes") !== null ? ` · stack reserved ${cellText(bytes, num("stack_reserved_bytes"))} · free ${cellText(bytes, num("free_bytes")) || "n/a"}` : ` · peak reserved ${cellText(bytes, num("peak_reserved_bytes")) || "n/a"}`,
    ` · capacity ${cellText(bytes, cap) || "unknown"}`,
    ` · headroom ${cellText(bytes, headroom) || "unknown"}`,
    peakT !== null ? " · " : "",
    peakT !== null ? el(
      "a",
      {
        class: "row-trace",
        href: traceAt(peakT),
        target: "_blank",
        rel: "noopener",
        title: "The trace viewer at the peak"
      },
      "Trace ↗"
    ) : null
  );
  const label = String(row.label ?? `GPU ${row.device}`);
  return el(
    "div",
    { class: "memory-device", "data-device": String(row.device) },
    el("h3", {}, label),
    facts,
    s && s.points.length ? memoryChart(s, peak, peakT, atMs) : el("p", { class: "muted" }, "No memory records over time.")
  );
}
function memoryChart(s, peak, peakT, atMs) {
  const pts = s.points;
  const t0 = pts[0][0];
  const t1 = Math.max(pts[pts.length - 1][0], t0 + 1e-6);
  let top = s.capacity_bytes ?? 0;
  for (const [, a, r] of pts) top = Math.max(top, a, r ?? 0);
  top = Math.max(top, 1);
  const x = (t) => LEFT + (t - t0) / (t1 - t0) * (W2 - LEFT - RIGHT);
  const y = (b) => TOP + (1 - b / top) * (H2 - TOP - BOTTOM);
  const path = (k) => {
    const out = [];
    let prev = null;
    for (const p of pts) {
      const v = p[k];
      if (v === null) continue;
      const px = x(p[0]).toFixed(1);
      if (prev !== null) out.push(`${px},${y(prev).toFixed(1)}`);
      out.push(`${px},${y(v).toFixed(1)}`);
      prev = v;
    }
    return out.join(" ");
  };
  const chart2 = svg("svg", {
    class: "memory-chart",
    viewBox: `0 0 ${W2} ${H2}`,
    role: "img",
    "aria-label": `${s.label}: memory allocated over time`,
    "data-device": s.device,
    "data-t0": t0,
    "data-t1": t1
  });
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const b = top * f;
    append(
      chart2,
      svg("line", { class: "grid", x1: LEFT, x2: W2 - RIGHT, y1: y(b), y2: y(b) }),
      svg("text", { class: "axis", x: LEFT - 4, y: y(b) + 4, "text-anchor": "end" }, fmtBytes(b))
    );
  }
  append(
    chart2,
    svg("text", { class: "axis", x: LEFT, y: H2 - 6 }, `${t0.toFixed(1)} ms`),
    svg("text", { class: "axis", x: W2 - RIGHT, y: H2 - 6, "text-anchor": "end" }, `${t1.toFixed(1)} ms`)
  );
  if (s.capacity_bytes)
    append(
      chart2,
      svg("line", { class: "capacity", x1: LEFT, x2: W2 - RIGHT, y1: y(s.capacity_bytes), y2: y(s.capacity_bytes) }),
      svg(
        "text",
        { class: "capacity-label", x: W2 - RIGHT - 2, y: y(s.capacity_bytes) + 12, "text-anchor": "end" },
        `capacity ${fmtBytes(s.capacity_bytes)}`
      )
    );
  if (pts.some((p) => p[2] !== null)) chart2.appendChild(svg("polyline", { class: "reserved", points: path(2) }));
  chart2.appendChild(svg("polyline", { class: "allocated", points: path(1) }));
  if (atMs !== null && atMs !== peakT)
    chart2.appendChild(svg("line", { class: "at-marker", x1: x(atMs), x2: x(atMs), y1: TOP, y2: H2 - BOTTOM }));
  if (peak !== null && peakT !== null) {
    const px = x(peakT);
    const anchor = px > W2 * 0.7 ? "end" : "start";
    append(
      chart2,
      svg("line", { class: "peak-line", x1: px, x2: px, y1: TOP, y2: H2 - BOTTOM }),
      svg(
        "circle",
        { class: "peak-marker", cx: px, cy: y(peak), r: 4, "data-t": peakT, "data-bytes": peak },
        svg("title", {}, `Peak ${fmtBytes(peak)} at ${peakT.toFixed(3)} ms`)
      ),
      svg(
        "text",
        {
          class: "peak-label",
          x: anchor === "end" ? px - 6 : px + 6,
          y: Math.max(y(peak) - 6, TOP + 10),
          "text-anchor": anchor
        },
        `peak ${fmtBytes(peak)} at ${peakT.toFixed(3)} ms`
      )
    );
  }
  return chart2;
}

// src/views/tables.ts
var ROW_HEIGHT = 24;
var PAGE_SIZE = 200;
var FILTER_WAIT_MS = 250;
var TABLES = [];
function setTables(tables) {
  TABLES = tables;
}
function tableSpec(id) {
  const known2 = TABLES.find((t) => t.id === id) ?? TABLES[0];
  return known2 ?? { id, label: id, noun: "rows", groups: [], per_step: false };
}
var TablesView = class {
  constructor(ctx) {
    this.ctx = ctx;
    this.body = el("div", { id: "table-view" });
    this.grid = null;
    this.view = { table: "kernels" };
    this.tabs = el(
      "div",
      { class: "table-tabs", role: "tablist", "aria-label": "Tables" },
      ...TABLES.map(
        (t) => el(
          "button",
          {
            type: "button",
            role: "tab",
            class: "table-tab",
            "data-table": t.id,
            onclick: () => {
              this.open({ table: t.id });
              this.ctx.onChange(this.view, true);
            }
          },
          t.label
        )
      )
    );
    this.tabs.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const tabs = Array.from(this.tabs.children);
      const i = tabs.indexOf(document.activeElement);
      const next = tabs[(Math.max(i, 0) + step + tabs.length) % tabs.length];
      next.focus();
      next.click();
      e.preventDefault();
    });
    this.element = el("section", { class: "card tables", id: "tables" }, this.tabs, this.body);
  }
  get current() {
    return this.view;
  }
  open(view, atMs) {
    this.view = { ...view, table: tableSpec(view.table).id };
    for (const b of Array.from(this.tabs.children)) {
      const on = b.dataset.table === this.view.table;
      b.setAttribute("aria-selected", String(on));
      b.classList.toggle("selected", on);
    }
    this.grid?.stop();
    this.grid = null;
    clear(this.body);
    const { run, host, base } = this.ctx;
    if (this.view.table === "memory") {
      this.body.appendChild(memoryView(base, run, host, atMs ?? null));
      return;
    }
    this.grid = new GridView({ run, host, base }, this.view, (v) => {
      this.view = v;
      this.ctx.onChange(v, false);
    });
    this.body.appendChild(this.grid.element);
  }
  stop() {
    this.grid?.stop();
  }
};
var GridView = class {
  constructor(ctx, view, onChange) {
    this.ctx = ctx;
    this.view = view;
    this.onChange = onChange;
    this.info = el("div", { class: "table-info" });
    this.count = el("span", { class: "muted", id: "table-count" });
    this.scroller = el("div", { class: "vt-scroll", tabindex: 0, "aria-label": "Rows" });
    this.table = el("table", { class: "vt", id: "data-table" });
    this.colgroup = el("colgroup");
    this.thead = el("thead");
    this.tbody = el("tbody");
    this.columns = [];
    this.widths = /* @__PURE__ */ new Map();
    this.sample = [];
    // the first page of the query: what the columns are sized to
    this.common = /* @__PURE__ */ new Map();
    // words the names shown together share
    this.pages = /* @__PURE__ */ new Map();
    this.loading = /* @__PURE__ */ new Set();
    this.total = 0;
    this.generation = 0;
    this.frame = 0;
    this.stopped = false;
    this.spec = tableSpec(view.table);
    const toolbar = el("div", { class: "table-tools" });
    if (this.spec.groups.length) {
      const group = el("select", { id: "table-group", "aria-label": "Group rows" });
      for (const [v, label] of this.spec.groups) group.appendChild(new Option(label, v));
      group.value = view.group ?? this.spec.groups[0][0];
      group.addEventListener("change", () => this.change({ group: group.value }));
      toolbar.appendChild(group);
    }
    const filter = el("input", {
      type: "search",
      id: "table-filter",
      "aria-label": `Filter ${this.spec.noun} by name`,
      placeholder: `Filter ${this.spec.noun}…`
    });
    filter.value = view.filter ?? "";
    filter.hidden = this.spec.id === "idle" && !view.filter;
    const send = () => {
      const f = filter.value || void 0;
      if (f !== this.view.filter) this.change({ filter: f });
    };
    filter.addEventListener("input", debounce(send, FILTER_WAIT_MS));
    filter.addEventListener("keydown", (e) => {
      if (e.key === "Enter") send();
    });
    toolbar.appendChild(filter);
    if (view.names?.length) {
      const n = view.names.length;
      toolbar.appendChild(
        el(
          "span",
          { class: "names-filter", id: "table-names", title: view.names.join("\n") },
          `The finding's ${n} ${n === 1 ? this.spec.noun.replace(/s$/, "") : this.spec.noun}`,
          el(
            "button",
            {
              type: "button",
              id: "table-names-clear",
              "aria-label": "Show all rows",
              onclick: () => this.change({ names: void 0 })
            },
            "✕"
          )
        )
      );
    }
    toolbar.appendChild(this.count);
    append(this.table, this.colgroup, this.thead, this.tbody);
    this.scroller.appendChild(this.table);
    this.scroller.addEventListener("scroll", () => this.schedule());
    this.element = el("div", { class: "grid-view", "data-table": this.spec.id }, toolbar, this.info, this.scroller);
    this.reload();
  }
  stop() {
    this.stopped = true;
    cancelAnimationFrame(this.frame);
  }
  change(patch) {
    const v = { ...this.view, ...patch };
    for (const k of Object.keys(v)) if (v[k] === void 0) delete v[k];
    this.view = v;
    this.onChange(v);
    if ("names" in patch && !patch.names) this.element.querySelector("#table-names")?.remove();
    this.reload();
  }
  params(offset) {
    const v = this.view;
    return {
      run: this.ctx.run,
      host: this.ctx.host,
      table: this.spec.id,
      group: v.group,
      sort: v.sort,
      order: v.order,
      q: v.filter,
      name: v.names?.length ? v.names : void 0,
      offset,
      limit: PAGE_SIZE
    };
  }
  /** A new query (sort, filter, grouping): the first page, from the top. */
  reload() {
    const gen = ++this.generation;
    this.pages.clear();
    this.loading.clear();
    const d = this.table.dataset;
    d.sort = this.view.sort ?? "";
    d.order = this.view.order ?? "";
    d.q = this.view.filter ?? "";
    d.loading = "true";
    void this.fetchPage(0, gen, true);
  }
  async fetchPage(offset, gen, first = false) {
    this.loading.add(offset);
    for (; ; ) {
      const res = await getJson("table", this.params(offset));
      if (this.stopped || gen !== this.generation) return;
      if (res.status === 202) continue;
      this.loading.delete(offset);
      if (res.status !== 200) return this.fail(errorMessage(res.body));
      const a = res.body;
      if (first) this.first(a);
      this.pages.set(offset, a.rows);
      this.render();
      return;
    }
  }
  fail(message) {
    clear(this.info);
    this.info.appendChild(el("p", { class: "error", role: "alert" }, message));
    this.table.dataset.loading = "false";
  }
  /** The first page of a query: its columns, counts, sort and the answer's facts. */
  first(a) {
    this.total = a.total;
    const d = this.table.dataset;
    d.total = String(a.total);
    d.sort = a.sort;
    d.order = a.order;
    if (!this.view.sort) this.view = { ...this.view, sort: a.sort, order: a.order };
    const what = a.all === 1 ? this.spec.noun.replace(/s$/, "") : this.spec.noun;
    this.count.textContent = a.total === a.all ? `${a.all.toLocaleString("en-US")} ${what}` : `${a.total.toLocaleString("en-US")} of ${a.all.toLocaleString("en-US")} ${what}`;
    clear(this.info);
    append(this.info, ...factsOf(a));
    if (this.spec.id === "idle") this.info.appendChild(idleLegend());
    for (const n of a.notes ?? []) this.info.appendChild(el("p", { class: "notice table-note" }, n));
    this.sample = a.rows;
    this.common = commonWords(this.sample.map((r) => String(r.short_name ?? "")).filter(Boolean));
    this.setColumns(shownColumns(a.columns));
    this.scroller.scrollTop = 0;
  }
  setColumns(columns) {
    this.columns = columns;
    clear(this.colgroup);
    clear(this.thead);
    const extra = TRACE_WIDTH + (this.spec.id === "idle" ? IDLE_BAR_WIDTH : 0);
    const available = this.scroller.clientWidth || this.element.clientWidth || 1200;
    const widths = columnWidths(columns, available - 2, extra, this.sample);
    this.widths = new Map(columns.map((c, i) => [c.key, widths[i]]));
    let width = 0;
    const tr = el("tr");
    for (const [i, c] of columns.entries()) {
      const w = widths[i];
      width += w;
      const col2 = el("col");
      col2.style.width = `${w}px`;
      this.colgroup.appendChild(col2);
      const sorted = this.view.sort === c.key;
      const th = el(
        "th",
        {
          class: c.numeric ? "num" : "",
          "data-key": c.key,
          "aria-sort": sorted ? this.view.order === "asc" ? "ascending" : "descending" : "none"
        },
        el(
          "button",
          {
            type: "button",
            class: "sort",
            title: `Sort by ${c.label}`,
            onclick: () => {
              const s = nextSort(this.view.sort, this.view.order, c.key, !!c.numeric);
              this.change(s);
              this.setColumns(this.columns);
            }
          },
          c.label,
          sorted ? this.view.order === "asc" ? " ▲" : " ▼" : ""
        )
      );
      tr.appendChild(th);
    }
    if (this.spec.id === "idle") {
      const bar = el("col");
      bar.style.width = `${IDLE_BAR_WIDTH}px`;
      this.colgroup.appendChild(bar);
      tr.appendChild(el("th", {}, "Idle by cause"));
      width += IDLE_BAR_WIDTH;
    }
    const col = el("col");
    col.style.width = `${TRACE_WIDTH}px`;
    this.colgroup.appendChild(col);
    tr.appendChild(el("th", {}, "Trace"));
    this.table.style.minWidth = `${width + TRACE_WIDTH}px`;
    this.thead.appendChild(tr);
  }
  schedule() {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.render());
  }
  /** The rows in view (and a few either side), fetching the pages that hold them. */
  render() {
    if (this.stopped) return;
    const height = Math.max(this.scroller.clientHeight, window.innerHeight * 0.6);
    const range = visibleRange(this.scroller.scrollTop, height, ROW_HEIGHT, this.total);
    let missing = false;
    for (const p of pagesFor(range, PAGE_SIZE))
      if (!this.pages.has(p)) {
        missing = true;
        if (!this.loading.has(p)) void this.fetchPage(p, this.generation);
      }
    const rows = [];
    if (range.first > 0) rows.push(spacer(range.first * ROW_HEIGHT, this.columns.length + 1));
    for (let i = range.first; i < range.last; i++) {
      const page = this.pages.get(Math.floor(i / PAGE_SIZE) * PAGE_SIZE);
      const row = page?.[i % PAGE_SIZE];
      rows.push(row ? this.rowView(row, i) : placeholder(i, this.columns.length + 1));
    }
    if (range.last < this.total) rows.push(spacer((this.total - range.last) * ROW_HEIGHT, this.columns.length + 1));
    this.tbody.replaceChildren(...rows);
    if (!this.total) {
      this.tbody.appendChild(
        el(
          "tr",
          { class: "empty" },
          el("td", { colspan: this.columns.length + 1, class: "muted" }, `No ${this.spec.noun} match.`)
        )
      );
    }
    const d = this.table.dataset;
    d.first = String(range.first);
    d.last = String(range.last);
    d.loading = String(missing);
  }
  rowView(row, index) {
    const tr = el("tr", { class: "vt-row", "data-index": index });
    if (row.slowest === true) tr.classList.add("slowest");
    for (const c of this.columns) tr.appendChild(cell(c, row, this.common, this.widths.get(c.key)));
    if (this.spec.id === "idle") tr.appendChild(idleBar(row));
    const t = row.trace;
    tr.appendChild(
      el(
        "td",
        {},
        t ? el(
          "a",
          {
            class: "row-trace",
            href: traceViewerWindowUrl(this.ctx.base, this.ctx.run, this.ctx.host, t.start_ms, t.end_ms),
            target: "_blank",
            rel: "noopener",
            title: `The trace viewer on the longest instance, ${t.start_ms.toFixed(3)}–${t.end_ms.toFixed(3)} ms`
          },
          "Trace ↗"
        ) : null
      )
    );
    return tr;
  }
};
function factsOf(a) {
  const out = [];
  if (typeof a.workers === "boolean") {
    const pin = a.pin_memory === true ? "on" : a.pin_memory === false ? "off" : "n/a";
    out.push(
      el(
        "p",
        { id: "input-options" },
        el("span", { "data-present": String(a.workers) }, `worker processes: ${a.workers ? "yes" : "no"}`),
        " · ",
        el("span", { "data-present": String(a.pin_memory === true) }, `pin_memory: ${pin}`)
      )
    );
  } else if (typeof a.prefetch === "boolean" || typeof a.parallel_map === "boolean") {
    const yes = (v) => v ? "present" : "absent";
    out.push(
      el(
        "p",
        { id: "input-options" },
        el("span", { "data-present": String(!!a.prefetch) }, `prefetch: ${yes(a.prefetch)}`),
        " · ",
        el("span", { "data-present": String(!!a.parallel_map) }, `parallel map: ${yes(a.parallel_map)}`)
      )
    );
  }
  const d = a.launch_delay;
  if (d && typeof d === "object") {
    const us = (v) => typeof v === "number" ? `${fmtNumber(v, 1)} µs` : "n/a";
    out.push(
      el(
        "p",
        { id: "launch-delay", title: "From each kernel launch call on the host to the kernel starting on the GPU" },
        `Launch delay over ${fmtNumber(d.count ?? 0, 0)} launches: mean ${us(d.mean_us)}, p50 ${us(d.p50_us)}, p95 ${us(d.p95_us)}, max ${us(d.max_us)}`
      )
    );
  }
  return out;
}
var IDLE_BAR_WIDTH = 200;
function cell(c, row, common, width) {
  const v = row[c.key];
  if (c.key === "short_name" && typeof row.name === "string") {
    const text2 = String(v ?? "");
    return el(
      "td",
      { class: "name", title: row.name, "data-short": text2 },
      width ? distinctName(text2, charsIn(width), common) : text2
    );
  }
  const text = cellText(c, v);
  const cls = typeof v === "number" ? "num" : typeof v === "boolean" ? "flag" : "";
  if (c.key === "stage" && row.slowest === true)
    return el("td", { class: "name", title: text }, text, el("span", { class: "badge slowest-badge" }, "slowest"));
  if (typeof v === "string" && (v.length > NAME_MAX || isNameColumn(c)))
    return el("td", { class: "name", title: v }, shortName(v));
  return el("td", { class: cls, title: c.unit === "bytes" && typeof v === "number" ? `${v} bytes` : void 0 }, text);
}
var IDLE_CAUSES = [
  ["host_wait_us", "waiting for the host", SEGMENT_COLORS.input],
  ["kernel_wait_us", "waiting for kernels", SEGMENT_COLORS.launch],
  ["other_us", "other", SEGMENT_COLORS.other]
];
function idleLegend() {
  return el(
    "div",
    { class: "legend" },
    ...IDLE_CAUSES.map(([, label, color]) => {
      const i = el("i");
      i.style.background = color;
      return el("span", {}, i, label);
    })
  );
}
function idleBar(row) {
  const idle = typeof row.idle_us === "number" ? row.idle_us : 0;
  const bar = el("div", { class: "idle-bar" });
  const parts = [];
  for (const [key, label, color] of IDLE_CAUSES) {
    const v = typeof row[key] === "number" ? row[key] : 0;
    if (!idle || v <= 0) continue;
    const seg = el("span", { "data-cause": key });
    seg.style.width = `${100 * v / idle}%`;
    seg.style.background = color;
    bar.appendChild(seg);
    parts.push(`${label} ${fmtNumber(100 * v / idle, 1)}%`);
  }
  bar.title = parts.join(", ") || "no idle time";
  return el("td", {}, bar);
}
function spacer(height, span) {
  const td = el("td", { colspan: span });
  const tr = el("tr", { class: "vt-spacer", "aria-hidden": "true" }, td);
  td.style.height = `${height}px`;
  return tr;
}
function placeholder(index, span) {
  return el("tr", { class: "vt-row pending", "data-index": index }, el("td", { colspan: span, class: "muted" }, "…"));
}
function linkLabel(link) {
  const spec = tableSpec(link.table);
  if (spec.id === "memory") return "Memory over time, at the peak";
  const n = link.name?.length ?? 0;
  if (!n) return `Open the ${spec.label} table`;
  return `Show ${n === 1 ? "this" : `these ${n}`} ${n === 1 ? spec.noun.replace(/s$/, "") : spec.noun} in the ${spec.label} table`;
}
function viewTabs(findings, tables) {
  return el(
    "div",
    { class: "view-tabs", role: "tablist", "aria-label": "View" },
    el("button", { type: "button", role: "tab", id: "view-findings", onclick: findings }, "Findings"),
    el("button", { type: "button", role: "tab", id: "view-tables", onclick: tables }, "Tables")
  );
}
function markTab(root, view) {
  for (const b of Array.from(root.querySelectorAll('.view-tabs [role="tab"]')))
    b.setAttribute("aria-selected", String(b.id === `view-${view}`));
}

// src/views/findings.ts
var FindingsView = class {
  constructor(report, ctx) {
    this.report = report;
    this.ctx = ctx;
    this.cards = /* @__PURE__ */ new Map();
    this.profileTab = report.framework !== "pytorch";
    this.element = card("findings", "Findings, by estimated saving");
    const problems = report.checks.filter((c) => PROBLEMS.includes(c.status));
    if (!problems.length) this.element.appendChild(el("p", {}, "No problems found: every applicable check passed."));
    problems.forEach((f, i) => {
      const c = this.findingView(f, i === 0);
      this.cards.set(f.id, c);
      this.element.appendChild(c);
    });
  }
  /** A line from the job under the summary of each of these findings (the wait for a straggler). */
  noteJob(checks, text) {
    for (const id of checks) {
      const line = this.cards.get(id)?.querySelector(".summary-line");
      line?.after(el("p", { class: "job-wait" }, text));
    }
  }
  isSelected(id) {
    return !!this.cards.get(id)?.classList.contains("selected");
  }
  /** Mark a finding selected and open it; `toggle` on the selected one closes or reopens it. */
  select(id, toggle) {
    for (const [cid, c] of this.cards) {
      const on = cid === id;
      const was = c.classList.contains("selected");
      c.classList.toggle("selected", on);
      if (!on) continue;
      const body = c.querySelector(".body");
      const open = toggle && was ? body.hidden : true;
      this.setOpen(c, open);
      if (!toggle) c.scrollIntoView({ block: "nearest" });
    }
  }
  setOpen(c, open) {
    c.querySelector(".body").hidden = !open;
    c.querySelector(".head").setAttribute("aria-expanded", String(open));
    c.classList.toggle("open", open);
  }
  findingView(f, open) {
    const body = el("div", { class: "body" });
    const head = el(
      "button",
      {
        class: "head",
        type: "button",
        "aria-expanded": "false",
        // a click selects the finding (and shows it on the timeline); on the selected one, it folds it
        onclick: () => this.ctx.select(f.id, 0, !this.isSelected(f.id) || body.hidden, true)
      },
      chip(f.status),
      el("span", {}, el("div", { class: "title" }, f.title), el("div", { class: "id" }, f.id)),
      el("span", { class: "saving" }, savingText(f))
    );
    const line = el("p", { class: "summary-line" }, f.summary);
    const c = el("div", { class: "finding", "data-check": f.id, "data-status": f.status }, head, line, body);
    if (f.metrics.length) {
      const t = el("table", { class: "metrics", title: `How it is measured: ${f.measures}` });
      for (const m of f.metrics)
        t.appendChild(el("tr", {}, el("td", {}, m.label), el("td", { class: "num" }, fmtValue(m.value, m.unit))));
      append(body, t, el("p", { class: "muted measures" }, "How it is measured: ", f.measures));
    }
    if (f.thresholds.length)
      append(
        body,
        el(
          "p",
          { class: "muted" },
          "Thresholds: ",
          f.thresholds.map((t) => `${t.name} ${fmtValue(t.value, t.unit)}`).join(", ")
        )
      );
    const range = fmtSavingRange(f);
    const point = fmtSaving(f.saving_ms, f.saving_pct);
    if (f.whatif?.withheld)
      append(
        body,
        el(
          "p",
          { class: "whatif withheld", title: f.whatif.basis },
          el("strong", {}, "No saving stated: "),
          f.whatif.withheld
        )
      );
    else if (f.whatif)
      append(
        body,
        el(
          "p",
          { class: "whatif", title: f.whatif.basis },
          el("strong", {}, "If fixed: "),
          f.whatif.sentence,
          ` (without the profiler; ${f.whatif.change} simulated)`
        )
      );
    for (const alt of f.alternatives ?? [])
      append(
        body,
        el(
          "p",
          { class: "whatif alternative", "data-change": alt.change, title: alt.basis },
          el("strong", {}, `Or ${alt.change} ${alt.change.includes("+") ? "together" : "alone"}: `),
          `saves ${fmtDuration(alt.saving_ms)}/step: ${alt.sentence}`,
          ` (without the profiler; ${alt.change} simulated)`
        )
      );
    if (range || point) {
      const saving = range ? `${range}${point ? `; point estimate ${point}` : ""}` : point;
      append(body, el("p", { class: "muted saving-basis" }, `Estimated saving ${saving}: ${f.saving_basis ?? ""}`));
    }
    append(body, el("div", { class: "rec" }, el("strong", {}, "What to change"), ...richText(f.recommendation)));
    if (f.snippet) {
      const copy = el(
        "button",
        {
          type: "button",
          class: "copy-snippet",
          onclick: () => {
            navigator.clipboard.writeText(f.snippet).then(
              () => copy.textContent = "Copied",
              () => copy.textContent = "Select and copy"
            );
          }
        },
        "Copy"
      );
      append(
        body,
        el("div", { class: "row" }, el("strong", {}, "Example"), copy),
        el("pre", { class: "snippet" }, el("code", {}, f.snippet))
      );
    }
    if (f.details.length) {
      const keys = Object.keys(f.details[0]);
      const t = el("table", { class: "details" }, el("tr", {}, ...keys.map((k) => el("th", {}, k.replace(/_/g, " ")))));
      for (const row of f.details.slice(0, 8))
        t.appendChild(
          el(
            "tr",
            {},
            ...keys.map((k) => {
              const v = row[k];
              if (typeof v === "string" && v.length > NAME_MAX)
                return el("td", {}, el("span", { class: "long-name", title: v }, shortName(v)));
              return el("td", { class: typeof v === "number" ? "num" : "" }, fmtValue(v, ""));
            })
          )
        );
      append(body, el("details", {}, el("summary", {}, `Details (${f.details.length})`), t));
    }
    const link = f.table;
    if (link)
      append(
        body,
        el(
          "p",
          {},
          el(
            "button",
            { type: "button", class: "table-link", "data-table": link.table, onclick: () => this.ctx.openTable(link) },
            linkLabel(link)
          )
        )
      );
    if (f.evidence.length) append(body, el("strong", {}, "Where"), this.evidenceList(f));
    append(
      body,
      el(
        "p",
        {},
        el("a", { href: f.link, target: "_blank", rel: "noopener" }, "Guide: ", f.section, " ↗"),
        this.profileTab ? " · " : "",
        this.profileTab ? this.profileTabLink(profileTabUrl(this.ctx.base, this.report.run, this.report.host), {}) : null
      )
    );
    this.setOpen(c, open);
    return c;
  }
  /** A link to the Profile tab, opened in place as TensorBoard opens its tabs (a modified click, or a
   * page that cannot be reached, follows the link). */
  profileTabLink(href, attrs) {
    const open = (e) => {
      const m = e;
      if (m.button || m.ctrlKey || m.metaKey || m.shiftKey || m.altKey) return;
      if (this.ctx.openTab(href)) e.preventDefault();
    };
    return el("a", { ...attrs, href, target: "_top", onclick: open }, "Profile tab");
  }
  evidenceList(f) {
    const { base } = this.ctx;
    const { run, host } = this.report;
    const list = el("ul", { class: "evidence" });
    f.evidence.forEach(
      (e, i) => list.appendChild(
        el(
          "li",
          { "data-index": i },
          el("div", {}, e.label),
          el("div", { class: "where" }, `${e.where} · ${fmtWindow(e.start_ms, e.end_ms)}`),
          e.events.length ? el("div", { class: "muted" }, e.events.slice(0, 5).join(" · ")) : null,
          el(
            "div",
            { class: "row" },
            el(
              "button",
              { type: "button", class: "show-on-timeline", onclick: () => this.ctx.select(f.id, i, true) },
              "Show on timeline"
            ),
            el(
              "a",
              {
                class: "trace-viewer-link",
                href: traceViewerUrl(base, run, host, f.id, i, e.start_ms, e.end_ms),
                target: "_blank",
                rel: "noopener",
                title: 'The trace viewer on this window, with the advice as a "GPU Advisor" track'
              },
              "Open in trace viewer ↗"
            ),
            this.profileTab && this.profileTabLink(profileTabUrl(base, run, host, e.start_ms, e.end_ms), {
              class: "profile-tab-link",
              title: `The Profile tab's trace viewer on this run and host; the window is ${fmtWindow(e.start_ms, e.end_ms)}`
            })
          )
        )
      )
    );
    return list;
  }
};

// src/views/headline.ts
function headlineView(r, definitions) {
  const h = r.headline;
  const c = card("headline", "Headline");
  if (!h) return c;
  const kpi = (key, label, id) => {
    const value = h[key];
    const judged = h.judged[key];
    const meter = el("div");
    meter.style.width = `${Math.max(0, Math.min(100, value ?? 0))}%`;
    return el(
      "div",
      { class: "kpi", id, "data-judged": judged ?? "none", title: definitions[key] ?? "" },
      el("div", { class: "v" }, fmtPct(value)),
      el("div", { class: "l" }, label, " ", el("span", { class: "info", "aria-hidden": "true" }, "?")),
      el("div", { class: "meter" }, meter),
      el("div", { class: "judged" }, judged ?? (value === null ? "not measured" : "not judged"))
    );
  };
  c.appendChild(
    el(
      "div",
      { class: "headline" },
      kpi("device_busy_pct", "of step time the GPU is busy", "kpi-busy"),
      kpi("device_op_time_pct", "of op time placed on the GPU", "kpi-ops"),
      kpi("fp16_compute_pct", "of device compute in 16-bit", "kpi-fp16")
    )
  );
  const sm = r.step_model;
  if (sm) {
    const bound = {
      GPU: "the GPU sets the step",
      host: "the host sets the step",
      input: "waiting for input sets the step"
    };
    const parts = [
      `Without the profiler: ${fmtDuration(sm.step_ms)} a step (${fmtDuration(sm.captured_step_ms)} captured, `,
      `the profiler ${fmtPct(sm.profiler_pct)} of it); ${bound[sm.bound]}.`
    ];
    if (sm.all && sm.findings.length > 1)
      parts.push(
        ` Every fix below together: ${fmtDuration(sm.all.step_ms)} → ${fmtDuration(sm.all.new_step_ms)} a step`,
        " (simulated at once, so the savings do not add up)."
      );
    c.appendChild(el("p", { class: "step-model", title: sm.all?.basis ?? "" }, ...parts));
  }
  if (h.per_gpu.length) {
    const th = (text, key) => el("th", { class: "num", title: key ? definitions[key] ?? "" : "" }, text);
    const t = el(
      "table",
      { class: "per-gpu" },
      el(
        "tr",
        {},
        el("th", {}, "GPU"),
        th("busy", "device_busy_pct"),
        th("compute / step", "compute_ms_per_step"),
        th("step", "step_ms"),
        th("16-bit", "fp16_compute_pct"),
        th("kernels"),
        ...KERNEL_FIGURES.map(({ key, label }) => th(label, key))
      )
    );
    for (const g of h.per_gpu) {
      const device = r.devices.find((d) => d.id === g.device_id);
      const figures = KERNEL_FIGURES.map(({ key }) => {
        const why = missingReason(key, g[key], device);
        const title = why ? `n/a: ${why}. ${definitions[key] ?? ""}` : definitions[key] ?? "";
        return el("td", { class: "num", "data-key": key, title }, fmtPct(g[key]));
      });
      t.appendChild(
        el(
          "tr",
          { "data-gpu": g.device_id },
          el("td", {}, `GPU ${g.device_id}`),
          el("td", { class: "num" }, fmtPct(g.device_busy_pct)),
          el("td", { class: "num" }, fmtDuration(g.compute_ms_per_step)),
          el("td", { class: "num" }, fmtDuration(g.step_ms)),
          el("td", { class: "num" }, fmtPct(g.fp16_compute_pct)),
          el("td", { class: "num" }, g.kernels),
          ...figures
        )
      );
    }
    c.appendChild(t);
    if (h.per_gpu.length > 1)
      c.appendChild(
        el(
          "p",
          { class: "muted" },
          "Busy counts collectives and copies too: a GPU waiting in an all-reduce is busy. Compute per step shows how much work each GPU has."
        )
      );
    c.appendChild(el("p", { class: "muted" }, figuresNote(r.framework)));
    for (const line of missingNotes(h.per_gpu, r.devices)) c.appendChild(el("p", { class: "muted kernel-na" }, line));
  }
  const idle = [...h.idle_gpus, ...h.copy_only_gpus];
  if (idle.length)
    c.appendChild(el("p", { class: "muted" }, `Not counted: GPU ${idle.join(", GPU ")} (no kernels in the capture).`));
  return c;
}

// src/views/report.ts
function reportTimeline(shown2, onSelect) {
  return new TimelineView({
    load: async (w, width) => {
      const s = shown2();
      return s ? timelineWindow(s.run, s.host, w, width) : null;
    },
    hover: async (track, t, tolerance) => {
      const s = shown2();
      return s ? eventAt(s.run, s.host, track, t, tolerance) : null;
    },
    onSelect
  });
}
var ReportView = class {
  constructor(report, ctx, meta, main) {
    this.report = report;
    this.ctx = ctx;
    this.main = main;
    const { timeline } = ctx;
    clear(main);
    append(meta, ...metaView(report));
    const base = tbBase(window.location.pathname);
    this.findings = new FindingsView(report, {
      base,
      select: (id, index, zoom2, toggle) => this.select(id, index, zoom2, toggle),
      openTable: (link) => this.openTable(link),
      openTab: ctx.openTab
    });
    const timelineCard = card(
      "timeline-card",
      "Timeline",
      el(
        "div",
        { class: "tl-tools" },
        el("button", { type: "button", "aria-label": "Zoom in", onclick: () => timeline.zoomBy(0.5) }, "+"),
        el("button", { type: "button", "aria-label": "Zoom out", onclick: () => timeline.zoomBy(2) }, "−"),
        el("button", { type: "button", "aria-label": "Earlier", onclick: () => timeline.panBy(-0.25) }, "←"),
        el("button", { type: "button", "aria-label": "Later", onclick: () => timeline.panBy(0.25) }, "→"),
        el("button", { type: "button", id: "timeline-steps", onclick: () => timeline.resetZoom() }, "Steps"),
        el("button", { type: "button", id: "timeline-reset", onclick: () => timeline.showAll() }, "Whole profile"),
        timeline.info
      ),
      timeline.element,
      legend2()
    );
    const breakdown = breakdownView(report, (start, end) => {
      timeline.zoomTo(start, end);
      timelineCard.scrollIntoView({ block: "nearest" });
    });
    this.tables = new TablesView({
      base,
      run: report.run,
      host: report.host,
      framework: report.framework ?? "unknown",
      // a new table is a history entry; its sort and filter replace the entry
      onChange: (view, open) => ctx.view(tableState(view), !open)
    });
    this.tables.element.hidden = true;
    this.findingsLayout = el(
      "div",
      { class: "layout" },
      el("div", { class: "wide" }, headlineView(report, ctx.checks.definitions)),
      el("div", { class: "wide" }, timelineCard),
      el("div", { class: "col" }, this.findings.element),
      el(
        "div",
        { class: "col" },
        checklistView(report, ctx.checks.checks, (id) => this.select(id, 0, true))
      ),
      el("div", { class: "wide" }, breakdown)
    );
    append(
      main,
      viewTabs(
        () => this.showFindings(),
        () => this.showTables()
      ),
      this.findingsLayout,
      el("div", { class: "layout single" }, this.tables.element)
    );
    const steps = report.step_breakdown ?? [];
    timeline.reset(
      report.extent_ms ?? Math.max(0, ...steps.map((x) => x.end_ms)),
      steps.length ? { start: steps[0].start_ms, end: steps[steps.length - 1].end_ms } : void 0
    );
  }
  stop() {
    this.tables.stop();
  }
  /** The view within the report a state names: a table, or the findings with one selected. */
  /** A line from the job under the summary of each of these findings. */
  noteJob(checks, text) {
    this.findings.noteJob(checks, text);
  }
  open(state) {
    const view = tableOf(state);
    if (view) this.showTables(view);
    else this.showFindings(state.finding);
  }
  /** The findings, with a finding selected ("<id>[:<evidence>]"). */
  showFindings(finding) {
    this.tables.stop();
    this.tables.element.hidden = true;
    this.findingsLayout.hidden = false;
    markTab(this.main, "findings");
    this.ctx.view({ finding });
    if (finding) {
      const [id, idx] = finding.split(":");
      if (this.report.checks.some((c) => c.id === id)) this.select(id, Number(idx) || 0, true);
    }
  }
  /** A table of the report. */
  showTables(view, atMs) {
    view ?? (view = this.tables.current);
    this.findingsLayout.hidden = true;
    this.tables.element.hidden = false;
    markTab(this.main, "tables");
    this.tables.open(view, atMs);
    this.ctx.view(tableState(this.tables.current));
  }
  /** A finding's link: its table filtered to its own names (memory: the curve, its peak marked). */
  openTable(link) {
    const names = (link.name ?? []).slice(0, 50);
    this.showTables({ table: link.table, names, filter: link.q ?? void 0 }, link.at_ms);
  }
  /** Select a finding: open it, zoom the timeline to its evidence, and keep it in the URL. */
  select(id, index, zoom2, toggle = false) {
    const f = this.report.checks.find((c) => c.id === id);
    if (!f) return;
    this.findings.select(id, toggle);
    this.ctx.view({ finding: index ? `${id}:${index}` : id });
    const e = f.evidence[index] ?? f.evidence[0];
    if (zoom2 && e) this.ctx.timeline.show(id, f.evidence.indexOf(e), e.start_ms, e.end_ms, e);
  }
};
function metaView(report) {
  const s = report.steps;
  const out = [
    report.devices.length ? report.devices.map((d) => {
      const cc = d.compute_capability ?? (d.architecture ? null : "?");
      return `GPU ${d.id}: ${d.name} (${[d.architecture, cc && `cc ${cc}`].filter(Boolean).join(", ")})`;
    }).join(" · ") : "No GPU in this profile",
    s ? ` · ${stepsText(s)}` : ""
  ];
  for (const e of report.errors) out.push(el("div", { class: "error" }, e));
  for (const m of report.capture_errors ?? [])
    out.push(
      el(
        "div",
        { class: "notice" },
        `${m.includes("outside the capture were dropped") ? "Capture" : "The profiler said"}: ${m}`
      )
    );
  for (const m of report.warnings) out.push(el("div", { class: "notice muted" }, `Note: ${m}`));
  return out;
}
function legend2() {
  return el(
    "div",
    { class: "legend" },
    ...[
      ["compute", "compute"],
      ["collective", "collective"],
      ["copy", "copy"],
      ["input", "input"],
      ["launch", "launch"],
      ["op", "op"],
      ["other", "other host"]
    ].map(([key, name]) => {
      const i = el("i");
      i.style.background = SEGMENT_COLORS[key];
      return el("span", {}, i, name);
    })
  );
}
function stepsText(s) {
  const src = `${s.source}${s.marker ? ` "${s.marker}"` : ""}`;
  const perGpu = s.per_gpu ?? [];
  const own = perGpu.length > 1 && new Set(perGpu.map((g) => g.mean_ms)).size > 1;
  if (own)
    return `steps per GPU (${src}): ${perGpu.map((g) => `GPU ${g.device_id} ${g.count} step${g.count === 1 ? "" : "s"}, mean ${fmtDuration(g.mean_ms)}`).join("; ")}`;
  return `${s.count} step${s.count === 1 ? "" : "s"} (${src}), mean ${fmtDuration(s.mean_ms)} ± ${fmtDuration(s.stdev_ms)}`;
}

// src/views/toolbar.ts
function hostStatus(h) {
  const a = h.analysis;
  return a.state === "error" ? "error" : a.state === "done" ? a.worst?.status ?? "pass" : "";
}
function runStatus(run) {
  const rows = run.job ? [{ note: run.job.note, saving: run.job.top_saving_ms, status: run.job.status }] : [];
  for (const h of run.hosts) {
    const s = hostStatus(h);
    if (s) rows.push({ note: h.analysis.worst?.note ?? false, saving: h.analysis.top_saving_ms ?? 0, status: s });
  }
  rows.sort(worstFirst);
  return rows.length ? rows[0].status : "";
}
var Toolbar = class {
  constructor(actions) {
    this.actions = actions;
    this.element = el("div", { class: "bar" });
    this.runs = { advisor_version: "", runs: [], legacy: [] };
    this.overviewButton = el("button", { type: "button", id: "overview-button" }, "All runs");
    this.runSelect = el("select", { id: "run-select", "aria-label": "Run" });
    this.hostSelect = el("select", { id: "host-select", "aria-label": "Host" });
    this.compareSelect = el("select", {
      id: "compare-select",
      "aria-label": "Compare with a run before a change"
    });
    this.share = el("input", {
      class: "share",
      id: "share-link",
      readonly: true,
      "aria-label": "Link to this view"
    });
    this.shareNote = el("span", { class: "muted", id: "share-note" });
    this.agentCall = el("input", {
      class: "share",
      id: "share-mcp",
      readonly: true,
      "aria-label": "The MCP call that gives a coding agent this view",
      title: "In a coding agent with the advisor's MCP server (tb-gpu-advisor mcp <logdir>), this call gives the same view"
    });
    this.copyAgent = el(
      "button",
      { id: "copy-mcp", type: "button", onclick: () => void this.copyAgentCall() },
      "Copy agent call"
    );
    this.exportLink = el(
      "a",
      {
        id: "export-link",
        href: "./export",
        download: true,
        title: "The whole profile as Chrome trace JSON, with the findings as a track"
      },
      "Export trace"
    );
    this.share.hidden = true;
    this.agentCall.hidden = true;
    this.copyAgent.hidden = true;
    append(
      this.element,
      el("h1", {}, "GPU Advisor"),
      this.overviewButton,
      el("label", { for: "run-select" }, "Run", this.runSelect),
      el("label", { for: "host-select" }, "Host", this.hostSelect),
      el(
        "label",
        { for: "compare-select", title: "Compare this run (after a change) with the run before it" },
        "Before",
        this.compareSelect
      ),
      el("span", { class: "spacer" }),
      this.exportLink,
      el("button", { id: "copy-link", type: "button", onclick: () => void this.copyLink() }, "Copy link"),
      this.share,
      this.agentCall,
      this.copyAgent,
      this.shareNote
    );
    this.overviewButton.addEventListener("click", () => actions.overview());
    this.runSelect.addEventListener("change", () => {
      if (this.runSelect.value) actions.run(this.runSelect.value);
      else actions.overview();
    });
    this.hostSelect.addEventListener("change", () => actions.host(this.hostSelect.value));
    this.compareSelect.addEventListener("change", () => {
      const [run, host] = this.compareSelect.value ? JSON.parse(this.compareSelect.value) : [void 0, void 0];
      actions.compare(run, host);
    });
  }
  hostsOf(run) {
    return this.runs.runs.find((r) => r.run === run)?.hosts ?? [];
  }
  /** The run picker, each run labelled with its worst status once analysed. */
  setRuns(runs, state) {
    this.runs = runs;
    const value = this.runSelect.value;
    clear(this.runSelect);
    this.runSelect.appendChild(new Option("— all runs —", ""));
    for (const r of runs.runs) {
      const s = runStatus(r);
      const o = new Option(shown(s ? `${r.run} · ${s}` : r.run), r.run);
      o.dataset.status = s;
      this.runSelect.appendChild(o);
    }
    this.runSelect.value = state.run ?? value ?? "";
    this.fillCompare(state);
  }
  /** The pickers on the overview: no run, no host. */
  showOverview() {
    this.runSelect.value = "";
    clear(this.hostSelect);
    this.hostSelect.disabled = true;
    this.fillCompare({});
    this.setExport(null);
  }
  showRun(run) {
    this.runSelect.value = run;
  }
  /** The pickers on a run's host (or all its hosts) and the comparison of the state. */
  showHost(state) {
    clear(this.hostSelect);
    const hosts = this.hostsOf(state.run ?? "");
    if (hosts.length > 1) this.hostSelect.appendChild(new Option("all hosts", ALL_HOSTS));
    for (const h of hosts) {
      const s = hostStatus(h);
      const o = new Option(shown(s ? `${h.host} · ${s}` : h.host), h.host);
      o.dataset.status = s;
      this.hostSelect.appendChild(o);
    }
    this.hostSelect.value = state.host ?? "";
    this.hostSelect.disabled = hosts.length < 2;
    this.fillCompare(state);
  }
  /** "Before": every other run and host, as the base a change is measured against. */
  fillCompare(state) {
    clear(this.compareSelect);
    this.compareSelect.appendChild(new Option("—", ""));
    for (const r of this.runs.runs)
      for (const h of r.hosts) {
        if (r.run === state.run && h.host === state.host) continue;
        this.compareSelect.appendChild(
          new Option(shown(r.hosts.length > 1 ? `${r.run} · ${h.host}` : r.run), JSON.stringify([r.run, h.host]))
        );
      }
    this.compareSelect.value = state.compare ? JSON.stringify([state.compare, state.compare_host]) : "";
    this.compareSelect.disabled = !state.run || state.host === ALL_HOSTS;
  }
  /** Export trace for one host's profile; hidden on other views (null). */
  setExport(target) {
    this.exportLink.hidden = !target;
    if (target) this.exportLink.setAttribute("href", exportUrl(target.run, target.host));
  }
  /** No runs: only the title stays. */
  empty() {
    this.element.querySelectorAll("label, #overview-button, #export-link, #copy-link").forEach((n) => n.hidden = true);
  }
  async copyLink() {
    const url = this.actions.shareUrl();
    this.share.value = url;
    this.share.hidden = false;
    this.agentCall.value = mcpCall(this.actions.state());
    this.agentCall.hidden = this.copyAgent.hidden = false;
    this.share.select();
    try {
      await navigator.clipboard.writeText(url);
      this.shareNote.textContent = "Link copied";
    } catch {
      this.shareNote.textContent = "Press Ctrl+C to copy";
    }
  }
  /** The MCP call beside the link: the same view for a teammate's coding agent. */
  async copyAgentCall() {
    this.agentCall.select();
    try {
      await navigator.clipboard.writeText(this.agentCall.value);
      this.shareNote.textContent = "Agent call copied";
    } catch {
      this.shareNote.textContent = "Press Ctrl+C to copy";
    }
  }
};

// src/app.ts
var App = class {
  constructor(root) {
    this.root = root;
    this.router = new Router();
    this.loader = new Loader();
    this.meta = el("div", { class: "meta", id: "meta" });
    this.main = el("div", { id: "main" });
    this.checks = { checks: [], tables: [], definitions: {} };
    this.report = null;
    // the jobs of the run last compared (all hosts), which a rank's page reads for the wait for a straggler
    this.job = null;
    this.overview = null;
    this.timeline = reportTimeline(
      () => this.report ? this.report.report : null,
      (check, index) => this.report?.select(check, index, true)
    );
    this.toolbar = new Toolbar({
      overview: () => void this.showOverview(),
      run: (run) => void this.openRun(run),
      host: (host) => {
        const { run, cycle, view, table, group, sort, order, filter } = this.router.state;
        void this.openRun(run, { host, cycle, view, table, group, sort, order, filter });
      },
      compare: (compare, compare_host) => {
        const { run, host } = this.router.state;
        void this.openRun(run, { host, compare, compare_host });
      },
      shareUrl: () => this.router.shareUrl(),
      state: () => this.router.state
    });
  }
  async start() {
    applyTheme((dark) => this.timeline.setDark(dark));
    append(this.root, this.toolbar.element, this.meta, this.main);
    this.router.state = this.router.initial();
    this.router.listen((wanted) => void this.applyUrl(wanted));
    const { runs, checks } = await loadRuns();
    if (!runs.ok) return this.fail(`Could not list runs: ${runs.message}`);
    this.toolbar.setRuns(runs.body, this.router.state);
    if (checks) {
      this.checks = checks;
      setTables(checks.tables);
    }
    if (!runs.body.runs.length) {
      this.toolbar.empty();
      return this.put(emptyView(runs.body.legacy, runs.body.logdir_file));
    }
    await this.applyUrl(this.router.state);
  }
  /** Open the view a state names: within the report shown when only its view changed. */
  async applyUrl(wanted) {
    const { run, host } = this.router.state;
    if (this.report && !wanted.compare && wanted.run === run && wanted.host === host) return this.report.open(wanted);
    const known2 = this.toolbar.runs.runs.find((r) => r.run === wanted.run);
    if (known2) await this.openRun(known2.run, wanted);
    else await this.showOverview();
  }
  /** `node` in place of the view. */
  put(node) {
    clear(this.main);
    this.main.appendChild(node);
  }
  fail(message) {
    this.put(errorView(message));
  }
  leaveView() {
    this.overview?.stop();
    this.overview = null;
    this.report?.stop();
    this.report = null;
    clear(this.meta);
    clear(this.main);
  }
  /** Every run and host at a glance (the first view when the URL names no run). */
  async showOverview() {
    this.loader.begin();
    this.leaveView();
    this.router.set({ view: "overview" });
    this.toolbar.showOverview();
    const view = new OverviewView((run, host) => void this.openRun(run, { host }));
    this.overview = view;
    this.main.appendChild(el("div", { class: "layout single" }, view.element));
    const runs = await view.start();
    if (runs && this.overview === view) this.toolbar.setRuns(runs, this.router.state);
  }
  /** A run: one host (the slowest of a multi-host run when none is named), or all its hosts; the
   * view within it (`want`) as a URL names it. */
  async openRun(run, want = {}) {
    const token = this.loader.begin();
    this.leaveView();
    this.router.state = { run };
    this.toolbar.showRun(run);
    const { finding, compare, compare_host, cycle } = want;
    const hosts = this.toolbar.hostsOf(run).map((h) => h.host);
    let host = want.host;
    if (host !== ALL_HOSTS && (!host || !hosts.includes(host))) {
      host = hosts[0];
      if (hosts.length > 1) {
        const all = await this.runReports(token, run, cycle);
        if (!all) return;
        if (all.ok) this.job = { run, cycle, runs: all.body.runs };
        host = (all.ok ? all.body.runs[0]?.slowest_host : void 0) ?? hosts[0];
        void this.refreshStatuses(token);
      }
    }
    const table = host !== ALL_HOSTS && tableOf(want);
    let state = table ? { run, host, cycle, ...tableState(table) } : { run, host, finding, cycle };
    let missing;
    if (compare && host !== ALL_HOSTS) {
      const theirs = this.toolbar.hostsOf(compare).map((h) => h.host);
      const other = compare_host ?? (theirs.length === 1 ? theirs[0] : void 0);
      if (other) state = { run, host, compare, compare_host: other };
      else missing = compareHostMissing(compare, theirs);
    }
    this.router.state = state;
    this.toolbar.showHost(state);
    if (missing) {
      this.router.write();
      return this.fail(missing);
    }
    if (host === ALL_HOSTS) return this.showHosts(token, run);
    if (state.compare) return this.showComparison(token);
    await this.load(token);
  }
  /** Every host of a run, compared; null when the view was left meanwhile. */
  async runReports(token, run, cycle) {
    append(this.main, progressView(`Analysing the hosts of ${run}…`).element);
    const res = await this.loader.runReports(token, run, cycle);
    if (res) clear(this.main);
    return res;
  }
  async showHosts(token, run) {
    this.router.write();
    this.toolbar.setExport(null);
    const { cycle } = this.router.state;
    const all = await this.runReports(token, run, cycle);
    if (!all) return;
    if (!all.ok) return this.fail(`Could not analyse the hosts of ${run}: ${all.message}`);
    this.job = { run, cycle, runs: all.body.runs };
    void this.refreshStatuses(token);
    const arrived = performance.now();
    new JobView(all.body.reports, all.body.runs[0], {
      open: (host) => void this.openRun(run, { host, cycle }),
      pickCycle: (k) => void this.openRun(run, { host: ALL_HOSTS, cycle: String(k) }),
      collectiveTime: collectiveTimeChecks(this.checks.checks)
    }).mount(this.main, arrived);
  }
  /** This run against the base it is compared with. */
  async showComparison(token) {
    const { run, host, compare, compare_host } = this.router.state;
    this.router.write();
    this.toolbar.setExport(null);
    this.put(progressView(`Comparing ${run} with ${compare}…`).element);
    const res = await this.loader.compare(token, run, host, compare, compare_host);
    if (!res) return;
    if (!res.ok) return this.fail(res.message);
    const back = () => void this.openRun(run, { host });
    const swap = () => void this.openRun(compare, { host: compare_host, compare: run, compare_host: host });
    this.put(el("div", { class: "layout single" }, compareView(res.body, back, swap)));
  }
  /** The run and host pickers' statuses, once the hosts they label are analysed (a run opened by
   * link, before any overview, lists its hosts without them). */
  async refreshStatuses(token) {
    const runs = await reloadRuns();
    if (!runs || !this.loader.isCurrent(token)) return;
    this.toolbar.setRuns(runs, this.router.state);
    this.toolbar.showHost(this.router.state);
  }
  /** One host's report, showing progress while the analysis runs. */
  async load(token) {
    const { run, host } = this.router.state;
    if (!run || !host) return;
    this.router.write();
    this.toolbar.setExport({ run, host });
    const progress = progressView(`Analysing ${run} · ${host}…`, true);
    this.put(progress.element);
    const res = await this.loader.report(token, run, host, progress.set);
    if (!res) return;
    if (!res.ok) return this.fail(res.status === 422 ? `This profile could not be read.
${res.message}` : res.message);
    void this.refreshStatuses(token);
    const view = (v, replace) => {
      const { run: run2, host: host2, cycle } = this.router.state;
      this.router.set({ run: run2, host: host2, cycle, ...v }, replace);
    };
    this.report = new ReportView(
      res.body,
      { timeline: this.timeline, checks: this.checks, view, openTab: (href) => this.router.openTab(href) },
      this.meta,
      this.main
    );
    this.report.open(this.router.state);
    const job = this.job;
    if (job && job.run === run && job.cycle === this.router.state.cycle) {
      const text = jobWaitText(job.runs, host);
      if (text) this.report.noteJob(collectiveTimeChecks(this.checks.checks), text);
    }
  }
};

// src/index.ts
async function render() {
  const root = document.createElement("div");
  root.id = "gpu-advisor";
  document.body.appendChild(root);
  await new App(root).start();
}
export {
  render
};
