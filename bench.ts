// bench.ts: measures the daemon against a bare node:http server in the same run (`npm run bench`).
// Builds a simulated host (demo/host.ts) with the game running and a large latest.log, starts a bare
// server and the daemon as child processes, and alternates between them route by route so that drift
// (CPU frequency, noisy neighbours) hits both; server CPU per request is printed as a cross-check.
// Then log-tail scaling, presence after appends, memory.
// It reports; it never fails on a missed target. Exit: 0 done, 1 error, 130 interrupted.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { createHost, type Host } from './demo/host';

// ---- Parameters ----

const CONCURRENCY = 32;
const WARMUP_MS = 2_000;
const MEASURE_MS = 3_000;
const TAIL_WARMUP_REQUESTS = 10;
const TAIL_MEASURED_REQUESTS = 100;
const PRESENCE_ROUNDS = 8;
const MIB = 1024 * 1024;
const SMALL_LOG_BYTES = MIB;
const BIG_LOG_BYTES = 1024 * MIB;
const APPEND_BYTES = MIB;
const FILLER_CHUNK_BYTES = 4 * MIB;
const TAIL_LIKE_BYTES = MIB / 2;            // well over 2000 lines
const READY_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 60_000;          // the first presence scan of a 1 GiB log may be slow; it is reported
const STOP_GRACE_MS = 7_000;                // the daemon allows itself 5 s for in-flight requests
const IDLE_SETTLE_MS = 500;

const ROUTES = [
  '/', '/api', '/api/status', '/api/players/online', '/api/players/whitelist', '/api/logs/latest',
  '/api/logs/snapshot', '/api/backups', '/api/properties', '/api/report',
] as const;

// ---- Load generator (runs in a worker thread: the client must not share an event loop with the server) ----

interface LoadJob { port: number; path: string; concurrency: number; warmupMs: number; measureMs: number }
interface LoadResult { completed: number; rps: number; p50Ms: number; p99Ms: number; errors: number; non200: number; cpuUsPerRequest?: number }

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Closed loop: `concurrency` callers, each sends its next request when the previous one ends. */
function runLoad(job: LoadJob): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency });
  const measureFromMs = performance.now() + job.warmupMs;
  const stopAtMs = measureFromMs + job.measureMs;
  const latenciesMs: number[] = [];
  let errors = 0;
  let non200 = 0;
  return new Promise((resolve) => {
    let active = job.concurrency;
    const finish = (): void => {
      agent.destroy();
      latenciesMs.sort((a, b) => a - b);
      resolve({
        completed: latenciesMs.length,
        rps: latenciesMs.length / (job.measureMs / 1000),
        p50Ms: percentile(latenciesMs, 50),
        p99Ms: percentile(latenciesMs, 99),
        errors,
        non200,
      });
    };
    const next = (): void => {
      const startMs = performance.now();
      // A dead server would make this spin on errors; give up on the run instead.
      if (startMs >= stopAtMs || errors > 1_000) {
        if (--active === 0) finish();
        return;
      }
      const req = request({ host: '127.0.0.1', port: job.port, path: job.path, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          const endMs = performance.now();
          // Throughput counts completions inside the window, whatever their start.
          if (endMs >= measureFromMs && endMs <= stopAtMs) {
            latenciesMs.push(endMs - startMs);
            if (res.statusCode !== 200) non200++;
          }
          next();
        });
      });
      req.on('error', () => {
        errors++;
        setTimeout(next, 5);
      });
      req.end();
    };
    for (let i = 0; i < job.concurrency; i++) next();
  });
}

function workerMain(): void {
  parentPort!.on('message', (job: LoadJob) => {
    runLoad(job).then((result) => parentPort!.postMessage(result));
  });
}

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
const CHAT_TEXTS = [
  'anyone got spare iron?', 'brb dinner', 'gg', 'where is the nether portal again', 'lol',
  'can someone help me with the farm', 'selling diamonds at spawn 5 each', 'nice build!', 'who took my chest :(',
  'night all', 'the server is lagging a bit', 'meet at 120 64 -340', 'found a mansion', 'ok',
];
const SERVER_LINES = [
  '[Server thread/WARN]: Can\'t keep up! Is the server overloaded? Running 2034ms or 40 ticks behind',
  '[Server thread/INFO]: Saving the game (this may take a moment!)',
  '[Server thread/INFO]: Saved the game',
  '[Server thread/INFO]: There are 0 of a max of 20 players online: ',
];

/** 40 names; pools with different offsets share name lengths, so their log lines look alike. */
function namePool(offset: number): string[] {
  const names: string[] = [];
  for (const stem of NAME_STEMS) for (let i = 0; i < 4; i++) names.push(`${stem}_${offset + i}`);
  return names;
}

interface LogWriter {
  online: Set<string>;   // who is online after everything written so far, to check the daemon's answer
  lines(bytes: number, pool: readonly string[], settle: boolean): Buffer;
}

/** Vanilla-style lines: logins with addresses, joins, chat, leaves, server noise. */
function createLogWriter(): LogWriter {
  const online = new Set<string>();
  const random = makeRandom(20_240_601);
  let seconds = 8 * 3600;
  let entityId = 100;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  /** About `bytes` bytes of whole lines. With `settle`, every pool player still online leaves at the end. */
  function lines(bytes: number, pool: readonly string[], settle: boolean): Buffer {
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
      const address = `203.0.113.${1 + Math.floor(random() * 250)}:${40_000 + Math.floor(random() * 20_000)}`;
      const x = (random() * 400 - 200).toFixed(1);
      const z = (random() * 400 - 200).toFixed(1);
      emit(`[Server thread/INFO]: ${name}[/${address}] logged in with entity id ${entityId++} at (${x}, 64.0, ${z})`);
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
      if (roll < 0.06 && here.length < pool.length) join(pick(pool.filter((name) => !online.has(name))));
      else if (roll < 0.11 && here.length > 0) leave(pick(here));
      else if (roll < 0.9 && here.length > 0) {
        const name = pick(here);
        emit(random() < 0.5 ? `[Async Chat Thread - #3/INFO]: <${name}> ${pick(CHAT_TEXTS)}` : `[Server thread/INFO]: [Not Secure] <${name}> ${pick(CHAT_TEXTS)}`);
      } else emit(pick(SERVER_LINES));
    }
    if (settle) for (const name of pool) if (online.has(name)) leave(name);
    return Buffer.from(out.join(''), 'utf8');
  }

  return { online, lines };
}

// ---- Processes ----

interface Proc { child: ChildProcess; name: string; port: number; output: string[] }

const BARE_SERVER_SOURCE = `
const http = require('node:http');
const body = Buffer.from(JSON.stringify({ ok: true, service: 'bare', version: '1.0.0' }));
const headers = {
  'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff',
  'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length,
};
const server = http.createServer((req, res) => { res.writeHead(200, headers); res.end(body); });
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('bare listening on 127.0.0.1:' + process.env.PORT));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
`;

/** A free port: bind 0 and close (PORT=0 is refused by the daemon). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Spawns a server and resolves once its stdout shows `readyPrefix`; rejects on exit or timeout. */
function startProcess(name: string, args: string[], env: Record<string, string>, port: number, readyPrefix: string): Promise<Proc> {
  const child = spawn(process.execPath, args, { env, cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { child, name, port, output: [] };
  processes.push(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} printed no "${readyPrefix}" line within ${READY_TIMEOUT_MS} ms:\n${proc.output.join('\n')}`)), READY_TIMEOUT_MS);
    let pending = '';
    // Keep draining both pipes for the whole run: a full pipe would block the server.
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        remember(proc, line);
        if (line.startsWith(readyPrefix)) {
          clearTimeout(timer);
          resolve(proc);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line) remember(proc, `stderr: ${line}`);
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      remember(proc, `(exited: ${signal ?? `code ${code}`})`);
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${proc.output.join('\n')}`));
    });
  });
}

function remember(proc: Proc, line: string): void {
  proc.output.push(line);
  if (proc.output.length > 40) proc.output.shift();
}

function isRunning(proc: Proc): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null;
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process is gone. */
async function stopProcess(proc: Proc): Promise<void> {
  if (!isRunning(proc)) return;
  const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) a process has used, in ms, from /proc/PID/stat (clock ticks of 10 ms). */
function readCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');   // the name in field 2 may hold spaces
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** VmRSS and VmHWM in KiB from /proc/PID/status. */
function readMemoryKiB(pid: number): { rssKiB: number; hwmKiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

function hasExecutable(name: string, searchPath: string): boolean {
  return searchPath.split(':').some((dir) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// ---- One request at a time (main thread; the daemon runs in its own process) ----

interface Timed { status: number; body: Buffer; ms: number }

function timedGet(port: number, target: string, agent: Agent): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const req = request({ host: '127.0.0.1', port, path: target, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - startMs }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${target} took over ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Sequential latency; `beforeEach` runs (untimed) before every request, e.g. to change the file read. */
async function sampleLatency(port: number, target: string, warmup: number, measured: number, beforeEach = (): void => undefined): Promise<{ p50Ms: number; p99Ms: number; last: Timed }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    beforeEach();
    let last = await timedGet(port, target, agent);
    for (let i = 1; i < warmup; i++) {
      beforeEach();
      last = await timedGet(port, target, agent);
    }
    const samplesMs: number[] = [];
    for (let i = 0; i < measured; i++) {
      beforeEach();
      last = await timedGet(port, target, agent);
      samplesMs.push(last.ms);
    }
    samplesMs.sort((a, b) => a - b);
    return { p50Ms: percentile(samplesMs, 50), p99Ms: percentile(samplesMs, 99), last };
  } finally {
    agent.destroy();
  }
}

// ---- Clean-up: once, whatever happens ----

const processes: Proc[] = [];
let host: Host | undefined;
let worker: Worker | undefined;
let bigLogPath: string | undefined;
let cleanupPromise: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleanupPromise ??= (async () => {
    await Promise.all(processes.map((proc) => stopProcess(proc).catch(() => undefined)));
    await worker?.terminate().catch(() => undefined);
    // Free the 1 GiB at once; the game still holds the file open until host.remove() ends it.
    if (bigLogPath) {
      try { fs.truncateSync(bigLogPath, 0); } catch { /* already gone */ }
    }
    if (host) {
      await host.remove();
      host = undefined;   // only now: if remove() failed, cleanupSync() still deletes the folder
    }
  })();
  return cleanupPromise;
}

/** Last resort when the process exits without the async clean-up (synchronous calls only). */
function cleanupSync(): void {
  for (const proc of processes) if (isRunning(proc)) proc.child.kill('SIGKILL');
  if (bigLogPath) {
    try { fs.truncateSync(bigLogPath, 0); } catch { /* already gone */ }
  }
  if (host) {
    spawnSync('tmux', ['-S', host.tmuxSocket, 'kill-server'], { stdio: 'ignore' });
    fs.rmSync(host.root, { recursive: true, force: true });
  }
}

// ---- Report helpers ----

const fmt = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const pct = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)} %` : 'n/a');
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);

interface Target { name: string; goal: string; measured: string; pass: boolean | null }

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

// ---- Main ----

async function main(): Promise<void> {
  const startedMs = performance.now();
  const serverJs = path.join(__dirname, 'server.js');
  if (!fs.existsSync(serverJs)) throw new Error(`${serverJs} does not exist: run \`npm run build\` first.`);
  log(`gameserver-api bench: node ${process.version}, ${os.cpus().length} CPUs, concurrency ${CONCURRENCY}, ${WARMUP_MS / 1000} s warm-up + ${MEASURE_MS / 1000} s per measurement`);

  host = await createHost({});
  const env = host.daemonEnv({});
  const writer = createLogWriter();
  const poolA = namePool(1);   // the players the presence check follows
  const poolB = namePool(5);   // filler: each of its chunks ends with all of them gone

  let gameRunning = false;
  if (hasExecutable('tmux', env.PATH ?? '')) {
    const javaPid = await host.startGame();
    gameRunning = true;
    log(`game running (java pid ${javaPid}) on tmux socket ${host.tmuxSocket}`);
  } else {
    log('tmux is missing: the game cannot run, so status/online are measured OFFLINE and the presence test is skipped.');
  }

  // A large log for the route measurements; it is also the "1 MiB" case of the tail test.
  const logPath = path.join(host.serverDir, 'logs', 'latest.log');
  fs.mkdirSync(path.dirname(logPath), { recursive: true });
  const existingBytes = fs.existsSync(logPath) ? fs.statSync(logPath).size : 0;
  fs.appendFileSync(logPath, writer.lines(Math.max(0, SMALL_LOG_BYTES - existingBytes), poolA, false));
  bigLogPath = logPath;
  log(`latest.log: ${fs.statSync(logPath).size} bytes, ${writer.online.size} players online in it`);

  const apiKey = randomBytes(32).toString('base64url');
  const barePort = await freePort();
  const bare = await startProcess('bare server', ['-e', BARE_SERVER_SOURCE], { PATH: env.PATH ?? '', PORT: String(barePort) }, barePort, 'bare listening on');
  const daemonPort = await freePort();
  const daemon = await startProcess('daemon', [path.relative(path.join(__dirname, '..'), serverJs)], host.daemonEnv({ HOST: '127.0.0.1', PORT: String(daemonPort), API_KEY: apiKey }), daemonPort, 'gameserver-api 1.0.0 listening on');
  await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
  const bareIdle = readMemoryKiB(bare.child.pid!);
  const daemonIdle = readMemoryKiB(daemon.child.pid!);
  log(`idle RSS: bare ${mib(bareIdle.rssKiB)}, daemon ${mib(daemonIdle.rssKiB)}`);

  // One request per route first: a route that answers an error would measure the error path.
  const probeAgent = new Agent({ keepAlive: false });
  for (const route of ROUTES) {
    const res = await timedGet(daemonPort, route, probeAgent);
    if (res.status !== 200) log(`WARNING: GET ${route} answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
  }
  probeAgent.destroy();

  // ---- Routes, alternating with the bare server ----
  worker = new Worker(__filename);
  const loadOnce = (port: number, target: string): Promise<LoadResult> => new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    worker!.once('error', onError);
    worker!.once('message', (result: LoadResult) => {
      worker!.off('error', onError);
      resolve(result);
    });
    worker!.postMessage({ port, path: target, concurrency: CONCURRENCY, warmupMs: WARMUP_MS, measureMs: MEASURE_MS } satisfies LoadJob);
  });

  // Server CPU per request does not depend on how the 2 cores are shared with the client (or anything else
  // running here), unlike req/s: it is printed beside the ratio as a cross-check.
  const load = async (proc: Proc, target: string): Promise<LoadResult> => {
    const pid = proc.child.pid!;
    let cpuStartMs = NaN;
    let cpuEndMs = NaN;
    const startTimer = setTimeout(() => { cpuStartMs = readCpuMs(pid); }, WARMUP_MS);
    const endTimer = setTimeout(() => { cpuEndMs = readCpuMs(pid); }, WARMUP_MS + MEASURE_MS);
    try {
      const result = await loadOnce(proc.port, target);
      // A server that died would turn every later row into zeros: stop at once with its last output.
      if (!isRunning(proc)) throw new Error(`${proc.name} died during GET ${target}`);
      return { ...result, cpuUsPerRequest: ((cpuEndMs - cpuStartMs) * 1000) / result.completed };
    } finally {
      clearTimeout(startTimer);
      clearTimeout(endTimer);
    }
  };
  const bareRuns: LoadResult[] = [await load(bare, '/')];
  const routeRuns: LoadResult[] = [];
  const hwmAfterRouteKiB: number[] = [];   // VmHWM only grows: the route that raises it is the one to look at
  for (const route of ROUTES) {
    const run = await load(daemon, route);
    routeRuns.push(run);
    hwmAfterRouteKiB.push(readMemoryKiB(daemon.child.pid!).hwmKiB);
    bareRuns.push(await load(bare, '/'));
    const ratio = run.rps / ((bareRuns.at(-2)!.rps + bareRuns.at(-1)!.rps) / 2);
    log(`  ${route.padEnd(24)} ${fmt(run.rps, 0).padStart(7)} req/s  ${pct(ratio).padStart(8)} of bare  p50 ${fmt(run.p50Ms, 2)} ms  p99 ${fmt(run.p99Ms, 2)} ms  ${fmt(run.cpuUsPerRequest!, 0)} µs CPU/req`);
  }

  // ---- Tail of a 1 MiB vs a 1 GiB latest.log ----
  const tailTarget = '/api/logs/latest?lines=2000';
  // a live log changes between two requests: one line appended before each, so that every tail is read
  // from the file and none is the daemon's reused answer for an unchanged file
  const appendOneLine = (): void => fs.appendFileSync(logPath, writer.lines(1, poolA, false));
  const smallBytes = fs.statSync(logPath).size;
  const smallTail = await sampleLatency(daemonPort, tailTarget, TAIL_WARMUP_REQUESTS, TAIL_MEASURED_REQUESTS, appendOneLine);
  const growStartMs = performance.now();
  {
    // Appended in place (the game keeps its file open); generated lines, so no reader meets a hole of NULs.
    const fd = fs.openSync(logPath, 'a');
    try {
      const chunk = writer.lines(FILLER_CHUNK_BYTES, poolB, true);
      let size = fs.fstatSync(fd).size;
      // The last TAIL_LIKE_BYTES come from the same players as the 1 MiB log, so both tails hold alike lines.
      while (BIG_LOG_BYTES - TAIL_LIKE_BYTES - size > FILLER_CHUNK_BYTES * 2) size += fs.writeSync(fd, chunk);
      size += fs.writeSync(fd, writer.lines(BIG_LOG_BYTES - TAIL_LIKE_BYTES - size, poolB, true));
      fs.writeSync(fd, writer.lines(BIG_LOG_BYTES - size, poolA, false));
    } finally {
      fs.closeSync(fd);
    }
  }
  const bigBytes = fs.statSync(logPath).size;
  log(`latest.log grown to ${bigBytes} bytes in ${fmt((performance.now() - growStartMs) / 1000)} s`);
  const bigTail = await sampleLatency(daemonPort, tailTarget, TAIL_WARMUP_REQUESTS, TAIL_MEASURED_REQUESTS, appendOneLine);
  const tailLines = (res: Timed): number => {
    try { return (JSON.parse(res.body.toString('utf8')) as { lines?: unknown[] }).lines?.length ?? -1; } catch { return -1; }
  };
  if (tailLines(smallTail.last) !== 2000 || tailLines(bigTail.last) !== 2000) {
    log(`WARNING: tail returned ${tailLines(smallTail.last)} / ${tailLines(bigTail.last)} lines (status ${smallTail.last.status} / ${bigTail.last.status}), expected 2000`);
  }
  const tailRatio = bigTail.p50Ms / smallTail.p50Ms;

  const hwmAfterTailKiB = readMemoryKiB(daemon.child.pid!).hwmKiB;

  // ---- Presence after 1 MiB appended to the 1 GiB log ----
  const presenceMs: number[] = [];
  let presenceWrong = 0;
  let firstScanMs = NaN;
  if (gameRunning) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      firstScanMs = (await timedGet(daemonPort, '/api/players/online', agent)).ms;
      for (let round = 0; round < PRESENCE_ROUNDS; round++) {
        fs.appendFileSync(logPath, writer.lines(APPEND_BYTES, poolA, false));
        const res = await timedGet(daemonPort, '/api/players/online', agent);
        presenceMs.push(res.ms);
        const players = (JSON.parse(res.body.toString('utf8')) as { players?: string[] }).players ?? [];
        const expected = [...writer.online].sort();
        if (res.status !== 200 || JSON.stringify([...players].sort()) !== JSON.stringify(expected)) {
          presenceWrong++;
          log(`WARNING: round ${round + 1}: status ${res.status}, players ${JSON.stringify(players)}; expected ${JSON.stringify(expected)}`);
        }
      }
    } finally {
      agent.destroy();
    }
  }

  const bareEnd = readMemoryKiB(bare.child.pid!);
  const daemonEnd = readMemoryKiB(daemon.child.pid!);

  // ---- Report ----
  log('');
  log(`### Routes (concurrency ${CONCURRENCY}, keep-alive; bare = fixed small JSON with the same 5 headers, measured before and after each route)`);
  log('');
  log('| route | req/s | bare req/s | of bare | p50 ms | p99 ms | bare p50/p99 ms | CPU µs/req | bare CPU µs/req | of bare by CPU | non-200/errors | daemon VmHWM after |');
  log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  const ratios = new Map<string, number>();
  ROUTES.forEach((route, i) => {
    const run = routeRuns[i]!;
    const before = bareRuns[i]!;
    const after = bareRuns[i + 1]!;
    const bareRps = (before.rps + after.rps) / 2;
    const bareCpuUs = (before.cpuUsPerRequest! + after.cpuUsPerRequest!) / 2;
    ratios.set(route, run.rps / bareRps);
    log(`| ${route} | ${fmt(run.rps, 0)} | ${fmt(bareRps, 0)} | ${pct(run.rps / bareRps)} | ${fmt(run.p50Ms, 2)} | ${fmt(run.p99Ms, 2)} | ${fmt((before.p50Ms + after.p50Ms) / 2, 2)}/${fmt((before.p99Ms + after.p99Ms) / 2, 2)} | ${fmt(run.cpuUsPerRequest!, 0)} | ${fmt(bareCpuUs, 0)} | ${pct(bareCpuUs / run.cpuUsPerRequest!)} | ${run.non200}/${run.errors} | ${mib(hwmAfterRouteKiB[i]!)} |`);
  });
  log('');
  log(`Tail (${tailTarget}, ${TAIL_MEASURED_REQUESTS} sequential requests): ${smallBytes} B log p50 ${fmt(smallTail.p50Ms, 2)} ms / p99 ${fmt(smallTail.p99Ms, 2)} ms; ` +
    `${bigBytes} B log p50 ${fmt(bigTail.p50Ms, 2)} ms / p99 ${fmt(bigTail.p99Ms, 2)} ms; ratio ${fmt(tailRatio, 2)}`);
  if (gameRunning) {
    log(`Presence (GET /api/players/online, ${PRESENCE_ROUNDS} rounds of ${APPEND_BYTES} B appended): median ${fmt(median(presenceMs), 2)} ms, max ${fmt(Math.max(...presenceMs), 2)} ms, ` +
      `wrong answers ${presenceWrong}; first request on the fresh 1 GiB log ${fmt(firstScanMs, 1)} ms`);
  }
  log(`Memory: bare idle ${mib(bareIdle.rssKiB)} peak ${mib(bareEnd.hwmKiB)}; daemon idle ${mib(daemonIdle.rssKiB)} peak ${mib(daemonEnd.hwmKiB)} (VmRSS after start-up, VmHWM at the end); ` +
    `daemon VmHWM after the tail runs ${mib(hwmAfterTailKiB)}`);
  log('');

  const ratioTarget = (route: string, goal: number): Target => ({
    name: `GET ${route} throughput`, goal: `≥ ${goal} % of bare`, measured: pct(ratios.get(route)!), pass: ratios.get(route)! >= goal / 100,
  });
  const presenceMedianMs = median(presenceMs);
  const targets: Target[] = [
    ratioTarget('/api', 85),
    ratioTarget('/api/properties', 70),
    ratioTarget('/api/players/whitelist', 70),
    ratioTarget('/api/backups', 70),
    { ...ratioTarget('/api/status', 60), name: `GET /api/status throughput${gameRunning ? '' : ' (game OFFLINE)'}` },
    { ...ratioTarget('/api/players/online', 60), name: `GET /api/players/online throughput${gameRunning ? '' : ' (game OFFLINE)'}` },
    { name: 'tail lines=2000: 1 GiB / 1 MiB p50 latency', goal: '≤ 1.2', measured: fmt(tailRatio, 2), pass: tailRatio <= 1.2 },
    gameRunning
      ? { name: 'presence after 1 MiB appended (median; max)', goal: '< 20 ms', measured: `${fmt(presenceMedianMs, 2)} ms; ${fmt(Math.max(...presenceMs), 2)} ms${presenceWrong ? `; ${presenceWrong} wrong` : ''}`, pass: presenceMedianMs < 20 && presenceWrong === 0 }
      : { name: 'presence after 1 MiB appended', goal: '< 20 ms', measured: 'skipped: tmux missing', pass: null },
    { name: 'idle RSS', goal: '≤ 1.15 × bare', measured: `${fmt(daemonIdle.rssKiB / bareIdle.rssKiB, 2)} × (${mib(daemonIdle.rssKiB)} vs ${mib(bareIdle.rssKiB)})`, pass: daemonIdle.rssKiB <= 1.15 * bareIdle.rssKiB },
    { name: 'peak RSS (VmHWM)', goal: '≤ 1.5 × bare peak', measured: `${fmt(daemonEnd.hwmKiB / bareEnd.hwmKiB, 2)} × (${mib(daemonEnd.hwmKiB)} vs ${mib(bareEnd.hwmKiB)})`, pass: daemonEnd.hwmKiB <= 1.5 * bareEnd.hwmKiB },
  ];
  log('| target | goal | measured | result |');
  log('|---|---|---|---|');
  for (const t of targets) log(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.pass === null ? 'n/a' : t.pass ? 'PASS' : 'MISS'} |`);
  log('');
  log(`bench finished in ${fmt((performance.now() - startedMs) / 1000)} s (clean-up follows)`);
}

if (!isMainThread) {
  workerMain();
} else {
  const interrupt = (signal: NodeJS.Signals): void => {
    log(`\n${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  process.once('exit', cleanupSync);
  main()
    .then(
      () => 0,
      (err: unknown) => {
        process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
        for (const proc of processes) if (proc.output.length) process.stderr.write(`--- last output of ${proc.name} ---\n${proc.output.join('\n')}\n`);
        return 1;
      },
    )
    .then((code) => cleanup().then(
      () => process.exit(code),
      (err: unknown) => {
        process.stderr.write(`clean-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(code || 1);   // the 'exit' handler still removes what it can
      },
    ));
}
