// The panel's styles: TensorBoard's font and colours, light and dark.

export const CATEGORY_COLORS: Record<string, string> = {
  device_compute: '#4285f4',
  device_collectives: '#a142f4',
  memcpy_h2d: '#fa7b17',
  memcpy_d2h: '#f439a0',
  memcpy_d2d: '#b06000',
  host_input_wait: '#ea4335',
  kernel_launch_wait: '#f9ab00',
  idle_other: '#bdbdbd',
};

export const CATEGORY_LABELS: Record<string, string> = {
  device_compute: 'Device compute',
  device_collectives: 'Collectives',
  memcpy_h2d: 'Memcpy H2D',
  memcpy_d2h: 'Memcpy D2H',
  memcpy_d2d: 'Memcpy D2D/P2P',
  host_input_wait: 'Waiting for input',
  kernel_launch_wait: 'Kernel launch wait',
  idle_other: 'Idle / other',
};

export const SEGMENT_COLORS: Record<string, string> = {
  compute: '#4285f4',
  collective: '#a142f4',
  copy: '#fa7b17',
  input: '#ea4335',
  launch: '#f9ab00',
  op: '#12b5cb',
  other: '#9aa0a6',
};

export const STATUS_COLORS: Record<string, string> = {
  critical: '#d93025',
  warning: '#e37400',
  info: '#1a73e8',
  pass: '#188038',
  'not-applicable': '#80868b',
};

export const CSS = `
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
