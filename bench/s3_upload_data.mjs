// Writes the bench's input: Parquet files totalling about TOTAL_MB MiB (default 1024) in DIR,
// written by DuckDB (an independent writer) from pseudo-random rows, so that they neither
// compress away nor depend on s3land's own writer.  node s3_upload_data.mjs DIR [TOTAL_MB]
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const totalMb = Number(process.argv[3] || 1024);
fs.mkdirSync(dir, { recursive: true });
const inst = await DuckDBInstance.create(':memory:', {
  autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', threads: '2',
});
const con = await inst.connect();
const files = 8;
const rows = Math.round((totalMb / files) * 1024 * 1024 / 44); // ~44 bytes a row, uncompressed
for (let i = 0; i < files; i++) {
  const f = path.join(dir, `part-${String(i).padStart(5, '0')}.parquet`);
  await con.run(`COPY (SELECT (hash(i + ${i * rows}) >> 1)::BIGINT AS a, (hash(i * 7 + ${i}) >> 1)::BIGINT
    AS b, hash(i * 13)::DOUBLE AS c, md5((i + ${i})::VARCHAR)[1:16] AS d
    FROM range(${rows}) t(i)) TO '${f}' (FORMAT parquet, COMPRESSION uncompressed)`);
}
let total = 0;
for (const f of fs.readdirSync(dir)) total += fs.statSync(path.join(dir, f)).size;
console.log(`${files} files, ${(total / 1048576).toFixed(0)} MiB in ${dir}`);
