// Shared by the plan page and the run report: reading the embedded data, number formatting,
// tables, charts and the page's error state. Loaded after Apache ECharts (window.echarts).
'use strict';
const accel = (() => {
  // Errors of the page scripts: kept for the tests (window.accelErrors) and shown on the page.
  const originalConsoleError = console.error.bind(console);
  console.error = (...args) => {
    window.accelErrors.push(args.map(String).join(' '));
    originalConsoleError(...args);
  };
  window.addEventListener('unhandledrejection', (e) => window.accelErrors.push(String(e.reason)));

  const charts = [];
  window.addEventListener('resize', () => charts.forEach((c) => c.resize()));

  // The JSON document of <script type="application/json" id=...>, or null when absent.
  function data(id) {
    const element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  // Protobuf's JSON writes 64-bit integers as strings.
  const num = (x) => (x === undefined || x === null ? 0 : Number(x));

  function bytes(n) {
    n = num(n);
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
    return (i === 0 ? n.toFixed(0) : n.toFixed(n >= 100 ? 0 : n >= 10 ? 1 : 2)) + ' ' + units[i];
  }
  function seconds(s) {
    s = num(s);
    if (s === 0) return '0 s';
    if (Math.abs(s) >= 1) return s.toFixed(3) + ' s';
    if (Math.abs(s) >= 1e-3) return (s * 1e3).toFixed(1) + ' ms';
    return (s * 1e6).toFixed(1) + ' µs';
  }
  const count = (n) => Math.round(num(n)).toLocaleString('en-US');
  const percent = (x, digits = 1) => (num(x) * 100).toFixed(digits) + '%';
  const gib = (n) => num(n) / 2 ** 30;
  // An axis maximum at or above x on a round number (a multiple of x's leading power of ten),
  // so that ECharts' tick labels do not crowd the maximum's.
  function niceMax(x) {
    if (!(x > 0)) return 1;
    const step = 10 ** Math.floor(Math.log10(x));
    return Math.ceil(x / step) * step;
  }

  // Builds an element: el('td', {class: 'x', dataset: {stage: 0}}, 'text' | [children]).
  function el(tag, attrs = {}, content = []) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of [].concat(content)) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }

  // A table into `container`: columns [{title, value(row) -> text | Node, attrs(row)?}].
  function table(container, columns, rows) {
    const head = el('tr', {}, columns.map((c) => el('th', {}, c.title)));
    const body = rows.map((row) => el('tr', {}, columns.map((c) =>
      el('td', c.attrs ? c.attrs(row) : {}, c.value(row)))));
    const t = el('table', {}, [el('thead', {}, head), el('tbody', {}, body)]);
    container.replaceChildren(t);
    return t;
  }

  // "label value" pairs into a .facts element; ids make values findable (tests, links).
  function facts(container, items) {
    container.replaceChildren(...items.map(([label, value, id]) =>
      el('div', {class: 'fact'}, [el('span', {class: 'label'}, label),
                                  el('span', id ? {class: 'value', id} : {class: 'value'}, value)])));
  }

  function chart(id, option, height) {
    const element = document.getElementById(id);
    if (height) element.style.height = height + 'px';
    const c = echarts.init(element, null, {renderer: 'canvas'});
    c.setOption(Object.assign({animation: false, textStyle: {fontFamily: 'system-ui, sans-serif'}}, option));
    charts.push(c);
    return c;
  }

  // Category colours (stages, groups, terms): ECharts' default palette, then more.
  const palette = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452',
                   '#9a60b4', '#ea7ccc', '#2f4554', '#c4ccd3', '#d48265', '#749f83', '#ca8622',
                   '#bda29a', '#6e7074'];
  const colour = (i) => palette[((i % palette.length) + palette.length) % palette.length];

  // Runs the page's main; records its exception; marks the page ready for the tests.
  function run(main) {
    try { main(); } catch (e) { window.accelErrors.push(String(e && e.stack || e)); }
    const errors = document.getElementById('page-errors');
    if (window.accelErrors.length > 0 && errors) {
      errors.hidden = false;
      errors.textContent = 'Errors while drawing this page: ' + window.accelErrors.join('; ');
    }
    document.body.dataset.errors = String(window.accelErrors.length);
    document.body.dataset.state = 'ready';
  }

  return {data, num, bytes, seconds, count, percent, gib, niceMax, el, table, facts, chart, colour, run};
})();
