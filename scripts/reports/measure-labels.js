// Measures the text labels of the report's timeline as the browser lays them out: appended to a
// copy of a report page (scripts/reports/check-labels.sh, Tests/CLITests/TimelineLabelTests.swift),
// it writes into the DOM how many pairs of <text> in svg#timeline overlap and how many are cut off
// (outside the svg, or outside the clip region of the plot they are drawn in), with the first
// offenders, so `chromium --headless --dump-dom` can read the numbers.
(function () {
  var svg = document.getElementById('timeline');
  var out = document.createElement('pre');
  out.id = 'label-check';
  document.body.appendChild(out);
  if (!svg) { out.setAttribute('data-texts', '0'); out.setAttribute('data-overlaps', '0'); out.setAttribute('data-clipped', '0'); return; }
  var view = svg.getBoundingClientRect();
  var plot = null;
  var clip = svg.querySelector('clipPath#plot rect');
  if (clip) {
    var m = svg.getScreenCTM(), p = svg.createSVGPoint();
    p.x = +clip.getAttribute('x'); p.y = +clip.getAttribute('y');
    var a = p.matrixTransform(m);
    p.x += +clip.getAttribute('width'); p.y += +clip.getAttribute('height');
    var b = p.matrixTransform(m);
    plot = { left: a.x, top: a.y, right: b.x, bottom: b.y };
  }
  var boxes = [];
  var texts = svg.querySelectorAll('text');
  for (var i = 0; i < texts.length; i++) {
    var t = texts[i];
    if (!t.textContent.trim()) continue;
    var r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (getComputedStyle(t).visibility === 'hidden' || getComputedStyle(t).display === 'none') continue;
    var clipped = t.closest('[clip-path]');
    boxes.push({ text: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom,
                 area: clipped && plot ? plot : { left: view.left, top: view.top, right: view.right, bottom: view.bottom } });
  }
  // Half a pixel of slack: glyph boxes of neighbouring rows touch.
  var e = 0.5, overlaps = [], cut = [];
  boxes.sort(function (x, y) { return x.l - y.l; });
  for (i = 0; i < boxes.length; i++) {
    var x = boxes[i];
    if (x.l < x.area.left - e || x.r > x.area.right + e || x.t < x.area.top - e || x.b > x.area.bottom + e) cut.push(x);
    for (var j = i + 1; j < boxes.length && boxes[j].l < x.r - e; j++) {
      var y = boxes[j];
      if (y.t < x.b - e && y.b > x.t + e && y.l < x.r - e && y.r > x.l + e) overlaps.push([x, y]);
    }
  }
  function show(bx) { return JSON.stringify(bx.text) + ' [' + Math.round(bx.l) + '..' + Math.round(bx.r) + ', ' + Math.round(bx.t) + '..' + Math.round(bx.b) + ']'; }
  var lines = [];
  overlaps.slice(0, 20).forEach(function (o) { lines.push('overlap: ' + show(o[0]) + ' / ' + show(o[1])); });
  cut.slice(0, 20).forEach(function (c) { lines.push('clipped: ' + show(c)); });
  out.setAttribute('data-texts', String(boxes.length));
  out.setAttribute('data-overlaps', String(overlaps.length));
  out.setAttribute('data-clipped', String(cut.length));
  out.textContent = lines.join('\n');
})();
