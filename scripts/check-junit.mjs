#!/usr/bin/env node
// check-junit.mjs COUNTS.json REPORT.xml...
// Reads CTest JUnit reports and fails (exit 1) on any failed, skipped or not-run test, and on a
// label (the part of a test's name before the first '.') with fewer tests than COUNTS.json
// commits to for that report ({"build/junit.xml": {"unit": 12, ...}, ...}), so a suite that
// silently stops running tests cannot pass. Prints one line per report and a closing
// "N passed, N failed" line.
import { readFileSync, existsSync } from 'node:fs';

const [countsFile, ...reports] = process.argv.slice(2);
if (!countsFile || reports.length === 0) {
  console.error('usage: check-junit.mjs COUNTS.json REPORT.xml...');
  process.exit(2);
}
const expected = JSON.parse(readFileSync(countsFile, 'utf8'));
let passed = 0, failed = 0;
const problems = [];
for (const report of reports) {
  if (!existsSync(report)) { problems.push(`${report}: missing (the suite did not run)`); continue; }
  const xml = readFileSync(report, 'utf8');
  const perLabel = {};
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  let m;
  while ((m = re.exec(xml)) !== null) {
    const attrs = m[1], body = m[3] || '';
    const name = (/\bname="([^"]*)"/.exec(attrs) || [])[1] || '?';
    const status = (/\bstatus="([^"]*)"/.exec(attrs) || [])[1] || 'run';
    const label = name.split('.')[0];
    let bad = null;
    if (/<failure\b/.test(body) || /<error\b/.test(body)) bad = 'failed';
    else if (/<skipped\b/.test(body) || status === 'disabled' || status === 'notrun') bad = 'skipped or not run';
    else if (status !== 'run') bad = `status ${status}`;
    if (bad) { failed++; problems.push(`${report}: ${name}: ${bad}`); }
    else { passed++; perLabel[label] = (perLabel[label] || 0) + 1; }
  }
  const want = expected[report] || {};
  for (const [label, n] of Object.entries(want)) {
    const got = perLabel[label] || 0;
    if (got < n) problems.push(`${report}: label ${label} passed ${got} tests; at least ${n} expected`);
  }
  console.log(`${report}: ` + Object.entries(perLabel).map(([l, n]) => `${l} ${n}`).join(', '));
}
for (const p of problems) console.error('FAIL ' + p);
console.log(`${passed} passed, ${failed} failed`);
process.exit(problems.length ? 1 : 0);
