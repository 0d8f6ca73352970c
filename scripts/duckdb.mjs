#!/usr/bin/env node
// scripts/duckdb.mjs 'SQL' ['SQL' ...]: runs SQL in DuckDB and prints each statement's result as a
// table, for the queries that README.md and docs/cli.md show (Debian 12 has no duckdb command;
// this is the DuckDB that `npm ci` installed from package.json, @duckdb/node-api). Paths in the
// SQL are relative to the working directory: run it from the repository root, as the docs do.
// Statements run in order on one in-memory database, so a `SET VARIABLE` is seen by the next
// one. Exits 1, with DuckDB's message, when a statement fails; 2 on bad usage.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args.length === 0 || args[0] === '-h' || args[0] === '--help') {
    console.error("usage: scripts/duckdb.mjs 'SQL' ['SQL' ...]   (run from the repository root)");
    process.exit(args.length === 0 ? 2 : 0);
}
// The package is found from the repository (node_modules beside scripts/), wherever we are run.
const require = createRequire(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'x.js'));
let DuckDBInstance;
try {
    ({ DuckDBInstance } = require('@duckdb/node-api'));
} catch (e) {
    console.error(`scripts/duckdb.mjs: @duckdb/node-api is not installed (run npm ci, or scripts/demo.sh): ${e.message}`);
    process.exit(1);
}

// Prints rows as an aligned text table: a header, a rule, one line per row.
function printTable(columns, rows) {
    const cells = rows.map((r) => columns.map((c) => (r[c] === null ? 'NULL' : String(r[c]))));
    const width = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
    const line = (v) => v.map((s, i) => s.padEnd(width[i])).join('  ').trimEnd();
    console.log(line(columns));
    console.log(line(width.map((w) => '-'.repeat(w))));
    for (const r of cells) console.log(line(r));
    console.log(`(${rows.length} ${rows.length === 1 ? 'row' : 'rows'})`);
}

const con = await (await DuckDBInstance.create(':memory:')).connect();
for (const sql of args) {
    try {
        const r = await con.runAndReadAll(sql);
        const columns = r.columnNames();
        if (columns.length && !/^\s*(SET|CREATE|INSTALL|LOAD|PRAGMA)\b/i.test(sql))
            printTable(columns, r.getRowObjectsJson());
    } catch (e) {
        console.error(`scripts/duckdb.mjs: ${e.message}`);
        process.exit(1);
    }
}
