#!/usr/bin/env node
// Checks the structure rules of issue 9 ("Structure") in figures, over src/ and include/:
//   file-long      a file in src/ over 800 lines (a table file says "Long on purpose:" in a comment)
//   function-long  a function over 80 lines (an option table or a state machine says
//                  "Long on purpose:" in the comment just above it)
//   include        an include between modules outside the allowed edges below, or one between
//                  the csv and json formats, or from src/lib into src/cli
//   os-call        a call of an OS function (POSIX file, time, process, signal, socket calls)
//                  in src/lib outside src/lib/os/
//   getenv         getenv in src/lib outside the credentials providers (src/lib/creds/)
//   backend-header an include of s3l/sys/store.h (the storage vtable) outside src/lib/store/ and
//                  src/lib/s3/: everyone else uses the opaque store of s3l/store.h
//   enomem         a bare `return S3L_ENOMEM;` in a function of src/lib that takes a
//                  struct s3l_error *: it must set the message (s3l_error_set(err, S3L_ENOMEM,
//                  "out of memory <doing what>"))
//   digest         a libcrypto digest call (EVP_Digest*, EVP_MD_CTX_*, EVP_sha256/md5, SHA*_*,
//                  MD5_*, HMAC) in src/lib outside src/lib/util/ (util/digest.c wraps them)
//   grow           a grow-by-doubling next to an s3l_realloc (`? cap * 2 :`, `*= 2`, `cap * 2`,
//                  within the 3 lines before it) in src/lib outside src/lib/util/: use
//                  s3l__array_reserve.
//                  A doubling that is not an array's says so on its line: /* not an array: why */
// Every violation found is printed. What is known and not fixed yet is listed, one per line, in
// scripts/structure-debt.txt: a violation not in that list fails the check (no new debt), and so
// does a listed one that is gone (take it off the list, so the list only shrinks).
// Usage: node scripts/check-structure.mjs [--print-debt]   (--print-debt: print the found
// violations in the debt list's format, to review against the list; it changes no file.)
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const MAX_FILE_LINES = 800;
const MAX_FUNCTION_LINES = 80;

// The modules' allowed direct includes (issue 9's whiteboard). util (with the public error,
// alloc, row and counts headers: the vocabulary every module shares) is the floor: everyone may
// use it.
// os is allowed where a module touches files, time or processes.
const ALLOWED = {
    util: [],
    os: [],
    thrift: [],
    codec: [],
    schema: [],
    parquet: ['thrift', 'codec', 'schema'],
    creds: ['os'],
    s3: ['creds', 'os'],
    store: ['s3', 'os'],
    commit: ['store', 'parquet', 'schema', 'os'],
    input: ['schema', 'os'],
    config: ['schema', 'os'],
    sink: ['store', 'codec', 'os'],
    source: ['input', 'store'],
    pipeline: ['input', 'source', 'commit', 'schema', 'codec', 'os'],
    // The umbrella header s3l/s3l.h gathers the public API for an embedder.
    api: ['commit', 'input', 'parquet', 'pipeline', 's3', 'schema', 'store', 'creds', 'config', 'sink', 'source'],
};
// Public headers by the module that implements them.
const PUBLIC = {
    'alloc.h': 'util', 'error.h': 'util', 'row.h': 'util', 'counts.h': 'util',
    'destination.h': 'commit', 'input.h': 'input', 'parquet.h': 'parquet',
    'pq_footer.h': 'parquet', 'pipeline.h': 'pipeline', 's3.h': 's3', 'schema.h': 'schema',
    'store.h': 'store', 'sys/store.h': 'store', 's3l.h': 'api',
    'creds.h': 'creds', 'config.h': 'config', 'ndjson_sink.h': 'sink',
    'object_source.h': 'source', 'codec.h': 'codec',
};
// The folders of src/lib and the module each belongs to (the formats live under input).
const FOLDER = { json: 'input', csv: 'input', input: 'input', ndjson: 'sink', sink: 'sink', source: 'source' };

const OS_CALLS = [
    'open', 'openat', 'close', 'read', 'write', 'pread', 'pwrite', 'lseek', 'fstat', 'stat',
    'lstat', 'fstatat', 'fsync', 'fdatasync', 'ftruncate', 'truncate', 'rename', 'renameat',
    'unlink', 'unlinkat', 'mkdir', 'mkdirat', 'rmdir', 'opendir', 'fdopendir', 'readdir',
    'closedir', 'fopen', 'fdopen', 'fclose', 'poll', 'select', 'clock_gettime', 'gettimeofday',
    'time', 'nanosleep', 'usleep', 'sleep', 'getcwd', 'realpath', 'getpid', 'kill', 'raise',
    'sigaction', 'signal', 'fork', 'execv', 'execvp', 'execve', 'waitpid', 'pipe', 'dup', 'dup2',
    'fcntl', 'ioctl', 'mmap', 'munmap', 'access', 'faccessat', 'chmod', 'link', 'symlink',
    'readlink', 'isatty', 'gethostname', 'getaddrinfo', 'socket', 'connect', 'uname', 'sysconf',
    'flock', 'inotify_init1', 'inotify_add_watch', 'statvfs', 'fstatvfs',
];
const DIGEST_RE = /(?<![\w.>])(EVP_Digest\w*|EVP_MD_CTX_\w+|EVP_(?:sha\d+|md5)|SHA\d*_\w+|SHA(?:1|224|256|384|512)|MD5(?:_\w+)?|HMAC\w*)\s*\(/g;
// A doubling of a capacity: `? x * 2 :` (or `? 2 * x :`), `x *= 2` in a loop, or a name holding
// "cap" times 2 (`l->cap * 2`, `S3L_MAX(u->cap_parts * 2, n + 16)`).
const DOUBLING_RE = /\?[^?:;]*(?:\*\s*2\b|\b2\s*\*)[^?:;]*:|\*=\s*2\b|\w*cap\w*\s*\*\s*2\b|\b2\s*\*\s*[\w>.-]*cap\w*/;
const OS_RE = new RegExp(`(?<![\\w.>])(${OS_CALLS.join('|')})\\s*\\(`, 'g');

function walk(dir) {
    const out = [];
    if (!fs.existsSync(dir)) return out;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) out.push(...walk(p));
        else if (/\.[ch]$/.test(e.name)) out.push(p);
    }
    return out.sort();
}

// Blanks comments, string and character literals (keeping line breaks), so braces, parentheses
// and names inside them are not read as code.
function strip(src) {
    let out = '';
    for (let i = 0; i < src.length;) {
        const c = src[i], d = src[i + 1];
        if (c === '/' && d === '*') {
            const j = src.indexOf('*/', i + 2), end = j < 0 ? src.length : j + 2;
            out += src.slice(i, end).replace(/[^\n]/g, ' ');
            i = end;
        } else if (c === '/' && d === '/') {
            let j = src.indexOf('\n', i);
            if (j < 0) j = src.length;
            out += ' '.repeat(j - i);
            i = j;
        } else if (c === '"' || c === '\'') {
            let j = i + 1;
            while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
            out += c + ' '.repeat(Math.max(0, j - i - 1)) + (j < src.length ? c : '');
            i = j + 1;
        } else {
            out += c;
            i++;
        }
    }
    return out;
}

// The functions defined in a file: [{name, start, end}] with 1-based line numbers of the line
// that names the function and of its closing brace.
function functions(code) {
    const lines = code.split('\n');
    // Preprocessor lines take no part in the brace count.
    const text = lines.map((l) => (/^\s*#/.test(l) ? '' : l)).join('\n');
    const found = [];
    let depth = 0, head = '', headStart = -1, open = null, line = 1;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '\n') line++;
        if (depth === 0) {
            if (c === '{') {
                const h = head.trim();
                const m = /([A-Za-z_]\w*)\s*\(([^;{}]*)\)\s*$/.exec(h);
                const beforeParen = m ? h.slice(0, m.index) : '';
                if (m && !h.includes('=') && !/\b(struct|union|enum)\s*$/.test(beforeParen)) {
                    const nameLine = headStart + (h.slice(0, m.index).match(/\n/g) || []).length;
                    open = { name: m[1], start: nameLine, params: m[2], body: line };
                }
                depth = 1;
                head = '';
                continue;
            }
            if (c === ';' || c === '}') {
                head = '';
                headStart = -1;
                continue;
            }
            if (headStart < 0 && !/\s/.test(c)) headStart = line;
            head += c;
        } else if (c === '{') {
            depth++;
        } else if (c === '}') {
            depth--;
            if (depth === 0) {
                if (open) found.push({ ...open, end: line });
                open = null;
                head = '';
                headStart = -1;
            }
        }
    }
    return found;
}

// The comment just above a line (1-based), as text.
function commentAbove(lines, n) {
    let i = n - 2, text = '';
    // Skip the return type's line(s) of a definition written over several lines.
    while (i >= 0 && lines[i].trim() !== '' && !/\*\/\s*$|^\s*\/\//.test(lines[i])
           && !/[;}]\s*$/.test(lines[i]) && n - 2 - i < 3) i--;
    while (i >= 0 && /^\s*(\/\*|\*|\/\/)|\*\/\s*$/.test(lines[i])) text = lines[i--] + '\n' + text;
    return text;
}

function moduleOfFile(rel) {
    const p = rel.split('/');
    if (p[0] === 'src' && p[1] === 'cli') return 'cli';
    if (p[0] === 'src' && p[1] === 'lib') return FOLDER[p[2]] || p[2];
    if (p[0] === 'include' && p[1] === 's3l') return PUBLIC[p.slice(2).join('/')] || 'api';
    return null;
}

function moduleOfInclude(inc, fromRel) {
    if (inc.startsWith('s3l/')) return { mod: PUBLIC[inc.slice(4)] || 'api', target: `include/${inc}` };
    const local = path.join(path.dirname(fromRel), inc);
    if (fs.existsSync(path.join(root, local))) return { mod: moduleOfFile(local), target: local };
    const lib = path.join('src/lib', inc);
    if (fs.existsSync(path.join(root, lib))) return { mod: moduleOfFile(lib), target: lib };
    return { mod: null, target: inc };
}

const format = (rel) => (/\/(csv)\//.test(rel) || /\/csv[^/]*\.[ch]$/.test(rel) ? 'csv'
    : /\/json\//.test(rel) || /\/json[^/]*\.[ch]$/.test(rel) ? 'json' : null);

const violations = [];
const figures = { files: 0, functions: 0, longestFile: ['', 0], longestFunction: ['', 0] };
const edges = new Map();

const files = [...walk(path.join(root, 'src')), ...walk(path.join(root, 'include'))];
for (const abs of files) {
    const rel = path.relative(root, abs);
    const src = fs.readFileSync(abs, 'utf8');
    const lines = src.split('\n');
    const code = strip(src);
    const inSrc = rel.startsWith('src/');
    const inLib = rel.startsWith('src/lib/');
    const inOs = rel.startsWith('src/lib/os/');
    const mod = moduleOfFile(rel);
    figures.files++;

    const n = lines.length - (lines[lines.length - 1] === '' ? 1 : 0);
    if (n > figures.longestFile[1]) figures.longestFile = [rel, n];
    if (inSrc && n > MAX_FILE_LINES && !/Long on purpose:/i.test(src))
        violations.push(`file-long ${rel}`);

    for (const f of functions(code)) {
        const len = f.end - f.start + 1;
        figures.functions++;
        if (len > figures.longestFunction[1]) figures.longestFunction = [`${rel}:${f.name}`, len];
        if (len > MAX_FUNCTION_LINES && !/Long on purpose:/i.test(commentAbove(lines, f.start)))
            violations.push(`function-long ${rel}:${f.name}`);
    }

    for (const m of src.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
        // The backend header (the vtable and the bases backends embed) is the backends' own:
        // everyone else sees the opaque store of s3l/store.h (issue 9: sys/ is not pulled in).
        if (m[1] === 's3l/sys/store.h' && !/^src\/lib\/(store|s3)\//.test(rel))
            violations.push(`backend-header ${rel}`);
        const { mod: to, target } = moduleOfInclude(m[1], rel);
        if (to === null || to === mod) {
            // Inside one module: the csv and json formats stay apart.
            const a = format(rel), b = format(target);
            if (to === mod && a && b && a !== b) violations.push(`include ${rel} -> ${m[1]} (${a} -> ${b})`);
            continue;
        }
        if (to === 'util') continue;
        if (inLib && to === 'cli') { violations.push(`include ${rel} -> ${m[1]} (lib -> cli)`); continue; }
        if (mod === 'cli') {
            if (!target.startsWith('include/') && !target.startsWith('src/cli/'))
                violations.push(`include ${rel} -> ${m[1]} (cli -> ${to}: the cli uses the public API only)`);
            continue;
        }
        const key = `${mod} -> ${to}`;
        edges.set(key, (edges.get(key) || 0) + 1);
        if (!(ALLOWED[mod] || []).includes(to)) violations.push(`include ${rel} -> ${m[1]} (${key})`);
    }

    if (inLib && !inOs) {
        const seen = new Set();
        for (const m of code.matchAll(OS_RE)) seen.add(m[1]);
        for (const c of [...seen].sort()) violations.push(`os-call ${rel} ${c}`);
    }
    if (inLib && !rel.startsWith('src/lib/creds/') && /(?<![\w.>])(secure_)?getenv\s*\(/.test(code))
        violations.push(`getenv ${rel}`);

    if (inLib) {
        // Bare ENOMEM returns in functions that have an error to fill (the body's lines only).
        const codeLines = code.split('\n');
        for (const f of functions(code)) {
            if (!/\bstruct\s+s3l_error\s*\*/.test(f.params)) continue;
            for (let i = f.body; i <= f.end; i++)
                if (/\breturn\s+S3L_ENOMEM\s*;/.test(codeLines[i - 1]))
                    violations.push(`enomem ${rel}:${i} (${f.name})`);
        }
        if (!rel.startsWith('src/lib/util/')) {
            const seen = new Set();
            for (const m of code.matchAll(DIGEST_RE)) seen.add(m[1]);
            for (const c of [...seen].sort()) violations.push(`digest ${rel} ${c}`);
            for (let i = 0; i < codeLines.length; i++) {
                if (!DOUBLING_RE.test(codeLines[i]) || /not an array:/.test(lines[i])) continue;
                if (codeLines.slice(i, i + 4).some((l) => /\bs3l_realloc\s*\(/.test(l)))
                    violations.push(`grow ${rel}:${i + 1}`);
            }
        }
    }
}

// The module graph must have no circle (the allowed edges have none; debt may).
const graph = {};
for (const k of edges.keys()) {
    const [a, b] = k.split(' -> ');
    (graph[a] ||= new Set()).add(b);
}
const state = {};
const visit = (m, trail) => {
    if (state[m] === 1) { violations.push(`circle ${[...trail.slice(trail.indexOf(m)), m].join(' -> ')}`); return; }
    if (state[m] === 2) return;
    state[m] = 1;
    for (const n of graph[m] || []) visit(n, [...trail, m]);
    state[m] = 2;
};
for (const m of Object.keys(graph).sort()) visit(m, []);

const found = [...new Set(violations)].sort();
if (process.argv.includes('--print-debt')) {
    process.stdout.write(found.join('\n') + '\n');
    process.exit(0);
}
const debtFile = path.join(root, 'scripts/structure-debt.txt');
const debt = fs.existsSync(debtFile)
    ? fs.readFileSync(debtFile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    : [];
const debtSet = new Set(debt);
const fresh = found.filter((v) => !debtSet.has(v));
const gone = debt.filter((v) => !found.includes(v));

const count = (kind) => found.filter((v) => v.startsWith(kind + ' ')).length;
console.log(`check-structure: ${figures.files} files, ${figures.functions} functions; ` +
    `longest file ${figures.longestFile[0]} (${figures.longestFile[1]} lines), ` +
    `longest function ${figures.longestFunction[0]} (${figures.longestFunction[1]} lines)`);
console.log(`check-structure: files over ${MAX_FILE_LINES} lines ${count('file-long')}, functions over ` +
    `${MAX_FUNCTION_LINES} lines ${count('function-long')}, includes outside the allowed edges ` +
    `${count('include')}, module circles ${count('circle')}, OS calls outside os/ ${count('os-call')}, ` +
    `getenv in src/lib ${count('getenv')}, s3l/sys/store.h outside the backends ` +
    `${count('backend-header')}, bare ENOMEM returns with an err ${count('enomem')}, ` +
    `digest calls outside util ${count('digest')}, doubling arrays outside util ${count('grow')}; ` +
    `known debt ${debt.length}`);
for (const v of fresh) console.log(`new: ${v}`);
for (const v of gone) console.log(`fixed, take it off scripts/structure-debt.txt: ${v}`);
if (fresh.length || gone.length) {
    console.log(`check-structure: FAILED (${fresh.length} new, ${gone.length} fixed but still listed)`);
    process.exit(1);
}
console.log('check-structure: ok (nothing new; what remains is in scripts/structure-debt.txt)');
