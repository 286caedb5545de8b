// The table views (kernels, operators, memory, input pipeline, idle time): the `table` route's rows,
// sorted, filtered and paged by the server. Only the rows in the viewport are in the DOM; the view
// fetches the pages that hold them as the user scrolls. Names from the profile are text, the full
// name on hover. Each row links to the trace viewer at its longest instance.

import {errorMessage, getJson} from '../api';
import {append, clear, el} from '../dom';
import {NAME_MAX, shortName} from '../format';
import {SEGMENT_COLORS} from '../style';
import {
  Column,
  Row,
  TRACE_WIDTH,
  TableAnswer,
  cellText,
  charsIn,
  columnWidths,
  commonWords,
  debounce,
  distinctName,
  fmtNumber,
  isNameColumn,
  nextSort,
  pagesFor,
  shownColumns,
  visibleRange,
} from '../tablemath';
import {CatalogueTable, TableLink, TableName} from '../schema.gen';
import {TableView, traceViewerWindowUrl} from '../urlstate';
import {memoryView} from './memory';

export const ROW_HEIGHT = 24;
export const PAGE_SIZE = 200;
const FILTER_WAIT_MS = 250;

/** A table as its module declares it (id, tab label, what a row is, groupings), served by the plugin's
 * `checks` route: the panel keeps no list of its own. */
export type TableSpec = CatalogueTable;

export type {TableLink};

let TABLES: TableSpec[] = [];

/** The tables the plugin serves, in their order (App sets them from the catalogue before any view). */
export function setTables(tables: TableSpec[]): void {
  TABLES = tables;
}

export interface TablesContext {
  base: string; // TensorBoard's base path, for links
  run: string;
  host: string;
  framework: string;
  /** the view changed (the URL keeps it); `open` when the user opened another table */
  onChange: (view: TableView, open: boolean) => void;
}

export function tableSpec(id: string): TableSpec {
  const known = TABLES.find((t) => t.id === id) ?? TABLES[0];
  return known ?? {id: id as TableName, label: id, noun: 'rows', groups: [], per_step: false};
}

/** The table views with their tab strip; `open` shows one (from a finding, the URL, a tab). */
export class TablesView {
  readonly element: HTMLElement;
  private readonly tabs: HTMLElement;
  private readonly body = el('div', {id: 'table-view'});
  private grid: GridView | null = null;
  private view: TableView = {table: 'kernels'};

  constructor(private readonly ctx: TablesContext) {
    this.tabs = el(
      'div',
      {class: 'table-tabs', role: 'tablist', 'aria-label': 'Tables'},
      ...TABLES.map((t) =>
        el(
          'button',
          {
            type: 'button',
            role: 'tab',
            class: 'table-tab',
            'data-table': t.id,
            onclick: () => {
              this.open({table: t.id});
              this.ctx.onChange(this.view, true);
            },
          },
          t.label,
        ),
      ),
    );
    // arrow keys move between the tabs, as in TensorBoard's own tab bars
    this.tabs.addEventListener('keydown', (e) => {
      const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!step) return;
      const tabs = Array.from(this.tabs.children) as HTMLElement[];
      const i = tabs.indexOf(document.activeElement as HTMLElement);
      const next = tabs[(Math.max(i, 0) + step + tabs.length) % tabs.length];
      next.focus();
      next.click();
      e.preventDefault();
    });
    this.element = el('section', {class: 'card tables', id: 'tables'}, this.tabs, this.body);
  }

  get current(): TableView {
    return this.view;
  }

  open(view: TableView, atMs?: number | null): void {
    this.view = {...view, table: tableSpec(view.table).id};
    for (const b of Array.from(this.tabs.children) as HTMLElement[]) {
      const on = b.dataset.table === this.view.table;
      b.setAttribute('aria-selected', String(on));
      b.classList.toggle('selected', on);
    }
    this.grid?.stop();
    this.grid = null;
    clear(this.body);
    const {run, host, base} = this.ctx;
    if (this.view.table === 'memory') {
      this.body.appendChild(memoryView(base, run, host, atMs ?? null));
      return;
    }
    this.grid = new GridView({run, host, base}, this.view, (v) => {
      this.view = v;
      this.ctx.onChange(v, false);
    });
    this.body.appendChild(this.grid.element);
  }

  stop(): void {
    this.grid?.stop();
  }
}

interface GridContext {
  run: string;
  host: string;
  base: string;
}

/** One table: toolbar (grouping, filter, the finding's names), answer-level facts, virtualised rows. */
class GridView {
  readonly element: HTMLElement;
  private readonly spec: TableSpec;
  private readonly info = el('div', {class: 'table-info'});
  private readonly count = el('span', {class: 'muted', id: 'table-count'});
  private readonly scroller = el('div', {class: 'vt-scroll', tabindex: 0, 'aria-label': 'Rows'});
  private readonly table = el('table', {class: 'vt', id: 'data-table'});
  private readonly colgroup = el('colgroup');
  private readonly thead = el('thead');
  private readonly tbody = el('tbody');
  private columns: Column[] = [];
  private widths = new Map<string, number>();
  private sample: Row[] = []; // the first page of the query: what the columns are sized to
  private common = new Map<string, Set<string>>(); // words the names shown together share
  private pages = new Map<number, Row[]>();
  private loading = new Set<number>();
  private total = 0;
  private generation = 0;
  private frame = 0;
  private stopped = false;

  constructor(
    private readonly ctx: GridContext,
    private view: TableView,
    private readonly onChange: (v: TableView) => void,
  ) {
    this.spec = tableSpec(view.table);
    const toolbar = el('div', {class: 'table-tools'});
    if (this.spec.groups.length) {
      const group = el('select', {id: 'table-group', 'aria-label': 'Group rows'});
      for (const [v, label] of this.spec.groups) group.appendChild(new Option(label, v));
      group.value = view.group ?? this.spec.groups[0][0];
      group.addEventListener('change', () => this.change({group: group.value}));
      toolbar.appendChild(group);
    }
    const filter = el('input', {
      type: 'search',
      id: 'table-filter',
      'aria-label': `Filter ${this.spec.noun} by name`,
      placeholder: `Filter ${this.spec.noun}…`,
    });
    filter.value = view.filter ?? '';
    // a stream has no name to filter on
    filter.hidden = this.spec.id === 'idle' && !view.filter;
    const send = () => {
      const f = filter.value || undefined;
      if (f !== this.view.filter) this.change({filter: f});
    };
    filter.addEventListener('input', debounce(send, FILTER_WAIT_MS));
    filter.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') send(); // now, without waiting for the pause
    });
    toolbar.appendChild(filter);
    if (view.names?.length) {
      const n = view.names.length;
      toolbar.appendChild(
        el(
          'span',
          {class: 'names-filter', id: 'table-names', title: view.names.join('\n')},
          `The finding's ${n} ${n === 1 ? this.spec.noun.replace(/s$/, '') : this.spec.noun}`,
          el(
            'button',
            {
              type: 'button',
              id: 'table-names-clear',
              'aria-label': 'Show all rows',
              onclick: () => this.change({names: undefined}),
            },
            '✕',
          ),
        ),
      );
    }
    toolbar.appendChild(this.count);
    append(this.table, this.colgroup, this.thead, this.tbody);
    this.scroller.appendChild(this.table);
    this.scroller.addEventListener('scroll', () => this.schedule());
    this.element = el('div', {class: 'grid-view', 'data-table': this.spec.id}, toolbar, this.info, this.scroller);
    this.reload();
  }

  stop(): void {
    this.stopped = true;
    cancelAnimationFrame(this.frame);
  }

  private change(patch: Partial<TableView>): void {
    const v: TableView = {...this.view, ...patch};
    for (const k of Object.keys(v) as (keyof TableView)[]) if (v[k] === undefined) delete v[k];
    this.view = v;
    this.onChange(v);
    if ('names' in patch && !patch.names) this.element.querySelector('#table-names')?.remove();
    this.reload();
  }

  private params(offset: number): Record<string, string | number | readonly string[] | undefined> {
    const v = this.view;
    return {
      run: this.ctx.run,
      host: this.ctx.host,
      table: this.spec.id,
      group: v.group,
      sort: v.sort,
      order: v.order,
      q: v.filter,
      name: v.names?.length ? v.names : undefined,
      offset,
      limit: PAGE_SIZE,
    };
  }

  /** A new query (sort, filter, grouping): the first page, from the top. */
  private reload(): void {
    const gen = ++this.generation;
    this.pages.clear();
    this.loading.clear();
    const d = this.table.dataset;
    d.sort = this.view.sort ?? '';
    d.order = this.view.order ?? '';
    d.q = this.view.filter ?? '';
    d.loading = 'true';
    void this.fetchPage(0, gen, true);
  }

  private async fetchPage(offset: number, gen: number, first = false): Promise<void> {
    this.loading.add(offset);
    for (;;) {
      const res = await getJson<TableAnswer>('table', this.params(offset));
      if (this.stopped || gen !== this.generation) return;
      if (res.status === 202) continue;
      this.loading.delete(offset);
      if (res.status !== 200) return this.fail(errorMessage(res.body));
      const a = res.body;
      if (first) this.first(a);
      this.pages.set(offset, a.rows as unknown as Row[]);
      this.render();
      return;
    }
  }

  private fail(message: string): void {
    clear(this.info);
    this.info.appendChild(el('p', {class: 'error', role: 'alert'}, message));
    this.table.dataset.loading = 'false';
  }

  /** The first page of a query: its columns, counts, sort and the answer's facts. */
  private first(a: TableAnswer): void {
    this.total = a.total;
    const d = this.table.dataset;
    d.total = String(a.total);
    d.sort = a.sort;
    d.order = a.order;
    if (!this.view.sort) this.view = {...this.view, sort: a.sort, order: a.order};
    const what = a.all === 1 ? this.spec.noun.replace(/s$/, '') : this.spec.noun;
    this.count.textContent =
      a.total === a.all
        ? `${a.all.toLocaleString('en-US')} ${what}`
        : `${a.total.toLocaleString('en-US')} of ${a.all.toLocaleString('en-US')} ${what}`;
    clear(this.info);
    append(this.info, ...factsOf(a));
    if (this.spec.id === 'idle') this.info.appendChild(idleLegend());
    for (const n of a.notes ?? []) this.info.appendChild(el('p', {class: 'notice table-note'}, n));
    // the first page's rows size the columns to their content, and tell apart the names shown together
    this.sample = a.rows as unknown as Row[];
    this.common = commonWords(this.sample.map((r) => String(r.short_name ?? '')).filter(Boolean));
    this.setColumns(shownColumns(a.columns));
    this.scroller.scrollTop = 0;
  }

  private setColumns(columns: Column[]): void {
    this.columns = columns;
    clear(this.colgroup);
    clear(this.thead);
    const extra = TRACE_WIDTH + (this.spec.id === 'idle' ? IDLE_BAR_WIDTH : 0);
    // the card's width before the table is in it (the scroller is empty on the first answer)
    const available = this.scroller.clientWidth || this.element.clientWidth || 1200;
    const widths = columnWidths(columns, available - 2, extra, this.sample);
    this.widths = new Map(columns.map((c, i) => [c.key, widths[i]]));
    let width = 0;
    const tr = el('tr');
    for (const [i, c] of columns.entries()) {
      const w = widths[i];
      width += w;
      const col = el('col');
      col.style.width = `${w}px`;
      this.colgroup.appendChild(col);
      const sorted = this.view.sort === c.key;
      const th = el(
        'th',
        {
          class: c.numeric ? 'num' : '',
          'data-key': c.key,
          'aria-sort': sorted ? (this.view.order === 'asc' ? 'ascending' : 'descending') : 'none',
        },
        el(
          'button',
          {
            type: 'button',
            class: 'sort',
            title: `Sort by ${c.label}`,
            onclick: () => {
              const s = nextSort(this.view.sort, this.view.order, c.key, !!c.numeric);
              this.change(s);
              this.setColumns(this.columns);
            },
          },
          c.label,
          sorted ? (this.view.order === 'asc' ? ' ▲' : ' ▼') : '',
        ),
      );
      tr.appendChild(th);
    }
    if (this.spec.id === 'idle') {
      const bar = el('col');
      bar.style.width = `${IDLE_BAR_WIDTH}px`;
      this.colgroup.appendChild(bar);
      tr.appendChild(el('th', {}, 'Idle by cause'));
      width += IDLE_BAR_WIDTH;
    }
    const col = el('col');
    col.style.width = `${TRACE_WIDTH}px`;
    this.colgroup.appendChild(col);
    tr.appendChild(el('th', {}, 'Trace'));
    this.table.style.minWidth = `${width + TRACE_WIDTH}px`;
    this.thead.appendChild(tr);
  }

  private schedule(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.render());
  }

  /** The rows in view (and a few either side), fetching the pages that hold them. */
  private render(): void {
    if (this.stopped) return;
    // the scroller grows with its rows up to 60% of the window: size the window for that height
    const height = Math.max(this.scroller.clientHeight, window.innerHeight * 0.6);
    const range = visibleRange(this.scroller.scrollTop, height, ROW_HEIGHT, this.total);
    let missing = false;
    for (const p of pagesFor(range, PAGE_SIZE))
      if (!this.pages.has(p)) {
        missing = true;
        if (!this.loading.has(p)) void this.fetchPage(p, this.generation);
      }
    const rows: HTMLElement[] = [];
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
          'tr',
          {class: 'empty'},
          el('td', {colspan: this.columns.length + 1, class: 'muted'}, `No ${this.spec.noun} match.`),
        ),
      );
    }
    const d = this.table.dataset;
    d.first = String(range.first);
    d.last = String(range.last);
    d.loading = String(missing);
  }

  private rowView(row: Row, index: number): HTMLElement {
    const tr = el('tr', {class: 'vt-row', 'data-index': index});
    if (row.slowest === true) tr.classList.add('slowest');
    for (const c of this.columns) tr.appendChild(cell(c, row, this.common, this.widths.get(c.key)));
    if (this.spec.id === 'idle') tr.appendChild(idleBar(row));
    const t = row.trace;
    tr.appendChild(
      el(
        'td',
        {},
        t
          ? el(
              'a',
              {
                class: 'row-trace',
                href: traceViewerWindowUrl(this.ctx.base, this.ctx.run, this.ctx.host, t.start_ms, t.end_ms),
                target: '_blank',
                rel: 'noopener',
                title: `The trace viewer on the longest instance, ${t.start_ms.toFixed(3)}–${t.end_ms.toFixed(3)} ms`,
              },
              'Trace ↗',
            )
          : null,
      ),
    );
    return tr;
  }
}

/** The answer's facts above the rows: input pipeline options, launch delays. */
function factsOf(a: TableAnswer): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (typeof a.workers === 'boolean') {
    // PyTorch: what the trace shows of the DataLoader
    const pin = a.pin_memory === true ? 'on' : a.pin_memory === false ? 'off' : 'n/a';
    out.push(
      el(
        'p',
        {id: 'input-options'},
        el('span', {'data-present': String(a.workers)}, `worker processes: ${a.workers ? 'yes' : 'no'}`),
        ' · ',
        el('span', {'data-present': String(a.pin_memory === true)}, `pin_memory: ${pin}`),
      ),
    );
  } else if (typeof a.prefetch === 'boolean' || typeof a.parallel_map === 'boolean') {
    const yes = (v: unknown) => (v ? 'present' : 'absent');
    out.push(
      el(
        'p',
        {id: 'input-options'},
        el('span', {'data-present': String(!!a.prefetch)}, `prefetch: ${yes(a.prefetch)}`),
        ' · ',
        el('span', {'data-present': String(!!a.parallel_map)}, `parallel map: ${yes(a.parallel_map)}`),
      ),
    );
  }
  const d = a.launch_delay as Record<string, number | null> | null | undefined;
  if (d && typeof d === 'object') {
    const us = (v: number | null | undefined) => (typeof v === 'number' ? `${fmtNumber(v, 1)} µs` : 'n/a');
    out.push(
      el(
        'p',
        {id: 'launch-delay', title: 'From each kernel launch call on the host to the kernel starting on the GPU'},
        `Launch delay over ${fmtNumber(d.count ?? 0, 0)} launches: mean ${us(d.mean_us)}, p50 ${us(d.p50_us)}, ` +
          `p95 ${us(d.p95_us)}, max ${us(d.max_us)}`,
      ),
    );
  }
  return out;
}

const IDLE_BAR_WIDTH = 200;

/** A row's cell; `width` its column's, in px. A kernel's short name is cut to fit where it must: first
 * the words it shares with the names shown beside it (`common`), so what tells it apart stays in view
 * (`sm90_…_nt_n_tilesize256x128x32_…_off`), then its middle; its full name is on hover. */
function cell(c: Column, row: Row, common: Map<string, Set<string>>, width?: number): HTMLElement {
  const v = row[c.key];
  if (c.key === 'short_name' && typeof row.name === 'string') {
    const text = String(v ?? '');
    return el(
      'td',
      {class: 'name', title: row.name, 'data-short': text},
      width ? distinctName(text, charsIn(width), common) : text,
    );
  }
  const text = cellText(c, v);
  const cls = typeof v === 'number' ? 'num' : typeof v === 'boolean' ? 'flag' : '';
  if (c.key === 'stage' && row.slowest === true)
    return el('td', {class: 'name', title: text}, text, el('span', {class: 'badge slowest-badge'}, 'slowest'));
  if (typeof v === 'string' && (v.length > NAME_MAX || isNameColumn(c)))
    return el('td', {class: 'name', title: v}, shortName(v));
  // exact bytes on hover
  return el('td', {class: cls, title: c.unit === 'bytes' && typeof v === 'number' ? `${v} bytes` : undefined}, text);
}

const IDLE_CAUSES: [string, string, string][] = [
  ['host_wait_us', 'waiting for the host', SEGMENT_COLORS.input],
  ['kernel_wait_us', 'waiting for kernels', SEGMENT_COLORS.launch],
  ['other_us', 'other', SEGMENT_COLORS.other],
];

function idleLegend(): HTMLElement {
  return el(
    'div',
    {class: 'legend'},
    ...IDLE_CAUSES.map(([, label, color]) => {
      const i = el('i');
      i.style.background = color;
      return el('span', {}, i, label);
    }),
  );
}

/** A stream's idle time as a bar split by cause, each part's share on hover. */
function idleBar(row: Row): HTMLElement {
  const idle = typeof row.idle_us === 'number' ? row.idle_us : 0;
  const bar = el('div', {class: 'idle-bar'});
  const parts: string[] = [];
  for (const [key, label, color] of IDLE_CAUSES) {
    const v = typeof row[key] === 'number' ? (row[key] as number) : 0;
    if (!idle || v <= 0) continue;
    const seg = el('span', {'data-cause': key});
    seg.style.width = `${(100 * v) / idle}%`;
    seg.style.background = color;
    bar.appendChild(seg);
    parts.push(`${label} ${fmtNumber((100 * v) / idle, 1)}%`);
  }
  bar.title = parts.join(', ') || 'no idle time';
  return el('td', {}, bar);
}

function spacer(height: number, span: number): HTMLElement {
  const td = el('td', {colspan: span});
  const tr = el('tr', {class: 'vt-spacer', 'aria-hidden': 'true'}, td);
  td.style.height = `${height}px`;
  return tr;
}

function placeholder(index: number, span: number): HTMLElement {
  return el('tr', {class: 'vt-row pending', 'data-index': index}, el('td', {colspan: span, class: 'muted'}, '…'));
}

/** The words of a finding's link to its table. */
export function linkLabel(link: TableLink): string {
  const spec = tableSpec(link.table);
  if (spec.id === 'memory') return 'Memory over time, at the peak';
  const n = link.name?.length ?? 0;
  if (!n) return `Open the ${spec.label} table`;
  return `Show ${n === 1 ? 'this' : `these ${n}`} ${n === 1 ? spec.noun.replace(/s$/, '') : spec.noun} in the ${spec.label} table`;
}

/** Findings or tables: the two views of one report. */
export function viewTabs(findings: () => void, tables: () => void): HTMLElement {
  return el(
    'div',
    {class: 'view-tabs', role: 'tablist', 'aria-label': 'View'},
    el('button', {type: 'button', role: 'tab', id: 'view-findings', onclick: findings}, 'Findings'),
    el('button', {type: 'button', role: 'tab', id: 'view-tables', onclick: tables}, 'Tables'),
  );
}

export function markTab(root: HTMLElement, view: 'findings' | 'tables'): void {
  for (const b of Array.from(root.querySelectorAll('.view-tabs [role="tab"]')))
    b.setAttribute('aria-selected', String(b.id === `view-${view}`));
}
