// The GPU Advisor panel: wires the router (the state in TensorBoard's URL, router.ts), the loader (the
// plugin's routes, analyses polled while they run, loader.ts) and the views (views/*.ts): the overview
// of the logdir, one host of a run (its findings or its tables), all hosts of a run, a comparison.
// The views render the plugin's JSON and never recompute a diagnosis.

import {append, clear, el} from './dom';
import {Loaded, Loader, loadRuns, reloadRuns} from './loader';
import {Router} from './router';
import {AcrossHosts, CatalogueResponse, RunReports} from './schema.gen';
import {applyTheme} from './theme';
import {TimelineView} from './timeline';
import {ALL_HOSTS, PanelState, compareHostMissing, tableOf, tableState} from './urlstate';
import {compareView} from './views/compare';
import {collectiveTimeChecks, JobView, jobWaitText} from './views/hosts';
import {emptyView, errorView, progressView} from './views/messages';
import {OverviewView} from './views/overview';
import {ReportView, reportTimeline} from './views/report';
import {setTables} from './views/tables';
import {Toolbar} from './views/toolbar';

export class App {
  private readonly router = new Router();
  private readonly loader = new Loader();
  private readonly toolbar: Toolbar;
  private readonly timeline: TimelineView;
  private readonly meta = el('div', {class: 'meta', id: 'meta'});
  private readonly main = el('div', {id: 'main'});
  private checks: CatalogueResponse = {checks: [], tables: [], definitions: {}};
  private report: ReportView | null = null;
  // the jobs of the run last compared (all hosts), which a rank's page reads for the wait for a straggler
  private job: {run: string; cycle?: string; runs: AcrossHosts[]} | null = null;
  private overview: OverviewView | null = null;

  constructor(private readonly root: HTMLElement) {
    this.timeline = reportTimeline(
      () => (this.report ? this.report.report : null),
      (check, index) => this.report?.select(check, index, true),
    );
    this.toolbar = new Toolbar({
      overview: () => void this.showOverview(),
      run: (run) => void this.openRun(run),
      host: (host) => {
        // another host of the run opens on the same table, sort and filter (a finding's names are this host's)
        const {run, cycle, view, table, group, sort, order, filter} = this.router.state;
        void this.openRun(run!, {host, cycle, view, table, group, sort, order, filter});
      },
      compare: (compare, compare_host) => {
        const {run, host} = this.router.state;
        void this.openRun(run!, {host, compare, compare_host});
      },
      shareUrl: () => this.router.shareUrl(),
      state: () => this.router.state,
    });
  }

  async start(): Promise<void> {
    applyTheme((dark) => this.timeline.setDark(dark));
    append(this.root, this.toolbar.element, this.meta, this.main);
    this.router.state = this.router.initial();
    // Back, Forward and a link pasted into the open tab change the URL without reloading: apply it
    this.router.listen((wanted) => void this.applyUrl(wanted));
    const {runs, checks} = await loadRuns();
    if (!runs.ok) return this.fail(`Could not list runs: ${runs.message}`);
    this.toolbar.setRuns(runs.body, this.router.state);
    if (checks) {
      this.checks = checks;
      setTables(checks.tables); // the tables' tabs, as the plugin declares them
    }
    if (!runs.body.runs.length) {
      this.toolbar.empty();
      return this.put(emptyView(runs.body.legacy, runs.body.logdir_file));
    }
    await this.applyUrl(this.router.state);
  }

  /** Open the view a state names: within the report shown when only its view changed. */
  private async applyUrl(wanted: PanelState): Promise<void> {
    const {run, host} = this.router.state;
    if (this.report && !wanted.compare && wanted.run === run && wanted.host === host) return this.report.open(wanted);
    const known = this.toolbar.runs.runs.find((r) => r.run === wanted.run);
    if (known) await this.openRun(known.run, wanted);
    else await this.showOverview();
  }

  /** `node` in place of the view. */
  private put(node: HTMLElement): void {
    clear(this.main);
    this.main.appendChild(node);
  }

  private fail(message: string): void {
    this.put(errorView(message));
  }

  private leaveView(): void {
    this.overview?.stop();
    this.overview = null;
    this.report?.stop();
    this.report = null;
    clear(this.meta);
    clear(this.main);
  }

  /** Every run and host at a glance (the first view when the URL names no run). */
  private async showOverview(): Promise<void> {
    this.loader.begin();
    this.leaveView();
    this.router.set({view: 'overview'}); // a key, so that a URL without any is not taken for it
    this.toolbar.showOverview();
    const view = new OverviewView((run, host) => void this.openRun(run, {host}));
    this.overview = view;
    this.main.appendChild(el('div', {class: 'layout single'}, view.element));
    const runs = await view.start();
    if (runs && this.overview === view) this.toolbar.setRuns(runs, this.router.state);
  }

  /** A run: one host (the slowest of a multi-host run when none is named), or all its hosts; the
   * view within it (`want`) as a URL names it. */
  private async openRun(run: string, want: PanelState = {}): Promise<void> {
    const token = this.loader.begin();
    this.leaveView();
    this.router.state = {run};
    this.toolbar.showRun(run);
    const {finding, compare, compare_host, cycle} = want;
    const hosts = this.toolbar.hostsOf(run).map((h) => h.host);
    let host = want.host;
    if (host !== ALL_HOSTS && (!host || !hosts.includes(host))) {
      host = hosts[0];
      if (hosts.length > 1) {
        // open on the slowest host: the run's hosts compared
        const all = await this.runReports(token, run, cycle);
        if (!all) return;
        if (all.ok) this.job = {run, cycle, runs: all.body.runs};
        host = (all.ok ? all.body.runs[0]?.slowest_host : undefined) ?? hosts[0];
        void this.refreshStatuses(token);
      }
    }
    const table = host !== ALL_HOSTS && tableOf(want);
    let state: PanelState = table ? {run, host, cycle, ...tableState(table)} : {run, host, finding, cycle};
    let missing: string | undefined;
    if (compare && host !== ALL_HOSTS) {
      // a link that names the run to compare with and not its host: its only host, else say what is missing
      const theirs = this.toolbar.hostsOf(compare).map((h) => h.host);
      const other = compare_host ?? (theirs.length === 1 ? theirs[0] : undefined);
      if (other) state = {run, host, compare, compare_host: other};
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
  private async runReports(token: number, run: string, cycle?: string): Promise<Loaded<RunReports> | null> {
    append(this.main, progressView(`Analysing the hosts of ${run}…`).element);
    const res = await this.loader.runReports(token, run, cycle);
    if (res) clear(this.main);
    return res;
  }

  private async showHosts(token: number, run: string): Promise<void> {
    this.router.write();
    this.toolbar.setExport(null);
    const {cycle} = this.router.state;
    const all = await this.runReports(token, run, cycle);
    if (!all) return;
    if (!all.ok) return this.fail(`Could not analyse the hosts of ${run}: ${all.message}`);
    this.job = {run, cycle, runs: all.body.runs};
    void this.refreshStatuses(token);
    const arrived = performance.now();
    new JobView(all.body.reports, all.body.runs[0], {
      open: (host) => void this.openRun(run, {host, cycle}),
      pickCycle: (k) => void this.openRun(run, {host: ALL_HOSTS, cycle: String(k)}),
      collectiveTime: collectiveTimeChecks(this.checks.checks),
    }).mount(this.main, arrived);
  }

  /** This run against the base it is compared with. */
  private async showComparison(token: number): Promise<void> {
    const {run, host, compare, compare_host} = this.router.state as Required<PanelState>;
    this.router.write();
    this.toolbar.setExport(null);
    this.put(progressView(`Comparing ${run} with ${compare}…`).element);
    const res = await this.loader.compare(token, run, host, compare, compare_host);
    if (!res) return;
    if (!res.ok) return this.fail(res.message);
    const back = () => void this.openRun(run, {host});
    const swap = () => void this.openRun(compare, {host: compare_host, compare: run, compare_host: host});
    this.put(el('div', {class: 'layout single'}, compareView(res.body, back, swap)));
  }

  /** The run and host pickers' statuses, once the hosts they label are analysed (a run opened by
   * link, before any overview, lists its hosts without them). */
  private async refreshStatuses(token: number): Promise<void> {
    const runs = await reloadRuns();
    if (!runs || !this.loader.isCurrent(token)) return;
    this.toolbar.setRuns(runs, this.router.state);
    this.toolbar.showHost(this.router.state);
  }

  /** One host's report, showing progress while the analysis runs. */
  private async load(token: number): Promise<void> {
    const {run, host} = this.router.state;
    if (!run || !host) return;
    this.router.write();
    this.toolbar.setExport({run, host});
    const progress = progressView(`Analysing ${run} · ${host}…`, true);
    this.put(progress.element);
    const res = await this.loader.report(token, run, host, progress.set);
    if (!res) return; // the user picked another run meanwhile
    if (!res.ok) return this.fail(res.status === 422 ? `This profile could not be read.\n${res.message}` : res.message);
    void this.refreshStatuses(token);
    const view = (v: PanelState, replace?: boolean) => {
      const {run, host, cycle} = this.router.state;
      this.router.set({run, host, cycle, ...v}, replace);
    };
    this.report = new ReportView(
      res.body,
      {timeline: this.timeline, checks: this.checks, view, openTab: (href) => this.router.openTab(href)},
      this.meta,
      this.main,
    );
    this.report.open(this.router.state);
    // the wait for a straggler, where the run's jobs are known (a rank opened from them)
    const job = this.job;
    if (job && job.run === run && job.cycle === this.router.state.cycle) {
      const text = jobWaitText(job.runs, host);
      if (text) this.report.noteJob(collectiveTimeChecks(this.checks.checks), text);
    }
  }
}
