// Built from frontend/src by frontend/build.mjs; do not edit.

// src/api.ts
async function getJson(route, params = {}) {
  const q = Object.entries(params).filter(([, v]) => v !== void 0).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&");
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

// src/dom.ts
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
      node.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(node, ...children);
  return node;
}
function append(node, ...children) {
  for (const c of children) {
    if (c === null || c === void 0 || c === false) continue;
    node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
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
body { margin: 0; font: 13px/1.45 Roboto, 'Helvetica Neue', Arial, sans-serif; color: var(--fg); background: var(--bg); }
button, select, input { font: inherit; color: inherit; }
button { cursor: pointer; background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: 3px 10px; }
button:hover { background: var(--hover); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
a { color: var(--link); }
select { background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: 3px 6px; max-width: 340px; }
.bar { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; padding: 10px 16px; border-bottom: 1px solid var(--line); }
.bar h1 { font-size: 16px; font-weight: 500; margin: 0 8px 0 0; }
.bar label { color: var(--fg2); display: flex; gap: 6px; align-items: center; }
.bar .spacer { flex: 1; }
.share { width: 380px; font-size: 12px; border: 1px solid var(--line); background: var(--code); padding: 3px 6px; border-radius: 4px; }
.meta { color: var(--fg2); padding: 6px 16px 0; }
.layout { display: grid; grid-template-columns: minmax(380px, 40%) 1fr; gap: 16px; padding: 12px 16px 24px; align-items: start; }
.col { display: flex; flex-direction: column; gap: 14px; min-width: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card h2 { font-size: 13px; font-weight: 500; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: var(--fg2); }
.headline { display: flex; gap: 10px; flex-wrap: wrap; }
.kpi { flex: 1 1 120px; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.kpi .v { font-size: 22px; font-weight: 500; }
.kpi .l { color: var(--fg2); font-size: 12px; }
.kpi .meter { height: 4px; background: var(--line); border-radius: 2px; margin-top: 4px; overflow: hidden; }
.kpi .meter > div { height: 100%; background: var(--accent); }
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
.finding .rec { white-space: pre-line; margin: 8px 0; }
pre { background: var(--code); border-radius: 4px; padding: 8px; overflow: auto; margin: 4px 0; font-size: 12px; }
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
`;

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

// src/timeline.ts
var LABEL_W = 200;
var AXIS_H = 20;
var STEP_H = 16;
var MARK_H = 16;
var ROW_H = 17;
var TOP = AXIS_H + STEP_H + MARK_H;
var TimelineView = class {
  constructor(opts) {
    this.opts = opts;
    this.extent = { start: 0, end: 1 };
    this.window = { start: 0, end: 1 };
    this.data = null;
    this.highlight = null;
    this.hits = [];
    this.seq = 0;
    this.drag = null;
    this.dark = false;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "timeline";
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute(
      "aria-label",
      "Timeline of GPU streams and host threads. Arrow keys pan, plus and minus zoom, 0 resets."
    );
    this.canvas.dataset.loaded = "0";
    this.info = document.createElement("div");
    this.info.className = "muted";
    this.canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.canvas.addEventListener("mousedown", (e) => this.onDown(e));
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", (e) => this.onUp(e));
    this.canvas.addEventListener("keydown", (e) => this.onKey(e));
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }
  setDark(dark) {
    this.dark = dark;
    this.draw();
  }
  /** A new profile: show all of it. */
  reset(extentMs) {
    this.extent = { start: 0, end: Math.max(extentMs, 1e-3) };
    this.highlight = null;
    this.canvas.dataset.highlight = "";
    this.data = null;
    this.setWindow({ ...this.extent });
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
  /** Zoom to a finding's evidence window and mark it. */
  show(check, index, start, end) {
    this.highlight = { check, index, start, end };
    this.canvas.dataset.highlight = `${check}:${index}`;
    this.canvas.dataset.highlightStart = String(start);
    this.canvas.dataset.highlightEnd = String(end);
    this.setWindow(fit(start, end, this.extent));
  }
  zoomBy(factor) {
    this.setWindow(zoom(this.window, factor, 0.5, this.extent));
  }
  panBy(frac) {
    this.setWindow(pan(this.window, frac, this.extent));
  }
  resetZoom() {
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
    if (y >= AXIS_H + STEP_H && y < TOP) {
      const hit = this.hits.find((h) => x >= h.x0 - 3 && x <= h.x1 + 3);
      if (hit) {
        this.opts.onSelect(hit.check, hit.index);
        return;
      }
    }
    this.drag = { x: e.clientX, window: { ...this.window } };
    this.canvas.classList.add("dragging");
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
    const x = e.clientX - rect.left - LABEL_W;
    const y = e.clientY - rect.top;
    if (x < 0 || y < 0 || x > this.plotWidth() || y > rect.height) return;
    const t = toTime(this.window, this.plotWidth(), x);
    const row = Math.floor((y - TOP) / ROW_H);
    const track = this.data && row >= 0 ? this.data.tracks[row] : void 0;
    this.info.textContent = `${fmtDuration(t)}` + (track ? ` · ${track.group} · ${track.label}` : "");
  }
  onUp(_e) {
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
  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const rows = this.data ? this.data.tracks.length : 0;
    const cssW = c.clientWidth || 800;
    const cssH = TOP + Math.max(rows, 1) * ROW_H + 6;
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
    const W = this.plotWidth();
    const w = this.window;
    const X = (t) => LABEL_W + toX(w, W, t);
    ctx.fillStyle = fg2;
    for (const t of ticks(w, Math.max(2, Math.floor(W / 110)))) {
      const x = X(t);
      ctx.fillRect(x, AXIS_H - 4, 1, 4);
      ctx.fillText(fmtDuration(t), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = fg2;
    ctx.fillText("steps", 6, AXIS_H + STEP_H / 2);
    ctx.fillText("findings", 6, AXIS_H + STEP_H + MARK_H / 2);
    if (this.data) {
      this.data.steps.forEach((s, i) => {
        const x0 = Math.max(LABEL_W, X(s.start_ms));
        const x1 = Math.min(LABEL_W + W, X(s.end_ms));
        if (x1 <= x0) return;
        ctx.fillStyle = i % 2 ? this.dark ? "#303134" : "#f1f3f4" : this.dark ? "#3c4043" : "#e8eaed";
        ctx.fillRect(x0, AXIS_H, x1 - x0, STEP_H - 2);
        if (x1 - x0 > 24) {
          ctx.fillStyle = fg2;
          ctx.fillText(String(s.number), x0 + 3, AXIS_H + STEP_H / 2 - 1);
        }
        ctx.fillStyle = line;
        ctx.fillRect(X(s.start_ms), TOP, 1, rows * ROW_H);
      });
      this.hits = [];
      for (const f of this.data.findings) {
        const x0 = Math.max(LABEL_W, X(f.start_ms));
        const x1 = Math.max(x0 + 3, Math.min(LABEL_W + W, X(f.end_ms)));
        ctx.fillStyle = STATUS_COLORS[f.status] ?? fg2;
        const on = this.highlight && this.highlight.check === f.check && this.highlight.index === f.index;
        ctx.globalAlpha = on ? 1 : 0.75;
        ctx.fillRect(x0, AXIS_H + STEP_H + 2, x1 - x0, MARK_H - 4);
        ctx.globalAlpha = 1;
        this.hits.push({ x0: x0 - LABEL_W, x1: x1 - LABEL_W, check: f.check, index: f.index });
      }
      this.data.tracks.forEach((tr, r) => {
        const y = TOP + r * ROW_H;
        ctx.fillStyle = r % 2 ? this.dark ? "#242528" : "#fafafa" : this.dark ? "#202124" : "#ffffff";
        ctx.fillRect(LABEL_W, y, W, ROW_H);
        ctx.fillStyle = fg;
        const label = `${tr.group} · ${tr.label}`;
        ctx.save();
        ctx.beginPath();
        ctx.rect(0, y, LABEL_W - 6, ROW_H);
        ctx.clip();
        ctx.fillText(label, 6, y + ROW_H / 2);
        ctx.restore();
        for (const [s, e, density, cls] of tr.segments) {
          const x0 = X(s);
          const x1 = Math.max(x0 + 1, X(e));
          if (x1 < LABEL_W || x0 > LABEL_W + W) continue;
          ctx.fillStyle = SEGMENT_COLORS[cls] ?? "#9aa0a6";
          ctx.globalAlpha = 0.35 + 0.65 * Math.min(1, Math.max(0, density));
          ctx.fillRect(Math.max(LABEL_W, x0), y + 2, Math.min(LABEL_W + W, x1) - Math.max(LABEL_W, x0), ROW_H - 4);
        }
        ctx.globalAlpha = 1;
      });
    } else {
      ctx.fillStyle = fg2;
      ctx.fillText("loading…", LABEL_W + 8, TOP + ROW_H / 2);
    }
    if (this.highlight) {
      const x0 = Math.max(LABEL_W, X(this.highlight.start));
      const x1 = Math.min(LABEL_W + W, Math.max(X(this.highlight.end), x0 + 2));
      if (x1 > x0) {
        ctx.fillStyle = this.dark ? "rgba(255,152,0,0.18)" : "rgba(245,124,0,0.14)";
        ctx.fillRect(x0, AXIS_H, x1 - x0, cssH - AXIS_H);
        ctx.strokeStyle = "#f57c00";
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x0, AXIS_H, x1 - x0, cssH - AXIS_H - 1);
      }
    }
    ctx.fillStyle = line;
    ctx.fillRect(LABEL_W - 1, 0, 1, cssH);
  }
};

// src/urlstate.ts
var PLUGIN = "gpu_advisor";
var PREFIX = `p.${PLUGIN}.`;
var STATE_KEYS = ["run", "host", "finding"];
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
function roundMs(v) {
  return String(Math.round(v * 1e6) / 1e6);
}

// src/app.ts
var PROBLEMS = ["critical", "warning", "info"];
var POLL_WAIT_S = 2;
function parentWindow() {
  try {
    return window.parent !== window && window.parent.location.href ? window.parent : null;
  } catch {
    return null;
  }
}
function chip(status) {
  const c = el("span", { class: "chip", "data-status": status }, statusLabel(status));
  c.style.background = STATUS_COLORS[status] ?? "#80868b";
  return c;
}
var App = class {
  constructor(root) {
    this.root = root;
    this.state = {};
    this.runs = { runs: [], legacy: [] };
    this.catalogue = [];
    this.report = null;
    this.bar = el("div", { class: "bar" });
    this.meta = el("div", { class: "meta", id: "meta" });
    this.main = el("div", { id: "main" });
    this.runSelect = el("select", { id: "run-select", "aria-label": "Run" });
    this.hostSelect = el("select", { id: "host-select", "aria-label": "Host" });
    this.share = el("input", {
      class: "share",
      id: "share-link",
      readonly: true,
      "aria-label": "Link to this view"
    });
    this.shareNote = el("span", { class: "muted", id: "share-note" });
    this.exportLink = el("a", { id: "export-link", href: "./export", download: true }, "Export trace");
    this.loadToken = 0;
    this.findingCards = /* @__PURE__ */ new Map();
    this.timeline = new TimelineView({
      load: (w, width) => this.loadTimeline(w, width),
      onSelect: (check, index) => this.select(check, index, true)
    });
  }
  async start() {
    const style = document.createElement("style");
    style.textContent = CSS;
    document.head.appendChild(style);
    this.watchDarkMode();
    this.share.hidden = true;
    append(
      this.bar,
      el("h1", {}, "GPU Advisor"),
      el("label", { for: "run-select" }, "Run", this.runSelect),
      el("label", { for: "host-select" }, "Host", this.hostSelect),
      el("span", { class: "spacer" }),
      this.exportLink,
      el("button", { id: "copy-link", type: "button", onclick: () => void this.copyLink() }, "Copy link"),
      this.share,
      this.shareNote
    );
    append(this.root, this.bar, this.meta, this.main);
    this.runSelect.addEventListener("change", () => {
      this.state = { run: this.runSelect.value };
      this.fillHosts();
      void this.load();
    });
    this.hostSelect.addEventListener("change", () => {
      this.state = { run: this.state.run, host: this.hostSelect.value };
      void this.load();
    });
    const parent = parentWindow();
    this.state = parent ? readState(parent.location.hash) : readState(window.location.hash);
    const [runs, checks] = await Promise.all([
      getJson("runs"),
      getJson("checks")
    ]);
    if (runs.status !== 200) return this.fail(`Could not list runs: ${errorMessage(runs.body)}`);
    this.runs = runs.body;
    this.catalogue = checks.status === 200 ? checks.body.checks : [];
    if (!this.runs.runs.length) {
      clear(this.main);
      append(
        this.main,
        el(
          "div",
          { class: "message" },
          el("p", {}, "No profile runs in this logdir."),
          el(
            "p",
            { class: "muted" },
            "Capture one with the Keras TensorBoard callback (profile_batch=(10, 15)) or tf.profiler.experimental.start(logdir); runs appear as <logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb."
          ),
          ...this.runs.legacy.map((l) => el("p", { class: "muted" }, `${l.run}: ${l.message}`))
        )
      );
      return;
    }
    for (const r of this.runs.runs) this.runSelect.appendChild(new Option(r.run, r.run));
    const known = this.runs.runs.find((r) => r.run === this.state.run);
    if (!known) this.state = { run: this.runs.runs[0].run };
    this.runSelect.value = this.state.run;
    this.fillHosts();
    await this.load();
  }
  watchDarkMode() {
    const parent = parentWindow();
    const apply = () => {
      const dark = !!parent && parent.document.body.classList.contains("dark-mode");
      document.body.classList.toggle("dark", dark);
      this.timeline.setDark(dark);
    };
    apply();
    if (parent)
      new MutationObserver(apply).observe(parent.document.body, { attributes: true, attributeFilter: ["class"] });
  }
  fillHosts() {
    clear(this.hostSelect);
    const run = this.runs.runs.find((r) => r.run === this.state.run);
    const hosts = run ? run.hosts.map((h) => h.host) : [];
    for (const h of hosts) this.hostSelect.appendChild(new Option(h, h));
    if (!this.state.host || !hosts.includes(this.state.host)) this.state.host = hosts[0];
    this.hostSelect.value = this.state.host ?? "";
    this.hostSelect.disabled = hosts.length < 2;
  }
  writeUrl() {
    const parent = parentWindow();
    if (!parent) return;
    try {
      const url = parent.location.pathname + parent.location.search + writeState(parent.location.hash, this.state);
      parent.history.replaceState(parent.history.state, "", url);
    } catch {
    }
  }
  async copyLink() {
    const parent = parentWindow();
    const url = shareUrl((parent ?? window).location.href, this.state);
    this.share.value = url;
    this.share.hidden = false;
    this.share.select();
    try {
      await navigator.clipboard.writeText(url);
      this.shareNote.textContent = "Link copied";
    } catch {
      this.shareNote.textContent = "Press Ctrl+C to copy";
    }
  }
  fail(message) {
    clear(this.main);
    append(this.main, el("div", { class: "message" }, el("p", { class: "error", role: "alert" }, message)));
  }
  /** Fetch the report, showing progress while the analysis runs. */
  async load() {
    const token = ++this.loadToken;
    const { run, host } = this.state;
    if (!run || !host) return;
    this.writeUrl();
    this.exportLink.setAttribute("href", exportUrl(run, host));
    this.report = null;
    clear(this.meta);
    clear(this.main);
    const bar = el("div");
    const label = el("p", { id: "progress-label" }, `Analysing ${run} · ${host}…`);
    append(this.main, el("div", { class: "message", id: "progress" }, label, el("div", { class: "progress" }, bar)));
    bar.style.width = "0%";
    for (; ; ) {
      const res = await getJson("report", {
        run,
        host,
        wait: POLL_WAIT_S
      });
      if (token !== this.loadToken) return;
      if (res.status === 202) {
        const p = Math.round(100 * (res.body.progress ?? 0));
        bar.style.width = `${p}%`;
        label.textContent = `Analysing ${run} · ${host}… ${p}%`;
        continue;
      }
      if (res.status === 200) return this.show(res.body);
      if (res.status === 422) return this.fail(`This profile could not be read.
${errorMessage(res.body)}`);
      return this.fail(errorMessage(res.body));
    }
  }
  show(report) {
    this.report = report;
    clear(this.main);
    const s = report.steps;
    append(
      this.meta,
      `${report.devices.length ? report.devices.map((d) => `GPU ${d.id}: ${d.name} (cc ${d.compute_capability ?? "?"})`).join(" · ") : "No GPU in this profile"}`,
      s ? ` · ${s.count} step${s.count === 1 ? "" : "s"} (${s.source}${s.marker ? ` "${s.marker}"` : ""}), mean ${fmtDuration(s.mean_ms)} ± ${fmtDuration(s.stdev_ms)}` : ""
    );
    for (const e of report.errors) append(this.meta, el("div", { class: "error" }, e));
    const left = el("div", { class: "col" }, this.findingsView(report), this.checklistView(report));
    const right = el("div", { class: "col" }, this.headlineView(report), this.timelineCard(), this.breakdownView(report));
    append(this.main, el("div", { class: "layout" }, left, right));
    this.timeline.reset(report.extent_ms ?? Math.max(0, ...(report.step_breakdown ?? []).map((x) => x.end_ms)));
    if (this.state.finding) {
      const [id, idx] = this.state.finding.split(":");
      if (report.checks.some((c) => c.id === id)) this.select(id, Number(idx) || 0, true);
    }
  }
  headlineView(r) {
    const h = r.headline;
    const kpi = (value, label, id) => {
      const meter = el("div");
      meter.style.width = `${Math.max(0, Math.min(100, value ?? 0))}%`;
      return el(
        "div",
        { class: "kpi", id },
        el("div", { class: "v" }, fmtPct(value)),
        el("div", { class: "l" }, label),
        el("div", { class: "meter" }, meter)
      );
    };
    const card = el("div", { class: "card" }, el("h2", {}, "Headline"));
    if (!h) return card;
    append(
      card,
      el(
        "div",
        { class: "headline" },
        kpi(h.device_busy_pct, "of step time the GPU is busy", "kpi-busy"),
        kpi(h.device_op_time_pct, "of op time placed on the GPU", "kpi-ops"),
        kpi(h.fp16_compute_pct, "of device compute in 16-bit", "kpi-fp16")
      )
    );
    if (h.per_gpu.length > 1) {
      const t = el(
        "table",
        {},
        el(
          "tr",
          {},
          el("th", {}, "GPU"),
          el("th", { class: "num" }, "busy"),
          el("th", { class: "num" }, "16-bit"),
          el("th", { class: "num" }, "kernels")
        )
      );
      for (const g of h.per_gpu)
        t.appendChild(
          el(
            "tr",
            {},
            el("td", {}, `GPU ${g.device_id}`),
            el("td", { class: "num" }, fmtPct(g.device_busy_pct)),
            el("td", { class: "num" }, fmtPct(g.fp16_compute_pct)),
            el("td", { class: "num" }, g.kernels)
          )
        );
      append(card, t);
    }
    return card;
  }
  timelineCard() {
    const tools = el(
      "div",
      { class: "tl-tools" },
      el("button", { type: "button", "aria-label": "Zoom in", onclick: () => this.timeline.zoomBy(0.5) }, "+"),
      el("button", { type: "button", "aria-label": "Zoom out", onclick: () => this.timeline.zoomBy(2) }, "−"),
      el("button", { type: "button", "aria-label": "Earlier", onclick: () => this.timeline.panBy(-0.25) }, "←"),
      el("button", { type: "button", "aria-label": "Later", onclick: () => this.timeline.panBy(0.25) }, "→"),
      el("button", { type: "button", id: "timeline-reset", onclick: () => this.timeline.resetZoom() }, "Whole profile"),
      this.timeline.info
    );
    const legend = el(
      "div",
      { class: "legend" },
      ...[
        ["compute", "#4285f4"],
        ["collective", "#a142f4"],
        ["copy", "#fa7b17"],
        ["input", "#ea4335"],
        ["launch", "#f9ab00"],
        ["op", "#12b5cb"],
        ["other host", "#9aa0a6"]
      ].map(([name, color]) => {
        const i = el("i");
        i.style.background = color;
        return el("span", {}, i, name);
      })
    );
    return el(
      "div",
      { class: "card", id: "timeline-card" },
      el("h2", {}, "Timeline"),
      tools,
      this.timeline.canvas,
      legend
    );
  }
  async loadTimeline(w, width) {
    const { run, host } = this.state;
    if (!run || !host || !this.report) return null;
    const res = await getJson("timeline", { run, host, start_ms: w.start, end_ms: w.end, width });
    return res.status === 200 ? res.body : null;
  }
  breakdownView(r) {
    const card = el("div", { class: "card", id: "breakdown" }, el("h2", {}, "Step time breakdown"));
    const steps = r.step_breakdown ?? [];
    if (!steps.length || !r.breakdown_ms) return card;
    const cats = Object.keys(CATEGORY_COLORS);
    const W = 600, H = 150, padL = 46, padB = 18;
    const total = (s) => cats.reduce((a, c) => a + (s.breakdown_ms[c] ?? 0), 0);
    const max = Math.max(...steps.map(total), 1e-9);
    const chart = svg("svg", {
      viewBox: `0 0 ${W} ${H}`,
      width: "100%",
      role: "img",
      "aria-label": "Stacked step time breakdown per step"
    });
    const bw = (W - padL) / steps.length;
    steps.forEach((s, i) => {
      let y = H - padB;
      for (const c of cats) {
        const v = s.breakdown_ms[c] ?? 0;
        if (v <= 0) continue;
        const h = v / max * (H - padB - 6);
        y -= h;
        chart.appendChild(
          svg(
            "rect",
            { x: padL + i * bw + bw * 0.1, y, width: Math.max(bw * 0.8, 0.5), height: h, fill: CATEGORY_COLORS[c] },
            svg("title", {}, `step ${s.step}: ${CATEGORY_LABELS[c]} ${fmtDuration(v)}`)
          )
        );
      }
    });
    chart.appendChild(
      svg("text", { x: padL - 4, y: 12, "text-anchor": "end", "font-size": 10, fill: "currentColor" }, fmtDuration(max))
    );
    chart.appendChild(
      svg("text", { x: padL - 4, y: H - padB, "text-anchor": "end", "font-size": 10, fill: "currentColor" }, "0")
    );
    chart.appendChild(
      svg(
        "text",
        { x: padL, y: H - 4, "font-size": 10, fill: "currentColor" },
        `steps ${steps[0].step}–${steps[steps.length - 1].step}`
      )
    );
    const legend = el(
      "div",
      { class: "legend" },
      ...cats.map((c) => {
        const i = el("i");
        i.style.background = CATEGORY_COLORS[c];
        return el("span", {}, i, `${CATEGORY_LABELS[c]} ${fmtDuration(r.breakdown_ms[c])}`);
      })
    );
    append(card, chart, legend);
    return card;
  }
  findingsView(r) {
    const card = el("div", { class: "card", id: "findings" }, el("h2", {}, "Findings, by estimated saving"));
    this.findingCards.clear();
    const problems = r.checks.filter((c) => PROBLEMS.includes(c.status));
    if (!problems.length) append(card, el("p", {}, "No problems found: every applicable check passed."));
    for (const f of problems) {
      const c = this.findingView(f);
      this.findingCards.set(f.id, c);
      card.appendChild(c);
    }
    return card;
  }
  findingView(f) {
    const body = el("div", { class: "body" });
    body.hidden = true;
    const head = el(
      "button",
      { class: "head", type: "button", "aria-expanded": "false", onclick: () => this.select(f.id, 0, body.hidden, true) },
      chip(f.status),
      el("span", {}, el("div", { class: "title" }, f.title), el("div", { class: "id" }, f.id)),
      el("span", { class: "saving" }, fmtSaving(f.saving_ms, f.saving_pct))
    );
    const card = el("div", { class: "finding", "data-check": f.id, "data-status": f.status }, head, body);
    append(body, el("p", { class: "summary" }, f.summary));
    if (f.metrics.length) {
      const t = el("table", { class: "metrics" });
      for (const m of f.metrics)
        t.appendChild(el("tr", {}, el("td", {}, m.label), el("td", { class: "num" }, fmtValue(m.value, m.unit))));
      append(body, t);
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
    if (f.saving_ms !== null)
      append(
        body,
        el("p", { class: "muted" }, `Estimated saving ${fmtSaving(f.saving_ms, f.saving_pct)}: ${f.saving_basis ?? ""}`)
      );
    append(body, el("div", { class: "rec" }, f.recommendation));
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
        el("div", { class: "row" }, el("strong", {}, "Snippet"), copy),
        el("pre", {}, el("code", {}, f.snippet))
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
            ...keys.map((k) => el("td", { class: typeof row[k] === "number" ? "num" : "" }, fmtValue(row[k], "")))
          )
        );
      append(body, el("details", {}, el("summary", {}, `Details (${f.details.length})`), t));
    }
    if (f.evidence.length && this.report) {
      const base = tbBase(window.location.pathname);
      const list = el("ul", { class: "evidence" });
      f.evidence.forEach(
        (e, i) => list.appendChild(
          el(
            "li",
            { "data-index": i },
            el("div", {}, e.label),
            el("div", { class: "where" }, `${e.where} · ${fmtDuration(e.start_ms)}–${fmtDuration(e.end_ms)}`),
            e.events.length ? el("div", { class: "muted" }, e.events.slice(0, 5).join(" · ")) : null,
            el(
              "div",
              { class: "row" },
              el(
                "button",
                { type: "button", class: "show-on-timeline", onclick: () => this.select(f.id, i, true) },
                "Show on timeline"
              ),
              el(
                "a",
                {
                  class: "trace-viewer-link",
                  href: traceViewerUrl(base, this.report.run, this.report.host, f.id, i, e.start_ms, e.end_ms),
                  target: "_blank",
                  rel: "noopener",
                  title: 'The trace viewer on this window, with the advice as a "GPU Advisor" track'
                },
                "Open in trace viewer ↗"
              ),
              el(
                "a",
                {
                  class: "profile-tab-link",
                  href: profileTabUrl(base, this.report.run, this.report.host, e.start_ms, e.end_ms),
                  target: "_top",
                  title: `The Profile tab's trace viewer on this run and host; the window is ${fmtDuration(e.start_ms)}–${fmtDuration(e.end_ms)}`
                },
                "Profile tab"
              )
            )
          )
        )
      );
      append(body, el("strong", {}, "Where"), list);
    }
    append(
      body,
      el(
        "p",
        {},
        el("a", { href: f.link, target: "_blank", rel: "noopener" }, "Guide: ", f.section, " ↗"),
        this.report ? " · " : "",
        this.report ? el(
          "a",
          {
            href: profileTabUrl(tbBase(window.location.pathname), this.report.run, this.report.host),
            target: "_top"
          },
          "Profile tab"
        ) : null
      )
    );
    return card;
  }
  /** Select a finding: expand it, zoom the timeline to its evidence, and keep it in the URL. */
  select(id, index, zoom2, toggle = false) {
    const f = this.report?.checks.find((c) => c.id === id);
    if (!f) return;
    for (const [cid, card] of this.findingCards) {
      const on = cid === id;
      card.classList.toggle("selected", on);
      const body = card.querySelector(".body");
      const head = card.querySelector(".head");
      if (on) {
        const open = toggle ? body.hidden : true;
        body.hidden = !open;
        head.setAttribute("aria-expanded", String(open));
        if (!toggle) card.scrollIntoView({ block: "nearest" });
      }
    }
    this.state = { run: this.state.run, host: this.state.host, finding: index ? `${id}:${index}` : id };
    this.writeUrl();
    const e = f.evidence[index] ?? f.evidence[0];
    if (zoom2 && e) this.timeline.show(id, f.evidence.indexOf(e), e.start_ms, e.end_ms);
  }
  checklistView(r) {
    const card = el("div", { class: "card", id: "checklist" }, el("h2", {}, "The checklist"));
    const byId = new Map(r.checks.map((c) => [c.id, c]));
    const order = this.catalogue.length ? this.catalogue : [...r.checks].sort((a, b) => statusRank(a.status) - statusRank(b.status));
    let section = "";
    for (const entry of order) {
      const f = byId.get(entry.id);
      if (!f) continue;
      if (f.section !== section) {
        section = f.section;
        card.appendChild(el("div", { class: "section" }, section));
      }
      const name = PROBLEMS.includes(f.status) ? el("button", { type: "button", class: "link", onclick: () => this.select(f.id, 0, true) }, f.id) : el("span", { class: "id" }, f.id);
      card.appendChild(
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
    return card;
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
