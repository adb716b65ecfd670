// bench.ts: how fast gameserver-api is, against a bare node:http server measured in the same run (`npm run bench`).
// The load comes from wrk (Debian's and Ubuntu's `wrk` package), a client faster than both servers: one thread, 32
// keep-alive connections, bare and daemon alternated route by route for several rounds, so that drift (CPU
// frequency, other load) hits both, on a host's 100 MiB latest.log that the game writes to as a busy server does. Then
// a 2000-line tail and presence on a 1 GiB log, live events, and memory.
// `npm run bench -- --profile` profiles the daemon under that load instead, `npm run bench -- --bridge` measures the
// chat bridge alone, `npm run bench -- --backlog` a fresh daemon on a 1 GiB log and 900 MiB appended unread,
// `npm run bench -- --flood` the routes while 2 GB of chat is written in 40 s, and `npm run bench -- --still` the routes
// on a log nobody writes while they are asked (docs/performance.md); `--idle`, with the default run or `--still`, leaves
// both servers idle for 90 s after their first answers, as a daemon on a host mostly is, before the routes are loaded.
// It reports held or missed for each target and never fails on a missed one. Exit: 0 done, 1 error, 130 interrupted.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Agent, createServer, get, request } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHost, freePort, unitNodeArgs, type Host } from './demo/host';

// ---- Parameters ----

const CONNECTIONS = 32;
const ROUNDS = 3;
// an answer this large is measured against the bare server sending as many bytes too
const LARGE_ANSWER_BYTES = 4 * 1024;
const IDLE_BEFORE_LOAD_MS = 90_000; // --idle: V8 collects an idle process to give memory back within a minute
const WRK_SECONDS = 3;
const WRK_WARMUP_SECONDS = 1;
const PROFILE_SECONDS = 6;
const GAME_THREADS = 64; // a real JVM has 50 and more; /proc/PID/stat sums them all
const MIB = 1024 * 1024;
// A host's latest.log, and how it grows while the routes are measured: a server of some 50 players chatting writes a
// line every 50 ms. Each write makes the next GET /api/players/online read what was appended, which a quiet log never
// does: measured on a still 1 MiB log, that route looked 20 % faster than on a host.
const HOST_LOG_BYTES = 100 * MIB;
const LIVE_LINE_MS = 50;
const BIG_LOG_BYTES = 1024 * MIB;
const APPEND_BYTES = MIB;
const FILLER_CHUNK_BYTES = 4 * MIB;
const TAIL_LIKE_BYTES = MIB / 2; // each log ends with lines of the same players: the two tails read alike lines
const TAIL_REQUESTS = 40;
const TAIL_SPACING_MS = 60; // more than the 50 ms an answer is shared: every tail is read from the file
const PRESENCE_ROUNDS = 8;
const EVENT_SAMPLES = 50;
const EVENT_SPACING_MS = 150;
const OUTPUT_SAMPLES = 20;
const OUTPUT_QUIET_MS = 300; // the daemon's quiet window: what is beyond it is the figure
const IDLE_STREAMS = 64;
const IDLE_STREAMS_SECONDS = 60;
const IDLE_STREAM_SPACING_MS = 100;
const IDLE_CPU_NOISE_MS = 60; // 0.1 % of one core over the minute: below what top or systemd-cgtop shows
const BRIDGE_PLAYERS = 50;
const BRIDGE_LATENCY_SAMPLES = 100;
const BRIDGE_LATENCY_SPACING_MS = 50;
const BRIDGE_SECONDS = 60;
const BRIDGE_LINE_MS = 50; // 50 players chatting: a line every 50 ms
const SAY_SAMPLES = 100;
const READY_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 60_000; // the first presence scan of a 1 GiB log may take seconds; it is reported
const STOP_GRACE_MS = 7_000;
const CLOCK_TICK_MS = 10; // /proc counts CPU time in clock ticks of 1/100 s

const TARGETS: ReadonlyArray<[string, number]> = [
  ['/api', 0.85], ['/api/players/whitelist', 0.7], ['/api/backups', 0.7], ['/api/properties', 0.7],
  ['/api/status', 0.6], ['/api/players/online', 0.6], ['/api/logs/latest', 0.5], ['/api/logs/snapshot', 0.5], ['/metrics', 0.5],
];

// ---- Realistic log lines ----

/** Deterministic PRNG (mulberry32), so every run writes the same log. */
function makeRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAME_STEMS = ['Alex', 'Steve', 'Bramble_Crest', 'xXCreeperXx', 'Notch_fan', 'Luna', 'Oak_Ranger', 'Pixel', 'Redstoner', 'Mira_K'];
const CHAT_TEXTS = ['anyone got spare iron?', 'brb dinner', 'gg', 'where is the nether portal again', 'lol', 'nice build!', 'meet at 120 64 -340', 'ok'];
// What a busy server writes besides its players: chunk loading and saving, a plugin's routine lines
const NOISE_LINES = [
  '[Server thread/INFO]: [ChunkTaskScheduler] Loaded 4 chunks in region r.2.-1.mca (18ms)',
  '[Worker-Main-7/INFO]: Preparing spawn area: 83%',
  '[Server thread/INFO]: [Dynmap] Rendered 512 tiles of world:flat in 2.35 s',
  '[Server thread/INFO]: Saving chunks for level \'ServerLevel[world]\'/minecraft:overworld',
];
const SERVER_LINES = [
  '[Server thread/WARN]: Can\'t keep up! Is the server overloaded? Running 2034ms or 40 ticks behind',
  '[Server thread/INFO]: Saving the game (this may take a moment!)',
  '[Server thread/INFO]: Saved the game',
];

/** 40 names of alike lengths; two pools with different offsets log alike lines. */
function namePool(offset: number): string[] {
  return NAME_STEMS.flatMap((stem) => [0, 1, 2, 3].map((i) => `${stem}_${offset + i}`));
}

interface LogWriter {
  online: Set<string>; // who is online after everything written so far, to check the daemon's answer
  lines(bytes: number, pool: readonly string[], settle: boolean): Buffer;
}

/**
 * Vanilla-style lines: logins with addresses, joins, chat, leaves, server noise. `busy` (the default) has a join or a
 * leave in one line of ten; `chatter` is a log of chat and chunk loading, with a join or a leave in one line of 500.
 */
function createLogWriter(mix: 'busy' | 'chatter' = 'busy'): LogWriter {
  const [joinBelow, leaveBelow, chatBelow] = mix === 'busy' ? [0.06, 0.11, 0.9] : [0.001, 0.002, 0.6];
  const online = new Set<string>();
  const random = makeRandom(20_240_601);
  let seconds = 8 * 3600;
  let entityId = 100;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  return {
    online,
    /** About `bytes` bytes of whole lines; with `settle`, every pool player still online leaves at the end. */
    lines(bytes, pool, settle) {
      const out: string[] = [];
      let size = 0;
      const emit = (message: string): void => {
        seconds = (seconds + (random() < 0.3 ? 1 : 0)) % 86_400;
        const stamp = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60].map((n) => String(n).padStart(2, '0')).join(':');
        const line = `[${stamp}] ${message}\n`;
        out.push(line);
        size += Buffer.byteLength(line);
      };
      const join = (name: string): void => {
        emit(`[Server thread/INFO]: ${name}[/203.0.113.${1 + Math.floor(random() * 250)}:${40_000 + Math.floor(random() * 20_000)}] logged in with entity id ${entityId++} at (1.5, 64.0, -3.5)`);
        emit(`[Server thread/INFO]: ${name} joined the game`);
        online.add(name);
      };
      const leave = (name: string): void => {
        emit(`[Server thread/INFO]: ${name} lost connection: Disconnected`);
        emit(`[Server thread/INFO]: ${name} left the game`);
        online.delete(name);
      };
      while (size < bytes) {
        const here = pool.filter((name) => online.has(name));
        const roll = random();
        if (roll < joinBelow && here.length < pool.length) join(pick(pool.filter((name) => !online.has(name))));
        else if (roll < leaveBelow && here.length > 0) leave(pick(here));
        else if (roll < chatBelow && here.length > 0) emit(`[Async Chat Thread - #3/INFO]: <${pick(here)}> ${pick(CHAT_TEXTS)}`);
        else emit(mix === 'busy' || roll < 0.9 ? pick(SERVER_LINES) : pick(NOISE_LINES));
      }
      if (settle) for (const name of pool) if (online.has(name)) leave(name);
      return Buffer.from(out.join(''), 'utf8');
    },
  };
}

// ---- Processes ----

interface Proc { child: ChildProcess; name: string; port: number; output: string[] }

// The yardstick: node:http answering a fixed small JSON with the daemon's five headers; /bytes/N answers a JSON body
// of N bytes, the ceiling for a route whose answer is that large (the kernel's copying grows with the bytes).
const BARE_SERVER_SOURCE = `
const http = require('node:http');
const answer = (body) => ({ body, headers: ['Access-Control-Allow-Origin', '*', 'Cache-Control', 'no-store',
  'X-Content-Type-Options', 'nosniff', 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(body.length)] });
const small = answer(Buffer.from(JSON.stringify({ ok: true, online: false })));
const sized = new Map();
const answerTo = (url) => {
  const n = /^\\/bytes\\/(\\d+)$/.exec(url);
  if (n === null) return small;
  if (!sized.has(n[1])) sized.set(n[1], answer(Buffer.from('{"ok":true,"pad":"' + 'x'.repeat(Math.max(0, Number(n[1]) - 20)) + '"}')));
  return sized.get(n[1]);
};
http.createServer((req, res) => {
  const { body, headers } = answerTo(req.url);
  res.writeHead(200, headers);
  res.end(body);
})
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('bare listening on 127.0.0.1:' + process.env.PORT));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
`;

const processes: Proc[] = [];

/** Spawns a server; resolves once its stdout shows `readyPrefix`. Both pipes are drained for the whole run. */
function startProcess(name: string, args: string[], env: Record<string, string>, port: number, readyPrefix: string): Promise<Proc> {
  const child = spawn(process.execPath, args, { env, cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { child, name, port, output: [] };
  processes.push(proc);
  const remember = (line: string): void => {
    proc.output.push(line);
    if (proc.output.length > 40) proc.output.shift();
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} printed no "${readyPrefix}" line within ${READY_TIMEOUT_MS} ms:\n${proc.output.join('\n')}`)), READY_TIMEOUT_MS);
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        remember(line);
        if (line.startsWith(readyPrefix)) {
          clearTimeout(timer);
          resolve(proc);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString('utf8').split('\n').filter(Boolean).forEach((line) => remember(`stderr: ${line}`)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${proc.output.join('\n')}`));
    });
  });
}

const isRunning = (proc: Proc): boolean => proc.child.exitCode === null && proc.child.signalCode === null;

/** SIGINT (the daemon then writes its CPU profile, when it has one), SIGKILL after the grace; resolves once gone. */
async function stopProcess(proc: Proc): Promise<void> {
  if (!isRunning(proc)) return;
  const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
  proc.child.kill('SIGINT');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) of a process in ms, from /proc/PID/stat. */
function readCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the name may hold spaces and `)`
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}

/** VmRSS, VmHWM and RssAnon (the heap and stacks, without the pages of the node binary first touched) in KiB. */
function readMemoryKiB(pid: number): { rssKiB: number; hwmKiB: number; anonKiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM'), anonKiB: field('RssAnon') };
}

const hasWrk = (): boolean => !spawnSync('wrk', ['--version']).error;

// ---- Load ----

interface Load { rps: number; p50Ms: number; p99Ms: number; requests: number; non2xx: number; cpuUsPerRequest: number }

/** wrk's duration such as `430.00us`, `1.20ms` or `2.01s`, in ms. */
function wrkMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (match === null) return NaN;
  return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[match[2]]!;
}

/** One wrk run (1 thread, 32 connections) against a server, with the server's CPU time per request. */
function loadWithWrk(proc: Proc, target: string, seconds = WRK_SECONDS): Load {
  const url = `http://127.0.0.1:${proc.port}${target}`;
  spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${WRK_WARMUP_SECONDS}s`, url], { encoding: 'utf8' }); // warm-up, not counted
  const cpuBeforeMs = readCpuMs(proc.child.pid!);
  const run = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', url], { encoding: 'utf8' });
  const cpuMs = readCpuMs(proc.child.pid!) - cpuBeforeMs;
  if (run.status !== 0) throw new Error(`wrk failed on ${url}: ${run.stderr}`);
  if (!isRunning(proc)) throw new Error(`${proc.name} died during GET ${target}:\n${proc.output.join('\n')}`);
  const out = run.stdout;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50Ms: wrkMs(/^\s+50%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    p99Ms: wrkMs(/^\s+99%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    requests,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    cpuUsPerRequest: (cpuMs * 1000) / requests,
  };
}

/**
 * Without wrk: a closed loop of Node's own client, on the same two cores. Its rate is the client's ceiling, not the
 * server's, so only the server's CPU time per request is worth printing.
 */
async function loadWithNode(proc: Proc, target: string, seconds = WRK_SECONDS): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const cpuBeforeMs = readCpuMs(proc.child.pid!);
  const endAt = performance.now() + seconds * 1000;
  let requests = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < endAt) {
      await new Promise<void>((resolve, reject) => {
        request({ host: '127.0.0.1', port: proc.port, path: target, agent }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
      });
      requests++;
    }
  }));
  agent.destroy();
  const cpuMs = readCpuMs(proc.child.pid!) - cpuBeforeMs;
  return { rps: NaN, p50Ms: NaN, p99Ms: NaN, requests, non2xx: 0, cpuUsPerRequest: (cpuMs * 1000) / requests };
}

interface Timed { status: number; body: Buffer; ms: number; retryAfter: boolean }

function timedGet(port: number, target: string, agent: Agent): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const req = request({ host: '127.0.0.1', port, path: target, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - startMs, retryAfter: res.headers['retry-after'] !== undefined }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${target} took over ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function timedPost(port: number, target: string, key: string, body: object): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const startMs = performance.now();
    const req = request({ host: '127.0.0.1', port, path: target, method: 'POST', headers: { 'X-API-Key': key, 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - startMs, retryAfter: res.headers['retry-after'] !== undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const median = (values: readonly number[]): number => percentile(values, 50);

// ---- Report ----

const fmt = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
const log = (line = ''): void => void process.stdout.write(`${line}\n`);

interface Target { name: string; goal: string; measured: string; held: boolean | null }

// ---- The benchmark ----

interface Setup { host: Host; daemon: Proc; bare: Proc; key: string; logPath: string; writer: LogWriter; poolA: string[] }

async function setUp(daemonArgs: string[] = []): Promise<Setup> {
  const serverJs = path.join(__dirname, 'server.js');
  if (!fs.existsSync(serverJs)) throw new Error(`${serverJs} does not exist: run \`npm run build\` first.`);
  const host = await createHost({ gameThreads: GAME_THREADS });
  hosts.push(host);
  const javaPid = await host.startGame();
  log(`game running: java pid ${javaPid}, ${fs.readdirSync(`/proc/${javaPid}/task`).length} threads`);
  const writer = createLogWriter();
  const poolA = namePool(1); // the players the presence check follows
  const logPath = path.join(host.serverDir, 'logs', 'latest.log');
  growLog(logPath, writer, HOST_LOG_BYTES, poolA);
  const key = randomBytes(32).toString('base64url');
  const barePort = await freePort();
  const bare = await startProcess('bare server', ['-e', BARE_SERVER_SOURCE], { PATH: process.env.PATH ?? '', PORT: String(barePort) }, barePort, 'bare listening on');
  const port = await freePort();
  const daemon = await startProcess('daemon', [...unitNodeArgs(), ...daemonArgs, 'dist/server.js'], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(port), API_KEY: key }), port, 'gameserver-api ');
  return { host, daemon, bare, key, logPath, writer, poolA };
}

/**
 * Appends to latest.log in place (the game keeps its file open) until it holds `bytes`: filler players who all leave
 * again, then the last TAIL_LIKE_BYTES of `pool`'s players, so that every log ends alike.
 */
function growLog(logPath: string, writer: LogWriter, bytes: number, pool: readonly string[]): void {
  const filler = namePool(5);
  const fd = fs.openSync(logPath, 'a');
  try {
    const chunk = writer.lines(FILLER_CHUNK_BYTES, filler, true);
    let size = fs.fstatSync(fd).size;
    while (bytes - TAIL_LIKE_BYTES - size > FILLER_CHUNK_BYTES * 2) size += fs.writeSync(fd, chunk);
    size += fs.writeSync(fd, writer.lines(Math.max(0, bytes - TAIL_LIKE_BYTES - size), filler, true));
    fs.writeSync(fd, writer.lines(Math.max(0, bytes - size), pool, false));
  } finally {
    fs.closeSync(fd);
  }
}

/** A process that appends a chat line to latest.log every LIVE_LINE_MS, as a busy server does, until it is stopped. */
function startLiveLog(logPath: string): Promise<Proc> {
  const source = `
const fs = require('node:fs');
const fd = fs.openSync(${JSON.stringify(logPath)}, 'a');
const texts = ${JSON.stringify(CHAT_TEXTS)};
let n = 0;
setInterval(() => {
  const now = new Date();
  const stamp = [now.getHours(), now.getMinutes(), now.getSeconds()].map((v) => String(v).padStart(2, '0')).join(':');
  fs.writeSync(fd, '[' + stamp + '] [Async Chat Thread - #3/INFO]: <Chatter_' + (n % 50) + '> ' + texts[n++ % texts.length] + '\\n');
}, ${LIVE_LINE_MS});
console.log('live log writing');
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
`;
  return startProcess('live log', ['-e', source], { PATH: process.env.PATH ?? '' }, 0, 'live log writing');
}

/** The GET routes the daemon lists, the event stream left out (it never ends). */
async function routesOf(port: number): Promise<string[]> {
  const index = await timedGet(port, '/api', new Agent());
  const endpoints = (JSON.parse(index.body.toString('utf8')) as { endpoints: Array<{ method: string; route: string }> }).endpoints;
  return endpoints.filter((e) => e.method === 'GET' && e.route !== '/api/events').map((e) => e.route);
}

async function bench(): Promise<void> {
  const startedMs = performance.now();
  const wrk = hasWrk();
  log(`gameserver-api bench: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (!wrk) {
    log('wrk is not installed (apt install wrk): throughput cannot be measured honestly here, since a client in Node on the');
    log('same cores tops out below a bare node:http server. Printing the servers\' CPU time per request alone.');
  }
  const { host, daemon, bare, key, logPath, writer, poolA } = await setUp();
  await delay(500);
  const idle = { bare: readMemoryKiB(bare.child.pid!), daemon: readMemoryKiB(daemon.child.pid!) };
  const routes = await routesOf(daemon.port);
  const agent = new Agent();
  const bodyBytes = new Map<string, number>();
  for (const route of routes) {
    const res = await timedGet(daemon.port, route, agent);
    if (res.status !== 200) log(`WARNING: GET ${route} answered ${res.status}: ${res.body.toString('utf8').slice(0, 160)}`);
    bodyBytes.set(route, res.body.length);
  }
  const large = (route: string): boolean => bodyBytes.get(route)! >= LARGE_ANSWER_BYTES;
  if (process.argv.includes('--idle')) {
    log(`\nBoth servers idle ${IDLE_BEFORE_LOAD_MS / 1000} s after their first answers (--idle)…`);
    await delay(IDLE_BEFORE_LOAD_MS);
  }

  // ---- Routes: bare and daemon alternated, several rounds, while the game writes to its log ----
  const still = process.argv.includes('--still');
  log(`\n### Routes (wrk -t1 -c${CONNECTIONS}, ${WRK_SECONDS} s each after ${WRK_WARMUP_SECONDS} s of warm-up, ${ROUNDS} rounds, bare measured just before each route;`);
  log(still ? `a ${HOST_LOG_BYTES / MIB} MiB latest.log that nobody writes meanwhile)` : `a ${HOST_LOG_BYTES / MIB} MiB latest.log that grows by a line every ${LIVE_LINE_MS} ms)`);
  const liveLog = still ? undefined : await startLiveLog(logPath);
  const runs = new Map<string, Array<{ bare: Load; daemon: Load; bareSameBytes?: Load }>>(routes.map((route) => [route, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const route of routes) {
      const bareLoad = wrk ? loadWithWrk(bare, '/') : await loadWithNode(bare, '/');
      const sameBytes = `/bytes/${bodyBytes.get(route)}`;
      const bareSameBytes = !large(route) ? undefined : wrk ? loadWithWrk(bare, sameBytes) : await loadWithNode(bare, sameBytes);
      const daemonLoad = wrk ? loadWithWrk(daemon, route) : await loadWithNode(daemon, route);
      runs.get(route)!.push({ bare: bareLoad, daemon: daemonLoad, bareSameBytes });
    }
    log(`  round ${round} done`);
  }
  if (liveLog !== undefined) await stopProcess(liveLog);
  const peak = { bare: readMemoryKiB(bare.child.pid!).hwmKiB, daemon: readMemoryKiB(daemon.child.pid!).hwmKiB };
  log('');
  log('| route | req/s | bare req/s | of bare (median, range) | p50 / p99 ms | bare p50 / p99 ms | CPU µs/req | bare CPU µs/req | CPU of bare | non-2xx |');
  log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  const ratioOf = new Map<string, number>();
  let clientBound = false;
  for (const route of routes) {
    const r = runs.get(route)!;
    const ratios = r.map((x) => x.daemon.rps / x.bare.rps);
    const ratio = median(ratios);
    ratioOf.set(route, ratio);
    if (ratio > 1.05) clientBound = true;
    const cpu = median(r.map((x) => x.daemon.cpuUsPerRequest));
    const bareCpu = median(r.map((x) => x.bare.cpuUsPerRequest));
    log(`| ${route} | ${fmt(median(r.map((x) => x.daemon.rps)), 0)} | ${fmt(median(r.map((x) => x.bare.rps)), 0)} | ${fmt(ratio, 2)} (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}) | `
      + `${fmt(median(r.map((x) => x.daemon.p50Ms)), 2)} / ${fmt(median(r.map((x) => x.daemon.p99Ms)), 2)} | ${fmt(median(r.map((x) => x.bare.p50Ms)), 2)} / ${fmt(median(r.map((x) => x.bare.p99Ms)), 2)} | `
      + `${fmt(cpu, 1)} | ${fmt(bareCpu, 1)} | ${fmt(cpu / bareCpu, 2)} × | ${r.reduce((n, x) => n + x.daemon.non2xx, 0)} |`);
  }
  const sameBytesRatioOf = new Map<string, number>();
  if (routes.some(large)) {
    log(`\nThe answers of ${LARGE_ANSWER_BYTES / 1024} KiB and more, against the bare server answering as many bytes (measured just before each):`);
    log('');
    log('| route | bytes | of bare (26 B) | bare with the same bytes, of bare (26 B) | of bare with the same bytes (median, range) |');
    log('|---|--:|--:|--:|--:|');
  }
  for (const route of routes.filter(large)) {
    const r = runs.get(route)!;
    const ratios = r.map((x) => x.daemon.rps / x.bareSameBytes!.rps);
    sameBytesRatioOf.set(route, median(ratios));
    if (median(ratios) > 1.05) clientBound = true;
    log(`| ${route} | ${bodyBytes.get(route)} | ${fmt(ratioOf.get(route)!, 2)} | ${fmt(median(r.map((x) => x.bareSameBytes!.rps / x.bare.rps)), 2)} | `
      + `${fmt(median(ratios), 2)} (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}) |`);
  }
  if (clientBound) log('\nCLIENT-BOUND: a route measured above 105 % of its bare server, which no route can be; the figures above measure the client, not the daemon.');

  // ---- /metrics, then a 2000-line tail and presence, on the host's latest.log and on a 1 GiB one ----
  const tailTarget = '/api/logs/latest?lines=2000';
  const appendOneLine = (): void => fs.appendFileSync(logPath, writer.lines(1, poolA, false));
  const sampleTail = async (): Promise<{ p50Ms: number; lines: number }> => {
    const sequential = new Agent({ keepAlive: true, maxSockets: 1 });
    const samples: number[] = [];
    let last: Timed | undefined;
    for (let i = 0; i < TAIL_REQUESTS + 5; i++) {
      appendOneLine();
      await delay(TAIL_SPACING_MS);
      last = await timedGet(daemon.port, tailTarget, sequential);
      if (i >= 5) samples.push(last.ms);
    }
    sequential.destroy();
    return { p50Ms: median(samples), lines: (JSON.parse(last!.body.toString('utf8')) as { lines: unknown[] }).lines.length };
  };
  const hostTail = await sampleTail();
  const hostBytes = fs.statSync(logPath).size;
  // events before the log grows: a daemon whose first stream opens reads the log once, as its first presence request
  // does, and 1 GiB of it would be the figure
  const events = await benchEvents(host, daemon.port, key, logPath);
  log(`\nlatest.log grows to 1 GiB…`);
  growLog(logPath, writer, BIG_LOG_BYTES, poolA);
  const bigBytes = fs.statSync(logPath).size;
  const sequential = new Agent({ keepAlive: true, maxSockets: 1 });
  const firstScanMs = (await timedGet(daemon.port, '/api/players/online', sequential)).ms;
  const presenceMs: number[] = [];
  let presenceWrong = 0;
  for (let round = 0; round < PRESENCE_ROUNDS; round++) {
    fs.appendFileSync(logPath, writer.lines(APPEND_BYTES, poolA, false));
    const res = await timedGet(daemon.port, '/api/players/online', sequential);
    presenceMs.push(res.ms);
    const players = ((JSON.parse(res.body.toString('utf8')) as { players?: string[] }).players ?? []).sort();
    if (JSON.stringify(players) !== JSON.stringify([...writer.online].sort())) presenceWrong++;
  }
  sequential.destroy();
  const bigTail = await sampleTail();
  const metricsBig = wrk ? median(Array.from({ length: ROUNDS }, () => loadWithWrk(daemon, '/metrics').rps / loadWithWrk(bare, '/').rps)) : NaN;
  const tailRatio = bigTail.p50Ms / hostTail.p50Ms;
  log(`tail ${tailTarget}: ${hostBytes} B log p50 ${fmt(hostTail.p50Ms, 2)} ms, ${bigBytes} B log p50 ${fmt(bigTail.p50Ms, 2)} ms (${bigTail.lines} lines): ${fmt(tailRatio, 2)}`);
  log(`presence after ${APPEND_BYTES} B appended to the 1 GiB log: median ${fmt(median(presenceMs), 2)} ms, max ${fmt(Math.max(...presenceMs), 2)} ms, wrong ${presenceWrong}; first request on it ${fmt(firstScanMs, 0)} ms`);
  log(`/metrics on the 1 GiB log: ${fmt(metricsBig, 2)} of bare`);

  const end = { bare: readMemoryKiB(bare.child.pid!), daemon: readMemoryKiB(daemon.child.pid!) };
  log(`\nmemory: idle bare ${mib(idle.bare.rssKiB)}, daemon ${mib(idle.daemon.rssKiB)}; peak under route load bare ${mib(peak.bare)}, daemon ${mib(peak.daemon)}; `
    + `peak over the whole run bare ${mib(end.bare.hwmKiB)}, daemon ${mib(end.daemon.hwmKiB)}`);

  // ---- Targets ----
  // on a still log every read route has its goal (issue 26: players online 0.70, the others 0.80); a large answer is
  // held to it against the bare server sending as many bytes, the ceiling for its size (in every mode)
  const goals: ReadonlyArray<[string, number]> = still
    ? routes.map((route) => [route, route === '/api/players/online' ? 0.7 : 0.8])
    : TARGETS.filter(([route]) => ratioOf.has(route));
  const targets: Target[] = goals.map(([route, goal]) => {
    const ratio = sameBytesRatioOf.get(route) ?? ratioOf.get(route)!;
    const against = sameBytesRatioOf.has(route) ? `bare with the same ${bodyBytes.get(route)} bytes` : 'bare';
    return { name: `GET ${route} throughput`, goal: `≥ ${goal} of ${against}`, measured: fmt(ratio, 2), held: wrk && !clientBound ? ratio >= goal : null };
  });
  targets.push(
    { name: 'GET /metrics throughput on a 1 GiB log', goal: '≥ 0.5 of bare', measured: fmt(metricsBig, 2), held: wrk ? metricsBig >= 0.5 : null },
    { name: 'peak RSS under route load', goal: '≤ 1.5 × bare\'s peak', measured: `${fmt(peak.daemon / peak.bare, 2)} × (${mib(peak.daemon)} / ${mib(peak.bare)})`, held: peak.daemon <= 1.5 * peak.bare },
    { name: '2000-line tail, 1 GiB / 100 MiB log (p50)', goal: '≤ 1.2', measured: fmt(tailRatio, 2), held: tailRatio <= 1.2 },
    { name: 'presence after 1 MiB appended to 1 GiB (median)', goal: '< 20 ms', measured: `${fmt(median(presenceMs), 2)} ms`, held: median(presenceMs) < 20 && presenceWrong === 0 },
    { name: 'log line → event received (p99)', goal: '< 100 ms', measured: `${fmt(events.p99Ms, 1)} ms (median ${fmt(events.p50Ms, 1)})`, held: events.p99Ms < 100 },
    { name: 'command output beyond its 300 ms quiet window (median)', goal: '(reported)', measured: `${fmt(events.outputExtraMs, 1)} ms (p99 ${fmt(events.outputExtraP99Ms, 1)})`, held: null },
    { name: `${IDLE_STREAMS} idle streams for ${IDLE_STREAMS_SECONDS} s: CPU beyond the control daemon's`, goal: `≤ ${IDLE_CPU_NOISE_MS} ms (0.1 % of a core)`, measured: `${events.idleCpuMs} ms (${fmt(events.idleCpuMs / (IDLE_STREAMS_SECONDS * 10), 3)} % of a core)`, held: events.idleCpuMs <= IDLE_CPU_NOISE_MS },
    { name: `${IDLE_STREAMS} idle streams: anonymous memory beyond the control's`, goal: '< 5 MiB more', measured: `${mib(events.extraAnonKiB)} (RSS ${mib(events.extraRssKiB)})`, held: events.extraAnonKiB < 5 * 1024 },
  );
  log('\n| target | goal | measured | result |');
  log('|---|---|---|---|');
  for (const t of targets) log(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.held === null ? '—' : t.held ? 'held' : 'MISSED'} |`);
  log(`\nload average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; bench took ${fmt((performance.now() - startedMs) / 1000, 0)} s`);
}

interface StreamedEvent { type: string; player?: string; text?: string }

/** Opens GET /api/events and hands each event to `onEvent` as it is read. */
function readEvents(port: number, onEvent: (event: StreamedEvent) => void): ReturnType<typeof get> {
  const stream = get({ host: '127.0.0.1', port, path: '/api/events', headers: { Accept: 'text/event-stream' } });
  let buffer = '';
  stream.on('response', (res) => res.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (data !== undefined) onEvent(JSON.parse(data) as StreamedEvent);
    }
  }));
  return stream.on('error', () => undefined);
}

/** Event latency, command output beyond its window, and the cost of idle streams (docs/performance.md#live-events). */
async function benchEvents(host: Host, port: number, key: string, logPath: string) {
  const latencies: number[] = [];
  const written = new Map<string, number>();
  const stream = readEvents(port, (event) => {
    const at = event.type === 'player.joined' ? written.get(event.player!) : undefined;
    if (at !== undefined) latencies.push(performance.now() - at);
  });
  await delay(1_500); // the watcher has taken the starting state
  for (let i = 0; i < EVENT_SAMPLES; i++) {
    const player = `Bench_${i}`;
    written.set(player, performance.now());
    fs.appendFileSync(logPath, `[12:00:00] [Server thread/INFO]: ${player} joined the game\n`);
    await delay(EVENT_SPACING_MS);
  }
  await delay(1_000);
  stream.destroy();
  // they leave again: the presence figures later check the daemon's answer against the writer's players alone
  fs.appendFileSync(logPath, [...written.keys()].map((player) => `[12:00:00] [Server thread/INFO]: ${player} left the game\n`).join(''));

  const extra: number[] = [];
  for (let i = 0; i < OUTPUT_SAMPLES; i++) {
    const res = await timedPost(port, '/api/command', key, { command: `say bench ${i}`, output: true });
    if (res.status === 200) extra.push(res.ms - OUTPUT_QUIET_MS);
  }

  // two daemons of their own on the same host, started together: one holds the streams, the other is the control,
  // so that start-up work and the collector's first cycles, which both do, cancel out
  const daemons = await Promise.all(['idle daemon', 'control daemon'].map(async (name) => {
    const daemonPort = await freePort();
    return { port: daemonPort, proc: await startProcess(name, [...unitNodeArgs(), 'dist/server.js'], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(daemonPort) }), daemonPort, 'gameserver-api ') };
  }));
  await delay(1_000);
  const sample = () => daemons.map(({ proc }) => ({ cpuMs: readCpuMs(proc.child.pid!), ...readMemoryKiB(proc.child.pid!) }));
  const before = sample();
  // opened one by one, as relays connect at different moments: streams opened together would share their timers
  const streams: ReturnType<typeof get>[] = [];
  for (let i = 0; i < IDLE_STREAMS; i++) {
    streams.push(get({ host: '127.0.0.1', port: daemons[0].port, path: '/api/events' }).on('error', () => undefined).on('response', (res) => res.resume()));
    await delay(IDLE_STREAM_SPACING_MS);
  }
  await delay(2_000); // opened, watching started
  const opened = sample();
  await delay(IDLE_STREAMS_SECONDS * 1000);
  const after = sample();
  streams.forEach((s) => s.destroy());
  await Promise.all(daemons.map(({ proc }) => stopProcess(proc)));
  const idleCpuMs = (after[0].cpuMs - opened[0].cpuMs) - (after[1].cpuMs - opened[1].cpuMs);
  const extraAnonKiB = (after[0].anonKiB - before[0].anonKiB) - (after[1].anonKiB - before[1].anonKiB);
  const extraRssKiB = (after[0].rssKiB - before[0].rssKiB) - (after[1].rssKiB - before[1].rssKiB);
  log(`\nevents: ${latencies.length}/${EVENT_SAMPLES} joins received, log line → event median ${fmt(median(latencies), 1)} ms, p99 ${fmt(percentile(latencies, 99), 1)} ms`);
  log(`command output: time beyond the ${OUTPUT_QUIET_MS} ms quiet window, median ${fmt(median(extra), 1)} ms, p99 ${fmt(percentile(extra, 99), 1)} ms`);
  log(`${IDLE_STREAMS} idle streams: opening them took ${opened[0].cpuMs - before[0].cpuMs} ms of CPU; over the next ${IDLE_STREAMS_SECONDS} s the daemon with streams used ${after[0].cpuMs - opened[0].cpuMs} ms, the control ${after[1].cpuMs - opened[1].cpuMs} ms`);
  log(`  anonymous memory ${mib(before[0].anonKiB)} → ${mib(after[0].anonKiB)} (control ${mib(before[1].anonKiB)} → ${mib(after[1].anonKiB)}); RSS ${mib(before[0].rssKiB)} → ${mib(after[0].rssKiB)} (control ${mib(before[1].rssKiB)} → ${mib(after[1].rssKiB)})`);
  return {
    p50Ms: median(latencies), p99Ms: latencies.length === EVENT_SAMPLES ? percentile(latencies, 99) : Infinity,
    outputExtraMs: median(extra), outputExtraP99Ms: percentile(extra, 99),
    idleCpuMs, extraAnonKiB, extraRssKiB,
  };
}

// ---- Profile mode: where the time goes ----

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }

interface BridgeFigures {
  chatP50Ms: number;
  chatP99Ms: number;
  chatCpuMs: number; // the daemon's CPU time over the minute of chat
  streamOnlyCpuMs: number; // a daemon's with one stream open and no webhook, in the same minute
  followerCpuMs: number; // a minimal follower's, in the same minute
  posterCpuMs: number; // and one that also POSTs each line
  streamerCpuMs: number; // and one that also writes each chat line to an event stream
  delivered: number; // chat events the webhook received during that minute
  lines: number;
  sayP50Ms: number;
  sayP99Ms: number;
  sayFailures: number;
}

/**
 * The bridge (docs/performance.md#the-bridge): a daemon with one stream open and the webhook set, 50 players online.
 * A chat line's way to the stream; a minute of a line every 50 ms, and the daemon's CPU time over it; POST /api/say.
 */
// The yardsticks of following a log, run in the same minute as the daemon: the least a follower can do (fs.watch, read
// what was appended, split it into lines); the same that also POSTs each line to the webhook's receiver; and the same
// that also writes each chat line as an event to the event streams it serves (the least a daemon with one stream open
// does a line: docs/performance.md#the-floor-of-following)
const FOLLOWER_SOURCE = `
const fs = require('node:fs');
const http = require('node:http');
const [file, post, serve] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const fd = fs.openSync(file, 'r');
const chunk = Buffer.allocUnsafe(1024 * 1024);
const streams = new Set();
let offset = fs.fstatSync(fd).size;
let rest = '';
let lines = 0;
let id = 0;
fs.watch(file, () => {
  for (let read; (read = fs.readSync(fd, chunk, 0, chunk.length, offset)) > 0; offset += read) {
    const parts = (rest + chunk.toString('utf8', 0, read)).split('\\n');
    rest = parts.pop();
    for (const line of parts) {
      lines++;
      if (post) http.request(post, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => res.resume()).end(JSON.stringify({ line }));
      const chat = serve ? /<([^>]+)> (.*)$/.exec(line) : null;
      if (chat === null) continue;
      const frame = 'id: ' + ++id + '\\ndata: ' + JSON.stringify({ type: 'player.chat', time: new Date().toISOString(), player: chat[1], text: chat[2] }) + '\\n\\n';
      for (const res of streams) res.write(frame);
    }
  }
});
if (serve) {
  http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' }).write('retry: 3000\\n\\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  }).listen(0, '127.0.0.1', function () { console.log('follower following on ' + this.address().port); });
} else console.log('follower following');
process.on('SIGINT', () => { console.log('lines ' + lines); process.exit(0); });
`;

async function benchBridge(): Promise<BridgeFigures> {
  const host = await createHost({ gameThreads: GAME_THREADS });
  hosts.push(host);
  await host.startGame();
  const logPath = path.join(host.serverDir, 'logs', 'latest.log');
  let delivered = 0;
  const receiver = createServer((req, res) => {
    req.resume().on('end', () => {
      if (req.url === '/hook') delivered++; // the daemon's, not the yardstick's
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const key = randomBytes(24).toString('base64url');
  const port = await freePort();
  const daemon = await startProcess('bridge daemon', [...unitNodeArgs(), 'dist/server.js'], host.daemonEnv({
    HOST: '127.0.0.1', PORT: String(port), API_KEY: key,
    EVENT_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`,
  }), port, 'gameserver-api ');
  try {
    const written = new Map<string, number>();
    const latencies: number[] = [];
    let joined = 0;
    const stream = readEvents(port, (event) => {
      if (event.type === 'player.joined') joined++;
      const at = event.type === 'player.chat' ? written.get(event.text!) : undefined;
      if (at !== undefined) latencies.push(performance.now() - at);
    });
    await delay(1_500); // the watcher has taken the starting state
    const fd = fs.openSync(logPath, 'a');
    const stamp = (): string => new Date().toTimeString().slice(0, 8);
    const players = Array.from({ length: BRIDGE_PLAYERS }, (_, i) => `Chatter_${i}`);
    fs.writeSync(fd, players.map((player) => `[${stamp()}] [Server thread/INFO]: ${player} joined the game\n`).join(''));
    while (joined < BRIDGE_PLAYERS) await delay(50);
    const chat = (n: number): string => {
      const text = `${CHAT_TEXTS[n % CHAT_TEXTS.length]} #${n}`;
      written.set(text, performance.now());
      // log4j writes a line with one write
      fs.writeSync(fd, `[${stamp()}] [Server thread/INFO]: <${players[n % players.length]}> ${text}\n`);
      return text;
    };
    for (let i = 0; i < BRIDGE_LATENCY_SAMPLES; i++) {
      chat(i);
      await delay(BRIDGE_LATENCY_SPACING_MS);
    }
    await delay(1_000);
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/follower`;
    // a second daemon with one stream open and no webhook: what following costs the daemon itself
    const streamPort = await freePort();
    const streamOnly = await startProcess('stream-only daemon', [...unitNodeArgs(), 'dist/server.js'], host.daemonEnv({
      HOST: '127.0.0.1', PORT: String(streamPort), API_KEY: key,
    }), streamPort, 'gameserver-api ');
    const streamOnlyEvents = readEvents(streamPort, () => undefined);
    await delay(1_500); // it has taken the starting state
    const follower = await startProcess('follower', ['-e', FOLLOWER_SOURCE, logPath, ''], { PATH: process.env.PATH ?? '' }, 0, 'follower following');
    const poster = await startProcess('poster', ['-e', FOLLOWER_SOURCE, logPath, receiverUrl], { PATH: process.env.PATH ?? '' }, 0, 'follower following');
    const streamer = await startProcess('streamer', ['-e', FOLLOWER_SOURCE, logPath, '', 'serve'], { PATH: process.env.PATH ?? '' }, 0, 'follower following');
    const streamerEvents = readEvents(Number(/\d+$/.exec(streamer.output.at(-1)!)![0]), () => undefined);
    await delay(500); // its stream is open
    const followersBeforeMs = [readCpuMs(follower.child.pid!), readCpuMs(poster.child.pid!), readCpuMs(streamOnly.child.pid!), readCpuMs(streamer.child.pid!)];
    const deliveredBefore = delivered;
    const cpuBeforeMs = readCpuMs(daemon.child.pid!);
    const lines = (BRIDGE_SECONDS * 1000) / BRIDGE_LINE_MS;
    const startMs = performance.now();
    for (let i = 0; i < lines; i++) {
      chat(BRIDGE_LATENCY_SAMPLES + i);
      await delay(Math.max(0, startMs + (i + 1) * BRIDGE_LINE_MS - performance.now()));
    }
    const chatCpuMs = readCpuMs(daemon.child.pid!) - cpuBeforeMs;
    const followerCpuMs = readCpuMs(follower.child.pid!) - followersBeforeMs[0];
    const posterCpuMs = readCpuMs(poster.child.pid!) - followersBeforeMs[1];
    const streamOnlyCpuMs = readCpuMs(streamOnly.child.pid!) - followersBeforeMs[2];
    const streamerCpuMs = readCpuMs(streamer.child.pid!) - followersBeforeMs[3];
    streamOnlyEvents.destroy();
    streamerEvents.destroy();
    await Promise.all([stopProcess(follower), stopProcess(poster), stopProcess(streamOnly), stopProcess(streamer)]);
    await delay(1_000);
    const deliveredInMinute = delivered - deliveredBefore;
    stream.destroy();
    fs.closeSync(fd);

    const sayMs: number[] = [];
    let sayFailures = 0;
    for (let i = 0; i < SAY_SAMPLES; i++) {
      const res = await timedPost(port, '/api/say', key, { text: `bench message ${i} "quoted" ☺`, from: 'Bench' });
      if (res.status === 200) sayMs.push(res.ms);
      else sayFailures++;
    }
    return {
      chatP50Ms: median(latencies), chatP99Ms: percentile(latencies, 99), chatCpuMs, streamOnlyCpuMs, followerCpuMs, posterCpuMs,
      streamerCpuMs,
      delivered: deliveredInMinute, lines,
      sayP50Ms: median(sayMs), sayP99Ms: percentile(sayMs, 99), sayFailures,
    };
  } finally {
    await stopProcess(daemon);
    receiver.close();
  }
}

function reportBridge(figures: BridgeFigures): Target[] {
  log(`\n### The bridge: ${BRIDGE_PLAYERS} players online, one stream and the webhook`);
  log(`chat line → stream: median ${fmt(figures.chatP50Ms, 1)} ms, p99 ${fmt(figures.chatP99Ms, 1)} ms (${BRIDGE_LATENCY_SAMPLES} lines ${BRIDGE_LATENCY_SPACING_MS} ms apart)`);
  log(`a line every ${BRIDGE_LINE_MS} ms for ${BRIDGE_SECONDS} s: the daemon used ${figures.chatCpuMs} ms of CPU; the webhook received ${figures.delivered} of ${figures.lines}`);
  log(`in the same minute a daemon with one stream and no webhook used ${figures.streamOnlyCpuMs} ms, a minimal follower `
    + `${figures.followerCpuMs} ms, one that also POSTs each line ${figures.posterCpuMs} ms, one that also writes each `
    + `line to an event stream ${figures.streamerCpuMs} ms `
    + `(CPU is counted in ticks of ${CLOCK_TICK_MS} ms)`);
  const perLine = (ms: number): number => (ms * 1000) / figures.lines;
  log(`POST /api/say: median ${fmt(figures.sayP50Ms, 1)} ms, p99 ${fmt(figures.sayP99Ms, 1)} ms (${SAY_SAMPLES} in a row, ${figures.sayFailures} failed)`);
  const share = figures.chatCpuMs / (BRIDGE_SECONDS * 10);
  return [
    { name: 'chat line → stream (p99)', goal: '< 100 ms', measured: `${fmt(figures.chatP99Ms, 1)} ms (median ${fmt(figures.chatP50Ms, 1)})`, held: figures.chatP99Ms < 100 },
    { name: `${BRIDGE_PLAYERS} players chatting for a minute, stream and webhook`, goal: '< 2 % of a core', measured: `${fmt(share, 2)} % (${figures.chatCpuMs} ms; ${figures.delivered}/${figures.lines} delivered)`, held: share < 2 && figures.delivered === figures.lines },
    { name: 'CPU a line followed, one stream open, against a minimal follower', goal: '≤ 2 ×', measured: `${fmt(perLine(figures.streamOnlyCpuMs), 0)} µs against ${fmt(perLine(figures.followerCpuMs), 0)} µs: ${fmt(figures.streamOnlyCpuMs / figures.followerCpuMs, 2)} ×`, held: figures.streamOnlyCpuMs <= 2 * figures.followerCpuMs },
    { name: 'CPU a line followed, one stream open, against a follower that writes each line to a stream', goal: '≤ 1.15 ×', measured: `${fmt(perLine(figures.streamOnlyCpuMs), 0)} µs against ${fmt(perLine(figures.streamerCpuMs), 0)} µs: ${fmt(figures.streamOnlyCpuMs / figures.streamerCpuMs, 2)} ×`, held: figures.streamOnlyCpuMs <= 1.15 * figures.streamerCpuMs },
    { name: 'the chat minute, stream and webhook, against a follower that POSTs each line', goal: '≤ 1.15 ×', measured: `${fmt(figures.chatCpuMs / figures.posterCpuMs, 2)} × (${figures.chatCpuMs} / ${figures.posterCpuMs} ms)`, held: figures.chatCpuMs <= 1.15 * figures.posterCpuMs },
    { name: 'POST /api/say round trip (p99)', goal: '< 50 ms', measured: `${fmt(figures.sayP99Ms, 1)} ms (median ${fmt(figures.sayP50Ms, 1)})`, held: figures.sayP99Ms < 50 && figures.sayFailures === 0 },
  ];
}

async function bridgeOnly(): Promise<void> {
  log(`gameserver-api bench, the bridge: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const targets = reportBridge(await benchBridge());
  log('\n| target | goal | measured | result |');
  log('|---|---|---|---|');
  for (const t of targets) log(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.held ? 'held' : 'MISSED'} |`);
}

/** The top frames by self time of a V8 .cpuprofile; idle, program and GC are shares of their own. */
function topFrames(file: string, count = 8): { frames: Array<[string, number]>; gc: number; busy: number } {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  for (const id of profile.samples) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') idle++;
    else if (frame.functionName === '(garbage collector)') gc++;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url === '' ? '' : `${path.basename(frame.url)}:${frame.lineNumber + 1}`}`.trim();
    self.set(name, (self.get(name) ?? 0) + 1);
  }
  const busy = profile.samples.length - idle;
  self.delete('(idle)');
  const frames = [...self].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, hits]): [string, number] => [name, hits / busy]);
  return { frames, gc: gc / busy, busy };
}

async function profile(): Promise<void> {
  if (!hasWrk()) throw new Error('the profile mode needs wrk (apt install wrk)');
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-profile-'));
  profileDirs.push(directory);
  const { daemon, host } = await setUp();
  const routes = await routesOf(daemon.port);
  await stopProcess(daemon);
  log(`\n### Where the time goes: wrk -t1 -c${CONNECTIONS} for ${PROFILE_SECONDS} s per route, a daemon of its own each under node --cpu-prof`);
  for (const route of routes) {
    const dir = path.join(directory, route.replace(/\W+/g, '_') || 'root');
    const port = await freePort();
    const profiled = await startProcess(`daemon ${route}`, [...unitNodeArgs(), `--cpu-prof`, `--cpu-prof-dir=${dir}`, 'dist/server.js'], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(port), API_KEY: 'k'.repeat(32) }), port, 'gameserver-api ');
    loadWithWrk(profiled, route, PROFILE_SECONDS);
    await stopProcess(profiled);
    const [file] = fs.readdirSync(dir);
    const { frames, gc, busy } = topFrames(path.join(dir, file!));
    log(`\n**GET ${route}** (${busy} busy samples; garbage collection ${fmt(gc * 100, 1)} %)\n`);
    log('| self | frame |');
    log('|--:|---|');
    for (const [name, share] of frames) log(`| ${fmt(share * 100, 1)} % | \`${name}\` |`);
  }
}

// ---- The backlog: a fresh daemon on a 1 GiB log, and 900 MiB appended unread (`npm run bench -- --backlog`) ----

const BACKLOG_APPEND_BYTES = 900 * MIB;
const BACKLOG_FLOOR_RUNS = 3;
const BACKLOG_POLL_MS = 20;
const BACKLOG_GIVE_UP_MS = 120_000; // a read that never ends (a log written meanwhile) is an error, not a figure

// The floor: a process that reads the file in 1 MiB chunks and finds every line end, nothing more
const BARE_SCAN_SOURCE = `
const fs = require('node:fs');
const fd = fs.openSync(process.argv[1], 'r');
const chunk = Buffer.allocUnsafe(1024 * 1024);
let lines = 0;
for (let position = 0, read; (read = fs.readSync(fd, chunk, 0, chunk.length, position)) > 0; position += read) {
  for (let at = chunk.indexOf(10); at !== -1 && at < read; at = chunk.indexOf(10, at + 1)) lines++;
}
console.log(lines);
`;

/** ms a fresh process takes to read the file and find its line ends (the best of a few runs: the page cache warm). */
function bareScanMs(file: string): number {
  const runs = Array.from({ length: BACKLOG_FLOOR_RUNS }, () => {
    const startMs = performance.now();
    const run = spawnSync(process.execPath, ['-e', BARE_SCAN_SOURCE, file], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`the bare scan failed: ${run.stderr}`);
    return performance.now() - startMs;
  });
  return Math.min(...runs);
}

/**
 * GET `target` until it answers 200 with the whole log read: a 503 of players online, and an answer of /metrics whose
 * gauge of unread bytes is not 0, say the log is still being read. The ms until then, the answer, and how many answers
 * came before it (each of them is held to the 2 s bound too).
 */
async function firstAnswer(port: number, target: string): Promise<{ ms: number; body: string; refusals: number; slowestMs: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const startMs = performance.now();
  let refusals = 0;
  let slowestMs = 0;
  try {
    for (;;) {
      const res = await timedGet(port, target, agent);
      slowestMs = Math.max(slowestMs, res.ms);
      const body = res.body.toString('utf8');
      const unread = /^gameserver_api_log_unread_bytes (\d+)$/m.exec(body)?.[1];
      const behind = res.status === 200 && target === '/metrics' && unread !== '0';
      if (res.status === 200 && !behind) return { ms: performance.now() - startMs, body, refusals, slowestMs };
      if (res.status !== 200 && res.status !== 503) throw new Error(`GET ${target} answered ${res.status}`);
      if (performance.now() - startMs > BACKLOG_GIVE_UP_MS) {
        throw new Error(`GET ${target} still reading after ${BACKLOG_GIVE_UP_MS / 1000} s (${res.status}${unread === undefined ? '' : `, ${unread} bytes unread`})`);
      }
      refusals++;
      await delay(BACKLOG_POLL_MS);
    }
  } finally {
    agent.destroy();
  }
}

const playersOf = (body: string): string[] => ((JSON.parse(body) as { players?: string[] }).players ?? []).sort();
const onlineGauge = (body: string): number => Number(/^minecraft_players_online (\d+)$/m.exec(body)?.[1]);

async function benchBacklog(): Promise<void> {
  log(`gameserver-api bench --backlog: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const targets: Target[] = [];
  for (const mix of ['chatter', 'busy'] as const) {
    const host = await createHost({ gameThreads: GAME_THREADS });
    hosts.push(host);
    await host.startGame();
    const writer = createLogWriter(mix);
    const pool = namePool(1);
    const logPath = path.join(host.serverDir, 'logs', 'latest.log');
    growLog(logPath, writer, BIG_LOG_BYTES, pool);
    const expected = [...writer.online].sort();
    const floorMs = bareScanMs(logPath);
    log(`\n### ${mix === 'busy' ? 'A busy log (a join or leave in one line of ten)' : 'A log of chat and chunk loading'}: ${fmt(fs.statSync(logPath).size / MIB, 0)} MiB; the bare scan ${fmt(floorMs, 0)} ms`);
    const fresh = async (target: string) => {
      const port = await freePort();
      const daemon = await startProcess('daemon', [...unitNodeArgs(), 'dist/server.js'], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(port), API_KEY: 'k'.repeat(32) }), port, 'gameserver-api ');
      const answer = await firstAnswer(port, target);
      return { daemon, port, answer };
    };
    const judge = (name: string, answer: Awaited<ReturnType<typeof firstAnswer>>, right: boolean): void => {
      log(`${name}: ${fmt(answer.ms, 0)} ms (${fmt(answer.ms / floorMs, 2)} × the bare scan), ${answer.refusals} answers still reading first (503, or /metrics behind), the slowest answer ${fmt(answer.slowestMs, 0)} ms, ${right ? 'right' : 'WRONG'}`);
      targets.push({ name: `${mix}: ${name}`, goal: '≤ 3 × the bare scan, right; every answer ≤ 2 s', measured: `${fmt(answer.ms / floorMs, 2)} ×, slowest ${fmt(answer.slowestMs, 0)} ms`, held: answer.ms <= 3 * floorMs && right && answer.slowestMs <= 2_000 });
    };
    const first = await fresh('/metrics');
    judge('a fresh daemon\'s first GET /metrics', first.answer, onlineGauge(first.answer.body) === expected.length);
    await stopProcess(first.daemon);
    const second = await fresh('/api/players/online');
    judge('a fresh daemon\'s first GET /api/players/online', second.answer, JSON.stringify(playersOf(second.answer.body)) === JSON.stringify(expected));
    // the daemon has read the log; now it grows by 900 MiB that nobody asks for, twice
    for (const target of ['/metrics', '/api/players/online']) {
      growLog(logPath, writer, fs.statSync(logPath).size + BACKLOG_APPEND_BYTES, pool);
      const now = [...writer.online].sort();
      const answer = await firstAnswer(second.port, target);
      const right = target === '/metrics' ? onlineGauge(answer.body) === now.length : JSON.stringify(playersOf(answer.body)) === JSON.stringify(now);
      judge(`GET ${target} after ${BACKLOG_APPEND_BYTES / MIB} MiB appended unread`, answer, right);
    }
    const presenceMs: number[] = [];
    let wrong = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let round = 0; round < PRESENCE_ROUNDS; round++) {
      fs.appendFileSync(logPath, writer.lines(APPEND_BYTES, pool, false));
      const res = await timedGet(second.port, '/api/players/online', agent);
      presenceMs.push(res.ms);
      if (res.status !== 200 || JSON.stringify(playersOf(res.body.toString('utf8'))) !== JSON.stringify([...writer.online].sort())) wrong++;
    }
    agent.destroy();
    log(`presence after ${APPEND_BYTES / MIB} MiB appended: median ${fmt(median(presenceMs), 2)} ms, max ${fmt(Math.max(...presenceMs), 2)} ms, wrong ${wrong}`);
    targets.push({ name: `${mix}: presence after 1 MiB appended (median)`, goal: '< 10 ms', measured: `${fmt(median(presenceMs), 2)} ms`, held: median(presenceMs) < 10 && wrong === 0 });
    await stopProcess(second.daemon);
    await host.remove();
    hosts.splice(hosts.indexOf(host), 1);
  }
  log('\n| target | goal | measured | result |');
  log('|---|---|---|---|');
  for (const t of targets) log(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.held === null ? '—' : t.held ? 'held' : 'MISSED'} |`);
}

// ---- A flood of chat (docs/performance.md#a-flood-of-chat) ----

const FLOOD_BYTES = 2 * 1024 * MIB;
const FLOOD_SECONDS = 40;
const FLOOD_POLL_MS = 100;
const FLOOD_CHUNK_BYTES = 4 * MIB;
const FLOOD_JOINER = 'Flood_End';

// A process that writes `bytes` of the online players' chat to latest.log in `seconds`, paced, then a join; it prints
// when it began and ended (Date.now(), the clock both processes share)
const FLOOD_WRITER_SOURCE = `
const fs = require('node:fs');
const [file, bytes, seconds, joiner, names] = process.argv.slice(1);
const players = JSON.parse(names);
const texts = ${JSON.stringify(CHAT_TEXTS)};
const stamp = () => new Date().toTimeString().slice(0, 8);
let chunk = '';
for (let n = 0; chunk.length < ${FLOOD_CHUNK_BYTES}; n++) chunk += '[' + stamp() + '] [Async Chat Thread - #3/INFO]: <' + players[n % players.length] + '> ' + texts[n % texts.length] + ' #' + n + '\\n';
const data = Buffer.from(chunk);
const fd = fs.openSync(file, 'a');
const startMs = Date.now();
console.log('flood begins ' + startMs);
let written = 0;
const step = () => {
  const due = (Date.now() - startMs) / (Number(seconds) * 1000) * Number(bytes);
  while (written < due && written < Number(bytes)) written += fs.writeSync(fd, data);
  if (written < Number(bytes)) return void setTimeout(step, 20);
  fs.writeSync(fd, '[' + stamp() + '] [Server thread/INFO]: ' + joiner + ' joined the game\\n');
  console.log('flood ends ' + Date.now());
};
step();
`;

interface Poll { atMs: number; ms: number; status: number; body: string; retryAfter: boolean }

/** Asks `target` one request after another, FLOOD_POLL_MS apart, until `stop()` says so; `seen` is told each answer. */
async function pollRoute(port: number, target: string, stop: () => boolean, seen: (poll: Poll) => void = () => undefined): Promise<Poll[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const polls: Poll[] = [];
  try {
    while (!stop()) {
      const atMs = Date.now();
      const res = await timedGet(port, target, agent);
      const poll = { atMs, ms: res.ms, status: res.status, body: res.body.toString('utf8'), retryAfter: res.retryAfter };
      polls.push(poll);
      seen(poll);
      await delay(FLOOD_POLL_MS);
    }
  } finally {
    agent.destroy();
  }
  return polls;
}

/**
 * 2 GB of chat written to latest.log in 40 s, one stream open, both routes asked every 100 ms throughout and after: how
 * long each answer took, whether players online ever answered a list that was not current, and when it was again.
 */
async function benchFlood(): Promise<void> {
  log(`gameserver-api bench --flood: node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const host = await createHost({ gameThreads: GAME_THREADS });
  hosts.push(host);
  await host.startGame();
  const writer = createLogWriter('chatter');
  const pool = namePool(1);
  const logPath = path.join(host.serverDir, 'logs', 'latest.log');
  growLog(logPath, writer, HOST_LOG_BYTES, pool);
  const before = [...writer.online].sort();
  const after = [...before, FLOOD_JOINER].sort();
  const port = await freePort();
  const daemon = await startProcess('daemon', [...unitNodeArgs(), 'dist/server.js'], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(port), API_KEY: 'k'.repeat(32) }), port, 'gameserver-api ');
  if (JSON.stringify(playersOf((await firstAnswer(port, '/api/players/online')).body)) !== JSON.stringify(before)) {
    throw new Error('the daemon did not read the log right before the flood');
  }
  let chatEvents = 0;
  let joinerToldAtMs: number | undefined;
  const stream = readEvents(port, (event) => {
    if (event.type === 'player.chat') chatEvents++;
    if (event.type === 'player.joined' && event.player === FLOOD_JOINER) joinerToldAtMs ??= Date.now();
  });
  let streamCut = false; // the daemon let the stream go before we closed it
  let closing = false;
  stream.on('response', (res) => res.on('close', () => void (streamCut ||= !closing)));
  await delay(1_500); // the stream took its starting state
  const cpuBeforeMs = readCpuMs(daemon.child.pid!);
  const flood = await startProcess('flood writer', ['-e', FLOOD_WRITER_SOURCE, logPath, String(FLOOD_BYTES), String(FLOOD_SECONDS), FLOOD_JOINER, JSON.stringify(before)], { PATH: process.env.PATH ?? '' }, 0, 'flood begins');
  const stampOf = (word: string): number | undefined => {
    const found = new RegExp(`flood ${word} (\\d+)`).exec(flood.output.join('\n'));
    return found === null ? undefined : Number(found[1]);
  };
  const beganMs = stampOf('begins')!;
  let currentAtMs: number | undefined; // the first answer of players online that names the joiner
  let stale = 0; // answers of 200 that were not the list of their moment
  let bareRefusals = 0; // answers of 503 without Retry-After
  const done = (): boolean => (currentAtMs !== undefined && Date.now() > currentAtMs + 2_000)
    || Date.now() - beganMs > (FLOOD_SECONDS + 180) * 1000;
  const [metrics, players] = await Promise.all([
    pollRoute(port, '/metrics', done),
    pollRoute(port, '/api/players/online', done, (poll) => {
      if (poll.status === 503) {
        if (!poll.retryAfter) bareRefusals++;
        return;
      }
      const list = JSON.stringify(playersOf(poll.body));
      const endedMs = stampOf('ends');
      // asked after the join was written: only the list with the joiner is current; before, either may be
      if (list === JSON.stringify(after)) currentAtMs ??= Date.now();
      else if (poll.status !== 200 || list !== JSON.stringify(before) || (endedMs !== undefined && poll.atMs > endedMs)) stale++;
    }),
  ]);
  const cpuMs = readCpuMs(daemon.child.pid!) - cpuBeforeMs;
  closing = true;
  stream.destroy();
  await stopProcess(flood);
  const endedMs = stampOf('ends');
  const unreadMax = Math.max(...metrics.map((poll) => Number(/^gameserver_api_log_unread_bytes (\d+)$/m.exec(poll.body)?.[1] ?? 0)));
  const backlog = Number(/^gameserver_api_log_backlog_bytes_total (\d+)$/m.exec(metrics[metrics.length - 1]?.body ?? '')?.[1] ?? 0);
  const chatCounted = Number(/^minecraft_chat_messages_total (\d+)$/m.exec(metrics[metrics.length - 1]?.body ?? '')?.[1] ?? 0);
  const slowest = (polls: Poll[]): number => Math.max(...polls.map((poll) => poll.ms));
  const refusals = players.filter((poll) => poll.status === 503).length;
  log(`\n### ${fmt(FLOOD_BYTES / MIB, 0)} MiB of chat written in ${FLOOD_SECONDS} s (${fmt((endedMs! - beganMs) / 1000, 1)} s here) to a ${HOST_LOG_BYTES / MIB} MiB log, one stream open, each route asked every ${FLOOD_POLL_MS} ms`);
  log(`GET /metrics: ${metrics.length} answers, the slowest ${fmt(slowest(metrics), 0)} ms; at most ${fmt(unreadMax / MIB, 0)} MiB unread; ${fmt(backlog / MIB, 0)} MiB read for presence alone`);
  log(`GET /api/players/online: ${players.length} answers, the slowest ${fmt(slowest(players), 0)} ms; ${refusals} of 503 (${bareRefusals} without Retry-After), ${stale} not current`);
  log(`players online current again ${currentAtMs === undefined ? 'never' : `${fmt((currentAtMs - endedMs!) / 1000, 2)} s`} after the writing stopped; the stream told the join ${joinerToldAtMs === undefined ? 'never' : `${fmt((joinerToldAtMs - endedMs!) / 1000, 2)} s`} after it`);
  log(`the stream was told ${chatEvents} chat events${streamCut ? ' before the daemon let it go (more than 1 MiB behind)' : ''}; /metrics counted ${chatCounted}; the daemon used ${fmt(cpuMs / 1000, 1)} s of CPU`);
  const targets: Target[] = [
    { name: 'GET /metrics during and after the flood', goal: 'every answer ≤ 2 s', measured: `slowest ${fmt(slowest(metrics), 0)} ms of ${metrics.length}`, held: slowest(metrics) <= 2_000 },
    { name: 'GET /api/players/online during and after the flood', goal: 'every answer ≤ 2 s, 503 with Retry-After or the current list', measured: `slowest ${fmt(slowest(players), 0)} ms of ${players.length}; ${refusals} × 503; ${stale} not current`, held: slowest(players) <= 2_000 && stale === 0 && bareRefusals === 0 && currentAtMs !== undefined },
  ];
  log('\n| target | goal | measured | result |');
  log('|---|---|---|---|');
  for (const t of targets) log(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.held ? 'held' : 'MISSED'} |`);
  await stopProcess(daemon);
}

// ---- Clean-up: once, whatever happens ----

const hosts: Host[] = [];
const profileDirs: string[] = [];
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all(processes.map((proc) => stopProcess(proc).catch(() => undefined)));
    for (const host of hosts) {
      // free the 1 GiB at once; the game holds the file open until remove() ends it
      try { fs.truncateSync(path.join(host.serverDir, 'logs', 'latest.log'), 0); } catch { /* gone */ }
      await host.remove().catch(() => undefined);
    }
    for (const dir of profileDirs) fs.rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

/** When the process exits without the async clean-up: synchronous calls only. */
function cleanupSync(): void {
  for (const proc of processes) if (isRunning(proc)) proc.child.kill('SIGKILL');
  for (const host of hosts) {
    spawnSync('tmux', ['-S', host.tmuxSocket, 'kill-server'], { stdio: 'ignore' });
    fs.rmSync(host.root, { recursive: true, force: true });
  }
  for (const dir of profileDirs) fs.rmSync(dir, { recursive: true, force: true });
}

process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().finally(() => process.exit(130)));
process.once('exit', cleanupSync);
(process.argv.includes('--profile') ? profile() : process.argv.includes('--bridge') ? bridgeOnly()
  : process.argv.includes('--backlog') ? benchBacklog() : process.argv.includes('--flood') ? benchFlood() : bench())
  .then(() => 0, (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    for (const proc of processes) if (proc.output.length > 0) process.stderr.write(`--- last output of ${proc.name} ---\n${proc.output.join('\n')}\n`);
    return 1;
  })
  .then((code) => cleanup().then(() => process.exit(code)));
