// `npm run demo`: gameserver-api against a simulated host, with nothing to install but tmux.
// Builds a host (demo/host.ts) with players coming and going, starts its game through `serv start`,
// runs dist/server.js on it with a fresh key and prints ready-to-paste curl lines for every route.
// HOST and PORT set where the daemon listens (default 127.0.0.1 and 6767); progress goes to stderr.
// SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the daemon and remove the host and everything it started, in any
// state of the game; so does the end of whoever started the demo (its parent, and under npm the script's shell,
// npm and the process that ran npm), since `kill` of npm's pid reaches only npm and the shell it started.

import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createHost, Host, ROOT_MARKER, unitNodeArgs } from './host';

const DAEMON_SCRIPT = path.resolve(__dirname, '..', 'server.js');
const START_UP_TIMEOUT_MS = 60_000; // a busy machine: the daemon's own start takes 0.3 s on a quiet one
const DAEMON_STOP_TIMEOUT_MS = 7_000;
const LAUNCHER_POLL_MS = 250;
const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = '6767';
const START_UP_PREFIX = 'gameserver-api ';
const SAMPLE_BODIES: Record<string, string> = {
  '/api/command': '{"command":"list","output":true}',
  '/api/say': '{"text":"Hello from curl","from":"Admin"}',
  '/api/whitelist/add': '{"player":"Alex"}',
  '/api/whitelist/remove': '{"player":"Alex"}',
  '/api/players/kick': '{"player":"Steve","reason":"Take a break"}',
  '/api/players/ban': '{"player":"Griefer_9","reason":"Griefing"}',
  '/api/players/pardon': '{"player":"Griefer_9"}',
  '/api/players/op': '{"player":"Alex"}',
  '/api/players/deop': '{"player":"Alex"}',
};

interface Endpoint {
  method: string;
  route: string;
  auth_required: boolean;
}

/** A progress line on stderr: stdout holds the daemon's lines and the instructions, which `| tee` keeps. */
function say(text: string): void {
  process.stderr.write(`demo: ${text}\n`);
}

function isTmuxInstalled(): Promise<boolean> {
  return new Promise((resolve) => execFile('tmux', ['-V'], (err) => resolve(!err)));
}

/** Without tmux: the game as a plain child with a pipe for stdin, marked so that host.remove() ends it. */
function startGameWithoutConsole(host: Host): void {
  const java = spawn(path.join(host.binDir, 'java'), [`-Dgameserver.console=${host.consoleRecord}`, '-jar', 'server.jar', 'nogui'], {
    cwd: host.serverDir,
    env: { ...host.daemonEnv(), [ROOT_MARKER]: host.root },
    stdio: ['pipe', 'ignore', 'ignore'], // the pipe stays open: the game stops at the end of its input
  });
  java.unref();
}

/** Runs `serv start` as the daemon would: the daemon's environment, no key. */
function startGameWithServ(host: Host): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const serv = spawn(path.join(host.binDir, 'serv'), ['start'], { env: host.daemonEnv(), stdio: 'inherit' });
    serv.once('error', reject);
    serv.once('exit', resolve);
  });
}

// stdout is piped only to spot the start-up line; every byte is passed on, so it reads as if inherited.
function spawnDaemon(host: Host, key: string, bindHost: string, port: string): ChildProcess {
  const env = host.daemonEnv({ API_KEY: key, PORT: port, HOST: bindHost });
  const daemon = spawn(process.execPath, [...unitNodeArgs(), DAEMON_SCRIPT], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  daemon.stdout?.pipe(process.stdout);
  return daemon;
}

function waitForStartUpLine(daemon: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error('the daemon printed no start-up line within 60 s')), START_UP_TIMEOUT_MS);
    daemon.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.split('\n').some((line) => line.startsWith(START_UP_PREFIX) && line.includes(' listening on '))) {
        clearTimeout(timer);
        resolve();
      }
    });
    daemon.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited during start-up (status ${code})`));
    });
  });
}

function fetchEndpoints(base: string): Promise<Endpoint[]> {
  return new Promise((resolve, reject) => {
    http.get(`${base}/api`, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { endpoints: Endpoint[] }).endpoints);
        } catch (err) {
          reject(err);
        }
      });
    }).on('error', reject);
  });
}

/** Where curl reaches a daemon bound to `bindHost`: a wildcard address through loopback, IPv6 in brackets. */
function baseUrl(bindHost: string, port: string): string {
  const reachable = bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost === '::' ? '::1' : bindHost;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

// Single quotes around URLs with a query: `?` is a glob character in the shell.
function curlLine(base: string, { method, route, auth_required }: Endpoint): string {
  const url = route.startsWith('/api/logs/') ? `'${base}${route}?lines=20'` : `${base}${route}`;
  // -N: the event stream is printed as it comes, until Ctrl-C
  const parts = [route === '/api/events' ? 'curl -sN' : 'curl -s'];
  if (method !== 'GET') parts.push(`-X ${method}`);
  if (auth_required) parts.push('-H "X-API-Key: $KEY"');
  const body = SAMPLE_BODIES[route];
  if (body !== undefined) parts.push(`-H 'Content-Type: application/json' -d '${body}'`);
  parts.push(url);
  return parts.join(' ');
}

function printInstructions(base: string, key: string, endpoints: readonly Endpoint[]): void {
  const lines = [
    '',
    'gameserver-api demo is running against a simulated host. Paste into another shell:',
    '',
    `KEY='${key}'`,
    ...endpoints.map((endpoint) => curlLine(base, endpoint)),
    '',
    'Press Ctrl-C to stop the daemon and remove the simulated host.',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

function stopDaemon(daemon: ChildProcess): Promise<void> {
  if (daemon.exitCode !== null || daemon.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => daemon.kill('SIGKILL'), DAEMON_STOP_TIMEOUT_MS);
    daemon.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    daemon.kill('SIGTERM');
  });
}

/** A process's parent now, from /proc/PID/stat (its comm may hold spaces and ')'); null once it has gone. */
function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function startedByScript(pid: number, script: string): boolean {
  try {
    return Buffer.concat([Buffer.from('\0'), fs.readFileSync(`/proc/${pid}/environ`)]).includes(`\0npm_lifecycle_script=${script}\0`);
  } catch {
    return false;
  }
}

/**
 * The demo and the processes above it that started it, each with the parent it has now: under `npm run demo`
 * (npm, then `sh -c`, then node) the script's shell and npm carry on when npm is killed, or when the shell that ran
 * npm exits, without a signal to us; a process whose parent dies gets another at once.
 */
function launchers(): Array<{ pid: number; parent: number }> {
  const chain: Array<{ pid: number; parent: number }> = [];
  const script = process.env.npm_lifecycle_script;
  for (let pid = process.pid; ;) {
    const parent = parentOf(pid);
    if (parent === null || parent <= 1) break;
    chain.push({ pid, parent });
    // the package manager is the first process up the chain not started for the script: its parent ran it
    if (script === undefined || !startedByScript(pid, script)) break;
    pid = parent;
  }
  return chain;
}

/** Calls onGone once a launcher has gone: a changed parent cannot be a reused pid, as a watched pid could be. */
function watchLaunchers(onGone: () => void): void {
  const chain = launchers();
  const timer = setInterval(() => {
    if (chain.every(({ pid, parent }) => parentOf(pid) === parent)) return;
    clearInterval(timer);
    onGone();
  }, LAUNCHER_POLL_MS);
  timer.unref();
}

async function main(): Promise<void> {
  if (!fs.existsSync(DAEMON_SCRIPT)) throw new Error(`${DAEMON_SCRIPT} does not exist; run \`npm run build\` first.`);
  const bindHost = process.env.HOST || DEFAULT_HOST;
  const port = process.env.PORT || DEFAULT_PORT;
  say('building a simulated host under /tmp');
  const building = createHost({ players: true });
  let gameStarting: Promise<unknown> = Promise.resolve();
  let daemon: ChildProcess | null = null;
  let stopping = false;
  // From the first moment: whatever step is under way, the host it makes is removed
  const shutDown = async (status: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping the daemon and removing the simulated host');
    try {
      if (daemon) await stopDaemon(daemon);
      await gameStarting.catch(() => undefined);   // what a `serv start` under way starts must be there to be found
      const host = await building.catch(() => null);
      await host?.remove();
    } catch (err) {
      say(err instanceof Error ? err.message : String(err));
      process.exit(1);
    }
    process.exit(status);
  };
  // Ctrl-C in the terminal reaches the daemon too (same process group); it shuts down on SIGINT by itself.
  // It also reaches `tee` in `npm run demo | tee demo.log`, which goes first: a line written after that meets
  // EPIPE, and the host must still be removed.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutDown(0));
  watchLaunchers(() => {
    say('the process that started the demo has gone');
    void shutDown(0);
  });

  try {
    const host = await building;
    if (stopping) return;
    if (await isTmuxInstalled()) {
      say('starting the simulated game (serv start)');
      const starting = startGameWithServ(host);
      gameStarting = starting;
      const status = await starting;
      if (status !== 0) process.stderr.write(`serv start exited with status ${status}; the game is not running.\n`);
    } else {
      startGameWithoutConsole(host);
      process.stderr.write('tmux is not installed: the simulated game runs without a console. Every read route works; '
        + 'POST /api/command (and whitelist edits while the game runs) answer 503 "The game console is not available: '
        + 'tmux is not installed.", and `serv start|stop|restart` fail.\n');
    }
    if (stopping) return;
    const key = randomBytes(32).toString('base64url');
    say(`starting gameserver-api on ${bindHost} port ${port}`);
    const started = spawnDaemon(host, key, bindHost, port);
    daemon = started;
    await waitForStartUpLine(started);
    started.once('exit', (code) => void shutDown(code ?? 1));   // it stopped on its own: take the host down too
    const base = baseUrl(bindHost, port);
    printInstructions(base, key, await fetchEndpoints(base));
  } catch (err) {
    process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
    await shutDown(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
