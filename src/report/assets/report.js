// ddscript report: draws the charts from the JSON in #dd-data. Embedded in
// every page; no libraries, nothing fetched. See docs/report.md.
(function () {
  'use strict';

  window.addEventListener('error', function (e) {
    document.body.setAttribute('data-dd-error', String(e.message));
  });

  var data = JSON.parse(document.getElementById('dd-data').textContent);
  var SVGNS = 'http://www.w3.org/2000/svg';

  // --- Numbers, as ddscript's text output writes them ----------------------
  function fmtDur(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return Math.round(ns) + ' ns';
  }
  function fmtBytes(b) {
    var a = Math.abs(b);
    if (a >= 1073741824) return (b / 1073741824).toFixed(1) + ' GiB';
    if (a >= 1048576) return (b / 1048576).toFixed(1) + ' MiB';
    if (a >= 1024) return (b / 1024).toFixed(1) + ' KiB';
    return b + ' B';
  }
  // Short axis labels: "12 ms", "1.5 ms", "250 us".
  function axisDur(ns, step) {
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
    for (var i = 0; i < units.length; i++) {
      if (step >= units[i][0] / 10 || i === units.length - 1) {
        var v = ns / units[i][0];
        var digits = step >= units[i][0] ? 0 : (step >= units[i][0] / 10 ? 1 : 2);
        return v.toFixed(digits) + ' ' + units[i][1];
      }
    }
    return String(ns);
  }
  function niceStep(span, count) {
    var raw = span / Math.max(1, count);
    var p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    var m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  // --- DOM helpers ------------------------------------------------------------
  function el(tag, attrs, parent) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function svgEl(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function svgText(parent, x, y, text, attrs) {
    var t = svgEl('text', Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = text;
    return t;
  }
  function title(parent, text) {
    svgEl('title', {}, parent).textContent = text;
  }
  function legend(parent, items) {
    var l = el('div', { class: 'legend' }, parent);
    items.forEach(function (it) {
      var s = el('span', {}, l);
      el('i', { style: 'background:' + it[1] }, s);
      s.appendChild(document.createTextNode(it[0]));
    });
    return l;
  }
  function widthOf(node, fallback) {
    var w = node.clientWidth;
    return w > 200 ? w : fallback;
  }
  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  // --- Timeline: each resource, before above after --------------------------
  var KIND_COLORS = {
    cpu_op: '#5b8bd9', annotation: '#aab2bf', runtime: '#e3a23b', kernel: '#3fa34d',
    memcpy: '#9b59b6', memset: '#8d6e63', comm: '#e0457b'
  };
  var CHANGED = 8, INSERTED = 16, REMOVED = 32, CRITICAL = 64;

  function drawTimeline(root) {
    var res = data.resources;
    if (!res.length) {
      root.textContent = 'No task ran in the reported iterations.';
      return;
    }
    legend(root, data.kinds.map(function (k) { return [k, KIND_COLORS[k] || '#999']; })
      .concat([['inserted', '#222'], ['removed', '#d62728']]));
    var labelW = 240, laneH = 15, rowGap = 9, axisH = 26;
    var cssW = widthOf(root, 1300);
    var cssH = axisH + res.length * (2 * laneH + rowGap) + 4;
    var canvas = el('canvas', {}, root);
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
    canvas.style.width = cssW + 'px';
    canvas.style.height = cssH + 'px';
    var tip = el('div', { class: 'tip' }, root);
    var ctx = canvas.getContext('2d');
    ctx.scale(dpr, dpr);
    var sides = ['before', 'after'];
    // The first view: the reported iterations. Work of theirs that ran
    // outside them (GPU work queued behind the CPU, work a model pushed
    // past the end) lies beyond; zoom out to see it.
    var lo = 0, hi = Math.max(data.window.before, data.window.after, 1);
    var pad = (hi - lo) * 0.01;
    function reset() { view.t0 = lo - pad; view.t1 = hi + pad; }
    var view = {};
    reset();
    var plotW = cssW - labelW - 8;
    function X(t) { return labelW + (t - view.t0) / (view.t1 - view.t0) * plotW; }
    function T(x) { return view.t0 + (x - labelW) / plotW * (view.t1 - view.t0); }
    function laneY(r, s) { return axisH + r * (2 * laneH + rowGap) + s * laneH; }

    function draw() {
      ctx.clearRect(0, 0, cssW, cssH);
      ctx.font = '11px system-ui, sans-serif';
      // Axis and grid.
      var step = niceStep(view.t1 - view.t0, 10);
      ctx.fillStyle = '#5d6675';
      ctx.strokeStyle = '#eceef2';
      ctx.textBaseline = 'middle';
      for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
        var x = X(t);
        ctx.beginPath(); ctx.moveTo(x + 0.5, axisH - 4); ctx.lineTo(x + 0.5, cssH); ctx.stroke();
        ctx.fillText(axisDur(t, step), x + 3, 10);
      }
      for (var r = 0; r < res.length; r++) {
        var row = res[r];
        // The resource's name on its first lane, each lane's side on the right.
        ctx.font = '10px system-ui, sans-serif';
        ctx.fillStyle = '#5d6675';
        ctx.textAlign = 'right';
        var tagW = 0;
        for (var s1 = 0; s1 < 2; s1++) {
          var tag = data[sides[s1]];
          tagW = Math.max(tagW, ctx.measureText(tag).width);
          ctx.fillText(tag, labelW - 6, laneY(r, s1) + laneH / 2);
        }
        ctx.textAlign = 'left';
        ctx.fillStyle = '#1d2330';
        ctx.font = '12px system-ui, sans-serif';
        var name = row.name, room = labelW - tagW - 18;
        while (name.length > 4 && ctx.measureText(name).width > room)
          name = name.slice(0, -2);
        if (name !== row.name) name = name.slice(0, -1) + '\u2026';
        ctx.fillText(name, 4, laneY(r, 0) + laneH);
        for (var s = 0; s < 2; s++) drawLane(row[sides[s]], laneY(r, s), s);
      }
      // Iteration boundaries of each side, over its lanes.
      ctx.save();
      ctx.beginPath(); ctx.rect(labelW, 0, plotW, cssH); ctx.clip();
      for (var s2 = 0; s2 < 2; s2++) {
        ctx.strokeStyle = s2 ? cssVar('--after') : cssVar('--before');
        ctx.setLineDash([4, 3]);
        data.iterations[sides[s2]].forEach(function (it) {
          [it[1], it[2]].forEach(function (t) {
            var x = Math.round(X(t)) + 0.5;
            for (var r = 0; r < res.length; r++) {
              ctx.beginPath();
              ctx.moveTo(x, laneY(r, s2)); ctx.lineTo(x, laneY(r, s2) + laneH);
              ctx.stroke();
            }
          });
        });
      }
      ctx.restore();
    }

    function drawLane(a, y, side) {
      ctx.save();
      ctx.beginPath(); ctx.rect(labelW, y, plotW, laneH); ctx.clip();
      ctx.fillStyle = side ? '#fbf6f2' : '#f4f6f9';
      ctx.fillRect(labelW, y, plotW, laneH);
      var lastPx = -1;
      for (var i = 0; i < a.length; i += 4) {
        var x0 = X(a[i]), x1 = X(a[i] + a[i + 1]);
        if (x1 < labelW || x0 > labelW + plotW) continue;
        var w = x1 - x0, code = a[i + 3];
        if (w < 1) {
          var px = Math.floor(x0);
          if (px === lastPx && !(code & (INSERTED | REMOVED))) continue;
          lastPx = px;
          w = 1;
        }
        ctx.fillStyle = code & INSERTED ? '#222' : code & REMOVED ? '#d62728'
          : KIND_COLORS[data.kinds[code & 7]] || '#999';
        ctx.fillRect(x0, y + 1, w, laneH - 4);
        if ((code & CHANGED) && w >= 3) {
          ctx.strokeStyle = '#1d2330';
          ctx.strokeRect(x0 + 0.5, y + 1.5, w - 1, laneH - 5);
        }
        if (code & CRITICAL) {
          ctx.fillStyle = '#c0392b';
          ctx.fillRect(x0, y + laneH - 3, w, 2);
        }
      }
      ctx.restore();
    }

    function find(mx, my) {
      var r = Math.floor((my - axisH) / (2 * laneH + rowGap));
      if (r < 0 || r >= res.length || mx < labelW) return null;
      var s = Math.floor((my - laneY(r, 0)) / laneH);
      if (s < 0 || s > 1) return null;
      var a = res[r][sides[s]], t = T(mx), slack = (view.t1 - view.t0) / plotW * 2;
      var best = -1;
      for (var i = 0; i < a.length; i += 4) {
        if (a[i] > t + slack) break;
        if (a[i] + a[i + 1] >= t - slack) best = i;
      }
      return best < 0 ? null : { row: res[r], side: sides[s], a: a, i: best };
    }

    function showTip(ev) {
      var rect = canvas.getBoundingClientRect();
      var hit = find(ev.clientX - rect.left, ev.clientY - rect.top);
      if (!hit) { tip.style.display = 'none'; return; }
      var a = hit.a, i = hit.i, code = a[i + 3];
      var flags = [];
      if (code & CHANGED) flags.push('changed by the model');
      if (code & INSERTED) flags.push('inserted by the model');
      if (code & REMOVED) flags.push('removed by the model');
      if (code & CRITICAL) flags.push('on the critical path');
      tip.textContent = '';
      el('b', {}, tip).textContent = data.names[a[i + 2]];
      [data.kinds[code & 7] + ' on ' + hit.row.name + ' (' + data[hit.side] + ')',
        'start ' + fmtDur(a[i]) + ', duration ' + fmtDur(a[i + 1])].concat(flags)
        .forEach(function (line) { el('div', {}, tip).textContent = line; });
      tip.style.display = 'block';
      var x = ev.clientX - rect.left + 14;
      tip.style.left = Math.min(x, cssW - 320) + 'px';
      tip.style.top = (ev.clientY - rect.top + canvas.offsetTop + 14) + 'px';
    }

    var drag = null;
    canvas.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var rect = canvas.getBoundingClientRect();
      var t = T(ev.clientX - rect.left), k = ev.deltaY > 0 ? 1.25 : 0.8;
      var span = Math.max((view.t1 - view.t0) * k, 1000);
      var f = (t - view.t0) / (view.t1 - view.t0);
      view.t0 = t - f * span; view.t1 = view.t0 + span;
      draw();
    }, { passive: false });
    canvas.addEventListener('mousedown', function (ev) {
      drag = { x: ev.clientX, t0: view.t0, t1: view.t1 };
    });
    window.addEventListener('mouseup', function () { drag = null; });
    canvas.addEventListener('mousemove', function (ev) {
      if (drag) {
        var dt = (ev.clientX - drag.x) / plotW * (drag.t1 - drag.t0);
        view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt;
        draw();
        return;
      }
      showTip(ev);
    });
    canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    canvas.addEventListener('dblclick', function () {
      reset(); draw();
    });
    draw();
  }

  // --- Bars: by phase and by layer, before and after ----------------------
  var METRICS = [['gpu', 'GPU task time'], ['cpu', 'CPU task time'],
    ['critical', 'critical path (running)']];

  function drawBars(root, group, metric, limit, heading) {
    // root holds one measure's bars; each rect says what it shows.
    root.textContent = '';
    var m = group.metrics[metric];
    var idx = group.labels.map(function (_, i) { return i; });
    var val = function (side, i) { return m[side] ? m[side][i] : 0; };
    idx = idx.filter(function (i) { return val('before', i) || val('after', i); });
    var total = idx.length;
    var largest = limit && idx.length > limit;
    if (largest) {
      // The largest, largest first, as the heading says.
      idx = idx.slice().sort(function (x, y) {
        return Math.max(val('before', y), val('after', y)) -
          Math.max(val('before', x), val('after', x)) || x - y;
      }).slice(0, limit);
    }
    var hdr = el('h3', {}, root);
    hdr.textContent = heading + (largest ? ': the ' + idx.length + ' largest of ' + total + ', largest first'
      : limit === 0 && heading === 'By layer' ? ', in the model\'s order' : '');
    if (!idx.length) {
      el('p', { class: 'note' }, root).textContent = 'Nothing to show for this measure.';
      return;
    }
    var max = 1;
    idx.forEach(function (i) { max = Math.max(max, val('before', i), val('after', i)); });
    var labelW = 260, barH = 12, rowH = 2 * barH + 8, W = widthOf(root, 1200), plotW = W - labelW - 150;
    var svg = svgEl('svg', { width: W, height: idx.length * rowH + 8, class: 'bars' }, root);
    idx.forEach(function (i, r) {
      var y = 4 + r * rowH, label = group.labels[i];
      svgText(svg, labelW - 8, y + barH + 3, label.length > 38 ? label.slice(0, 37) + '\u2026' : label,
        { 'text-anchor': 'end' });
      ['before', 'after'].forEach(function (side, s) {
        if (!m[side]) return;
        var v = val(side, i), w = Math.max(v > 0 ? 1 : 0, v / max * plotW);
        var rect = svgEl('rect', {
          x: labelW, y: y + s * barH, width: w, height: barH - 1, class: side,
          'data-label': label, 'data-side': side, 'data-metric': metric, 'data-ns': v
        }, svg);
        title(rect, label + ', ' + data[side] + ': ' + fmtDur(v));
        svgText(svg, labelW + w + 4, y + s * barH + barH - 2, fmtDur(v), { 'font-size': 11 });
      });
    });
  }

  // Every measure is drawn once; the controls show one of them.
  function setupBars() {
    var controls = document.getElementById('bar-metric');
    var b = data.bars;
    var available = METRICS.filter(function (m) {
      return b.phase.metrics[m[0]].before || b.phase.metrics[m[0]].after;
    });
    var both = available.filter(function (m) {
      return b.phase.metrics[m[0]].before && b.phase.metrics[m[0]].after;
    });
    var current = (both.some(function (m) { return m[0] === 'critical'; })
      ? 'critical' : available[0][0]);
    var boxes = {};
    ['phase', 'layer'].forEach(function (g) {
      var host = document.getElementById('bars-' + g);
      available.forEach(function (m) {
        boxes[g + m[0]] = el('div', { class: 'bar-set', 'data-metric': m[0] }, host);
      });
    });
    legend(controls, [[data.before, cssVar('--before')], [data.after, cssVar('--after')]]);
    available.forEach(function (m) {
      var lab = el('label', {}, controls);
      var input = el('input', { type: 'radio', name: 'dd-metric', value: m[0] }, lab);
      if (m[0] === current) input.checked = true;
      lab.appendChild(document.createTextNode(' ' + m[1]));
      input.addEventListener('change', function () { current = m[0]; show(); });
    });
    var lab = el('label', {}, controls);
    var all = el('input', { type: 'checkbox', id: 'dd-all-layers' }, lab);
    lab.appendChild(document.createTextNode(' all layers'));
    function drawLayers() {
      available.forEach(function (m) {
        drawBars(boxes['layer' + m[0]], b.layer, m[0], all.checked ? 0 : 25, 'By layer');
      });
    }
    all.addEventListener('change', function () { drawLayers(); show(); });
    function show() {
      for (var k in boxes) boxes[k].style.display = boxes[k].getAttribute('data-metric') === current ? '' : 'none';
    }
    available.forEach(function (m) {
      drawBars(boxes['phase' + m[0]], b.phase, m[0], 0, 'By phase');
    });
    drawLayers();
    show();
  }

  // --- Memory: allocated bytes over the iteration ---------------------------
  function drawMemory(root) {
    data.memory.forEach(function (pool) {
      var h = el('h3', {}, root);
      h.textContent = pool.pool + ': allocated';
      legend(root, [[data.before, cssVar('--before')], [data.after, cssVar('--after')]]);
      var W = widthOf(root, 1200), H = 260, L = 80, R = 20, Tp = 10, B = 30;
      var tMax = Math.max(data.window.before, data.window.after, 1);
      var yMax = 1;
      ['before', 'after'].forEach(function (s) {
        for (var i = 1; i < pool[s].length; i += 2) yMax = Math.max(yMax, pool[s][i]);
      });
      var showCap = pool.capacity > 0 && pool.capacity <= yMax * 1.5;
      if (showCap) yMax = pool.capacity;
      yMax *= 1.05;
      var X = function (t) { return L + t / tMax * (W - L - R); };
      var Y = function (v) { return Tp + (1 - v / yMax) * (H - Tp - B); };
      var svg = svgEl('svg', { width: W, height: H, class: 'memory', 'data-pool': pool.pool }, root);
      var ax = svgEl('g', { class: 'axis' }, svg);
      var unit = yMax >= 1073741824 ? 1073741824 : yMax >= 1048576 ? 1048576 : yMax >= 1024 ? 1024 : 1;
      var ys = niceStep(yMax / unit, 5) * unit;
      for (var v = 0; v <= yMax; v += ys) {
        svgEl('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: 'grid-line' }, ax);
        svgText(ax, L - 6, Y(v) + 4, fmtBytes(v), { 'text-anchor': 'end' });
      }
      var ts = niceStep(tMax, 10);
      for (var t = 0; t <= tMax; t += ts) svgText(ax, X(t), H - 10, axisDur(t, ts), { 'text-anchor': 'middle' });
      if (showCap) {
        svgEl('line', { x1: L, x2: W - R, y1: Y(pool.capacity), y2: Y(pool.capacity), class: 'cap' }, svg);
      }
      ['before', 'after'].forEach(function (s) {
        var p = pool[s];
        if (p.length < 2) return;
        var d = 'M' + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1);
        for (var i = 2; i < p.length; i += 2)
          d += 'H' + X(p[i]).toFixed(1) + 'V' + Y(p[i + 1]).toFixed(1);
        svgEl('path', { d: d, class: s }, svg);
        var pk = pool.peak[s];
        var c = svgEl('circle', { cx: X(pk[0]), cy: Y(pk[1]), r: 4, class: s, 'data-bytes': pk[1] }, svg);
        title(c, 'peak, ' + data[s] + ': ' + fmtBytes(pk[1]) + ' at ' + fmtDur(pk[0]));
      });
    });
  }

  // --- Sweep: predicted time against the swept parameter --------------------
  function drawSweep(root) {
    var sw = data.sweep, pts = sw.points;
    if (!pts.length) { root.textContent = 'The sweep has no results.'; return; }
    var numeric = pts.every(function (p) { return p.number[0] !== null; });
    var cats = [];
    pts.forEach(function (p) { if (cats.indexOf(p.text[0]) < 0) cats.push(p.text[0]); });
    var xOf = function (p) { return numeric ? p.number[0] : cats.indexOf(p.text[0]); };
    var series = {}, order = [];
    pts.forEach(function (p) {
      var key = p.text.slice(1).map(function (t, i) { return sw.params[i + 1] + ' = ' + t; }).join(', ');
      if (!series[key]) { series[key] = []; order.push(key); }
      series[key].push(p);
    });
    var xs = pts.map(xOf), ys = pts.map(function (p) { return p.ns; }).concat([sw.baseline]);
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    var yMax = Math.max.apply(null, ys) * 1.08;
    var W = widthOf(root, 1000), H = 320, L = 80, R = 20, Tp = 10, B = 44;
    var X = function (v) { return L + (v - x0) / (x1 - x0) * (W - L - R); };
    var Y = function (v) { return Tp + (1 - v / yMax) * (H - Tp - B); };
    var svg = svgEl('svg', { width: W, height: H, class: 'sweep' }, root);
    var ax = svgEl('g', { class: 'axis' }, svg);
    var ys2 = niceStep(yMax, 6);
    for (var v = 0; v <= yMax; v += ys2) {
      svgEl('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: 'grid-line' }, ax);
      svgText(ax, L - 6, Y(v) + 4, axisDur(v, ys2), { 'text-anchor': 'end' });
    }
    if (numeric) {
      var xs2 = niceStep(x1 - x0, 8);
      for (var t = Math.ceil(x0 / xs2) * xs2; t <= x1 + 1e-9; t += xs2)
        svgText(ax, X(t), H - 26, String(+t.toPrecision(6)), { 'text-anchor': 'middle' });
    } else {
      cats.forEach(function (c, i) { svgText(ax, X(i), H - 26, c, { 'text-anchor': 'middle' }); });
    }
    svgText(ax, (L + W - R) / 2, H - 6, sw.params[0] || 'parameter', { 'text-anchor': 'middle' });
    svgEl('line', { x1: L, x2: W - R, y1: Y(sw.baseline), y2: Y(sw.baseline), class: 'base' }, svg);
    var palette = ['#e8793a', '#3b7dd8', '#3fa34d', '#9b59b6', '#c0392b', '#16a2a2'];
    order.forEach(function (key, k) {
      var col = palette[k % palette.length];
      var s = series[key].slice().sort(function (a, b) { return xOf(a) - xOf(b); });
      svgEl('polyline', {
        points: s.map(function (p) { return X(xOf(p)) + ',' + Y(p.ns); }).join(' '),
        fill: 'none', stroke: col, 'stroke-width': 1.5
      }, svg);
      s.forEach(function (p) {
        // An out-of-memory point: hollow, ringed in red, and its title says so.
        var c = svgEl('circle', p.oom
          ? { cx: X(xOf(p)), cy: Y(p.ns), r: 5, fill: '#fff', stroke: '#c0392b', 'stroke-width': 2, class: 'point oom', 'data-ns': p.ns }
          : { cx: X(xOf(p)), cy: Y(p.ns), r: 4, fill: col, class: 'point', 'data-ns': p.ns }, svg);
        var what = p.text.map(function (t, i) { return sw.params[i] + ' = ' + t; }).join(', ');
        title(c, what + ': ' + fmtDur(p.ns) + (p.oom ? ', out of memory' : ''));
      });
    });
    if (order.length > 1 || order[0]) {
      legend(root, order.map(function (k, i) { return [k || '(all)', palette[i % palette.length]]; }));
    }
  }

  // --- Roofline: the sized kernels against the GPU's roofs ------------------
  function drawRoofline(root) {
    var rf = data.roofline, pts = rf.points;
    var W = widthOf(root, 1000), H = 380, L = 70, R = 130, Tp = 12, B = 44;
    var lo = function (v) { return Math.pow(10, Math.floor(Math.log10(v))); };
    var hi = function (v) { return Math.pow(10, Math.ceil(Math.log10(v))); };
    var xs = pts.map(function (p) { return p[0]; }), ys = pts.map(function (p) { return p[1]; });
    var peakMax = 0;
    rf.peaks.forEach(function (pk) { peakMax = Math.max(peakMax, pk[1]); });
    var x0 = lo(Math.min.apply(null, xs)), x1 = hi(Math.max.apply(null, xs.concat(
      rf.bandwidth ? [1000 * peakMax / rf.bandwidth * 4] : [])));
    var y0 = lo(Math.min.apply(null, ys)), y1 = hi(Math.max.apply(null, ys.concat([peakMax])));
    if (x0 === x1) x1 = x0 * 10;
    if (y0 === y1) y1 = y0 * 10;
    var lx0 = Math.log10(x0), lx1 = Math.log10(x1), ly0 = Math.log10(y0), ly1 = Math.log10(y1);
    var X = function (v) { return L + (Math.log10(v) - lx0) / (lx1 - lx0) * (W - L - R); };
    var Y = function (v) { return Tp + (1 - (Math.log10(v) - ly0) / (ly1 - ly0)) * (H - Tp - B); };
    var svg = svgEl('svg', { width: W, height: H, class: 'roofline' }, root);
    var ax = svgEl('g', { class: 'axis' }, svg);
    for (var e = lx0; e <= lx1; e++) {
      svgEl('line', { x1: X(Math.pow(10, e)), x2: X(Math.pow(10, e)), y1: Tp, y2: H - B, class: 'grid-line' }, ax);
      svgText(ax, X(Math.pow(10, e)), H - 26, String(+Math.pow(10, e).toPrecision(3)), { 'text-anchor': 'middle' });
    }
    for (var f = ly0; f <= ly1; f++) {
      svgEl('line', { x1: L, x2: W - R, y1: Y(Math.pow(10, f)), y2: Y(Math.pow(10, f)), class: 'grid-line' }, ax);
      svgText(ax, L - 6, Y(Math.pow(10, f)) + 4, String(+Math.pow(10, f).toPrecision(3)), { 'text-anchor': 'end' });
    }
    svgText(ax, (L + W - R) / 2, H - 6, 'arithmetic intensity (FLOPs per byte moved)', { 'text-anchor': 'middle' });
    svgText(ax, 14, (Tp + H - B) / 2, 'TFLOP/s achieved',
      { 'text-anchor': 'middle', transform: 'rotate(-90 14 ' + (Tp + H - B) / 2 + ')' });
    // The roofs: bandwidth (TFLOP/s = intensity x GB/s / 1000) up to each peak.
    rf.peaks.forEach(function (pk) {
      if (!rf.bandwidth) return;
      var knee = 1000 * pk[1] / rf.bandwidth;
      var xa = Math.max(x0, y0 * 1000 / rf.bandwidth);
      var roof = svgEl('polyline', {
        points: X(xa) + ',' + Y(xa * rf.bandwidth / 1000) + ' ' + X(Math.min(knee, x1)) + ',' +
          Y(Math.min(pk[1], x1 * rf.bandwidth / 1000)) + ' ' + X(x1) + ',' + Y(pk[1]),
        class: 'roof', 'data-peak': pk[1]
      }, svg);
      title(roof, rf.gpu + ' ' + pk[0] + ': ' + pk[1] + ' TFLOP/s dense peak, ' + rf.bandwidth + ' GB/s');
      svgText(svg, W - R + 4, Y(pk[1]) + 4, pk[0] + ' ' + pk[1], { 'font-size': 11 });
    });
    var palette = ['#3b7dd8', '#e8793a', '#3fa34d', '#9b59b6', '#c0392b', '#16a2a2', '#8c6d31', '#e377c2',
      '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];
    var maxNs = 1;
    pts.forEach(function (p) { maxNs = Math.max(maxNs, p[2]); });
    var used = [];
    // The shortest on top, so that long kernels do not hide them.
    pts.slice().reverse().forEach(function (p) {
      if (used.indexOf(p[3]) < 0) used.push(p[3]);
      var c = svgEl('circle', {
        cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: (2 + 8 * Math.sqrt(p[2] / maxNs)).toFixed(1),
        fill: palette[p[3] % palette.length], class: 'point', 'data-class': rf.classes[p[3]], 'data-ns': p[2]
      }, svg);
      title(c, data.names[p[4]] + '\n' + rf.classes[p[3]] + ': ' + fmtDur(p[2]) + ', ' + p[1] + ' TFLOP/s at ' +
        p[0] + ' FLOPs/byte');
    });
    used.sort(function (a, b) { return a - b; });
    legend(root, used.map(function (k) { return [rf.classes[k], palette[k % palette.length]]; }));
  }

  // --- Opportunities: the gain of each ranked what-if -----------------------
  function drawOpportunities(root) {
    var op = data.opportunities, es = op.entries;
    var max = 1;
    es.forEach(function (e) { max = Math.max(max, e.gain); });
    var labelW = 380, barH = 16, rowH = barH + 6, W = widthOf(root, 1200), plotW = W - labelW - 190;
    var svg = svgEl('svg', { width: W, height: es.length * rowH + 8, class: 'bars' }, root);
    es.forEach(function (e, i) {
      var y = 4 + i * rowH, label = (i + 1) + '  ' + e.what;
      svgText(svg, labelW - 8, y + barH - 4, label.length > 56 ? label.slice(0, 55) + '\u2026' : label,
        { 'text-anchor': 'end' });
      // A what-if that makes the step slower gains nothing: a sliver, marked.
      var w = Math.max(1, Math.max(0, e.gain) / max * plotW);
      var share = op.baseline ? (100 * e.gain / op.baseline).toFixed(1) + '%' : '-';
      var rect = svgEl('rect', {
        x: labelW, y: y, width: w, height: barH, class: e.gain > 0 ? 'gain' : 'gain loss',
        'data-rank': i + 1, 'data-ns': e.gain, 'data-predicted': e.ns
      }, svg);
      title(rect, e.what + ': predicted ' + fmtDur(e.ns) + ', gain ' + fmtDur(e.gain) + ' (' + share +
        ' of the replayed iteration)\n' + e.model);
      svgText(svg, labelW + w + 4, y + barH - 4, fmtDur(e.gain) + ' (' + share + ')', { 'font-size': 11 });
    });
  }

  // --- Compare: the two measured iterations and the prediction --------------
  function drawCompare(root) {
    var c = data.compare;
    var rows = [['before', 'before (measured)', c.before.ns]];
    if (c.predicted !== null) rows.push(['predicted', 'predicted from before', c.predicted]);
    rows.push(['after', 'after (measured)', c.after.ns]);
    var max = 1;
    rows.forEach(function (r) { max = Math.max(max, r[2]); });
    var labelW = 200, barH = 16, rowH = barH + 6, W = widthOf(root, 1000), plotW = W - labelW - 120;
    var svg = svgEl('svg', { width: W, height: rows.length * rowH + 8, class: 'bars' }, root);
    rows.forEach(function (r, i) {
      var y = 4 + i * rowH, w = Math.max(r[2] > 0 ? 1 : 0, r[2] / max * plotW);
      svgText(svg, labelW - 8, y + barH - 4, r[1], { 'text-anchor': 'end' });
      var rect = svgEl('rect', { x: labelW, y: y, width: w, height: barH, class: r[0], 'data-side': r[0], 'data-ns': r[2] }, svg);
      title(rect, r[1] + ': ' + fmtDur(r[2]));
      svgText(svg, labelW + w + 4, y + barH - 4, fmtDur(r[2]), { 'font-size': 11 });
    });
  }

  drawTimeline(document.getElementById('tl'));
  setupBars();
  var mem = document.getElementById('mem');
  if (mem) drawMemory(mem);
  var sweep = document.getElementById('sweep-plot');
  if (sweep && data.sweep) drawSweep(sweep);
  var rooflinePlot = document.getElementById('roofline-plot');
  if (rooflinePlot && data.roofline) drawRoofline(rooflinePlot);
  var opportunities = document.getElementById('opportunity-bars');
  if (opportunities && data.opportunities) drawOpportunities(opportunities);
  var compare = document.getElementById('compare-bars');
  if (compare && data.compare) drawCompare(compare);
  document.body.setAttribute('data-dd-rendered', 'yes');
})();
