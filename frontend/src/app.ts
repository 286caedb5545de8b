// The GPU Advisor panel: a shell that keeps the state (run, host, finding, table view) in TensorBoard's
// URL and switches between the overview of the logdir, one host of a run (its findings or its tables),
// and all hosts of a run. The views
// (views/*.ts) render the plugin's JSON and never recompute a diagnosis.

import {errorMessage, exportUrl, getJson} from './api';
import {append, clear, el} from './dom';
import {fmtDuration} from './format';
import {
  CatalogueEntry,
  CatalogueResponse,
  Diff,
  EventResponse,
  Report,
  RunReports,
  RunsResponse,
  TimelineResponse,
} from './schema.gen';
import {CSS, SEGMENT_COLORS} from './style';
import {TimelineView} from './timeline';
import {
  ALL_HOSTS,
  PLUGIN,
  PanelState,
  STATE_KEYS,
  TableView,
  parseHash,
  readState,
  shareUrl,
  tableOf,
  tableState,
  tbBase,
  writeState,
} from './urlstate';
import {breakdownView} from './views/breakdown';
import {checklistView} from './views/checklist';
import {compareView} from './views/compare';
import {card} from './views/common';
import {FindingsView} from './views/findings';
import {headlineView} from './views/headline';
import {JobView} from './views/hosts';
import {OverviewView} from './views/overview';
import {markTab, TableLink, TablesView, viewTabs} from './views/tables';

const POLL_WAIT_S = 2;
const RANK: Record<string, number> = {critical: 0, error: 1, warning: 2, info: 3, pass: 4};

function parentWindow(): (Window & typeof globalThis) | null {
  try {
    // same origin: TensorBoard loads the panel in an iframe of its own page
    return window.parent !== window && window.parent.location.href
      ? (window.parent as Window & typeof globalThis)
      : null;
  } catch {
    return null;
  }
}

/** The worst status among a run's analysed hosts, or '' while none is analysed. */
function runStatus(run: RunsResponse['runs'][number]): string {
  let best = '';
  for (const h of run.hosts) {
    const a = h.analysis;
    const s = a.state === 'error' ? 'error' : a.state === 'done' ? (a.worst?.status ?? 'pass') : '';
    if (s && (!best || RANK[s] < RANK[best])) best = s;
  }
  return best;
}

export class App {
  private state: PanelState = {};
  private runs: RunsResponse = {advisor_version: '', runs: [], legacy: []};
  private catalogue: CatalogueEntry[] = [];
  private definitions: Record<string, string> = {};
  private report: Report | null = null;
  private findings: FindingsView | null = null;
  private overview: OverviewView | null = null;
  private tables: TablesView | null = null;
  private findingsLayout: HTMLElement | null = null;
  private readonly bar = el('div', {class: 'bar'});
  private readonly meta = el('div', {class: 'meta', id: 'meta'});
  private readonly main = el('div', {id: 'main'});
  private readonly overviewButton = el('button', {type: 'button', id: 'overview-button'}, 'All runs');
  private readonly runSelect = el('select', {id: 'run-select', 'aria-label': 'Run'});
  private readonly hostSelect = el('select', {id: 'host-select', 'aria-label': 'Host'});
  private readonly compareSelect = el('select', {
    id: 'compare-select',
    'aria-label': 'Compare with a run before a change',
  });
  private readonly share = el('input', {
    class: 'share',
    id: 'share-link',
    readonly: true,
    'aria-label': 'Link to this view',
  });
  private readonly shareNote = el('span', {class: 'muted', id: 'share-note'});
  private readonly exportLink = el(
    'a',
    {
      id: 'export-link',
      href: './export',
      download: true,
      title: 'The whole profile as Chrome trace JSON, with the findings as a track',
    },
    'Export trace',
  );
  private readonly timeline: TimelineView;
  private loadToken = 0;
  private runError = '';
  // the next URL write replaces the history entry instead of adding one: the first view, and a view
  // applied from the URL (Back, Forward, a pasted link)
  private replaceNext = true;

  constructor(private readonly root: HTMLElement) {
    this.timeline = new TimelineView({
      load: async (w, width) => {
        const {run, host} = this.state;
        if (!run || !host || !this.report) return null;
        const res = await getJson<TimelineResponse>('timeline', {
          run,
          host,
          start_ms: w.start,
          end_ms: w.end,
          width,
        });
        return res.status === 200 ? res.body : null;
      },
      hover: async (track, t, tolerance) => {
        const {run, host} = this.state;
        if (!run || !host) return null;
        const res = await getJson<EventResponse>('event', {run, host, track, t_ms: t, tolerance_ms: tolerance});
        return res.status === 200 ? res.body : null;
      },
      onSelect: (check, index) => this.select(check, index, true),
    });
  }

  async start(): Promise<void> {
    const style = document.createElement('style');
    style.textContent = CSS;
    document.head.appendChild(style);
    this.watchDarkMode();
    this.share.hidden = true;
    append(
      this.bar,
      el('h1', {}, 'GPU Advisor'),
      this.overviewButton,
      el('label', {for: 'run-select'}, 'Run', this.runSelect),
      el('label', {for: 'host-select'}, 'Host', this.hostSelect),
      el(
        'label',
        {for: 'compare-select', title: 'Compare this run (after a change) with the run before it'},
        'Before',
        this.compareSelect,
      ),
      el('span', {class: 'spacer'}),
      this.exportLink,
      el('button', {id: 'copy-link', type: 'button', onclick: () => void this.copyLink()}, 'Copy link'),
      this.share,
      this.shareNote,
    );
    append(this.root, this.bar, this.meta, this.main);
    this.overviewButton.addEventListener('click', () => void this.showOverview());
    this.runSelect.addEventListener('change', () => {
      if (this.runSelect.value) void this.openRun(this.runSelect.value);
      else void this.showOverview();
    });
    this.hostSelect.addEventListener('change', () => {
      // another host of the run opens on the same table, sort and filter (a finding's names are this host's)
      const table = tableOf(this.state);
      if (table) delete table.names;
      void this.openRun(
        this.state.run!,
        this.hostSelect.value,
        undefined,
        undefined,
        undefined,
        table,
        this.state.cycle,
      );
    });
    this.compareSelect.addEventListener('change', () => {
      const [run, host] = this.compareSelect.value ? JSON.parse(this.compareSelect.value) : [undefined, undefined];
      void this.openRun(this.state.run!, this.state.host, undefined, run, host);
    });
    const parent = parentWindow();
    this.state = parent ? readState(parent.location.hash) : readState(window.location.hash);
    // Back, Forward and a link pasted into the open tab change the URL without reloading: apply it
    parent?.addEventListener('popstate', () => void this.applyUrl());
    parent?.addEventListener('hashchange', () => void this.applyUrl());
    const [runs, checks] = await Promise.all([getJson<RunsResponse>('runs'), getJson<CatalogueResponse>('checks')]);
    if (runs.status !== 200) return this.fail(`Could not list runs: ${errorMessage(runs.body)}`);
    this.setRuns(runs.body);
    if (checks.status === 200) {
      this.catalogue = checks.body.checks;
      this.definitions = checks.body.definitions;
    }
    if (!this.runs.runs.length) return this.empty();
    const known = this.runs.runs.find((r) => r.run === this.state.run);
    if (known) {
      const {host, finding, compare, compare_host, cycle} = this.state;
      await this.openRun(known.run, host, finding, compare, compare_host, tableOf(this.state), cycle);
    } else await this.showOverview();
  }

  private empty(): void {
    clear(this.main);
    this.bar
      .querySelectorAll('label, #overview-button, #export-link, #copy-link')
      .forEach((n) => ((n as HTMLElement).hidden = true));
    append(
      this.main,
      el(
        'div',
        {class: 'message'},
        el('p', {}, 'No profile runs in this logdir.'),
        el(
          'p',
          {class: 'muted'},
          'TensorFlow and JAX write <logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb: the Keras TensorBoard callback (profile_batch=(10, 15)) under log_dir/train, tf.profiler.experimental.start(logdir), jax.profiler.trace(logdir).',
        ),
        el(
          'p',
          {class: 'muted'},
          'PyTorch writes <logdir>/<run>/<worker>.<span>.pt.trace.json or .pt.trace.json.gz: torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir/run)).',
        ),
        ...this.runs.legacy.map((l) => el('p', {class: 'muted'}, `${l.run}: ${l.message}`)),
      ),
    );
  }

  /** The run picker, each run labelled with its worst status once analysed. */
  private setRuns(runs: RunsResponse): void {
    this.runs = runs;
    const value = this.runSelect.value;
    clear(this.runSelect);
    this.runSelect.appendChild(new Option('— all runs —', ''));
    for (const r of runs.runs) {
      const s = runStatus(r);
      const o = new Option(s ? `${r.run} · ${s}` : r.run, r.run);
      o.dataset.status = s;
      this.runSelect.appendChild(o);
    }
    this.runSelect.value = this.state.run ?? value ?? '';
    this.fillCompare();
  }

  /** "Compare with": every other run and host, as the base a change is measured against. */
  private fillCompare(): void {
    clear(this.compareSelect);
    this.compareSelect.appendChild(new Option('—', ''));
    for (const r of this.runs.runs)
      for (const h of r.hosts) {
        if (r.run === this.state.run && h.host === this.state.host) continue;
        this.compareSelect.appendChild(
          new Option(r.hosts.length > 1 ? `${r.run} · ${h.host}` : r.run, JSON.stringify([r.run, h.host])),
        );
      }
    this.compareSelect.value = this.state.compare ? JSON.stringify([this.state.compare, this.state.compare_host]) : '';
    this.compareSelect.disabled = !this.state.run || this.state.host === ALL_HOSTS;
  }

  private watchDarkMode(): void {
    const parent = parentWindow();
    const apply = () => {
      const dark = !!parent && parent.document.body.classList.contains('dark-mode');
      document.body.classList.toggle('dark', dark);
      this.timeline.setDark(dark);
    };
    apply();
    if (parent)
      new MutationObserver(apply).observe(parent.document.body, {attributes: true, attributeFilter: ['class']});
  }

  private hostsOf(run: string): RunsResponse['runs'][number]['hosts'] {
    return this.runs.runs.find((r) => r.run === run)?.hosts ?? [];
  }

  private fillHosts(): void {
    clear(this.hostSelect);
    const hosts = this.hostsOf(this.state.run ?? '');
    if (hosts.length > 1) this.hostSelect.appendChild(new Option('all hosts', ALL_HOSTS));
    for (const h of hosts) {
      const a = h.analysis;
      const s = a.state === 'error' ? 'error' : a.state === 'done' ? (a.worst?.status ?? 'pass') : '';
      const o = new Option(s ? `${h.host} · ${s}` : h.host, h.host);
      o.dataset.status = s;
      this.hostSelect.appendChild(o);
    }
    this.hostSelect.value = this.state.host ?? '';
    this.hostSelect.disabled = hosts.length < 2;
  }

  /** The view in the URL: a new history entry for each view the user opens, so that Back returns to
   * the one before it (the first view and one applied from the URL replace theirs). */
  private writeUrl(replaceThis = false): void {
    const parent = parentWindow();
    const replace = this.replaceNext || replaceThis;
    this.replaceNext = false;
    if (!parent) return;
    try {
      const hash = writeState(parent.location.hash, this.state);
      if (hash === parent.location.hash) return;
      const url = parent.location.pathname + parent.location.search + hash;
      if (replace) parent.history.replaceState(parent.history.state, '', url);
      else parent.history.pushState(parent.history.state, '', url);
    } catch {
      // the page may refuse (sandboxed embedding): the Copy link button still works
    }
  }

  /** Open the view the URL names, when it is not the one shown (Back, Forward, a pasted link). */
  private async applyUrl(): Promise<void> {
    const parent = parentWindow();
    if (!parent || parseHash(parent.location.hash).tab !== PLUGIN) return;
    const wanted = readState(parent.location.hash);
    if (STATE_KEYS.every((k) => (wanted[k] ?? '') === (this.state[k] ?? ''))) return;
    this.replaceNext = true;
    if (this.report && !wanted.compare && wanted.run === this.state.run && wanted.host === this.state.host) {
      // the same report: only the view within it changed
      const view = tableOf(wanted);
      if (view) this.showTables(view);
      else this.showFindings(wanted.finding);
      return;
    }
    const known = this.runs.runs.find((r) => r.run === wanted.run);
    if (known)
      await this.openRun(
        known.run,
        wanted.host,
        wanted.finding,
        wanted.compare,
        wanted.compare_host,
        tableOf(wanted),
        wanted.cycle,
      );
    else await this.showOverview();
  }

  private async copyLink(): Promise<void> {
    const parent = parentWindow();
    const url = shareUrl((parent ?? window).location.href, this.state);
    this.share.value = url;
    this.share.hidden = false;
    this.share.select();
    try {
      await navigator.clipboard.writeText(url);
      this.shareNote.textContent = 'Link copied';
    } catch {
      this.shareNote.textContent = 'Press Ctrl+C to copy';
    }
  }

  private fail(message: string): void {
    clear(this.main);
    append(this.main, el('div', {class: 'message'}, el('p', {class: 'error', role: 'alert'}, message)));
  }

  private leaveView(): void {
    this.overview?.stop();
    this.overview = null;
    this.tables?.stop();
    this.tables = null;
    this.findingsLayout = null;
    this.report = null;
    this.findings = null;
    clear(this.meta);
    clear(this.main);
  }

  /** Every run and host at a glance (the first view when the URL names no run). */
  private async showOverview(): Promise<void> {
    ++this.loadToken;
    this.leaveView();
    this.state = {};
    this.writeUrl();
    this.runSelect.value = '';
    clear(this.hostSelect);
    this.hostSelect.disabled = true;
    this.fillCompare();
    this.exportLink.hidden = true;
    const view = new OverviewView((run, host) => void this.openRun(run, host));
    this.overview = view;
    this.main.appendChild(el('div', {class: 'layout single'}, view.element));
    const runs = await view.start();
    if (runs && this.overview === view) this.setRuns(runs);
  }

  /** A run: one host (the slowest of a multi-host run when none is named), or all its hosts. */
  private async openRun(
    run: string,
    host?: string,
    finding?: string,
    compare?: string,
    compareHost?: string,
    table?: TableView | null,
    cycle?: string,
  ): Promise<void> {
    const token = ++this.loadToken;
    this.leaveView();
    this.state = {run};
    this.runSelect.value = run;
    const hosts = this.hostsOf(run).map((h) => h.host);
    if (host !== ALL_HOSTS && (!host || !hosts.includes(host))) {
      host = hosts[0];
      if (hosts.length > 1) {
        // open on the slowest host: the run's hosts compared
        const all = await this.fetchRunReports(run, token, cycle);
        if (token !== this.loadToken) return;
        host = all?.runs[0]?.slowest_host ?? hosts[0];
      }
    }
    this.state = table && host !== ALL_HOSTS ? {run, host, cycle, ...tableState(table)} : {run, host, finding, cycle};
    if (compare && compareHost && host !== ALL_HOSTS) this.state = {run, host, compare, compare_host: compareHost};
    this.fillHosts();
    this.fillCompare();
    if (host === ALL_HOSTS) return this.showHosts(run, token);
    if (this.state.compare) return this.showComparison(token);
    await this.load(token);
  }

  private async fetchRunReports(run: string, token: number, cycle?: string): Promise<RunReports | null> {
    const label = el('p', {id: 'progress-label'}, `Analysing the hosts of ${run}…`);
    append(this.main, el('div', {class: 'message', id: 'progress'}, label));
    for (;;) {
      const res = await getJson<RunReports>('report', {run, wait: POLL_WAIT_S, cycle});
      if (token !== this.loadToken) return null;
      if (res.status === 202) continue;
      clear(this.main);
      this.runError = res.status === 200 ? '' : errorMessage(res.body);
      return res.status === 200 ? res.body : null;
    }
  }

  private async showHosts(run: string, token: number): Promise<void> {
    this.writeUrl();
    this.exportLink.hidden = true;
    const {cycle} = this.state;
    const all = await this.fetchRunReports(run, token, cycle);
    if (token !== this.loadToken) return;
    if (!all) return this.fail(`Could not analyse the hosts of ${run}: ${this.runError}`);
    const arrived = performance.now();
    const view = new JobView(all.reports, all.runs[0], {
      open: (h) => void this.openRun(run, h, undefined, undefined, undefined, null, cycle),
      pickCycle: (k) => void this.openRun(run, ALL_HOSTS, undefined, undefined, undefined, null, String(k)),
    });
    this.main.appendChild(el('div', {class: 'layout single'}, view.element));
    view.strip?.draw();
    // from the answer (parsed) to the picture drawn and painted; the browser tests read both
    requestAnimationFrame(() => {
      view.element.dataset.paintedAt = performance.now().toFixed(1);
      view.element.dataset.renderMs = (performance.now() - arrived).toFixed(1);
    });
  }

  /** This run against the base it is compared with. */
  private async showComparison(token: number): Promise<void> {
    const {run, host, compare, compare_host} = this.state;
    this.writeUrl();
    this.exportLink.hidden = true;
    clear(this.main);
    const label = el('p', {id: 'progress-label'}, `Comparing ${run} with ${compare}…`);
    append(this.main, el('div', {class: 'message', id: 'progress'}, label));
    for (;;) {
      const res = await getJson<Diff>('compare', {
        run,
        host,
        base_run: compare,
        base_host: compare_host,
        wait: POLL_WAIT_S,
      });
      if (token !== this.loadToken) return;
      if (res.status === 202) continue;
      clear(this.main);
      if (res.status !== 200) return this.fail(errorMessage(res.body));
      this.main.appendChild(
        el(
          'div',
          {class: 'layout single'},
          compareView(
            res.body,
            () => void this.openRun(run!, host),
            () => void this.openRun(compare!, compare_host, undefined, run, host),
          ),
        ),
      );
      return;
    }
  }

  /** Fetch the report, showing progress while the analysis runs. */
  private async load(token: number): Promise<void> {
    const {run, host} = this.state;
    if (!run || !host) return;
    this.writeUrl();
    this.exportLink.hidden = false;
    this.exportLink.setAttribute('href', exportUrl(run, host));
    clear(this.main);
    const bar = el('div');
    const label = el('p', {id: 'progress-label'}, `Analysing ${run} · ${host}…`);
    append(this.main, el('div', {class: 'message', id: 'progress'}, label, el('div', {class: 'progress'}, bar)));
    bar.style.width = '0%';
    for (;;) {
      const res = await getJson<Report & {pending?: boolean; progress?: number}>('report', {
        run,
        host,
        wait: POLL_WAIT_S,
      });
      if (token !== this.loadToken) return; // the user picked another run meanwhile
      if (res.status === 202) {
        const p = Math.round(100 * (res.body.progress ?? 0));
        bar.style.width = `${p}%`;
        label.textContent = `Analysing ${run} · ${host}… ${p}%`;
        continue;
      }
      if (res.status === 200) return this.show(res.body);
      if (res.status === 422) return this.fail(`This profile could not be read.\n${errorMessage(res.body)}`);
      return this.fail(errorMessage(res.body));
    }
  }

  private show(report: Report): void {
    this.report = report;
    clear(this.main);
    const s = report.steps;
    append(
      this.meta,
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
    );
    for (const e of report.errors) append(this.meta, el('div', {class: 'error'}, e));
    for (const m of report.capture_errors ?? [])
      // the advisor's own capture error (events outside the capture) is not the profiler's words
      append(
        this.meta,
        el(
          'div',
          {class: 'notice'},
          `${m.includes('outside the capture were dropped') ? 'Capture' : 'The profiler said'}: ${m}`,
        ),
      );
    for (const m of report.warnings) append(this.meta, el('div', {class: 'notice muted'}, `Note: ${m}`));
    this.findings = new FindingsView(report, {
      base: tbBase(window.location.pathname),
      select: (id, index, zoom, toggle) => this.select(id, index, zoom, toggle),
      openTable: (link) => this.openTable(link),
    });
    const timelineCard = card(
      'timeline-card',
      'Timeline',
      el(
        'div',
        {class: 'tl-tools'},
        el('button', {type: 'button', 'aria-label': 'Zoom in', onclick: () => this.timeline.zoomBy(0.5)}, '+'),
        el('button', {type: 'button', 'aria-label': 'Zoom out', onclick: () => this.timeline.zoomBy(2)}, '−'),
        el('button', {type: 'button', 'aria-label': 'Earlier', onclick: () => this.timeline.panBy(-0.25)}, '←'),
        el('button', {type: 'button', 'aria-label': 'Later', onclick: () => this.timeline.panBy(0.25)}, '→'),
        el('button', {type: 'button', id: 'timeline-steps', onclick: () => this.timeline.resetZoom()}, 'Steps'),
        el('button', {type: 'button', id: 'timeline-reset', onclick: () => this.timeline.showAll()}, 'Whole profile'),
        this.timeline.info,
      ),
      this.timeline.element,
      legend(),
    );
    const breakdown = breakdownView(report, (start, end) => {
      this.timeline.zoomTo(start, end);
      timelineCard.scrollIntoView({block: 'nearest'});
    });
    this.tables = new TablesView({
      base: tbBase(window.location.pathname),
      run: report.run,
      host: report.host,
      framework: report.framework ?? 'unknown',
      onChange: (view, open) => {
        this.state = {run: this.state.run, host: this.state.host, cycle: this.state.cycle, ...tableState(view)};
        this.writeUrl(!open); // a new table is a history entry; its sort and filter replace the entry
      },
    });
    this.tables.element.hidden = true;
    this.findingsLayout = el(
      'div',
      {class: 'layout'},
      el('div', {class: 'wide'}, headlineView(report, this.definitions)),
      el('div', {class: 'wide'}, timelineCard),
      el('div', {class: 'col'}, this.findings.element),
      el(
        'div',
        {class: 'col'},
        checklistView(report, this.catalogue, (id) => this.select(id, 0, true)),
      ),
      el('div', {class: 'wide'}, breakdown),
    );
    append(
      this.main,
      viewTabs(
        () => this.showFindings(),
        () => this.showTables(),
      ),
      this.findingsLayout,
      el('div', {class: 'layout single'}, this.tables.element),
    );
    const steps = report.step_breakdown ?? [];
    this.timeline.reset(
      report.extent_ms ?? Math.max(0, ...steps.map((x) => x.end_ms)),
      steps.length ? {start: steps[0].start_ms, end: steps[steps.length - 1].end_ms} : undefined,
    );
    const view = tableOf(this.state);
    if (view) this.showTables(view);
    else this.showFindings(this.state.finding);
  }

  /** The findings of the report shown, with a finding selected ("<id>[:<evidence>]"). */
  showFindings(finding?: string): void {
    if (!this.report || !this.findingsLayout || !this.tables) return;
    this.tables.stop();
    this.tables.element.hidden = true;
    this.findingsLayout.hidden = false;
    markTab(this.main, 'findings');
    this.state = {run: this.state.run, host: this.state.host, finding, cycle: this.state.cycle};
    this.writeUrl();
    if (finding) {
      const [id, idx] = finding.split(':');
      if (this.report.checks.some((c) => c.id === id)) this.select(id, Number(idx) || 0, true);
    }
  }

  /** A table of the report shown. */
  showTables(view?: TableView, atMs?: number | null): void {
    if (!this.findingsLayout || !this.tables) return;
    view ??= this.tables.current;
    this.findingsLayout.hidden = true;
    this.tables.element.hidden = false;
    markTab(this.main, 'tables');
    this.tables.open(view, atMs);
    this.state = {
      run: this.state.run,
      host: this.state.host,
      cycle: this.state.cycle,
      ...tableState(this.tables.current),
    };
    this.writeUrl();
  }

  /** A finding's link: its table filtered to its own names (memory: the curve, its peak marked). */
  private openTable(link: TableLink): void {
    const names = (link.name ?? []).slice(0, 50);
    this.showTables({table: link.table, names, filter: link.q ?? undefined}, link.at_ms);
  }

  /** Select a finding: open it, zoom the timeline to its evidence, and keep it in the URL. */
  private select(id: string, index: number, zoom: boolean, toggle = false): void {
    const f = this.report?.checks.find((c) => c.id === id);
    if (!f || !this.findings) return;
    this.findings.select(id, toggle);
    const {run, host, cycle} = this.state;
    this.state = {run, host, finding: index ? `${id}:${index}` : id, cycle};
    this.writeUrl();
    const e = f.evidence[index] ?? f.evidence[0];
    if (zoom && e) this.timeline.show(id, f.evidence.indexOf(e), e.start_ms, e.end_ms, e);
  }
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
