/*
 * timeline.js - index.html's interactive timeline (report/timeline.c writes
 * the data; CMake embeds this file into the program at build time).
 *
 * Read the way sleepgraph's timelines are: one pane per op of the script
 * (probe; suspend and resume side by side as two halves), each with its
 * own time axis from the op's start, its phases as coloured bands, the
 * op's slowest devices pinned on top, then either the callbacks packed
 * into one row per worker (the default, as sleepgraph packs its threads;
 * the device's name and {driver} on the bar) or one row per device in the order the
 * devices started ("rows" button, or index.html#tl=device); names are
 * shortened from the left so that the unique tail stays.  Hover a bar for its callback; click
 * a bar or a name for the device: its callbacks, its links and what each
 * callback waited for.  Names reach the page only through the canvas and
 * textContent, never as markup.
 */
(function () {
'use strict';
var box = document.getElementById('tl');
var D = JSON.parse(document.getElementById('tl-data').textContent);
var S = JSON.parse(document.getElementById('tl-segs').textContent);
var names = D.names, phases = D.phases, ops = D.ops, nrows = D.rows, drivers = D.drivers || [];
/* a segment: [slot, op, phase, t0, t1, worker, waited-for slot or -1, its phase, its end, flags, instance] */
var SLOT = 0, OP = 1, PH = 2, T0 = 3, T1 = 4, WK = 5, WS = 6, WP = 7, WE = 8, FL = 9, IN = 10;
var CRIT = 1, BARRIER = 2;
var ROW = 18, LAB = 210, AX = 20, BAND = 16, MAXH = 540, TOP = AX + BAND;
/* slowest devices pinned on top of each pane; rows per worker ('worker') or per device ('device') */
var PIN = 3, MODE = /[#&]tl=device\b/.test(location.hash) ? 'device' : 'worker';
var COL = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#8cd17d', '#b6992d', '#499894', '#79706e'];
var hl = false, i, k;

function colour(p) { return COL[p % COL.length]; }
function ms(t) { return (t / 1e6).toFixed(3) + ' ms'; }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/* ---- names: the shortest unique tail of the path, then cut from the left ---- */
var tails = {}, short = [];
function parts(s) { return s.split('/').filter(function (p) { return p.length; }); }
for (i = 0; i < names.length; i++) {
  var p = parts(names[i]);
  for (k = 1; k <= p.length; k++) {
    var t = p.slice(p.length - k).join('/');
    tails[t] = (tails[t] || 0) + 1;
  }
}
for (i = 0; i < names.length; i++) {
  var q = parts(names[i]), pick = names[i];
  for (k = 1; k < q.length; k++) {
    var tail = q.slice(q.length - k).join('/');
    if (tails[tail] === 1) { pick = '\u2026/' + tail; break; }
  }
  short.push(pick);
}
/* 'dev {driver}' as sleepgraph labels its bars; a device without a known driver: its name alone */
function drv(slot) { return drivers[slot] ? ' {' + drivers[slot] + '}' : ''; }
function label(slot) { return short[slot] + drv(slot); }
var meas = document.createElement('canvas').getContext('2d');
meas.font = '11px sans-serif';
function fit(s, w) {
  if (meas.measureText(s).width <= w) return s;
  var lo = 0, hi = s.length;
  while (lo < hi) {
    var mid = (lo + hi) >> 1;
    if (meas.measureText('\u2026' + s.slice(mid)).width <= w) hi = mid; else lo = mid + 1;
  }
  return '\u2026' + s.slice(lo);
}

/* a bar's text: 'dev {driver}' when it fits, else the name alone cut to fit (the driver is in the tooltip) */
function barText(slot, w) {
  var t = label(slot);
  return meas.measureText(t).width <= w ? t : fit(short[slot], w);
}

/* ---- panes: consecutive phase instances of one op, merged when they overlap ---- */
var inst = [], panes = [], cur = null, bySlot = [], s;
for (i = 0; i < names.length; i++) bySlot.push([]);
for (i = 0; i < S.length; i++) {
  s = S[i];
  var I = inst[s[IN]] || (inst[s[IN]] = { op: s[OP], phase: s[PH], t0: Infinity, t1: -Infinity, id: s[IN] });
  if (s[T0] < I.t0) I.t0 = s[T0];
  if (s[T1] > I.t1) I.t1 = s[T1];
  bySlot[s[SLOT]].push(s);
}
for (i = 0; i < inst.length; i++) {
  var J = inst[i];
  if (!J) continue;
  if (!cur || cur.op !== J.op) {
    cur = null;
    for (k = 0; k < panes.length; k++)   /* a racing op: the same pane while they overlap */
      if (panes[k].op === J.op && J.t0 <= panes[k].t1) cur = panes[k];
    if (!cur) {
      cur = { op: J.op, insts: [], segs: [], t0: Infinity, t1: -Infinity };
      panes.push(cur);
    }
  }
  cur.insts.push(J);
  J.pane = cur;
  if (J.t0 < cur.t0) cur.t0 = J.t0;
  if (J.t1 > cur.t1) cur.t1 = J.t1;
}
for (i = 0; i < S.length; i++) inst[S[i][IN]].pane.segs.push(S[i]);

/* ---- the controls above the panes ---- */
var bar = el('div', 'tl-bar'), legend = el('div', 'tl-legend'), used = {};
var modeBtn = el('button', null, '');
modeBtn.type = 'button';
modeBtn.title = 'one row per worker with the callbacks packed into it, or one row per device';
function modeLabel() { modeBtn.textContent = MODE === 'worker' ? 'rows: per worker (packed)' : 'rows: per device'; }
modeLabel();
modeBtn.addEventListener('click', function () { setMode(MODE === 'worker' ? 'device' : 'worker'); });
bar.appendChild(modeBtn);
var crit = el('button', null, 'critical path');
crit.type = 'button';
crit.title = 'fade every callback off the critical path and join the path with red lines';
crit.addEventListener('click', function () {
  hl = !hl; crit.setAttribute('aria-pressed', hl ? 'true' : 'false'); drawAll();
});
bar.appendChild(crit);
bar.appendChild(el('span', 'tl-help', ' Wheel: zoom a pane about the pointer; drag: pan; shift+wheel: scroll rows; ' +
  'click a bar or a name: the device\u2019s callbacks, links and waits.'));
for (i = 0; i < S.length; i++) used[S[i][PH]] = 1;
for (i = 0; i < phases.length; i++) {
  if (!used[i]) continue;
  var item = el('span'), sw = el('span', 'tl-sw');
  sw.style.background = colour(i);
  item.appendChild(sw); item.appendChild(document.createTextNode(phases[i]));
  legend.appendChild(item);
}
var info = el('div', 'tl-info');
info.id = 'tl-info';
info.appendChild(el('p', null, 'Click a bar or a device name for its callbacks, links and what each callback waited for.'));
box.appendChild(bar); box.appendChild(legend);

function niceStep(span, px) {
  var raw = span / Math.max(1, px / 90), p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
  var m = raw / p;
  return (m < 2 ? 2 : m < 5 ? 5 : 10) * p;
}

/* ---- one pane ---- */
function Pane(P, half, nth) {
  var self = this, r;
  this.P = P; this.half = half;
  this.crit = [];
  for (r = 0; r < P.segs.length; r++)
    if (P.segs[r][SLOT] < nrows && (P.segs[r][FL] & CRIT)) this.crit.push(P.segs[r]);
  this.layout();
  var pad = Math.max(1, (P.t1 - P.t0) * 0.01);
  this.tmin = P.t0 - pad; this.tmax = P.t1 + pad;
  this.v0 = this.tmin; this.v1 = this.tmax; this.top = 0; this.hover = null;
  this.root = el('div', 'tl-pane');
  this.root.setAttribute('data-op', ops[P.op]);
  var head = el('div', 'tl-head');
  head.appendChild(el('b', null, ops[P.op] + (nth > 1 ? ' #' + nth : '')));
  head.appendChild(document.createTextNode(' ' + ms(P.t1 - P.t0) + ', ' + this.ndevs + ' devices, ' +
    P.insts.length + ' phase' + (P.insts.length === 1 ? '' : 's') + ' '));
  head.title = ops[P.op] + ' ran from ' + ms(P.t0) + ' to ' + ms(P.t1) + ' of the run';
  function button(label, title, f) {
    var b = el('button', null, label); b.type = 'button'; b.title = title;
    b.addEventListener('click', f); head.appendChild(b);
  }
  button('+', 'zoom in', function () { self.zoom(0.5); });
  button('\u2212', 'zoom out', function () { self.zoom(2); });
  button('reset', 'the whole op', function () { self.v0 = self.tmin; self.v1 = self.tmax; self.top = 0; self.draw(); });
  button('\u25b2', 'previous rows', function () { self.top -= self.plotH() * 0.9; self.draw(); });
  button('\u25bc', 'next rows', function () { self.top += self.plotH() * 0.9; self.draw(); });
  this.cv = el('canvas', 'tl-canvas');
  this.ctx = this.cv.getContext('2d');
  this.tip = el('div', 'tl-tip'); this.tip.hidden = true;
  var wrap = el('div', 'tl-wrap');
  wrap.appendChild(this.cv); wrap.appendChild(this.tip);
  this.root.appendChild(head); this.root.appendChild(wrap);
  this.listen();
}
/*
 * The rows: the PIN devices with the most callback time in this op first
 * (pinned), then per worker the callbacks packed greedily into lanes that
 * never overlap (MODE 'worker'), or one row per other device by start
 * (MODE 'device').  rows[r] is the device slot of a device row, or -1.
 */
Pane.prototype.layout = function () {
  var P = this.P, tot = {}, first = {}, self = this, r, g, k;
  for (r = 0; r < P.segs.length; r++) {
    g = P.segs[r];
    if (g[SLOT] >= nrows) continue;
    tot[g[SLOT]] = (tot[g[SLOT]] || 0) + (g[T1] - g[T0]);
    if (first[g[SLOT]] === undefined || g[T0] < first[g[SLOT]]) first[g[SLOT]] = g[T0];
  }
  var slots = Object.keys(first).map(Number);
  this.ndevs = slots.length;
  var pinned = slots.slice().sort(function (a, b) { return tot[b] - tot[a] || a - b; })
    .filter(function (x) { return tot[x] > 0; }).slice(0, PIN);
  var pinRow = {};
  this.rows = []; this.labels0 = []; this.byRow = []; this.rowOfSeg = {};
  function addRow(slot, label) { self.rows.push(slot); self.labels0.push(label); self.byRow.push([]); return self.rows.length - 1; }
  function put(row, q) { self.byRow[row].push(q); self.rowOfSeg[q[SLOT] + ':' + q[T0]] = row; }
  for (k = 0; k < pinned.length; k++) pinRow[pinned[k]] = addRow(pinned[k], label(pinned[k]));
  this.npinned = pinned.length;
  for (r = 0; r < P.segs.length; r++)
    if (pinRow[P.segs[r][SLOT]] !== undefined) put(pinRow[P.segs[r][SLOT]], P.segs[r]);
  var segs = P.segs.filter(function (q) { return q[SLOT] < nrows; })
    .sort(function (a, b) { return a[T0] - b[T0] || a[T1] - b[T1]; });
  if (MODE === 'device') {
    var rest = slots.filter(function (x) { return pinRow[x] === undefined; })
      .sort(function (a, b) { return first[a] - first[b] || a - b; }), rowOf = {};
    for (k = 0; k < rest.length; k++) rowOf[rest[k]] = addRow(rest[k], label(rest[k]));
    for (k = 0; k < segs.length; k++) if (rowOf[segs[k][SLOT]] !== undefined) put(rowOf[segs[k][SLOT]], segs[k]);
  } else {
    /* lanes per worker, in worker order: a callback goes to the first lane that is free at its start */
    var workers = {}, wk = [];
    for (k = 0; k < segs.length; k++) {
      var w = segs[k][WK];
      if (!workers[w]) { workers[w] = []; wk.push(w); }
      var lanes = workers[w], l;
      for (l = 0; l < lanes.length && lanes[l].end > segs[k][T0]; l++);
      if (l === lanes.length) lanes.push({ end: -Infinity, segs: [] });
      lanes[l].end = segs[k][T1]; lanes[l].segs.push(segs[k]);
    }
    wk.sort(function (a, b) { return a - b; });
    for (k = 0; k < wk.length; k++)
      for (var j = 0; j < workers[wk[k]].length; j++) {
        var row = addRow(-1, (wk[k] === 0 ? 'main PM thread' : 'worker ' + wk[k]) + (j ? ' \u00b7' + (j + 1) : ''));
        workers[wk[k]][j].segs.forEach(function (q) { put(row, q); });
      }
  }
  this.top = 0;
};
/* the row a callback is drawn on (its lane in packed mode), or undefined */
Pane.prototype.rowOfQ = function (slot, t0) { return this.rowOfSeg[slot + ':' + t0]; };
Pane.prototype.plotH = function () { return this.H - TOP; };
Pane.prototype.xOf = function (t) { return LAB + (t - this.v0) / (this.v1 - this.v0) * (this.W - LAB); };
Pane.prototype.tOf = function (x) { return this.v0 + (x - LAB) / (this.W - LAB) * (this.v1 - this.v0); };
Pane.prototype.clamp = function () {
  var span = this.v1 - this.v0, full = this.tmax - this.tmin;
  if (span > full) span = full;
  if (span < 100) span = 100;
  if (this.v0 < this.tmin) this.v0 = this.tmin;
  this.v1 = this.v0 + span;
  if (this.v1 > this.tmax) { this.v1 = this.tmax; this.v0 = this.v1 - span; }
  this.top = Math.max(0, Math.min(this.top, Math.max(0, this.rows.length * ROW - this.plotH())));
};
Pane.prototype.resize = function (width) {
  this.dpr = window.devicePixelRatio || 1;
  this.W = Math.max(360, width);
  this.H = Math.min(Math.max(this.rows.length, 1) * ROW, MAXH) + TOP;
  this.cv.width = Math.round(this.W * this.dpr); this.cv.height = Math.round(this.H * this.dpr);
  this.cv.style.width = this.W + 'px'; this.cv.style.height = this.H + 'px';
  this.labels = [];
  for (var r = 0; r < this.rows.length; r++) this.labels.push(fit(this.labels0[r], LAB - 10));
  this.draw();
};
Pane.prototype.yOf = function (row) { return TOP + row * ROW - this.top; };
Pane.prototype.draw = function () {
  var c = this.ctx, W = this.W, H = this.H, r, k, g;
  this.clamp();
  c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
  c.clearRect(0, 0, W, H);
  c.font = '11px sans-serif'; c.textBaseline = 'middle';
  var r0 = Math.floor(this.top / ROW), r1 = Math.min(this.rows.length, Math.ceil((this.top + this.plotH()) / ROW));
  c.save(); c.beginPath(); c.rect(0, TOP, W, this.plotH()); c.clip();
  for (r = r0; r < r1; r++)
    if (r < this.npinned) { c.fillStyle = '#fff1d0'; c.fillRect(0, this.yOf(r), W, ROW); }
    else if (r % 2) { c.fillStyle = '#f5f5f5'; c.fillRect(0, this.yOf(r), W, ROW); }
  if (this.npinned && this.npinned >= r0 && this.npinned <= r1) {
    c.strokeStyle = '#c9a227'; c.lineWidth = 1; c.beginPath();
    c.moveTo(0, this.yOf(this.npinned) + 0.5); c.lineTo(W, this.yOf(this.npinned) + 0.5); c.stroke();
  }
  c.save(); c.beginPath(); c.rect(LAB, 0, W - LAB, H); c.clip();
  /* phase bands: the span of each phase, behind its bars */
  for (k = 0; k < this.P.insts.length; k++) {
    var I = this.P.insts[k], xa = this.xOf(I.t0), xb = this.xOf(I.t1);
    c.globalAlpha = 0.10; c.fillStyle = colour(I.phase); c.fillRect(xa, TOP, Math.max(1, xb - xa), H - TOP);
  }
  c.globalAlpha = 1;
  var step = niceStep(this.v1 - this.v0, W - LAB);
  c.strokeStyle = '#e2e2e2'; c.lineWidth = 1;
  for (g = Math.ceil((this.v0 - this.P.t0) / step) * step + this.P.t0; g <= this.v1; g += step) {
    var gx = Math.round(this.xOf(g)) + 0.5; c.beginPath(); c.moveTo(gx, TOP); c.lineTo(gx, H); c.stroke();
  }
  for (r = r0; r < r1; r++) {
    var y = this.yOf(r) + 3, row = this.byRow[r];
    for (k = 0; k < row.length; k++) {
      var q = row[k];
      if (q[T1] < this.v0 || q[T0] > this.v1) continue;
      var a = Math.max(LAB - 1, this.xOf(q[T0])), b = Math.min(W + 1, this.xOf(q[T1]));
      c.globalAlpha = hl && !(q[FL] & CRIT) ? 0.15 : 1;
      c.fillStyle = colour(q[PH]); c.fillRect(a, y, Math.max(1.5, b - a), ROW - 6);
      if (q[FL] & CRIT) {
        c.globalAlpha = 1; c.strokeStyle = '#b00020'; c.lineWidth = 2;
        c.strokeRect(a, y, Math.max(1.5, b - a), ROW - 6);
      }
      if (b - a > 28) {  /* the device's name and driver on its bar */
        c.save(); c.beginPath(); c.rect(a, y, b - a, ROW - 6); c.clip();
        c.globalAlpha = hl && !(q[FL] & CRIT) ? 0.3 : 1; c.fillStyle = '#000'; c.font = '10px sans-serif';
        c.fillText(barText(q[SLOT], b - a - 6), a + 3, y + (ROW - 6) / 2 + 0.5);
        c.restore();
      }
    }
  }
  c.globalAlpha = 1;
  if (hl) for (k = 0; k < this.crit.length; k++) this.link(this.crit[k], '#b00020', 1.5);
  if (this.hover) this.link(this.hover, '#222', 1.5);
  c.restore();
  c.fillStyle = '#222';
  c.save(); c.beginPath(); c.rect(0, TOP, LAB - 4, this.plotH()); c.clip();
  for (r = r0; r < r1; r++) c.fillText(this.labels[r], 4, this.yOf(r) + ROW / 2);
  c.restore(); c.restore();
  c.fillStyle = '#fff'; c.fillRect(0, 0, W, AX);
  /* the phases' names in a strip under the axis */
  c.save(); c.beginPath(); c.rect(LAB, AX, W - LAB, BAND); c.clip();
  for (k = 0; k < this.P.insts.length; k++) {
    var B = this.P.insts[k], ba = this.xOf(B.t0), bb = this.xOf(B.t1);
    c.fillStyle = colour(B.phase); c.fillRect(ba, AX + 1, Math.max(1, bb - ba), BAND - 2);
    if (bb - ba > 24) {
      c.save(); c.beginPath(); c.rect(ba, AX, bb - ba, BAND); c.clip();
      c.fillStyle = '#fff'; c.fillText(phases[B.phase], Math.max(ba, LAB) + 3, AX + BAND / 2); c.restore();
    }
  }
  c.restore();
  c.fillStyle = '#222'; c.strokeStyle = '#888';
  c.beginPath(); c.moveTo(LAB, AX - 0.5); c.lineTo(W, AX - 0.5); c.stroke();
  c.textAlign = 'center';
  var dec = Math.max(0, Math.min(6, Math.ceil(-Math.log(step / 1e6) / Math.LN10)));
  for (g = Math.ceil((this.v0 - this.P.t0) / step) * step + this.P.t0; g <= this.v1; g += step)
    if (this.xOf(g) > LAB + 12) c.fillText(((g - this.P.t0) / 1e6).toFixed(dec), this.xOf(g), AX / 2);
  c.textAlign = 'left';
  c.fillText(ops[this.P.op] + ': ms from its start', 4, AX / 2);
  c.fillText(MODE === 'worker' ? 'slowest, then per worker' : 'slowest, then by start', 4, AX + BAND / 2 - 1);
};
/* a line from the end of what Q waited for to Q's start, when both are in this pane */
Pane.prototype.link = function (q, col, w) {
  var wr = this.waitRow(q), c = this.ctx;
  if (q[WS] < 0 || wr === undefined || q[WE] > this.v1 || q[T0] < this.v0 || q[WE] < this.P.t0) return;
  var ya = this.yOf(wr) + ROW / 2, yb = this.yOf(this.rowOfQ(q[SLOT], q[T0])) + ROW / 2;
  var xa = this.xOf(q[WE]), xb = this.xOf(q[T0]);
  c.strokeStyle = col; c.lineWidth = w; c.beginPath(); c.moveTo(xa, ya); c.lineTo(xb, yb); c.stroke();
  c.beginPath(); c.arc(xb, yb, 2.5, 0, 2 * Math.PI); c.fillStyle = col; c.fill();
};
/* the row of the callback Q waited for: its device's callback in this pane that ended at q[WE] */
Pane.prototype.waitRow = function (q) {
  if (q[WS] < 0 || q[WS] >= nrows) return undefined;
  if (!this.waitKey) {
    this.waitKey = {};
    for (var k = 0; k < this.P.segs.length; k++) {
      var g = this.P.segs[k], key = g[SLOT] + '@' + g[T1];
      if (this.waitKey[key] === undefined) this.waitKey[key] = g[T0];
    }
  }
  var t0 = this.waitKey[q[WS] + '@' + q[WE]];
  return t0 === undefined ? undefined : this.rowOfQ(q[WS], t0);
};
Pane.prototype.zoom = function (f, at) {
  var t = at === undefined ? (this.v0 + this.v1) / 2 : at;
  this.v0 = t - (t - this.v0) * f; this.v1 = t + (this.v1 - t) * f; this.draw();
};
Pane.prototype.pos = function (e) {
  var b = this.cv.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top];
};
Pane.prototype.rowAt = function (y) {
  if (y < TOP) return -1;
  var r = Math.floor((y - TOP + this.top) / ROW);
  return r >= 0 && r < this.rows.length ? r : -1;
};
Pane.prototype.hit = function (x, y) {
  var r = this.rowAt(y);
  if (x < LAB || r < 0) return null;
  var t = this.tOf(x), tol = 3 * (this.v1 - this.v0) / (this.W - LAB), best = null;
  for (var k = 0; k < this.byRow[r].length; k++) {
    var q = this.byRow[r][k];
    if (q[T0] - tol <= t && t <= q[T1] + tol && (!best || q[T1] - q[T0] < best[T1] - best[T0])) best = q;
  }
  return best;
};
Pane.prototype.listen = function () {
  var self = this, cv = this.cv, drag = null, moved = false;
  cv.addEventListener('wheel', function (e) {
    e.preventDefault();
    var p = self.pos(e);
    if (e.shiftKey) { self.top += (e.deltaY || e.deltaX) > 0 ? 3 * ROW : -3 * ROW; self.draw(); return; }
    self.zoom(e.deltaY < 0 ? 0.8 : 1.25, p[0] >= LAB ? self.tOf(p[0]) : undefined);
  }, { passive: false });
  cv.addEventListener('mousedown', function (e) { drag = self.pos(e); moved = false; self.tip.hidden = true; });
  window.addEventListener('mouseup', function () { drag = null; });
  cv.addEventListener('mouseleave', function () {
    self.tip.hidden = true; if (self.hover) { self.hover = null; self.draw(); }
  });
  cv.addEventListener('mousemove', function (e) {
    var p = self.pos(e);
    if (drag) {
      var dt = (p[0] - drag[0]) / (self.W - LAB) * (self.v1 - self.v0);
      if (Math.abs(p[0] - drag[0]) + Math.abs(p[1] - drag[1]) > 2) moved = true;
      self.v0 -= dt; self.v1 -= dt; self.top -= p[1] - drag[1]; drag = p; self.draw(); return;
    }
    var q = self.hit(p[0], p[1]);
    if (q !== self.hover) { self.hover = q; self.draw(); }
    if (!q) { self.tip.hidden = true; return; }
    self.tip.textContent = names[q[SLOT]] + drv(q[SLOT]) + '\n' + ops[q[OP]] + ' / ' + phases[q[PH]] +
      '\nstart ' + ms(q[T0] - self.P.t0) + ' into ' + ops[self.P.op] +
      '\nduration ' + ms(q[T1] - q[T0]) + '\nworker ' + (q[WK] === 0 ? '0 (main PM thread)' : q[WK]) +
      ', dev_id ' + D.ids[q[SLOT]] + '\n' + waited(q) + ((q[FL] & CRIT) ? '\non the critical path' : '') +
      '\nclick: the device\u2019s callbacks and links';
    self.tip.hidden = false;
    self.tip.style.left = Math.min(p[0] + 14, self.W - 240) + 'px';
    self.tip.style.top = (p[1] + 14) + 'px';
  });
  cv.addEventListener('click', function (e) {
    if (moved) return;
    var p = self.pos(e), q = self.hit(p[0], p[1]), r = self.rowAt(p[1]);
    if (q) show(q[SLOT]);
    else if (p[0] < LAB && r >= 0 && self.rows[r] >= 0) show(self.rows[r]);
  });
};

/* time T as ms into the op of Q's pane */
function rel(q, t) { var P = inst[q[IN]].pane; return ms(t - P.t0) + ' into ' + ops[P.op]; }
function waited(q) {
  if (q[WS] < 0) return 'waited for: nothing (first to start)';
  return 'waited for: ' + names[q[WS]] + ' (' + phases[q[WP]] + ', ended at ' + rel(q, q[WE]) +
    ((q[FL] & BARRIER) ? '; the previous phase\u2019s last callback' : '') + ')';
}

/* ---- the device panel ---- */
function devLink(slot) {
  var a = el('a', 'tl-dev', names[slot]);
  a.href = '#tl-info';
  a.addEventListener('click', function (e) { e.preventDefault(); show(slot); });
  return a;
}
function list(title, slots, total) {
  var p = el('p');
  p.appendChild(el('b', null, title + ' (' + total + '): '));
  if (!total) p.appendChild(document.createTextNode('none'));
  for (var k = 0; k < slots.length; k++) {
    if (k) p.appendChild(document.createTextNode(', '));
    p.appendChild(devLink(slots[k]));
  }
  if (total > slots.length) p.appendChild(document.createTextNode(' and ' + (total - slots.length) + ' more'));
  return p;
}
function show(slot) {
  var segs = bySlot[slot].slice().sort(function (a, b) { return a[T0] - b[T0]; }), k;
  while (info.firstChild) info.removeChild(info.firstChild);
  info.appendChild(el('h3', null, names[slot]));
  info.appendChild(el('p', null, 'driver: ' + (drivers[slot] || 'not known') + ', dev_id ' + D.ids[slot] +
    (D.async[slot] ? ', async' : ', sync (runs on the main PM thread)')));
  var par = el('p');
  par.appendChild(el('b', null, 'parent: '));
  if (D.parent[slot] >= 0) par.appendChild(devLink(D.parent[slot])); else par.appendChild(document.createTextNode('none (a root)'));
  info.appendChild(par);
  if (slot < nrows && D.sup[slot]) {
    info.appendChild(list('suppliers (links it waits for in probe and resume)', D.sup[slot], D.nsup[slot]));
    info.appendChild(list('consumers (links that wait for it in probe and resume)', D.con[slot], D.ncon[slot]));
  }
  var tab = el('table'), tr = el('tr');
  ['op / phase', 'start (ms into the op)', 'duration (ms)', 'worker', 'waited for'].forEach(function (h) { tr.appendChild(el('th', null, h)); });
  tab.appendChild(tr);
  for (k = 0; k < segs.length; k++) {
    var q = segs[k];
    tr = el('tr');
    if (q[FL] & CRIT) tr.className = 'crit';
    tr.appendChild(el('td', null, ops[q[OP]] + ' / ' + phases[q[PH]]));
    tr.appendChild(el('td', 'n', ((q[T0] - inst[q[IN]].pane.t0) / 1e6).toFixed(3)));
    tr.appendChild(el('td', 'n', ((q[T1] - q[T0]) / 1e6).toFixed(3)));
    tr.appendChild(el('td', 'n', q[WK] === 0 ? '0 (main)' : String(q[WK])));
    var td = el('td');
    if (q[WS] < 0) td.textContent = 'nothing (first to start)';
    else {
      td.appendChild(devLink(q[WS]));
      td.appendChild(document.createTextNode(' (' + phases[q[WP]] + ', ended at ' + rel(q, q[WE]) +
        ((q[FL] & BARRIER) ? '; the previous phase\u2019s last callback' : '') + ')'));
    }
    tr.appendChild(td);
    tab.appendChild(tr);
  }
  info.appendChild(el('p', null, segs.length + ' callbacks' + (slot < nrows ? '' : ' (this device has no row here: only what others waited for is known)') +
    '; red rows are on the critical path:'));
  info.appendChild(tab);
  info.setAttribute('data-slot', String(slot));
}

/* ---- layout: probe full width, suspend and resume as the two halves of one block ---- */
var blocks = [], seen = {}, views = [];
for (i = 0; i < panes.length; i++) {
  var opn = ops[panes[i].op], nth = seen[opn] = (seen[opn] || 0) + 1;
  var half = (opn === 'suspend' && i + 1 < panes.length && ops[panes[i + 1].op] === 'resume') ||
    (opn === 'resume' && i > 0 && ops[panes[i - 1].op] === 'suspend' && blocks.length && blocks[blocks.length - 1].open);
  var v = new Pane(panes[i], half, nth);
  views.push(v);
  if (half && opn === 'resume') {
    blocks[blocks.length - 1].panes.push(v);
    blocks[blocks.length - 1].open = false;
  } else {
    blocks.push({ panes: [v], open: half });
  }
}
for (i = 0; i < blocks.length; i++) {
  var b = el('div', 'tl-block' + (blocks[i].panes.length > 1 ? ' tl-halves' : ''));
  for (k = 0; k < blocks[i].panes.length; k++) b.appendChild(blocks[i].panes[k].root);
  blocks[i].root = b;
  box.appendChild(b);
}
box.appendChild(info);
function drawAll() { for (var k = 0; k < views.length; k++) views[k].draw(); }
function setMode(m) {
  MODE = m; modeLabel();
  for (var k = 0; k < views.length; k++) { views[k].layout(); views[k].v0 = views[k].tmin; views[k].v1 = views[k].tmax; }
  resize();
  ready.setAttribute('data-mode', MODE);
}
function resize() {
  var w = Math.max(720, box.clientWidth || 1000);
  for (var k = 0; k < blocks.length; k++)
    for (var j = 0; j < blocks[k].panes.length; j++)
      blocks[k].panes[j].resize(blocks[k].panes.length > 1 ? Math.floor((w - 10) / 2) - 2 : w - 2);
}
window.addEventListener('resize', resize);
resize();
var ready = el('p');
ready.id = 'tl-ready';
ready.textContent = 'Timeline: ' + nrows + ' device rows' +
  (D.devices_total > nrows ? ' (of ' + D.devices_total + ')' : '') + ', ' + S.length + ' bars in ' +
  panes.length + ' panes (' + panes.map(function (p) { return ops[p.op]; }).join(', ') + '); critical path: ' +
  D.crit.segments + ' callbacks' + (D.crit.hidden ? ' (' + D.crit.hidden + ' of them on rows not drawn)' : '') + '.';
ready.setAttribute('data-mode', MODE);
box.appendChild(ready);
/* for tests and the console: the row labels a pane draws, in row order */
window.dlsimTimeline = {
  panes: function () { return views.map(function (v) { return ops[v.P.op]; }); },
  labels: function (k) { return views[k].labels.slice(); },
  /* the label of each bar of pane K (drawn on the bar where it is wide enough) */
  barLabels: function (k) {
    var v = views[k], out = [];
    for (var r = 0; r < v.byRow.length; r++)
      for (var j = 0; j < v.byRow[r].length; j++) out.push(label(v.byRow[r][j][SLOT]));
    return out;
  },
  mode: function (m) { if (m) setMode(m); return MODE; },
  /* pane K's rows: pinned (the slowest devices), rows, bars that overlap another bar of their row */
  layout: function (k) {
    var v = views[k], over = 0, r, j;
    for (r = v.npinned; r < v.rows.length; r++) {
      var b = v.byRow[r].slice().sort(function (x, y) { return x[T0] - y[T0]; });
      for (j = 1; j < b.length; j++) if (b[j][T0] < b[j - 1][T1]) over++;
    }
    return { op: ops[v.P.op], devices: v.ndevs, rows: v.rows.length, overlaps: over,
      pinned: v.labels0.slice(0, v.npinned), rowLabels: v.labels0.slice(v.npinned) };
  }
};
})();
