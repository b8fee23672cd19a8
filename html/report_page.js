// The run report (`accel report RUN_DIR`): rank 0's metrics per step (metrics.jsonl), each
// rank's peak memory (summary.json) and the plan's estimates as reference lines (RunReportJson).
'use strict';
accel.run(() => {
  const report = accel.data('report-data');
  const steps = report.steps;
  const plan = report.plan;
  const summary = report.summary;
  const x = steps.step;
  const pairs = (ys, scale = 1) => x.map((s, i) => [s, ys[i] === null ? null : ys[i] * scale]);
  const finite = (ys) => ys.filter((v) => v !== null);
  const mean = (ys) => { const v = finite(ys); return v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0; };
  // Rank 0's stage: the one its metrics are compared with.
  const stage0 = plan && plan.stages.length ? plan.stages[plan.rank_stage.length ? plan.rank_stage[0] : 0] : null;
  const estimates = (summary && summary.memory && summary.memory.estimate) || [];
  const tensorEstimate0 = estimates.length ? estimates.find((e) => e.stage === (stage0 ? stage0.stage : 0)) : null;

  const axisX = () => ({type: 'value', name: 'step', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax'});
  const zoom = () => (x.length > 200 ? [{type: 'inside'}, {type: 'slider', bottom: 4, height: 18}] : [{type: 'inside'}]);

  header();
  lossChart();
  lrChart();
  speedChart();
  memoryChart();
  ranksSection();

  // A dashed horizontal line at `value` labelled `label` above it (below it with `below`).
  function refLine(value, label, colour, below = false) {
    return {yAxis: value, label: {formatter: label, position: below ? 'insideEndBottom' : 'insideEndTop'},
            lineStyle: {type: 'dashed', color: colour, width: 2}};
  }

  function lineSeries(name, ys, extra = {}) {
    return Object.assign({name, type: 'line', showSymbol: x.length <= 60, connectNulls: false,
                          data: pairs(ys)}, extra);
  }

  function header() {
    const name = plan ? plan.job : report.dir;
    document.getElementById('title').textContent = 'accel report: ' + name;
    const last = x.length - 1;
    const items = [
      ['run directory', report.dir],
      ['steps', String(x.length) + (x.length ? ' (' + x[0] + '–' + x[last] + ')' : ''), 'steps-count'],
      ['final loss', steps.loss[last] === null ? '-' : steps.loss[last].toFixed(4), 'final-loss'],
      ['mean tokens/s', accel.count(mean(steps.tokens_per_second)), 'mean-tokens'],
    ];
    if (plan) {
      items.push(['world size', String(plan.world_size), 'world-size']);
      items.push(['plan step', accel.seconds(plan.step_seconds), 'plan-step-seconds']);
      items.push(['plan tokens/s', accel.count(plan.tokens_per_second)]);
    }
    if (summary) items.push(['summary', summary.stopped ? 'stopped early' : 'finished', 'run-state']);
    accel.facts(document.getElementById('facts'), items);
    const link = document.getElementById('plan-link');
    if (report.plan_href) {
      link.replaceChildren('The plan this run executed: ',
        accel.el('a', {href: report.plan_href, id: 'plan-href'}, report.plan_href));
    } else {
      link.textContent = plan ? '' : 'This run directory has no plan.binpb: no estimates to compare with.';
    }
  }

  function lossChart() {
    const skipped = x.filter((_, i) => steps.skipped[i]).map((s, i) => [s, steps.loss[x.indexOf(s)]]);
    accel.chart('loss-chart', {
      tooltip: {trigger: 'axis'}, legend: {top: 0},
      grid: {left: 60, right: 30, top: 30, bottom: 50},
      xAxis: axisX(), yAxis: {type: 'value', name: 'loss', scale: true}, dataZoom: zoom(),
      series: [lineSeries('loss', steps.loss)].concat(skipped.length ?
        [{name: 'skipped (overflow)', type: 'scatter', data: skipped, itemStyle: {color: '#b00020'}}] : []),
    }, 300);
  }

  function lrChart() {
    accel.chart('lr-chart', {
      tooltip: {trigger: 'axis'}, legend: {top: 0},
      grid: {left: 70, right: 70, top: 30, bottom: 50},
      xAxis: axisX(), dataZoom: zoom(),
      yAxis: [{type: 'value', name: 'learning rate', axisLabel: {formatter: (v) => v.toExponential(1)}},
              {type: 'value', name: 'grad norm', scale: true}],
      series: [lineSeries('learning rate', steps.lr),
               lineSeries('grad norm (before clipping)', steps.grad_norm, {yAxisIndex: 1})],
    }, 300);
  }

  function speedChart() {
    const tokens = lineSeries('tokens/s', steps.tokens_per_second);
    const time = lineSeries('step time', steps.step_seconds, {yAxisIndex: 1});
    if (plan) {
      tokens.markLine = {symbol: 'none', data: [refLine(plan.tokens_per_second,
        'plan ' + accel.count(plan.tokens_per_second) + ' tokens/s', '#5470c6')]};
      time.markLine = {symbol: 'none', data: [refLine(plan.step_seconds,
        'plan ' + accel.seconds(plan.step_seconds), '#91cc75')]};
    }
    accel.chart('speed-chart', {
      tooltip: {trigger: 'axis'}, legend: {top: 0},
      grid: {left: 80, right: 80, top: 30, bottom: 50},
      xAxis: axisX(), dataZoom: zoom(),
      yAxis: [{type: 'value', name: 'tokens/s', max: (v) => accel.niceMax(Math.max(v.max, plan ? plan.tokens_per_second : 0) * 1.05)},
              {type: 'value', name: 'seconds', max: (v) => accel.niceMax(Math.max(v.max, plan ? plan.step_seconds : 0) * 1.05),
               axisLabel: {formatter: (v) => accel.seconds(v)}}],
      series: [tokens, time],
    }, 320);
  }

  function memoryChart() {
    const mib = (v) => (v === null ? null : v / 2 ** 20);
    const series = [lineSeries('peak RSS (process)', steps.peak_memory_bytes.map(mib))];
    if (finite(steps.peak_tensor_bytes).length) series.push(lineSeries('peak tensor bytes', steps.peak_tensor_bytes.map(mib)));
    if (finite(steps.peak_reserved_bytes).length) series.push(lineSeries('peak reserved (CUDA)', steps.peak_reserved_bytes.map(mib)));
    const refs = [];
    if (stage0) refs.push(refLine(mib(stage0.device_total_bytes), 'plan: stage ' + stage0.stage + ' device total ' +
                                  accel.bytes(stage0.device_total_bytes), '#ee6666', true));
    if (tensorEstimate0) refs.push(refLine(mib(tensorEstimate0.tensor_bytes), 'plan: tensor bytes ' +
                                           accel.bytes(tensorEstimate0.tensor_bytes), '#91cc75'));
    if (refs.length) series[0].markLine = {symbol: 'none', data: refs};
    const top = Math.max(0, ...refs.map((r) => r.yAxis));
    accel.chart('memory-chart', {
      tooltip: {trigger: 'axis', valueFormatter: (v) => (v === null ? '-' : v.toFixed(1) + ' MiB')},
      legend: {top: 0}, grid: {left: 80, right: 30, top: 30, bottom: 50},
      xAxis: axisX(), dataZoom: zoom(),
      yAxis: {type: 'value', name: 'MiB', max: (v) => accel.niceMax(Math.max(v.max, top) * 1.05)},
      series,
    }, 320);
  }

  function ranksSection() {
    const rows = (summary && summary.memory && summary.memory.ranks) || [];
    if (rows.length === 0) return;
    document.getElementById('ranks-section').hidden = false;
    const names = rows.map((r) => 'rank ' + r.rank);
    const mib = (v) => (v === null || v === undefined ? null : v / 2 ** 20);
    accel.chart('ranks-chart', {
      tooltip: {trigger: 'axis', valueFormatter: (v) => (v === null ? '-' : v.toFixed(1) + ' MiB')},
      legend: {top: 0}, grid: {left: 80, right: 30, top: 30, bottom: 40},
      xAxis: {type: 'category', data: names},
      yAxis: {type: 'value', name: 'MiB'},
      series: [{name: 'peak tensor bytes', type: 'bar', data: rows.map((r) => mib(r.peak_tensor_bytes))},
               {name: 'peak RSS', type: 'bar', data: rows.map((r) => mib(r.peak_resident_bytes))},
               {name: 'estimate (tensor bytes of its stage)', type: 'line', step: 'middle',
                data: rows.map((r) => mib(r.estimate_tensor_bytes)), lineStyle: {type: 'dashed'}}],
    }, 300);
    accel.table(document.getElementById('ranks-table'), [
      {title: 'rank', value: (r) => r.rank},
      {title: 'stage', value: (r) => r.stage},
      {title: 'peak tensor bytes', value: (r) => accel.bytes(r.peak_tensor_bytes), attrs: () => ({class: 'num'})},
      {title: 'estimate', value: (r) => accel.bytes(r.estimate_tensor_bytes), attrs: () => ({class: 'num'})},
      {title: 'measured / estimate', value: (r) => (r.measured_over_estimate === null ? '-' : r.measured_over_estimate.toFixed(3)),
       attrs: (r) => ({class: 'num rank-ratio', dataset: {rank: r.rank}})},
      {title: 'peak RSS', value: (r) => accel.bytes(r.peak_resident_bytes), attrs: () => ({class: 'num'})},
    ], rows);
  }
});
