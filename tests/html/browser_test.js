// Browser tests of the HTML pages: each writes a page with accel, opens it in headless Chromium,
// and checks the DOM after the page's scripts ran: no script errors, and the numbers the plan
// (or the run) holds are on the page. A screenshot of each page goes to WORK_DIR (with
// ACCEL_UPDATE_SCREENSHOTS=1 also to docs/img/, for the documentation).
//
//   node browser_test.js ACCEL SOURCE_ROOT WORK_DIR plan|search|report
//
// Exit 0 pass, 1 fail (also when Chromium is missing: scripts/install-deps.sh installs it, and
// a browser test that cannot run must not pass).
'use strict';
const {execFileSync, spawnSync} = require('child_process');
const fs = require('fs');
const path = require('path');

const [accel, root, work, testCase] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

function chromium() {
  const candidates = [process.env.ACCEL_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser',
                      '/usr/bin/google-chrome'].filter(Boolean);
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) {
    console.error('FAIL: no Chromium (looked for ' + candidates.join(', ') + '); ' +
                  'scripts/install-deps.sh installs Debian\'s chromium package');
    process.exit(1);
  }
  return found;
}

function runAccel(args) {
  return execFileSync(accel, args, {cwd: root, encoding: 'utf8', maxBuffer: 256 << 20});
}

// Chromium's flags for one headless, offline, sandbox-free (CI runs as root) page load; the
// virtual time budget lets the page's scripts finish before the DOM is dumped.
function browserArgs(profile) {
  return ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
          '--no-first-run', '--disable-extensions', '--disable-background-networking',
          '--user-data-dir=' + profile, '--virtual-time-budget=15000', '--hide-scrollbars',
          '--enable-logging=stderr', '--v=0'];
}

function load(page, screenshot, height, fragment = '') {
  const browser = chromium();
  const profile = fs.mkdtempSync(path.join(work, 'profile-'));
  const url = 'file://' + path.resolve(page) + fragment;
  const dump = spawnSync(browser, browserArgs(profile).concat(['--dump-dom', url]),
                                                  {encoding: 'utf8', timeout: 60000, maxBuffer: 256 << 20});
  check(dump.status === 0, 'chromium --dump-dom exited ' + dump.status + ': ' + (dump.stderr || '').slice(-2000));
  const uncaught = (dump.stderr || '').split('\n').filter((l) => /CONSOLE.*(Uncaught|Error)/.test(l));
  check(uncaught.length === 0, 'console errors: ' + uncaught.join('\n'));
  if (screenshot) {
    const shot = spawnSync(browser, browserArgs(profile).concat(
      ['--window-size=1400,' + height, '--screenshot=' + screenshot, url]), {encoding: 'utf8', timeout: 60000});
    check(shot.status === 0 && fs.existsSync(screenshot), 'no screenshot ' + screenshot);
  }
  fs.rmSync(profile, {recursive: true, force: true});
  const dom = dump.stdout || '';
  check(/<body[^>]*data-state="ready"/.test(dom), 'the page script did not finish (no data-state="ready")');
  const errors = dom.match(/<body[^>]*data-errors="(\d+)"/);
  check(errors && errors[1] === '0', 'page script errors: ' + (dom.match(/id="page-errors"[^>]*>([^<]*)/) || [])[1]);
  check(!/src="http|href="http/.test(dom.replace(/<script[\s\S]*?<\/script>/g, '')), 'the page refers to the network');
  return dom;
}

// The text of the element with id `id` in the dumped DOM.
function textOf(dom, id) {
  const m = dom.match(new RegExp('id="' + id + '"[^>]*>([^<]*)<'));
  return m ? m[1] : null;
}

function checkPlanPage(dom, plan) {
  check(textOf(dom, 'world-size') === Number(plan.topology.world_size).toLocaleString('en-US'),
        'world size ' + plan.topology.world_size + ' shown as ' + textOf(dom, 'world-size'));
  check(textOf(dom, 'bubble-fraction') === plan.pipeline.bubble_fraction.toFixed(4),
        'bubble fraction ' + plan.pipeline.bubble_fraction + ' shown as ' + textOf(dom, 'bubble-fraction'));
  for (const m of plan.memory) {
    const shown = dom.match(new RegExp('data-stage="' + m.stage + '" data-bytes="(\\d+)"'));
    check(shown && shown[1] === String(m.device_total_bytes),
          'stage ' + m.stage + ' memory total ' + m.device_total_bytes + ' shown as ' + (shown && shown[1]));
  }
  for (const r of plan.resolved) {
    const value = r.value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    check(dom.includes('data-field="' + r.field + '">' + value + '<'), 'resolved ' + r.field + ' = ' + r.value + ' missing');
  }
  check((dom.match(/<canvas/g) || []).length >= 4, 'fewer than 4 charts drawn');
  for (const set of plan.process_groups) check(dom.includes('data-kind="' + set.name + '"'), 'no button for group ' + set.name);
}

function planCase() {
  const spec = 'examples/specs/llama-2-70b_16x8xh100_3d.yaml';
  const page = path.join(work, 'plan.html');
  runAccel(['plan', spec, '--format', 'html', '-o', page]);
  const plan = JSON.parse(runAccel(['plan', spec, '--format', 'json']));
  check(Number(plan.pipeline.microbatches) === 128, 'the 70B example no longer has 128 microbatches');
  const dom = load(page, path.join(work, 'plan.png'), 3400);
  checkPlanPage(dom, plan);
  // A process-group kind selected (as a click does) through the page's #group= fragment.
  const tp = load(page, null, 0, '#group=tp');
  check(/<button[^>]*class="active"[^>]*data-kind="tp"|<button[^>]*data-kind="tp"[^>]*class="active"/.test(tp),
        'the tp button is not selected by #group=tp');
  check(plan.resolved.some((r) => r.field === 'parallel.pipeline_microbatches' && r.value === '128'),
        'the resolved pipeline_microbatches (auto) is not 128');
  check(/makespan 262 slots/.test(dom), 'timeline note without the simulated makespan 262');
  // 8,192 ranks: the mesh is drawn in one pass (ECharts' progressive rendering of this many
  // boxes never finished in headless Chromium: the page hung).
  const big = path.join(work, 'plan-8192.html');
  runAccel(['plan', spec, '--set', 'cluster.nodes=1024', '--set', 'data.global_batch_size=32768',
            '--format', 'html', '-o', big]);
  check(textOf(load(big, null, 0), 'world-size') === '8,192', 'the 8,192-rank page');
  return 'plan.png';
}

function searchCase() {
  const spec = 'examples/specs/gpt2-mini_cpu8_3d.yaml';
  const page = path.join(work, 'search.html');
  runAccel(['plan', spec, '--search', '--top', '8', '--format', 'html', '-o', page]);
  const table = runAccel(['plan', spec, '--search', '--top', '1']).split('\n');
  const winner = table[2].trim().split(/\s+/)[1];  // "1  1x2x2x2 ..." after the title and header
  const dom = load(page, path.join(work, 'search.png'), 1700);
  check(textOf(dom, 'search-winner') === winner.replace(/x/g, '×'),
        'search winner ' + winner + ' shown as ' + textOf(dom, 'search-winner'));
  check((dom.match(/<tr class="winner"/g) || []).length === 1, 'the winner row is not marked');
  check(/exposed|compute|bubble|tie/.test(dom), 'no loss reasons in the ranking');
  return 'search.png';
}

function reportCase() {
  // The run directory's path holds "</script>" (directory "x<" holding "script>"): embedded in
  // the page's data, it must not end the data block.
  fs.rmSync(path.join(work, 'x<'), {recursive: true, force: true});
  const run = path.join(work, 'x<', 'script>', 'run');
  fs.mkdirSync(run, {recursive: true});
  for (const f of ['metrics.jsonl', 'summary.json']) {
    fs.copyFileSync(path.join(root, 'tests/testdata/report/run', f), path.join(run, f));
  }
  const spec = 'examples/specs/gpt2-mini_cpu8_3d.yaml';
  runAccel(['plan', spec, '--format', 'binpb', '-o', path.join(run, 'plan.binpb')]);
  const out = path.join(work, 'report');
  fs.mkdirSync(out, {recursive: true});
  runAccel(['report', run, '-o', path.join(out, 'report.html')]);
  check(fs.existsSync(path.join(out, 'plan.html')), 'no plan.html next to the report');
  const plan = JSON.parse(runAccel(['plan', spec, '--format', 'json']));
  const dom = load(path.join(out, 'report.html'), path.join(work, 'report.png'), 2400);
  check(/^60 \(1–60\)$/.test(textOf(dom, 'steps-count') || ''), 'steps shown as ' + textOf(dom, 'steps-count'));
  const lines = fs.readFileSync(path.join(run, 'metrics.jsonl'), 'utf8').trim().split('\n');
  const lastLoss = JSON.parse(lines[lines.length - 1]).loss.toFixed(4);
  check(textOf(dom, 'final-loss') === lastLoss, 'final loss ' + lastLoss + ' shown as ' + textOf(dom, 'final-loss'));
  check(textOf(dom, 'world-size') === String(plan.topology.world_size), 'world size of the plan missing');
  check(dom.includes('x&lt;/script&gt;/run<'), 'the run directory "…x</script>/run" is not shown as text');
  check(textOf(dom, 'plan-href') === 'plan.html' && dom.includes('href="plan.html"'), 'no link to plan.html');
  check((dom.match(/class="num rank-ratio"/g) || []).length === 8, 'not 8 ranks in the memory table');
  check((dom.match(/<canvas/g) || []).length >= 5, 'fewer than 5 charts drawn');
  // The plan page written next to the report loads too.
  checkPlanPage(load(path.join(out, 'plan.html'), null, 0), plan);
  return 'report.png';
}

fs.mkdirSync(work, {recursive: true});
const started = Date.now();
const cases = {plan: planCase, search: searchCase, report: reportCase};
if (!cases[testCase]) { console.error('unknown case ' + testCase); process.exit(2); }
const screenshot = cases[testCase]();
if (process.env.ACCEL_UPDATE_SCREENSHOTS === '1' && failures.length === 0) {
  fs.copyFileSync(path.join(work, screenshot), path.join(root, 'docs/img', 'html-' + screenshot));
}
console.log(testCase + ': ' + (failures.length ? 'FAILED' : 'passed') + ' in ' +
            ((Date.now() - started) / 1000).toFixed(1) + ' s; screenshot ' + path.join(work, screenshot));
for (const f of failures) console.error('FAIL: ' + f);
process.exit(failures.length ? 1 : 0);
