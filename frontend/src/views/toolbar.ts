// The bar above every view: All runs, the run, host and "Before" pickers (each run and host labelled
// with its worst status once analysed), Export trace and Copy link (the link, and the MCP call that
// gives a coding agent the same view).

import {exportUrl} from '../api';
import {append, clear, el, shown} from '../dom';
import {RunsResponse} from '../schema.gen';
import {ALL_HOSTS, PanelState, mcpCall} from '../urlstate';
import {worstFirst} from './overview';

type Run = RunsResponse['runs'][number];
type Host = Run['hosts'][number];

function hostStatus(h: Host): string {
  const a = h.analysis;
  return a.state === 'error' ? 'error' : a.state === 'done' ? (a.worst?.status ?? 'pass') : '';
}

/** The status of a run's worst row, as the overview orders them (its job's own findings and its
 * analysed hosts: a problem with a cost before a capture note, the larger saving first, then the
 * status), or '' while none is analysed. */
function runStatus(run: Run): string {
  const rows = run.job ? [{note: run.job.note, saving: run.job.top_saving_ms, status: run.job.status}] : [];
  for (const h of run.hosts) {
    const s = hostStatus(h);
    if (s) rows.push({note: h.analysis.worst?.note ?? false, saving: h.analysis.top_saving_ms ?? 0, status: s});
  }
  rows.sort(worstFirst);
  return rows.length ? rows[0].status : '';
}

export interface ToolbarActions {
  overview: () => void;
  run: (run: string) => void;
  host: (host: string) => void;
  /** The run and host before a change; none to leave the comparison. */
  compare: (run?: string, host?: string) => void;
  shareUrl: () => string;
  /** The state shown, for the MCP call that gives an agent the same view. */
  state: () => PanelState;
}

export class Toolbar {
  readonly element = el('div', {class: 'bar'});
  runs: RunsResponse = {advisor_version: '', runs: [], legacy: []};
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
  private readonly agentCall = el('input', {
    class: 'share',
    id: 'share-mcp',
    readonly: true,
    'aria-label': 'The MCP call that gives a coding agent this view',
    title:
      "In a coding agent with the advisor's MCP server (tb-gpu-advisor mcp <logdir>), this call gives the same view",
  });
  private readonly copyAgent = el(
    'button',
    {id: 'copy-mcp', type: 'button', onclick: () => void this.copyAgentCall()},
    'Copy agent call',
  );
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

  constructor(private readonly actions: ToolbarActions) {
    this.share.hidden = true;
    this.agentCall.hidden = true;
    this.copyAgent.hidden = true;
    append(
      this.element,
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
      this.agentCall,
      this.copyAgent,
      this.shareNote,
    );
    this.overviewButton.addEventListener('click', () => actions.overview());
    this.runSelect.addEventListener('change', () => {
      if (this.runSelect.value) actions.run(this.runSelect.value);
      else actions.overview();
    });
    this.hostSelect.addEventListener('change', () => actions.host(this.hostSelect.value));
    this.compareSelect.addEventListener('change', () => {
      const [run, host] = this.compareSelect.value ? JSON.parse(this.compareSelect.value) : [undefined, undefined];
      actions.compare(run, host);
    });
  }

  hostsOf(run: string): Host[] {
    return this.runs.runs.find((r) => r.run === run)?.hosts ?? [];
  }

  /** The run picker, each run labelled with its worst status once analysed. */
  setRuns(runs: RunsResponse, state: PanelState): void {
    this.runs = runs;
    const value = this.runSelect.value;
    clear(this.runSelect);
    this.runSelect.appendChild(new Option('— all runs —', ''));
    for (const r of runs.runs) {
      const s = runStatus(r);
      const o = new Option(shown(s ? `${r.run} · ${s}` : r.run), r.run);
      o.dataset.status = s;
      this.runSelect.appendChild(o);
    }
    this.runSelect.value = state.run ?? value ?? '';
    this.fillCompare(state);
  }

  /** The pickers on the overview: no run, no host. */
  showOverview(): void {
    this.runSelect.value = '';
    clear(this.hostSelect);
    this.hostSelect.disabled = true;
    this.fillCompare({});
    this.setExport(null);
  }

  showRun(run: string): void {
    this.runSelect.value = run;
  }

  /** The pickers on a run's host (or all its hosts) and the comparison of the state. */
  showHost(state: PanelState): void {
    clear(this.hostSelect);
    const hosts = this.hostsOf(state.run ?? '');
    if (hosts.length > 1) this.hostSelect.appendChild(new Option('all hosts', ALL_HOSTS));
    for (const h of hosts) {
      const s = hostStatus(h);
      const o = new Option(shown(s ? `${h.host} · ${s}` : h.host), h.host);
      o.dataset.status = s;
      this.hostSelect.appendChild(o);
    }
    this.hostSelect.value = state.host ?? '';
    this.hostSelect.disabled = hosts.length < 2;
    this.fillCompare(state);
  }

  /** "Before": every other run and host, as the base a change is measured against. */
  private fillCompare(state: PanelState): void {
    clear(this.compareSelect);
    this.compareSelect.appendChild(new Option('—', ''));
    for (const r of this.runs.runs)
      for (const h of r.hosts) {
        if (r.run === state.run && h.host === state.host) continue;
        this.compareSelect.appendChild(
          new Option(shown(r.hosts.length > 1 ? `${r.run} · ${h.host}` : r.run), JSON.stringify([r.run, h.host])),
        );
      }
    this.compareSelect.value = state.compare ? JSON.stringify([state.compare, state.compare_host]) : '';
    this.compareSelect.disabled = !state.run || state.host === ALL_HOSTS;
  }

  /** Export trace for one host's profile; hidden on other views (null). */
  setExport(target: {run: string; host: string} | null): void {
    this.exportLink.hidden = !target;
    if (target) this.exportLink.setAttribute('href', exportUrl(target.run, target.host));
  }

  /** No runs: only the title stays. */
  empty(): void {
    this.element
      .querySelectorAll('label, #overview-button, #export-link, #copy-link')
      .forEach((n) => ((n as HTMLElement).hidden = true));
  }

  private async copyLink(): Promise<void> {
    const url = this.actions.shareUrl();
    this.share.value = url;
    this.share.hidden = false;
    this.agentCall.value = mcpCall(this.actions.state());
    this.agentCall.hidden = this.copyAgent.hidden = false;
    this.share.select();
    try {
      await navigator.clipboard.writeText(url);
      this.shareNote.textContent = 'Link copied';
    } catch {
      this.shareNote.textContent = 'Press Ctrl+C to copy';
    }
  }

  /** The MCP call beside the link: the same view for a teammate's coding agent. */
  private async copyAgentCall(): Promise<void> {
    this.agentCall.select();
    try {
      await navigator.clipboard.writeText(this.agentCall.value);
      this.shareNote.textContent = 'Agent call copied';
    } catch {
      this.shareNote.textContent = 'Press Ctrl+C to copy';
    }
  }
}
