// The plan page (`accel plan --format html`): draws the embedded plan (ir::PlanToJson), its
// simulated pipeline timeline (TimelineJson) and, after a search, the ranking (SearchJson).
'use strict';
accel.run(() => {
  const plan = accel.data('plan-data');
  const timeline = accel.data('timeline-data');
  const search = accel.data('search-data');
  const {num, el} = accel;
  const ranks = plan.ranks || [];
  const stageName = (s) => 'stage ' + s;

  drawHeader(plan, num);
  if (search) drawSearch(search);
  drawMesh(plan, ranks);
  drawTimeline(plan, timeline);
  drawMemory(plan);
  drawStepTime(plan);
  drawResolved(plan);

  function shortEnum(value, prefix) {
    return String(value || '').replace(prefix, '').toLowerCase();
  }

  function drawHeader(plan, num) {
    document.getElementById('title').textContent = 'accel plan: ' + plan.job.name;
    const axes = (plan.mesh.axes || []).filter((a) => num(a.size) > 1)
      .map((a) => a.name + ' ' + num(a.size)).join(' × ') || 'one rank';
    const t = plan.topology;
    const p = plan.pipeline;
    accel.facts(document.getElementById('facts'), [
      ['world size', accel.count(t.world_size), 'world-size'],
      ['cluster', num(t.nodes) + ' × ' + num(t.devices_per_node) + ' ' +
        (t.device_model || shortEnum(t.device_type, 'DEVICE_TYPE_'))],
      ['mesh', axes, 'mesh-axes'],
      ['parameters', accel.count(plan.model.parameters.total_count)],
      ['schedule', (p.stages || []).length > 1 ? shortEnum(p.schedule, 'PIPELINE_SCHEDULE_') : '-'],
      ['microbatches', accel.count(p.microbatches)],
      ['bubble', num(p.bubble_fraction).toFixed(4), 'bubble-fraction'],
      ['step', accel.seconds(plan.step_time.step_seconds), 'step-seconds'],
      ['tokens/s', accel.count(plan.step_time.tokens_per_second)],
      ['MFU', accel.percent(plan.step_time.mfu)],
    ]);
  }

  function drawSearch(search) {
    document.getElementById('search-section').hidden = false;
    document.getElementById('search-counts').textContent =
      accel.count(search.enumerated) + ' candidates enumerated, ' + accel.count(search.valid) +
      ' valid, ' + accel.count(search.fitting) + ' fit' +
      (search.dominated ? ', ' + accel.count(search.dominated) + ' dominated (not planned)' : '') +
      (search.refused ? ', ' + accel.count(search.refused) + ' refused (the executor does not run them yet)' : '') +
      '; global batch ' + search.global_batch + ' sequences; searched in ' +
      search.seconds.toFixed(3) + ' s. The page below is the winner\'s plan.';
    const degrees = (r) => r.dp_replicate + '×' + r.dp_shard + '×' + r.tp + '×' + r.pp +
      (r.ep > 1 ? ' ep' + r.ep : '');
    const numCell = () => ({class: 'num'});
    const t = accel.table(document.getElementById('search-table'), [
      {title: 'rank', value: (r) => r.rank, attrs: numCell},
      {title: 'dr×ds×tp×pp', value: degrees, attrs: (r) => (r.rank === 1 ? {id: 'search-winner'} : {})},
      {title: 'cp', value: (r) => r.cp, attrs: numCell},
      {title: 'stage', value: (r) => r.sharding_stage, attrs: numCell},
      {title: 'micro', value: (r) => r.micro_batch, attrs: numCell},
      {title: 'accum', value: (r) => r.accum, attrs: numCell},
      {title: 'recompute', value: (r) => r.recompute},
      {title: 'offload', value: (r) => r.offload},
      {title: 'schedule', value: (r) => r.schedule},
      {title: 'step', value: (r) => accel.seconds(r.step_seconds), attrs: numCell},
      {title: 'tokens/s', value: (r) => accel.count(r.tokens_per_second), attrs: numCell},
      {title: 'MFU', value: (r) => accel.percent(r.mfu), attrs: numCell},
      {title: 'peak / limit', value: (r) => accel.bytes(r.peak_bytes) + ' / ' + accel.bytes(r.limit_bytes), attrs: numCell},
      {title: 'lost to #1 by', value: (r) => r.lost, attrs: () => ({class: 'reason'})},
    ], search.rows);
    if (t.tBodies[0].rows.length > 0) t.tBodies[0].rows[0].classList.add('winner');
  }

  // rank -> index of its group, per process-group set (-1: in none of them).
  function groupIndex(set, worldSize) {
    const index = new Int32Array(worldSize).fill(-1);
    (set.groups || []).forEach((g, i) => (g.ranks || []).forEach((r) => { index[r] = i; }));
    return index;
  }

  function drawMesh(plan, ranks) {
    const perNode = Math.max(1, num(plan.topology.devices_per_node));
    const nodes = Math.max(1, num(plan.topology.nodes));
    const axes = plan.mesh.axes || [];
    const sets = plan.process_groups || [];
    const indices = sets.map((s) => groupIndex(s, ranks.length));
    let kind = -1;  // the process-group set colouring the ranks; -1: pipeline stage
    const cellColour = (r) => (kind < 0 ? accel.colour(r.stage || 0)
      : indices[kind][r.rank || 0] < 0 ? '#eeeeee' : accel.colour(indices[kind][r.rank || 0]));
    // [device, node, rank, group of the selected kind (-1: stages are shown)]
    const data = () => ranks.map((r) => ({
      value: [num(r.local_rank), num(r.node), num(r.rank), kind < 0 ? -1 : indices[kind][num(r.rank)]],
      itemStyle: {color: cellColour(r)},
    }));
    const tooltip = (p) => meshTooltip(ranks[p.value[2]], axes, sets, indices);
    // Large meshes open whole (rows may be under a pixel: the stages show as bands); the slider
    // and shift + mouse wheel zoom in until the cells are labelled.
    const zoom = nodes > 24 ? [{type: 'slider', yAxisIndex: 0, right: 8},
                               {type: 'inside', yAxisIndex: 0, zoomOnMouseWheel: 'shift'}] : [];
    const c = accel.chart('mesh-chart', {
      tooltip: {formatter: tooltip},
      grid: {left: 70, right: 50, top: 20, bottom: 40},
      xAxis: {type: 'category', name: 'device', nameLocation: 'middle', nameGap: 26,
              data: Array.from({length: perNode}, (_, i) => String(i))},
      yAxis: {type: 'category', inverse: true, data: Array.from({length: nodes}, (_, i) => 'node ' + i)},
      dataZoom: zoom,
      series: [{
        // Drawn in one pass: progressive (chunked) rendering of large meshes never finished in
        // headless Chromium's virtual time, and one pass of 65,536 boxes takes well under a second.
        type: 'custom', progressive: 0, data: data(),
        renderItem: meshCell(),
      }],
    }, Math.min(640, Math.min(nodes, 24) * 34 + 90));
    // Hover with a group kind selected: outline the other members of the hovered rank's group.
    c.on('mouseover', (p) => {
      if (kind < 0) return;
      const g = indices[kind][p.value[2]];
      if (g < 0) return;
      c.dispatchAction({type: 'highlight', seriesIndex: 0, dataIndex: sets[kind].groups[g].ranks.map(Number)});
    });
    c.on('mouseout', () => c.dispatchAction({type: 'downplay', seriesIndex: 0}));
    groupButtons(sets, (k) => {
      kind = k;
      c.setOption({series: [{data: data()}]});
    });
  }

  // A rank's coordinates and its group in every process-group set.
  function meshTooltip(r, axes, sets, indices) {
    const rank = num(r.rank);
    const coords = axes.map((a, i) => a.name + ' ' + num((r.coords || [])[i])).join(', ');
    const groups = sets.map((s, i) => {
      const g = indices[i][rank];
      if (g < 0) return '';
      const members = s.groups[g].ranks || [];
      const shown = members.slice(0, 16).join(' ') + (members.length > 16 ? ' …' : '');
      return '<br>' + s.name + ' #' + g + ': ' + shown;
    }).join('');
    return 'rank ' + rank + ' (node ' + num(r.node) + ', device ' + num(r.local_rank) +
      ')<br>stage ' + num(r.stage) + '; ' + coords + groups;
  }

  // ECharts custom-series renderer of one mesh cell: a rounded box, "r<rank>" when it fits, and
  // " · g<group>" when a process-group kind is selected (colours repeat after 16 groups).
  function meshCell() {
    return (params, api) => {
      const centre = api.coord([api.value(0), api.value(1)]);
      const size = api.size([1, 1]);
      const gap = Math.min(size[0], size[1]) < 10 ? 0 : 3;  // tiny cells: no gap, no outline
      const w = size[0] - gap, h = size[1] - gap;
      const rect = {type: 'rect', shape: {x: centre[0] - w / 2, y: centre[1] - h / 2, width: w, height: h, r: gap},
                    style: api.style(gap ? {stroke: '#fff', lineWidth: 1} : {lineWidth: 0}),
                    emphasis: {style: {stroke: '#222', lineWidth: 3}}};
      if (w < 26 || h < 14) return rect;
      return {type: 'group', children: [rect, {type: 'text', style: {
        text: 'r' + api.value(2) + (api.value(3) >= 0 && w > 60 ? ' · g' + api.value(3) : ''), x: centre[0], y: centre[1], align: 'center', verticalAlign: 'middle',
        fill: '#fff', fontSize: Math.min(12, h - 2)}}]};
    };
  }

  // One button per process-group set (and one for the stages); `select(k)` gets the set's index
  // (-1: stages).
  function groupButtons(sets, select) {
    const buttons = document.getElementById('group-kinds');
    const describe = (s) => s.name + ' (' + (s.groups || []).length + ' × ' +
      ((s.groups || [])[0] || {ranks: []}).ranks.length + (s.partial ? ', partial' : '') + ')';
    const add = (label, kind, k, title) => {
      const b = el('button', {dataset: {kind}, title}, label);
      b.addEventListener('click', () => {
        [...buttons.children].forEach((other) => other.classList.toggle('active', other === b));
        select(k);
      });
      buttons.append(b);
    };
    add('pipeline stage', 'stage', -1, 'colour by pipeline stage');
    sets.forEach((s, i) => add(describe(s), s.name, i, 'axes: ' + (s.axes || []).join(', ')));
    buttons.firstChild.classList.add('active');
    // plan.html#group=tp opens with that kind selected (a link to it; the browser tests).
    const wanted = decodeURIComponent((location.hash.match(/^#group=(.+)$/) || [])[1] || '');
    const button = [...buttons.children].find((b) => b.dataset.kind === wanted);
    if (button) button.click();
  }

  // The timeline's cells: ops [slot, stage, kind, microbatch, chunk] and the idle runs between
  // them [first slot, one past the last, stage] (the bubble).
  function timelineCells(stages, makespan) {
    const ops = [], idle = [];
    stages.forEach((list, s) => {
      let next = 0;
      for (const [slot, kind, mb, chunk] of list) {
        if (slot > next) idle.push([next, slot, s]);
        ops.push([slot, s, kind, mb, chunk]);
        next = slot + 1;
      }
      if (next < makespan) idle.push([next, makespan, s]);
    });
    return {ops, idle};
  }

  function drawTimeline(plan, timeline) {
    const note = document.getElementById('timeline-note');
    const stages = timeline.stages || [];
    const makespan = num(timeline.makespan);
    if (makespan === 0 || stages.length <= 1) {
      note.textContent = 'No pipeline parallelism: one stage runs every microbatch, no bubble.';
      document.getElementById('timeline-chart').style.height = '0px';
      return;
    }
    const kinds = {F: 'forward', B: 'backward', I: 'backward (input)', W: 'backward (weight)'};
    const base = {F: ['#5470c6', '#7f97dc'], B: ['#ee8a3c', '#f4ad72'], I: ['#ee6666', '#f39a9a'], W: ['#3ba272', '#78c59d']};
    const {ops, idle} = timelineCells(stages, makespan);
    const interleaved = stages.some((l) => l.some((op) => op[3] > 0));
    note.textContent = 'One row per stage, one slot per compute op (forward, backward, or the ' +
      'split backward\'s input and weight halves); grey: the bubble. Simulated makespan ' + makespan +
      ' slots, bubble fraction ' + num(timeline.bubble_fraction).toFixed(4) + ' (plan: ' +
      num(plan.pipeline.bubble_fraction).toFixed(4) + '). Scroll or drag the slider to zoom.' +
      (timeline.stall ? ' Stalled: ' + timeline.stall : '');
    const box = (api, from, to, row) => {
      const a = api.coord([from, row]), b = api.coord([to, row]);
      const h = api.size([0, 1])[1] * 0.72;
      return {x: a[0], y: a[1] - h / 2, width: Math.max(0.5, b[0] - a[0] - 1), height: h};
    };
    const visible = Math.min(makespan, 48);
    accel.chart('timeline-chart', {
      tooltip: {formatter: (p) => p.seriesIndex === 0
        ? 'stage ' + p.value[1] + ': ' + kinds[p.value[2]] + ' of microbatch ' + p.value[3] +
          (interleaved ? ', chunk ' + p.value[4] : '') + ' at slot ' + p.value[0]
        : 'stage ' + p.value[2] + ' idle (bubble): slots ' + p.value[0] + '–' + (p.value[1] - 1)},
      legend: {data: ['ops', 'bubble'], top: 0, formatter: (n) => (n === 'ops' ? 'ops: F forward, B backward, I / W backward input / weight' : 'bubble (idle)')},
      grid: {left: 70, right: 30, top: 30, bottom: 70},
      xAxis: {type: 'value', min: 0, max: makespan, name: 'time slot', nameLocation: 'middle', nameGap: 24},
      yAxis: {type: 'category', inverse: true, data: stages.map((_, s) => stageName(s))},
      dataZoom: [{type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', startValue: 0, endValue: visible, bottom: 8},
                 {type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter'}].concat(
                 stages.length > 16 ? [{type: 'slider', yAxisIndex: 0, startValue: 0, endValue: 15, right: 2}] : []),
      series: [{
        name: 'ops', type: 'custom', progressive: 0, encode: {x: 0, y: 1}, data: ops,
        renderItem: (params, api) => {
          const shape = box(api, api.value(0), api.value(0) + 1, api.value(1));
          const kind = ops[params.dataIndex][2];
          const fill = base[kind][api.value(3) % 2];
          const rect = {type: 'rect', shape, style: {fill}};
          if (shape.width < 18) return rect;
          return {type: 'group', children: [rect, {type: 'text', style: {
            text: kind + api.value(3) + (interleaved ? 'c' + api.value(4) : ''), x: shape.x + shape.width / 2,
            y: shape.y + shape.height / 2, align: 'center', verticalAlign: 'middle', fill: '#fff',
            fontSize: Math.min(11, shape.width / 2.4)}}]};
        },
      }, {
        name: 'bubble', type: 'custom', progressive: 0, encode: {x: [0, 1], y: 2}, data: idle, itemStyle: {color: '#bbb'},
        renderItem: (params, api) => ({type: 'rect', shape: box(api, api.value(0), api.value(1), api.value(2)),
                                        style: {fill: '#d9d9d9', stroke: '#bbb', lineDash: [3, 2]}}),
      }],
    }, Math.min(700, Math.min(stages.length, 16) * 40 + 130));
  }

  function drawMemory(plan) {
    const memory = plan.memory || [];
    const categories = [];
    for (const m of memory) for (const t of m.device || []) if (!categories.includes(t.category)) categories.push(t.category);
    // stage -> category -> the terms (a category may hold several terms)
    const terms = memory.map((m) => {
      const by = {};
      for (const t of m.device || []) (by[t.category] = by[t.category] || []).push(t);
      return by;
    });
    const limit = Math.max(0, ...memory.map((m) => num(m.device_limit_bytes)));
    const series = categories.map((cat) => ({
      name: cat, type: 'bar', stack: 'memory', emphasis: {focus: 'series'},
      data: terms.map((by) => accel.gib((by[cat] || []).reduce((s, t) => s + num(t.bytes), 0))),
    }));
    if (series.length > 0 && limit > 0) {
      series[0].markLine = {symbol: 'none', lineStyle: {color: '#b00020', type: 'dashed', width: 2},
        label: {formatter: 'device limit ' + accel.bytes(limit), position: 'insideEndTop'},
        data: [{yAxis: accel.gib(limit)}]};
    }
    const tooltip = (p) => {
      const list = terms[p.dataIndex][p.seriesName] || [];
      return '<b>stage ' + memory[p.dataIndex].stage + ' · ' + p.seriesName + '</b>: ' +
        accel.bytes(list.reduce((s, t) => s + num(t.bytes), 0)) + list.map((t) =>
          '<br><span style="white-space:normal">' + escapeText(t.formula) + '</span><br><i>' +
          escapeText(t.source) + '</i>').join('');
    };
    accel.chart('memory-chart', {
      tooltip: {formatter: tooltip, extraCssText: 'max-width:560px;white-space:normal'},
      legend: {top: 0, type: 'scroll'},
      grid: {left: 70, right: 30, top: 40, bottom: 40},
      xAxis: {type: 'category', data: memory.map((m) => stageName(num(m.stage)))},
      yAxis: {type: 'value', name: 'GiB', max: (v) => accel.niceMax(Math.max(v.max, accel.gib(limit)) * 1.02),
              axisLabel: {formatter: (v) => v.toFixed(0)}},
      series,
    }, 380);
    accel.table(document.getElementById('memory-table'), [
      {title: 'stage', value: (m) => num(m.stage)},
      {title: 'device total', value: (m) => accel.bytes(m.device_total_bytes),
       attrs: (m) => ({class: 'num stage-total', dataset: {stage: num(m.stage), bytes: num(m.device_total_bytes)}})},
      {title: 'limit', value: (m) => accel.bytes(m.device_limit_bytes), attrs: () => ({class: 'num'})},
      {title: 'fits', value: (m) => (m.fits ? 'yes' : 'no'), attrs: (m) => (m.fits ? {} : {class: 'bad'})},
      {title: 'host (offload)', value: (m) => accel.bytes(m.host_total_bytes), attrs: () => ({class: 'num'})},
    ], memory);
  }

  function escapeText(s) {
    return String(s || '').replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
  }

  function drawStepTime(plan) {
    const t = plan.step_time;
    accel.facts(document.getElementById('step-facts'), [
      ['step', accel.seconds(t.step_seconds)],
      ['compute (slowest stage ' + num(t.slowest_stage) + ')', accel.seconds(t.compute_seconds)],
      ['exposed communication', accel.seconds(t.exposed_communication_seconds)],
      ['bubble', accel.seconds(t.bubble_seconds)],
      ['communication (all)', accel.seconds(t.communication_seconds)],
      ['profile', (t.profile && t.profile.name) || '-'],
    ]);
    const stages = t.stages || [];
    const rows = ['step'].concat(stages.map((s) => stageName(num(s.stage))));
    const stepRow = (v) => [num(v)].concat(stages.map(() => null));
    const stageRow = (f) => [null].concat(stages.map((s) => num(s[f])));
    const bar = (name, stack, data) => ({name, type: 'bar', stack, data, emphasis: {focus: 'series'}});
    accel.chart('step-chart', {
      tooltip: {trigger: 'item', formatter: (p) => p.name + ' · ' + p.seriesName + ': ' + accel.seconds(p.value)},
      legend: {top: 0, type: 'scroll'},
      grid: {left: 90, right: 30, top: 40, bottom: 30},
      xAxis: {type: 'value', name: 's', axisLabel: {formatter: (v) => accel.seconds(v)}},
      yAxis: {type: 'category', inverse: true, data: rows},
      series: [
        bar('compute', 'step', stepRow(t.compute_seconds)),
        bar('exposed communication', 'step', stepRow(t.exposed_communication_seconds)),
        bar('bubble', 'step', stepRow(t.bubble_seconds)),
        bar('matmul', 'stage', stageRow('matmul_seconds')),
        bar('memory-bound', 'stage', stageRow('memory_seconds')),
        bar('elementwise', 'stage', stageRow('elementwise_seconds')),
        bar('host optimizer', 'stage', stageRow('host_seconds')),
        bar('optimizer', 'stage', stageRow('optimizer_seconds')),
      ],
    }, Math.min(600, rows.length * 34 + 80));
    accel.table(document.getElementById('comm-table'), [
      {title: 'group', value: (c) => c.group},
      {title: 'collective', value: (c) => shortEnum(c.collective, 'COLLECTIVE_')},
      {title: 'what', value: (c) => c.what},
      {title: 'size', value: (c) => num(c.group_size), attrs: () => ({class: 'num'})},
      {title: 'link', value: (c) => shortEnum(c.link, 'LINK_CLASS_')},
      {title: 'calls', value: (c) => accel.count(c.calls), attrs: () => ({class: 'num'})},
      {title: 'bytes', value: (c) => accel.bytes(c.bytes), attrs: () => ({class: 'num'})},
      {title: 'seconds', value: (c) => accel.seconds(c.seconds), attrs: () => ({class: 'num'})},
      {title: 'exposed', value: (c) => accel.seconds(c.exposed_seconds), attrs: () => ({class: 'num'})},
      {title: 'formula', value: (c) => c.formula, attrs: () => ({class: 'reason'})},
    ], t.communication || []);
  }

  function drawResolved(plan) {
    accel.table(document.getElementById('resolved-table'), [
      {title: 'field', value: (r) => r.field},
      {title: 'value', value: (r) => r.value, attrs: (r) => ({class: 'resolved-value', dataset: {field: r.field}})},
      {title: 'reason', value: (r) => r.reason, attrs: () => ({class: 'reason'})},
      {title: 'pass', value: (r) => r.pass},
    ], plan.resolved || []);
    const notes = plan.notes || [];
    if (notes.length === 0) return;
    document.getElementById('notes-section').hidden = false;
    accel.table(document.getElementById('notes-table'), [
      {title: 'severity', value: (n) => shortEnum(n.severity, 'SEVERITY_')},
      {title: 'code', value: (n) => n.code},
      {title: 'field', value: (n) => n.field},
      {title: 'message', value: (n) => n.message, attrs: () => ({class: 'reason'})},
    ], notes);
  }
});
