// except-all.mjs: exact table equality through DuckDB. Given SQL for table A and table B, A and
// B are equal as multisets when A EXCEPT ALL B and B EXCEPT ALL A are both empty; duplicates
// count, row order does not. Used by the integration tests on real datasets: A is usually the
// source (read_json_auto, read_csv) and B our Parquet (read_parquet).
//
//   import { exceptAll } from '../oracle/except-all.mjs';
//   const r = await exceptAll(sqlA, sqlB, { duck, limit: 20, setup: ['CREATE VIEW ...'] });
//   r.equal        true when both differences are empty
//   r.count_a, r.count_b         row counts of A and B
//   r.only_in_a, r.only_in_b     up to `limit` differing rows each (duck.mjs canon values)
//   r.n_only_in_a, r.n_only_in_b how many rows differ in all
// A and B must have the same number of columns with comparable types (EXCEPT ALL matches by
// position); cast in the SQL where the types differ.
// CLI: node tests/oracle/except-all.mjs --a SQL --b SQL [--setup SQL]... [--limit N]
//      prints the result as JSON; exit 0 when equal, 1 when not, 2 on bad use or SQL errors.
import { pathToFileURL } from 'node:url';
import { openDuck } from './duck.mjs';

export async function exceptAll(sqlA, sqlB, { duck, limit = 20, setup = [] } = {}) {
  const own = !duck;
  if (own) duck = await openDuck({ threads: 2 });
  try {
    for (const s of setup) await duck.run(s);
    const a = `(${sqlA})`, b = `(${sqlB})`;
    const [ca] = await duck.all(`SELECT count(*)::BIGINT AS n FROM ${a} AS a`, { canon: true });
    const [cb] = await duck.all(`SELECT count(*)::BIGINT AS n FROM ${b} AS b`, { canon: true });
    const diff = async (x, y) => {
      const q = `SELECT * FROM (${x} EXCEPT ALL ${y})`;
      const [n] = await duck.all(`SELECT count(*)::BIGINT AS n FROM (${q})`, { canon: true });
      const rows = Number(n.n) ? await duck.all(`${q} LIMIT ${Number(limit)}`, { canon: true }) : [];
      return [Number(n.n), rows];
    };
    const [na, ra] = await diff(`SELECT * FROM ${a} AS a`, `SELECT * FROM ${b} AS b`);
    const [nb, rb] = await diff(`SELECT * FROM ${b} AS b`, `SELECT * FROM ${a} AS a`);
    return {
      equal: na === 0 && nb === 0,
      count_a: Number(ca.n), count_b: Number(cb.n),
      n_only_in_a: na, n_only_in_b: nb, only_in_a: ra, only_in_b: rb,
    };
  } finally {
    if (own) duck.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  let a, b, limit = 20;
  const setup = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--a') a = args[++i];
    else if (args[i] === '--b') b = args[++i];
    else if (args[i] === '--setup') setup.push(args[++i]);
    else if (args[i] === '--limit') limit = Number(args[++i]);
    else { a = undefined; break; }
  }
  if (!a || !b) {
    console.error('usage: except-all.mjs --a SQL --b SQL [--setup SQL]... [--limit N]');
    process.exit(2);
  }
  try {
    const r = await exceptAll(a, b, { limit, setup });
    process.stdout.write(JSON.stringify(r, null, 1) + '\n');
    process.exit(r.equal ? 0 : 1);
  } catch (e) {
    console.error(`except-all: ${e.message}`);
    process.exit(2);
  }
}
