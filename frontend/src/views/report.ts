// One host's report: the devices and steps above it, then its findings (headline, timeline, findings,
// checklist, step breakdown) or its tables, one finding selected or one table open.

import {append, clear, el} from '../dom';
import {fmtDuration} from '../format';
import {eventAt, timelineWindow} from '../loader';
import {CatalogueResponse, Report} from '../schema.gen';
import {SEGMENT_COLORS} from '../style';
import {TimelineView} from '../timeline';
import {PanelState, TableView, tableOf, tableState, tbBase} from '../urlstate';
import {breakdownView} from './breakdown';
import {checklistView} from './checklist';
import {card} from './common';
import {FindingsView} from './findings';
import {headlineView} from './headline';
import {markTab, TableLink, TablesView, viewTabs} from './tables';

export interface ReportContext {
  timeline: TimelineView;
  /** The catalogue of checks and what each headline number measures. */
  checks: CatalogueResponse;
  /** The view within the report changed (the finding selected, the table shown); `replace` when it
   * is a change within the same table (its sort, its filter). */
  view: (state: PanelState, replace?: boolean) => void;
  /** Opens a TensorBoard tab in place; false when it cannot. */
  openTab: (href: string) => boolean;
}

/** The timeline of the report shown (`shown` names its run and host, or none). */
export function reportTimeline(
  shown: () => {run: string; host: string} | null,
  onSelect: (check: string, index: number) => void,
): TimelineView {
  return new TimelineView({
    load: async (w, width) => {
      const s = shown();
      return s ? timelineWindow(s.run, s.host, w, width) : null;
    },
    hover: async (track, t, tolerance) => {
      const s = shown();
      return s ? eventAt(s.run, s.host, track, t, tolerance) : null;
    },
    onSelect,
  });
}

export class ReportView {
  private readonly findings: FindingsView;
  private readonly tables: TablesView;
  private readonly findingsLayout: HTMLElement;

  constructor(
    readonly report: Report,
    private readonly ctx: ReportContext,
    meta: HTMLElement,
    private readonly main: HTMLElement,
  ) {
    const {timeline} = ctx;
    clear(main);
    append(meta, ...metaView(report));
    const base = tbBase(window.location.pathname);
    this.findings = new FindingsView(report, {
      base,
      select: (id, index, zoom, toggle) => this.select(id, index, zoom, toggle),
      openTable: (link) => this.openTable(link),
      openTab: ctx.openTab,
    });
    const timelineCard = card(
      'timeline-card',
      'Timeline',
      el(
        'div',
        {class: 'tl-tools'},
        el('button', {type: 'button', 'aria-label': 'Zoom in', onclick: () => timeline.zoomBy(0.5)}, '+'),
        el('button', {type: 'button', 'aria-label': 'Zoom out', onclick: () => timeline.zoomBy(2)}, '−'),
        el('button', {type: 'button', 'aria-label': 'Earlier', onclick: () => timeline.panBy(-0.25)}, '←'),
        el('button', {type: 'button', 'aria-label': 'Later', onclick: () => timeline.panBy(0.25)}, '→'),
        el('button', {type: 'button', id: 'timeline-steps', onclick: () => timeline.resetZoom()}, 'Steps'),
        el('button', {type: 'button', id: 'timeline-reset', onclick: () => timeline.showAll()}, 'Whole profile'),
        timeline.info,
      ),
      timeline.element,
      legend(),
    );
    const breakdown = breakdownView(report, (start, end) => {
      timeline.zoomTo(start, end);
      timelineCard.scrollIntoView({block: 'nearest'});
    });
    this.tables = new TablesView({
      base,
      run: report.run,
      host: report.host,
      framework: report.framework ?? 'unknown',
      // a new table is a history entry; its sort and filter replace the entry
      onChange: (view, open) => ctx.view(tableState(view), !open),
    });
    this.tables.element.hidden = true;
    this.findingsLayout = el(
      'div',
      {class: 'layout'},
      el('div', {class: 'wide'}, headlineView(report, ctx.checks.definitions)),
      el('div', {class: 'wide'}, timelineCard),
      el('div', {class: 'col'}, this.findings.element),
      el(
        'div',
        {class: 'col'},
        checklistView(report, ctx.checks.checks, (id) => this.select(id, 0, true)),
      ),
      el('div', {class: 'wide'}, breakdown),
    );
    append(
      main,
      viewTabs(
        () => this.showFindings(),
        () => this.showTables(),
      ),
      this.findingsLayout,
      el('div', {class: 'layout single'}, this.tables.element),
    );
    const steps = report.step_breakdown ?? [];
    timeline.reset(
      report.extent_ms ?? Math.max(0, ...steps.map((x) => x.end_ms)),
      steps.length ? {start: steps[0].start_ms, end: steps[steps.length - 1].end_ms} : undefined,
    );
  }

  stop(): void {
    this.tables.stop();
  }

  /** The view within the report a state names: a table, or the findings with one selected. */
  /** A line from the job under the summary of each of these findings. */
  noteJob(checks: string[], text: string): void {
    this.findings.noteJob(checks, text);
  }

  open(state: PanelState): void {
    const view = tableOf(state);
    if (view) this.showTables(view);
    else this.showFindings(state.finding);
  }

  /** The findings, with a finding selected ("<id>[:<evidence>]"). */
  showFindings(finding?: string): void {
    this.tables.stop();
    this.tables.element.hidden = true;
    this.findingsLayout.hidden = false;
    markTab(this.main, 'findings');
    this.ctx.view({finding});
    if (finding) {
      const [id, idx] = finding.split(':');
      if (this.report.checks.some((c) => c.id === id)) this.select(id, Number(idx) || 0, true);
    }
  }

  /** A table of the report. */
  showTables(view?: TableView, atMs?: number | null): void {
    view ??= this.tables.current;
    this.findingsLayout.hidden = true;
    this.tables.element.hidden = false;
    markTab(this.main, 'tables');
    this.tables.open(view, atMs);
    this.ctx.view(tableState(this.tables.current));
  }

  /** A finding's link: its table filtered to its own names (memory: the curve, its peak marked). */
  private openTable(link: TableLink): void {
    const names = (link.name ?? []).slice(0, 50);
    this.showTables({table: link.table, names, filter: link.q ?? undefined}, link.at_ms);
  }

  /** Select a finding: open it, zoom the timeline to its evidence, and keep it in the URL. */
  select(id: string, index: number, zoom: boolean, toggle = false): void {
    const f = this.report.checks.find((c) => c.id === id);
    if (!f) return;
    this.findings.select(id, toggle);
    this.ctx.view({finding: index ? `${id}:${index}` : id});
    const e = f.evidence[index] ?? f.evidence[0];
    if (zoom && e) this.ctx.timeline.show(id, f.evidence.indexOf(e), e.start_ms, e.end_ms, e);
  }
}

/** Above the report: its GPUs and steps, then what the profiler reported and the reader noted. */
function metaView(report: Report): (Node | string)[] {
  const s = report.steps;
  const out: (Node | string)[] = [
    report.devices.length
      ? report.devices
          .map((d) => {
            // an AMD GPU has no compute capability: its architecture says what it is
            const cc = d.compute_capability ?? (d.architecture ? null : '?');
            return `GPU ${d.id}: ${d.name} (${[d.architecture, cc && `cc ${cc}`].filter(Boolean).join(', ')})`;
          })
          .join(' · ')
      : 'No GPU in this profile',
    s ? ` · ${stepsText(s)}` : '',
  ];
  for (const e of report.errors) out.push(el('div', {class: 'error'}, e));
  for (const m of report.capture_errors ?? [])
    // the advisor's own capture error (events outside the capture) is not the profiler's words
    out.push(
      el(
        'div',
        {class: 'notice'},
        `${m.includes('outside the capture were dropped') ? 'Capture' : 'The profiler said'}: ${m}`,
      ),
    );
  for (const m of report.warnings) out.push(el('div', {class: 'notice muted'}, `Note: ${m}`));
  return out;
}

function legend(): HTMLElement {
  return el(
    'div',
    {class: 'legend'},
    ...(
      [
        ['compute', 'compute'],
        ['collective', 'collective'],
        ['copy', 'copy'],
        ['input', 'input'],
        ['launch', 'launch'],
        ['op', 'op'],
        ['other', 'other host'],
      ] as const
    ).map(([key, name]) => {
      const i = el('i');
      i.style.background = SEGMENT_COLORS[key];
      return el('span', {}, i, name);
    }),
  );
}

/** The steps in the header. GPUs measured each in its own steps (a partial capture, no host markers)
 * have their own step times: each is named, not the first GPU's shown as the run's. */
export function stepsText(s: NonNullable<Report['steps']>): string {
  const src = `${s.source}${s.marker ? ` "${s.marker}"` : ''}`;
  const perGpu = s.per_gpu ?? [];
  const own = perGpu.length > 1 && new Set(perGpu.map((g) => g.mean_ms)).size > 1;
  if (own)
    return `steps per GPU (${src}): ${perGpu
      .map((g) => `GPU ${g.device_id} ${g.count} step${g.count === 1 ? '' : 's'}, mean ${fmtDuration(g.mean_ms)}`)
      .join('; ')}`;
  return `${s.count} step${s.count === 1 ? '' : 's'} (${src}), mean ${fmtDuration(s.mean_ms)} ± ${fmtDuration(s.stdev_ms)}`;
}
