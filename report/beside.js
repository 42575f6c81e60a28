/*
 * beside.js - index.html's beside view (report/beside.c writes the data;
 * CMake embeds this file): two runs of one scenario, per op, on one shared
 * time axis (ms from each run's start of the op), the chosen run above and
 * the other under it, each packed into rows per worker as the timeline
 * packs them.  A dashed line marks where each run's op ended; hovering a
 * bar shows its callback and the same callback in the other run; under each
 * pane the devices whose callbacks ended furthest apart.  Names reach the
 * page only through the canvas and textContent, never as markup.
 */
(function () {
'use strict';
var box = document.getElementById('bs');
if (!box) return;
var D = JSON.parse(document.getElementById('bs-data').textContent);
var SEGS = [JSON.parse(document.getElementById('bs-segs-a').textContent),
  JSON.parse(document.getElementById('bs-segs-b').textContent)];
/* a segment: [slot, op, phase, t0, t1, worker, instance] */
var SLOT = 0, OP = 1, PH = 2, T0 = 3, T1 = 4, WK = 5, IN = 6;
var ROW = 16, LAB = 170, AX = 20, GAP = 8, MAXLANES = 80;
var COL = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#8cd17d', '#b6992d', '#499894', '#79706e'];
var RUNCOL = ['#1f4e79', '#7a3b00'];
var names = D.names, drivers = D.drivers, phases = D.phases, ops = D.ops, runs = D.runs;

function ms(t) { return (t / 1e6).toFixed(3) + ' ms'; }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
/* the last part of the device's path and its driver: 'dev {driver}' (NODRV: the name alone) */
function label(slot, nodrv) {
  var p = names[slot].split('/').filter(function (x) { return x.length; });
  return (p.length ? p[p.length - 1] : names[slot]) + (drivers[slot] && !nodrv ? ' {' + drivers[slot] + '}' : '');
}
function runName(k) { return 'run ' + runs[k].run + ' (' + runs[k].order + ', K=' + runs[k].workers + ')'; }

/* the panes of one run: consecutive phase instances of one op, merged while a racing op overlaps */
function panesOf(S) {
  var inst = [], panes = [], cur = null, i, k, s;
  for (i = 0; i < S.length; i++) {
    s = S[i];
    var I = inst[s[IN]] || (inst[s[IN]] = { op: s[OP], t0: Infinity, t1: -Infinity });
    if (s[T0] < I.t0) I.t0 = s[T0];
    if (s[T1] > I.t1) I.t1 = s[T1];
  }
  for (i = 0; i < inst.length; i++) {
    var J = inst[i];
    if (!J) continue;
    if (!cur || cur.op !== J.op) {
      cur = null;
      for (k = 0; k < panes.length; k++)
        if (panes[k].op === J.op && J.t0 <= panes[k].t1) cur = panes[k];
      if (!cur) { cur = { op: J.op, segs: [], t0: Infinity, t1: -Infinity }; panes.push(cur); }
    }
    J.pane = cur;
    if (J.t0 < cur.t0) cur.t0 = J.t0;
    if (J.t1 > cur.t1) cur.t1 = J.t1;
  }
  for (i = 0; i < S.length; i++) inst[S[i][IN]].pane.segs.push(S[i]);
  return panes;
}
/* a run's callbacks of one pane packed per worker into lanes that never overlap */
function pack(P) {
  var segs = P.segs.slice().sort(function (a, b) { return a[T0] - b[T0] || a[T1] - b[T1]; });
  var workers = {}, wk = [], lanes = [], k, l;
  for (k = 0; k < segs.length; k++) {
    var w = segs[k][WK];
    if (!workers[w]) { workers[w] = []; wk.push(w); }
    var L = workers[w];
    for (l = 0; l < L.length && L[l].end > segs[k][T0]; l++);
    if (l === L.length) L.push({ end: -Infinity, segs: [] });
    L[l].end = segs[k][T1]; L[l].segs.push(segs[k]);
  }
  wk.sort(function (a, b) { return a - b; });
  for (k = 0; k < wk.length; k++)
    for (l = 0; l < workers[wk[k]].length; l++)
      lanes.push({ label: (wk[k] === 0 ? 'main PM thread' : 'worker ' + wk[k]) + (l ? ' \u00b7' + (l + 1) : ''),
        segs: workers[wk[k]][l].segs });
  return lanes;
}

var A = panesOf(SEGS[0]), B = panesOf(SEGS[1]), pairs = [], nth = {}, i, k;
/* pair the k-th pane of an op in one run with the k-th pane of that op in the other */
var seenB = {};
for (i = 0; i < B.length; i++) { var ob = B[i].op; (seenB[ob] = seenB[ob] || []).push(B[i]); }
for (i = 0; i < A.length; i++) {
  var oa = A[i].op, n = nth[oa] = (nth[oa] || 0) + 1;
  pairs.push({ op: oa, nth: n, p: [A[i], (seenB[oa] || [])[n - 1] || null] });
}

function Pair(Q) {
  var self = this, r, j;
  this.Q = Q;
  this.span = 0; this.lanes = []; this.hidden = [0, 0]; this.bars = [0, 0];
  this.at = [{}, {}];   /* per run: slot + ':' + phase -> [start, end] relative to the op */
  for (r = 0; r < 2; r++) {
    var P = Q.p[r];
    if (!P) { this.lanes.push([]); continue; }
    var L = pack(P);
    if (L.length > MAXLANES) { this.hidden[r] = L.length - MAXLANES; L = L.slice(0, MAXLANES); }
    this.lanes.push(L);
    this.bars[r] = P.segs.length;
    if (P.t1 - P.t0 > this.span) this.span = P.t1 - P.t0;
    for (j = 0; j < P.segs.length; j++) {
      var g = P.segs[j], key = g[SLOT] + ':' + g[PH];
      if (!this.at[r][key]) this.at[r][key] = [g[T0] - P.t0, g[T1] - P.t0];
    }
  }
  this.v0 = 0; this.v1 = Math.max(1, this.span * 1.02);
  this.root = el('div', 'tl-pane bs-pane');
  this.root.setAttribute('data-op', ops[Q.op]);
  var head = el('div', 'tl-head');
  head.appendChild(el('b', null, ops[Q.op] + (Q.nth > 1 ? ' #' + Q.nth : '')));
  var txt = [];
  for (r = 0; r < 2; r++)
    txt.push(runName(r) + ': ' + (Q.p[r] ? ms(Q.p[r].t1 - Q.p[r].t0) : 'no such op'));
  if (Q.p[0] && Q.p[1]) {
    var dlt = (Q.p[1].t1 - Q.p[1].t0) - (Q.p[0].t1 - Q.p[0].t0);
    txt.push('difference ' + (dlt >= 0 ? '+' : '\u2212') + ms(Math.abs(dlt)));
  }
  head.appendChild(document.createTextNode(' ' + txt.join('; ') + ' '));
  var reset = el('button', null, 'reset');
  reset.type = 'button'; reset.title = 'the whole op';
  reset.addEventListener('click', function () { self.v0 = 0; self.v1 = Math.max(1, self.span * 1.02); self.draw(); });
  head.appendChild(reset);
  this.cv = el('canvas', 'tl-canvas');
  this.ctx = this.cv.getContext('2d');
  this.tip = el('div', 'tl-tip'); this.tip.hidden = true;
  var wrap = el('div', 'tl-wrap');
  wrap.appendChild(this.cv); wrap.appendChild(this.tip);
  this.root.appendChild(head); this.root.appendChild(wrap);
  this.root.appendChild(this.shifts());
  this.listen();
}
/* the devices whose callbacks in this op ended furthest apart in the two runs */
Pair.prototype.shifts = function () {
  var out = [], key, p = el('p', 'bs-shift');
  this.nshared = 0;
  for (key in this.at[0])
    if (this.at[1][key]) {
      this.nshared++;
      if (this.at[1][key][1] !== this.at[0][key][1]) out.push([key, this.at[1][key][1] - this.at[0][key][1]]);
    }
  out.sort(function (a, b) { return Math.abs(b[1]) - Math.abs(a[1]); });
  this.nshifts = out.length;
  p.appendChild(el('b', null, 'furthest apart: '));
  if (!out.length)
    p.appendChild(document.createTextNode(this.nshared ? 'none: each of the ' + this.nshared +
      ' callbacks drawn in both runs ends at the same time in both' : 'no callback drawn in both runs'));
  for (var k = 0; k < out.length && k < 5; k++) {
    var sl = +out[k][0].split(':')[0], ph = +out[k][0].split(':')[1];
    p.appendChild(document.createTextNode((k ? '; ' : '') + names[sl] + (drivers[sl] ? ' {' + drivers[sl] + '}' : '') +
      ' ' + phases[ph] + ' ends ' + (out[k][1] >= 0 ? '+' : '\u2212') + ms(Math.abs(out[k][1]))));
  }
  return p;
};
/* the top of run R's first row (each run's name on a row of its own above its rows) */
Pair.prototype.y0 = function (r) { return AX + ROW + (r ? this.lanes[0].length * ROW + GAP + ROW : 0); };
Pair.prototype.xOf = function (t) { return LAB + (t - this.v0) / (this.v1 - this.v0) * (this.W - LAB); };
Pair.prototype.tOf = function (x) { return this.v0 + (x - LAB) / (this.W - LAB) * (this.v1 - this.v0); };
Pair.prototype.resize = function (w) {
  this.dpr = window.devicePixelRatio || 1;
  this.W = Math.max(360, w);
  this.H = this.y0(1) + this.lanes[1].length * ROW + 4;
  this.cv.width = Math.round(this.W * this.dpr); this.cv.height = Math.round(this.H * this.dpr);
  this.cv.style.width = this.W + 'px'; this.cv.style.height = this.H + 'px';
  this.draw();
};
Pair.prototype.draw = function () {
  var c = this.ctx, W = this.W, H = this.H, r, l, k, g;
  c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
  c.clearRect(0, 0, W, H);
  c.font = '11px sans-serif'; c.textBaseline = 'middle';
  /* the axis shared by both runs */
  var span = this.v1 - this.v0, raw = span / Math.max(1, (W - LAB) / 90);
  var p10 = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p10;
  var step = (m < 2 ? 2 : m < 5 ? 5 : 10) * p10, dec = Math.max(0, Math.min(6, Math.ceil(-Math.log(step / 1e6) / Math.LN10)));
  c.fillStyle = '#222'; c.strokeStyle = '#e2e2e2'; c.textAlign = 'center';
  for (g = Math.ceil(this.v0 / step) * step; g <= this.v1; g += step) {
    var gx = Math.round(this.xOf(g)) + 0.5;
    c.beginPath(); c.moveTo(gx, AX); c.lineTo(gx, H); c.stroke();
    if (gx > LAB + 12) c.fillText((g / 1e6).toFixed(dec), gx, AX / 2);
  }
  c.textAlign = 'left';
  c.fillText(ops[this.Q.op] + ': ms from its start', 4, AX / 2);
  for (r = 0; r < 2; r++) {
    var y0 = this.y0(r), P = this.Q.p[r];
    c.fillStyle = RUNCOL[r]; c.font = 'bold 11px sans-serif';
    c.fillText(runName(r) + (this.hidden[r] ? ' (' + this.hidden[r] + ' more rows not drawn)' : ''), 4, y0 - ROW / 2);
    c.font = '11px sans-serif';
    for (l = 0; l < this.lanes[r].length; l++) {
      var y = y0 + l * ROW;
      if (l % 2) { c.fillStyle = '#f5f5f5'; c.fillRect(0, y, W, ROW); }
      c.fillStyle = '#222'; c.fillText(this.lanes[r][l].label, 12, y + ROW / 2);
      c.save(); c.beginPath(); c.rect(LAB, y, W - LAB, ROW); c.clip();
      var segs = this.lanes[r][l].segs;
      for (k = 0; k < segs.length; k++) {
        var q = segs[k], a = this.xOf(q[T0] - P.t0), b = this.xOf(q[T1] - P.t0);
        if (b < LAB || a > W) continue;
        c.fillStyle = COL[q[PH] % COL.length]; c.fillRect(a, y + 2, Math.max(1.5, b - a), ROW - 4);
        if (b - a > 28) {
          c.save(); c.beginPath(); c.rect(a, y, b - a, ROW); c.clip();
          c.fillStyle = '#000'; c.font = '10px sans-serif';
          var tx = label(q[SLOT]);   /* 'dev {driver}', or the name alone where that does not fit */
          if (c.measureText(tx).width > b - a - 6) tx = label(q[SLOT], true);
          c.fillText(tx, a + 3, y + ROW / 2);
          c.restore();
        }
      }
      c.restore();
    }
  }
  /* the line between the two runs */
  var ys = this.y0(1) - ROW - GAP / 2 + 0.5;
  c.strokeStyle = '#888'; c.lineWidth = 1; c.beginPath(); c.moveTo(0, ys); c.lineTo(W, ys); c.stroke();
  /* where each run's op ended, across both */
  c.save(); c.beginPath(); c.rect(LAB, AX, W - LAB, H - AX); c.clip();
  c.setLineDash([5, 3]); c.lineWidth = 1.5;
  for (r = 0; r < 2; r++) {
    if (!this.Q.p[r]) continue;
    var ex = Math.round(this.xOf(this.Q.p[r].t1 - this.Q.p[r].t0)) + 0.5;
    c.strokeStyle = RUNCOL[r]; c.beginPath(); c.moveTo(ex, AX); c.lineTo(ex, H); c.stroke();
  }
  c.restore();
  c.strokeStyle = '#888'; c.beginPath(); c.moveTo(LAB, AX - 0.5); c.lineTo(W, AX - 0.5); c.stroke();
};
Pair.prototype.hit = function (x, y) {
  if (x < LAB) return null;
  for (var r = 0; r < 2; r++) {
    var l = Math.floor((y - this.y0(r)) / ROW);
    if (l < 0 || l >= this.lanes[r].length) continue;
    var t = this.tOf(x) + this.Q.p[r].t0, tol = 3 * (this.v1 - this.v0) / (this.W - LAB), segs = this.lanes[r][l].segs;
    for (var k = 0; k < segs.length; k++)
      if (segs[k][T0] - tol <= t && t <= segs[k][T1] + tol) return [r, segs[k]];
  }
  return null;
};
Pair.prototype.listen = function () {
  var self = this, cv = this.cv, drag = null;
  cv.addEventListener('wheel', function (e) {
    e.preventDefault();
    var b = cv.getBoundingClientRect(), x = e.clientX - b.left, f = e.deltaY < 0 ? 0.8 : 1.25;
    var t = x >= LAB ? self.tOf(x) : (self.v0 + self.v1) / 2;
    self.v0 = Math.max(0, t - (t - self.v0) * f); self.v1 = Math.max(self.v0 + 100, t + (self.v1 - t) * f); self.draw();
  }, { passive: false });
  cv.addEventListener('mousedown', function (e) { drag = e.clientX; });
  window.addEventListener('mouseup', function () { drag = null; });
  cv.addEventListener('mouseleave', function () { self.tip.hidden = true; });
  cv.addEventListener('mousemove', function (e) {
    var b = cv.getBoundingClientRect(), x = e.clientX - b.left, y = e.clientY - b.top;
    if (drag !== null) {
      var dt = (e.clientX - drag) / (self.W - LAB) * (self.v1 - self.v0);
      self.v0 -= dt; self.v1 -= dt; drag = e.clientX; self.draw(); return;
    }
    var h = self.hit(x, y);
    if (!h) { self.tip.hidden = true; return; }
    var r = h[0], q = h[1], o = self.at[1 - r][q[SLOT] + ':' + q[PH]], s0 = q[T0] - self.Q.p[r].t0;
    self.tip.textContent = names[q[SLOT]] + (drivers[q[SLOT]] ? ' {' + drivers[q[SLOT]] + '}' : '') +
      '\n' + runName(r) + ': ' + phases[q[PH]] + ', start ' + ms(s0) + ', duration ' + ms(q[T1] - q[T0]) +
      ', worker ' + q[WK] + '\n' + runName(1 - r) + ': ' +
      (o ? 'start ' + ms(o[0]) + ', duration ' + ms(o[1] - o[0]) + ' (starts ' + (o[0] - s0 >= 0 ? '+' : '\u2212') +
        ms(Math.abs(o[0] - s0)) + ')' : 'not drawn there');
    self.tip.hidden = false;
    self.tip.style.left = Math.min(x + 14, self.W - 260) + 'px';
    self.tip.style.top = (y + 14) + 'px';
  });
};

var views = [];
for (i = 0; i < pairs.length; i++) {
  var v = new Pair(pairs[i]);
  views.push(v);
  box.appendChild(v.root);
}
function resize() {
  var w = Math.max(720, box.clientWidth || 1000) - 2;
  for (var k = 0; k < views.length; k++) views[k].resize(w);
}
window.addEventListener('resize', resize);
resize();
var ready = el('p');
ready.id = 'bs-ready';
ready.textContent = 'Beside: ' + runName(0) + ' and ' + runName(1) + ' on one axis in ' + views.length + ' panes (' +
  views.map(function (x) { return ops[x.Q.op]; }).join(', ') + '); ' + names.length + ' devices drawn of ' +
  D.devices_total[0] + '.';
box.appendChild(ready);
/* for tests and the console */
window.dlsimBeside = {
  panes: function () {
    return views.map(function (x) {
      return { op: ops[x.Q.op], runs: [runs[0].run, runs[1].run], rows: [x.lanes[0].length, x.lanes[1].length],
        bars: x.bars.slice(), axis_ms: x.span / 1e6, shared: x.nshared, shifted: x.nshifts,
        ends_ms: x.Q.p.map(function (P) { return P ? (P.t1 - P.t0) / 1e6 : null; }) };
    });
  }
};
})();
