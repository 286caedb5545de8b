// The findings, ranked by estimated saving: the top one open, the others with their summary line.
// Each says what was measured (how, on hover), what it costs, what to change, and where: evidence
// windows with links to the timeline, the trace viewer (with the advice in it) and the Profile tab.

import {append, el} from '../dom';
import {fmtDuration, fmtSaving, fmtSavingRange, fmtValue, fmtWindow, NAME_MAX, savingText, shortName} from '../format';
import {Finding, Report, TableLink} from '../schema.gen';
import {richText} from '../text';
import {profileTabUrl, traceViewerUrl} from '../urlstate';
import {card, chip, PROBLEMS} from './common';
import {linkLabel} from './tables';

export interface FindingsContext {
  base: string; // TensorBoard's base path, for links
  select: (check: string, index: number, zoom: boolean, toggle?: boolean) => void;
  openTable: (link: TableLink) => void;
  /** Opens a TensorBoard tab in place (the Profile tab); false when it cannot. */
  openTab: (href: string) => boolean;
}

export class FindingsView {
  readonly element: HTMLElement;
  private cards = new Map<string, HTMLElement>();
  // the Profile tab reads XSpace captures, not PyTorch traces
  private readonly profileTab: boolean;

  constructor(
    private readonly report: Report,
    private readonly ctx: FindingsContext,
  ) {
    this.profileTab = report.framework !== 'pytorch';
    this.element = card('findings', 'Findings, by estimated saving');
    const problems = report.checks.filter((c) => PROBLEMS.includes(c.status));
    if (!problems.length) this.element.appendChild(el('p', {}, 'No problems found: every applicable check passed.'));
    problems.forEach((f, i) => {
      const c = this.findingView(f, i === 0);
      this.cards.set(f.id, c);
      this.element.appendChild(c);
    });
  }

  /** A line from the job under the summary of each of these findings (the wait for a straggler). */
  noteJob(checks: string[], text: string): void {
    for (const id of checks) {
      const line = this.cards.get(id)?.querySelector('.summary-line');
      line?.after(el('p', {class: 'job-wait'}, text));
    }
  }

  isSelected(id: string): boolean {
    return !!this.cards.get(id)?.classList.contains('selected');
  }

  /** Mark a finding selected and open it; `toggle` on the selected one closes or reopens it. */
  select(id: string, toggle: boolean): void {
    for (const [cid, c] of this.cards) {
      const on = cid === id;
      const was = c.classList.contains('selected');
      c.classList.toggle('selected', on);
      if (!on) continue;
      const body = c.querySelector('.body') as HTMLElement;
      const open = toggle && was ? body.hidden : true;
      this.setOpen(c, open);
      if (!toggle) c.scrollIntoView({block: 'nearest'});
    }
  }

  private setOpen(c: HTMLElement, open: boolean): void {
    (c.querySelector('.body') as HTMLElement).hidden = !open;
    (c.querySelector('.head') as HTMLElement).setAttribute('aria-expanded', String(open));
    c.classList.toggle('open', open);
  }

  private findingView(f: Finding, open: boolean): HTMLElement {
    const body = el('div', {class: 'body'});
    const head = el(
      'button',
      {
        class: 'head',
        type: 'button',
        'aria-expanded': 'false',
        // a click selects the finding (and shows it on the timeline); on the selected one, it folds it
        onclick: () => this.ctx.select(f.id, 0, !this.isSelected(f.id) || body.hidden, true),
      },
      chip(f.status),
      el('span', {}, el('div', {class: 'title'}, f.title), el('div', {class: 'id'}, f.id)),
      el('span', {class: 'saving'}, savingText(f)),
    );
    // the key sentence shows closed too
    const line = el('p', {class: 'summary-line'}, f.summary);
    const c = el('div', {class: 'finding', 'data-check': f.id, 'data-status': f.status}, head, line, body);
    if (f.metrics.length) {
      const t = el('table', {class: 'metrics', title: `How it is measured: ${f.measures}`});
      for (const m of f.metrics)
        t.appendChild(el('tr', {}, el('td', {}, m.label), el('td', {class: 'num'}, fmtValue(m.value, m.unit))));
      append(body, t, el('p', {class: 'muted measures'}, 'How it is measured: ', f.measures));
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
    const range = fmtSavingRange(f);
    const point = fmtSaving(f.saving_ms, f.saving_pct);
    if (f.whatif?.withheld)
      // the evidence cannot support a saving (docs/whatif.md): none is stated, and why
      append(
        body,
        el(
          'p',
          {class: 'whatif withheld', title: f.whatif.basis},
          el('strong', {}, 'No saving stated: '),
          f.whatif.withheld,
        ),
      );
    else if (f.whatif)
      // the step re-timed with this finding's fix (docs/whatif.md): the saving's own model
      append(
        body,
        el(
          'p',
          {class: 'whatif', title: f.whatif.basis},
          el('strong', {}, 'If fixed: '),
          f.whatif.sentence,
          ` (without the profiler; ${f.whatif.change} simulated)`,
        ),
      );
    // the other fixes its advice offers, each with its own saving (TF32 beside bf16)
    for (const alt of f.alternatives ?? [])
      append(
        body,
        el(
          'p',
          {class: 'whatif alternative', 'data-change': alt.change, title: alt.basis},
          el('strong', {}, `Or ${alt.change} ${alt.change.includes('+') ? 'together' : 'alone'}: `),
          `saves ${fmtDuration(alt.saving_ms)}/step: ${alt.sentence}`,
          ` (without the profiler; ${alt.change} simulated)`,
        ),
      );
    if (range || point) {
      const saving = range ? `${range}${point ? `; point estimate ${point}` : ''}` : point;
      append(body, el('p', {class: 'muted saving-basis'}, `Estimated saving ${saving}: ${f.saving_basis ?? ''}`));
    }
    append(body, el('div', {class: 'rec'}, el('strong', {}, 'What to change'), ...richText(f.recommendation)));
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
        el('div', {class: 'row'}, el('strong', {}, 'Example'), copy),
        el('pre', {class: 'snippet'}, el('code', {}, f.snippet)),
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
            ...keys.map((k) => {
              const v = row[k];
              if (typeof v === 'string' && v.length > NAME_MAX)
                return el('td', {}, el('span', {class: 'long-name', title: v}, shortName(v)));
              return el('td', {class: typeof v === 'number' ? 'num' : ''}, fmtValue(v, ''));
            }),
          ),
        );
      append(body, el('details', {}, el('summary', {}, `Details (${f.details.length})`), t));
    }
    const link = f.table;
    if (link)
      append(
        body,
        el(
          'p',
          {},
          el(
            'button',
            {type: 'button', class: 'table-link', 'data-table': link.table, onclick: () => this.ctx.openTable(link)},
            linkLabel(link),
          ),
        ),
      );
    if (f.evidence.length) append(body, el('strong', {}, 'Where'), this.evidenceList(f));
    append(
      body,
      el(
        'p',
        {},
        el('a', {href: f.link, target: '_blank', rel: 'noopener'}, 'Guide: ', f.section, ' ↗'),
        this.profileTab ? ' · ' : '',
        this.profileTab
          ? this.profileTabLink(profileTabUrl(this.ctx.base, this.report.run, this.report.host), {})
          : null,
      ),
    );
    this.setOpen(c, open);
    return c;
  }

  /** A link to the Profile tab, opened in place as TensorBoard opens its tabs (a modified click, or a
   * page that cannot be reached, follows the link). */
  private profileTabLink(href: string, attrs: Record<string, string>): HTMLElement {
    const open = (e: Event) => {
      const m = e as MouseEvent;
      if (m.button || m.ctrlKey || m.metaKey || m.shiftKey || m.altKey) return;
      if (this.ctx.openTab(href)) e.preventDefault();
    };
    return el('a', {...attrs, href, target: '_top', onclick: open}, 'Profile tab');
  }

  private evidenceList(f: Finding): HTMLElement {
    const {base} = this.ctx;
    const {run, host} = this.report;
    const list = el('ul', {class: 'evidence'});
    f.evidence.forEach((e, i) =>
      list.appendChild(
        el(
          'li',
          {'data-index': i},
          el('div', {}, e.label),
          el('div', {class: 'where'}, `${e.where} · ${fmtWindow(e.start_ms, e.end_ms)}`),
          e.events.length ? el('div', {class: 'muted'}, e.events.slice(0, 5).join(' · ')) : null,
          el(
            'div',
            {class: 'row'},
            el(
              'button',
              {type: 'button', class: 'show-on-timeline', onclick: () => this.ctx.select(f.id, i, true)},
              'Show on timeline',
            ),
            el(
              'a',
              {
                class: 'trace-viewer-link',
                href: traceViewerUrl(base, run, host, f.id, i, e.start_ms, e.end_ms),
                target: '_blank',
                rel: 'noopener',
                title: 'The trace viewer on this window, with the advice as a "GPU Advisor" track',
              },
              'Open in trace viewer ↗',
            ),
            this.profileTab &&
              this.profileTabLink(profileTabUrl(base, run, host, e.start_ms, e.end_ms), {
                class: 'profile-tab-link',
                title: `The Profile tab's trace viewer on this run and host; the window is ${fmtWindow(e.start_ms, e.end_ms)}`,
              }),
          ),
        ),
      ),
    );
    return list;
  }
}
