// The panel's state in TensorBoard's URL: the state shown, written into the top page's hash (a new
// history entry per view opened), and read back when Back, Forward or a pasted link changes it.
// The pure parts (hash format, links) are in urlstate.ts.

import {PanelState, PLUGIN, STATE_KEYS, parseHash, readState, shareUrl, writeState} from './urlstate';

export type TopWindow = Window & typeof globalThis;

/** TensorBoard's page, when the panel is in its iframe (same origin); null when opened alone. */
export function parentWindow(): TopWindow | null {
  try {
    return window.parent !== window && window.parent.location.href ? (window.parent as TopWindow) : null;
  } catch {
    return null;
  }
}

export function sameState(a: PanelState, b: PanelState): boolean {
  return STATE_KEYS.every((k) => (a[k] ?? '') === (b[k] ?? ''));
}

export class Router {
  /** The view shown (or being opened). */
  state: PanelState = {};
  private readonly top = parentWindow();
  // the next write replaces the history entry instead of adding one: the first view, and a view
  // applied from the URL (Back, Forward, a pasted link)
  private replaceNext = true;

  /** The state the URL names when the panel opens. */
  initial(): PanelState {
    return readState((this.top ?? window).location.hash);
  }

  /** Calls `apply` with the state the URL names when Back, Forward or a pasted link changes it to
   * another view of this tab. */
  listen(apply: (wanted: PanelState) => void): void {
    const changed = () => {
      const top = this.top;
      if (!top || parseHash(top.location.hash).tab !== PLUGIN) return;
      const wanted = readState(top.location.hash);
      if (sameState(wanted, this.state)) return;
      if (!Object.keys(wanted).length) {
        // the tab selected again on a URL without its keys (the Profile tab drops the hash): the view
        // shown stays, and goes back into the URL
        this.write(true);
        return;
      }
      this.replaceNext = true;
      apply(wanted);
    };
    this.top?.addEventListener('popstate', changed);
    this.top?.addEventListener('hashchange', changed);
  }

  /** Show `state`: in the URL, a new history entry for each view the user opens, so that Back returns
   * to the one before it (the first view and one applied from the URL replace theirs; so does
   * `replace`, for a change within a view). */
  set(state: PanelState, replace = false): void {
    this.state = state;
    this.write(replace);
  }

  write(replaceThis = false): void {
    const replace = this.replaceNext || replaceThis;
    this.replaceNext = false;
    const top = this.top;
    if (!top) return;
    try {
      const hash = writeState(top.location.hash, this.state);
      if (hash === top.location.hash) return;
      const url = top.location.pathname + top.location.search + hash;
      if (replace) top.history.replaceState(top.history.state, '', url);
      else top.history.pushState(top.history.state, '', url);
    } catch {
      // the page may refuse (sandboxed embedding): the Copy link button still works
    }
  }

  /** Opens another tab of TensorBoard (`href`: a URL of TensorBoard's page, the tab in its hash) the
   * way TensorBoard moves between its tabs: a new history entry, the page not reloaded. The Profile tab
   * reads its run, tool and host from the page's query, so the query changes too, which a hash link
   * cannot do without a reload. False when TensorBoard's page cannot be reached: the link then opens
   * itself. */
  openTab(href: string): boolean {
    const top = this.top;
    if (!top) return false;
    try {
      const url = new URL(href, top.location.href);
      if (url.origin !== top.location.origin) return false;
      const old = top.location.href;
      top.history.pushState(null, '', url.pathname + url.search + url.hash);
      // what the browser fires when Back or Forward reaches such an entry: TensorBoard follows it
      top.dispatchEvent(new PopStateEvent('popstate', {state: null}));
      top.dispatchEvent(new HashChangeEvent('hashchange', {oldURL: old, newURL: top.location.href}));
      return true;
    } catch {
      return false;
    }
  }

  /** A TensorBoard URL that opens this view. */
  shareUrl(): string {
    return shareUrl((this.top ?? window).location.href, this.state);
  }
}
