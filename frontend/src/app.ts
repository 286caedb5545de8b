// The GPU Advisor panel. It renders the plugin's JSON and never recomputes a diagnosis.

import {errorMessage, exportUrl, getJson} from './api';
import {append, clear, el, svg} from './dom';
import {fmtDuration, fmtPct, fmtSaving, fmtValue, statusLabel, statusRank} from './format';
import {TimeWindow} from './scale';
import {CATEGORY_COLORS, CATEGORY_LABELS, CSS, STATUS_COLORS} from './style';
import {TimelineView} from './timeline';
import {CatalogueEntry, Finding, Report, RunsResponse, TimelineResponse} from './types';
import {PanelState, profileTabUrl, readState, shareUrl, tbBase, traceViewerUrl, writeState} from './urlstate';

const PROBLEMS = ['critical', 'warning', 'info'];
const POLL_WAIT_S = 2;

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

function chip(status: string): HTMLElement {
  const c = el('span', {class: 'chip', 'data-status': status}, statusLabel(status));
  c.style.background = STATUS_COLORS[status] ?? '#80868b';
  return c;
}

export class App {
  private state: PanelState = {};
  private runs: RunsResponse = {runs: [], legacy: []};
  private catalogue: CatalogueEntry[] = [];
  private report: Report | null = null;
  private readonly bar = el('div', {class: 'bar'});
  private readonly meta = el('div', {class: 'meta', id: 'meta'});
  private readonly main = el('div', {id: 'main'});
  private readonly runSelect = el('select', {id: 'run-select', 'aria-label': 'Run'});
  private readonly hostSelect = el('select', {id: 'host-select', 'aria-label': 'Host'});
  private readonly share = el('input', {
    class: 'share',
    id: 'share-link',
    readonly: true,
    'aria-label': 'Link to this view',
  });
  private readonly shareNote = el('span', {class: 'muted', id: 'share-note'});
  private readonly exportLink = el('a', {id: 'export-link', href: './export', download: true}, 'Export trace');
  private timeline: TimelineView;
  private loadToken = 0;
  private findingCards = new Map<string, HTMLElement>();

  constructor(private readonly root: HTMLElement) {
    this.timeline = new TimelineView({
      load: (w, width) => this.loadTimeline(w, width),
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
      el('label', {for: 'run-select'}, 'Run', this.runSelect),
      el('label', {for: 'host-select'}, 'Host', this.hostSelect),
      el('span', {class: 'spacer'}),
      this.exportLink,
      el('button', {id: 'copy-link', type: 'button', onclick: () => void this.copyLink()}, 'Copy link'),
      this.share,
      this.shareNote,
    );
    append(this.root, this.bar, this.meta, this.main);
    this.runSelect.addEventListener('change', () => {
      this.state = {run: this.runSelect.value};
      this.fillHosts();
      void this.load();
    });
    this.hostSelect.addEventListener('change', () => {
      this.state = {run: this.state.run, host: this.hostSelect.value};
      void this.load();
    });
    const parent = parentWindow();
    this.state = parent ? readState(parent.location.hash) : readState(window.location.hash);
    const [runs, checks] = await Promise.all([
      getJson<RunsResponse>('runs'),
      getJson<{checks: CatalogueEntry[]}>('checks'),
    ]);
    if (runs.status !== 200) return this.fail(`Could not list runs: ${errorMessage(runs.body)}`);
    this.runs = runs.body;
    this.catalogue = checks.status === 200 ? checks.body.checks : [];
    if (!this.runs.runs.length) {
      clear(this.main);
      append(
        this.main,
        el(
          'div',
          {class: 'message'},
          el('p', {}, 'No profile runs in this logdir.'),
          el(
            'p',
            {class: 'muted'},
            'Capture one with the Keras TensorBoard callback (profile_batch=(10, 15)) or tf.profiler.experimental.start(logdir); runs appear as <logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb.',
          ),
          ...this.runs.legacy.map((l) => el('p', {class: 'muted'}, `${l.run}: ${l.message}`)),
        ),
      );
      return;
    }
    for (const r of this.runs.runs) this.runSelect.appendChild(new Option(r.run, r.run));
    const known = this.runs.runs.find((r) => r.run === this.state.run);
    if (!known) this.state = {run: this.runs.runs[0].run};
    this.runSelect.value = this.state.run!;
    this.fillHosts();
    await this.load();
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

  private fillHosts(): void {
    clear(this.hostSelect);
    const run = this.runs.runs.find((r) => r.run === this.state.run);
    const hosts = run ? run.hosts.map((h) => h.host) : [];
    for (const h of hosts) this.hostSelect.appendChild(new Option(h, h));
    if (!this.state.host || !hosts.includes(this.state.host)) this.state.host = hosts[0];
    this.hostSelect.value = this.state.host ?? '';
    this.hostSelect.disabled = hosts.length < 2;
  }

  private writeUrl(): void {
    const parent = parentWindow();
    if (!parent) return;
    try {
      const url = parent.location.pathname + parent.location.search + writeState(parent.location.hash, this.state);
      parent.history.replaceState(parent.history.state, '', url);
    } catch {
      // the page may refuse (sandboxed embedding): the Copy link button still works
    }
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

  /** Fetch the report, showing progress while the analysis runs. */
  private async load(): Promise<void> {
    const token = ++this.loadToken;
    const {run, host} = this.state;
    if (!run || !host) return;
    this.writeUrl();
    this.exportLink.setAttribute('href', exportUrl(run, host));
    this.report = null;
    clear(this.meta);
    clear(this.main);
    const bar = el('div');
    const label = el('p', {id: 'progress-label'}, `Analysing ${run} · ${host}…`);
    append(this.main, el('div', {class: 'message', id: 'progress'}, label, el('div', {class: 'progress'}, bar)));
    bar.style.width = '0%';
    for (;;) {
      const res = await getJson<Report & {pending?: boolean; progress?: number; error?: {message: string}}>('report', {
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
      `${report.devices.length ? report.devices.map((d) => `GPU ${d.id}: ${d.name} (cc ${d.compute_capability ?? '?'})`).join(' · ') : 'No GPU in this profile'}`,
      s
        ? ` · ${s.count} step${s.count === 1 ? '' : 's'} (${s.source}${s.marker ? ` "${s.marker}"` : ''}), mean ${fmtDuration(s.mean_ms)} ± ${fmtDuration(s.stdev_ms)}`
        : '',
    );
    for (const e of report.errors) append(this.meta, el('div', {class: 'error'}, e));
    const left = el('div', {class: 'col'}, this.findingsView(report), this.checklistView(report));
    const right = el('div', {class: 'col'}, this.headlineView(report), this.timelineCard(), this.breakdownView(report));
    append(this.main, el('div', {class: 'layout'}, left, right));
    this.timeline.reset(report.extent_ms ?? Math.max(0, ...(report.step_breakdown ?? []).map((x) => x.end_ms)));
    if (this.state.finding) {
      const [id, idx] = this.state.finding.split(':');
      if (report.checks.some((c) => c.id === id)) this.select(id, Number(idx) || 0, true);
    }
  }

  private headlineView(r: Report): HTMLElement {
    const h = r.headline;
    const kpi = (value: number | null | undefined, label: string, id: string) => {
      const meter = el('div');
      meter.style.width = `${Math.max(0, Math.min(100, value ?? 0))}%`;
      return el(
        'div',
        {class: 'kpi', id},
        el('div', {class: 'v'}, fmtPct(value)),
        el('div', {class: 'l'}, label),
        el('div', {class: 'meter'}, meter),
      );
    };
    const card = el('div', {class: 'card'}, el('h2', {}, 'Headline'));
    if (!h) return card;
    append(
      card,
      el(
        'div',
        {class: 'headline'},
        kpi(h.device_busy_pct, 'of step time the GPU is busy', 'kpi-busy'),
        kpi(h.device_op_time_pct, 'of op time placed on the GPU', 'kpi-ops'),
        kpi(h.fp16_compute_pct, 'of device compute in 16-bit', 'kpi-fp16'),
      ),
    );
    if (h.per_gpu.length > 1) {
      const t = el(
        'table',
        {},
        el(
          'tr',
          {},
          el('th', {}, 'GPU'),
          el('th', {class: 'num'}, 'busy'),
          el('th', {class: 'num'}, '16-bit'),
          el('th', {class: 'num'}, 'kernels'),
        ),
      );
      for (const g of h.per_gpu)
        t.appendChild(
          el(
            'tr',
            {},
            el('td', {}, `GPU ${g.device_id}`),
            el('td', {class: 'num'}, fmtPct(g.device_busy_pct)),
            el('td', {class: 'num'}, fmtPct(g.fp16_compute_pct)),
            el('td', {class: 'num'}, g.kernels),
          ),
        );
      append(card, t);
    }
    return card;
  }

  private timelineCard(): HTMLElement {
    const tools = el(
      'div',
      {class: 'tl-tools'},
      el('button', {type: 'button', 'aria-label': 'Zoom in', onclick: () => this.timeline.zoomBy(0.5)}, '+'),
      el('button', {type: 'button', 'aria-label': 'Zoom out', onclick: () => this.timeline.zoomBy(2)}, '−'),
      el('button', {type: 'button', 'aria-label': 'Earlier', onclick: () => this.timeline.panBy(-0.25)}, '←'),
      el('button', {type: 'button', 'aria-label': 'Later', onclick: () => this.timeline.panBy(0.25)}, '→'),
      el('button', {type: 'button', id: 'timeline-reset', onclick: () => this.timeline.resetZoom()}, 'Whole profile'),
      this.timeline.info,
    );
    const legend = el(
      'div',
      {class: 'legend'},
      ...[
        ['compute', '#4285f4'],
        ['collective', '#a142f4'],
        ['copy', '#fa7b17'],
        ['input', '#ea4335'],
        ['launch', '#f9ab00'],
        ['op', '#12b5cb'],
        ['other host', '#9aa0a6'],
      ].map(([name, color]) => {
        const i = el('i');
        i.style.background = color;
        return el('span', {}, i, name);
      }),
    );
    return el(
      'div',
      {class: 'card', id: 'timeline-card'},
      el('h2', {}, 'Timeline'),
      tools,
      this.timeline.canvas,
      legend,
    );
  }

  private async loadTimeline(w: TimeWindow, width: number): Promise<TimelineResponse | null> {
    const {run, host} = this.state;
    if (!run || !host || !this.report) return null;
    const res = await getJson<TimelineResponse>('timeline', {run, host, start_ms: w.start, end_ms: w.end, width});
    return res.status === 200 ? res.body : null;
  }

  private breakdownView(r: Report): HTMLElement {
    const card = el('div', {class: 'card', id: 'breakdown'}, el('h2', {}, 'Step time breakdown'));
    const steps = r.step_breakdown ?? [];
    if (!steps.length || !r.breakdown_ms) return card;
    const cats = Object.keys(CATEGORY_COLORS);
    const W = 600,
      H = 150,
      padL = 46,
      padB = 18;
    const total = (s: (typeof steps)[number]) => cats.reduce((a, c) => a + (s.breakdown_ms[c] ?? 0), 0);
    const max = Math.max(...steps.map(total), 1e-9);
    const chart = svg('svg', {
      viewBox: `0 0 ${W} ${H}`,
      width: '100%',
      role: 'img',
      'aria-label': 'Stacked step time breakdown per step',
    });
    const bw = (W - padL) / steps.length;
    steps.forEach((s, i) => {
      let y = H - padB;
      for (const c of cats) {
        const v = s.breakdown_ms[c] ?? 0;
        if (v <= 0) continue;
        const h = (v / max) * (H - padB - 6);
        y -= h;
        chart.appendChild(
          svg(
            'rect',
            {x: padL + i * bw + bw * 0.1, y, width: Math.max(bw * 0.8, 0.5), height: h, fill: CATEGORY_COLORS[c]},
            svg('title', {}, `step ${s.step}: ${CATEGORY_LABELS[c]} ${fmtDuration(v)}`),
          ),
        );
      }
    });
    chart.appendChild(
      svg('text', {x: padL - 4, y: 12, 'text-anchor': 'end', 'font-size': 10, fill: 'currentColor'}, fmtDuration(max)),
    );
    chart.appendChild(
      svg('text', {x: padL - 4, y: H - padB, 'text-anchor': 'end', 'font-size': 10, fill: 'currentColor'}, '0'),
    );
    chart.appendChild(
      svg(
        'text',
        {x: padL, y: H - 4, 'font-size': 10, fill: 'currentColor'},
        `steps ${steps[0].step}–${steps[steps.length - 1].step}`,
      ),
    );
    const legend = el(
      'div',
      {class: 'legend'},
      ...cats.map((c) => {
        const i = el('i');
        i.style.background = CATEGORY_COLORS[c];
        return el('span', {}, i, `${CATEGORY_LABELS[c]} ${fmtDuration(r.breakdown_ms![c])}`);
      }),
    );
    append(card, chart, legend);
    return card;
  }

  private findingsView(r: Report): HTMLElement {
    const card = el('div', {class: 'card', id: 'findings'}, el('h2', {}, 'Findings, by estimated saving'));
    this.findingCards.clear();
    const problems = r.checks.filter((c) => PROBLEMS.includes(c.status));
    if (!problems.length) append(card, el('p', {}, 'No problems found: every applicable check passed.'));
    for (const f of problems) {
      const c = this.findingView(f);
      this.findingCards.set(f.id, c);
      card.appendChild(c);
    }
    return card;
  }

  private findingView(f: Finding): HTMLElement {
    const body = el('div', {class: 'body'});
    body.hidden = true;
    const head = el(
      'button',
      {class: 'head', type: 'button', 'aria-expanded': 'false', onclick: () => this.select(f.id, 0, body.hidden, true)},
      chip(f.status),
      el('span', {}, el('div', {class: 'title'}, f.title), el('div', {class: 'id'}, f.id)),
      el('span', {class: 'saving'}, fmtSaving(f.saving_ms, f.saving_pct)),
    );
    const card = el('div', {class: 'finding', 'data-check': f.id, 'data-status': f.status}, head, body);
    append(body, el('p', {class: 'summary'}, f.summary));
    if (f.metrics.length) {
      const t = el('table', {class: 'metrics'});
      for (const m of f.metrics)
        t.appendChild(el('tr', {}, el('td', {}, m.label), el('td', {class: 'num'}, fmtValue(m.value, m.unit))));
      append(body, t);
    }
    if (f.thresholds.length)
      append(
        body,
        el(
          'p',
          {class: 'muted'},
          'Thresholds: ',
          f.thresholds.map((t) => `${t.name} ${fmtValue(t.value, t.unit)}`).join(', '),
        ),
      );
    if (f.saving_ms !== null)
      append(
        body,
        el('p', {class: 'muted'}, `Estimated saving ${fmtSaving(f.saving_ms, f.saving_pct)}: ${f.saving_basis ?? ''}`),
      );
    append(body, el('div', {class: 'rec'}, f.recommendation));
    if (f.snippet) {
      const copy = el(
        'button',
        {
          type: 'button',
          class: 'copy-snippet',
          onclick: () => {
            navigator.clipboard.writeText(f.snippet!).then(
              () => (copy.textContent = 'Copied'),
              () => (copy.textContent = 'Select and copy'),
            );
          },
        },
        'Copy',
      );
      append(
        body,
        el('div', {class: 'row'}, el('strong', {}, 'Snippet'), copy),
        el('pre', {}, el('code', {}, f.snippet)),
      );
    }
    if (f.details.length) {
      const keys = Object.keys(f.details[0]);
      const t = el('table', {class: 'details'}, el('tr', {}, ...keys.map((k) => el('th', {}, k.replace(/_/g, ' ')))));
      for (const row of f.details.slice(0, 8))
        t.appendChild(
          el(
            'tr',
            {},
            ...keys.map((k) => el('td', {class: typeof row[k] === 'number' ? 'num' : ''}, fmtValue(row[k], ''))),
          ),
        );
      append(body, el('details', {}, el('summary', {}, `Details (${f.details.length})`), t));
    }
    if (f.evidence.length && this.report) {
      const base = tbBase(window.location.pathname);
      const list = el('ul', {class: 'evidence'});
      f.evidence.forEach((e, i) =>
        list.appendChild(
          el(
            'li',
            {'data-index': i},
            el('div', {}, e.label),
            el('div', {class: 'where'}, `${e.where} · ${fmtDuration(e.start_ms)}–${fmtDuration(e.end_ms)}`),
            e.events.length ? el('div', {class: 'muted'}, e.events.slice(0, 5).join(' · ')) : null,
            el(
              'div',
              {class: 'row'},
              el(
                'button',
                {type: 'button', class: 'show-on-timeline', onclick: () => this.select(f.id, i, true)},
                'Show on timeline',
              ),
              el(
                'a',
                {
                  class: 'trace-viewer-link',
                  href: traceViewerUrl(base, this.report!.run, this.report!.host, f.id, i, e.start_ms, e.end_ms),
                  target: '_blank',
                  rel: 'noopener',
                  title: 'The trace viewer on this window, with the advice as a "GPU Advisor" track',
                },
                'Open in trace viewer ↗',
              ),
              el(
                'a',
                {
                  class: 'profile-tab-link',
                  href: profileTabUrl(base, this.report!.run, this.report!.host, e.start_ms, e.end_ms),
                  target: '_top',
                  title: `The Profile tab's trace viewer on this run and host; the window is ${fmtDuration(e.start_ms)}–${fmtDuration(e.end_ms)}`,
                },
                'Profile tab',
              ),
            ),
          ),
        ),
      );
      append(body, el('strong', {}, 'Where'), list);
    }
    append(
      body,
      el(
        'p',
        {},
        el('a', {href: f.link, target: '_blank', rel: 'noopener'}, 'Guide: ', f.section, ' ↗'),
        this.report ? ' · ' : '',
        this.report
          ? el(
              'a',
              {
                href: profileTabUrl(tbBase(window.location.pathname), this.report.run, this.report.host),
                target: '_top',
              },
              'Profile tab',
            )
          : null,
      ),
    );
    return card;
  }

  /** Select a finding: expand it, zoom the timeline to its evidence, and keep it in the URL. */
  private select(id: string, index: number, zoom: boolean, toggle = false): void {
    const f = this.report?.checks.find((c) => c.id === id);
    if (!f) return;
    for (const [cid, card] of this.findingCards) {
      const on = cid === id;
      card.classList.toggle('selected', on);
      const body = card.querySelector('.body') as HTMLElement;
      const head = card.querySelector('.head') as HTMLElement;
      if (on) {
        const open = toggle ? body.hidden : true;
        body.hidden = !open;
        head.setAttribute('aria-expanded', String(open));
        if (!toggle) card.scrollIntoView({block: 'nearest'});
      }
    }
    this.state = {run: this.state.run, host: this.state.host, finding: index ? `${id}:${index}` : id};
    this.writeUrl();
    const e = f.evidence[index] ?? f.evidence[0];
    if (zoom && e) this.timeline.show(id, f.evidence.indexOf(e), e.start_ms, e.end_ms);
  }

  private checklistView(r: Report): HTMLElement {
    const card = el('div', {class: 'card', id: 'checklist'}, el('h2', {}, 'The checklist'));
    const byId = new Map(r.checks.map((c) => [c.id, c]));
    const order = this.catalogue.length
      ? this.catalogue
      : [...r.checks].sort((a, b) => statusRank(a.status) - statusRank(b.status));
    let section = '';
    for (const entry of order) {
      const f = byId.get(entry.id);
      if (!f) continue;
      if (f.section !== section) {
        section = f.section;
        card.appendChild(el('div', {class: 'section'}, section));
      }
      const name = PROBLEMS.includes(f.status)
        ? el('button', {type: 'button', class: 'link', onclick: () => this.select(f.id, 0, true)}, f.id)
        : el('span', {class: 'id'}, f.id);
      card.appendChild(
        el(
          'div',
          {class: 'check', 'data-check': f.id, 'data-status': f.status},
          chip(f.status),
          el(
            'div',
            {},
            name,
            ' ',
            f.title,
            el('div', {class: 'muted'}, f.status === 'not-applicable' ? (f.reason ?? '') : f.summary),
          ),
        ),
      );
    }
    return card;
  }
}
