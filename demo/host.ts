// Simulated Minecraft server host for gameserver-api's tests, bench and `npm run demo`.
// createHost() lays out, under one temp folder, a server folder, backups, a snapshot log, the fakes
// bin/java (the game), bin/serv and bin/servreport.sh, and a private tmux socket. remove() stops all of it.
// The interface is fixed by the project's internal contract: tests and the bench are written against it.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { banEntry, BANS_FILE, formatList, formatWhitelist, offlineUuid, SIMULATED_PLAYERS } from './game';

export interface HostOptions {
  root?: string;            // default: a new folder os.tmpdir()/gameserver-host-XXXXXX
  players?: boolean;        // simulated players join and leave over time (demo); default false
  onlineMode?: boolean;     // server.properties online-mode; default false
  gameThreads?: number;     // threads the fake game holds, as many as a real JVM has (the bench: 64); default Node's own
}

export interface Host {
  root: string;
  serverDir: string;
  backupDir: string;
  binDir: string;
  snapshotLog: string;
  tmuxSocket: string;
  tmuxSession: string;
  consoleRecord: string;
  servRecord: string;
  reportRecord: string;
  controlDir: string;
  serverPort: number;       // server-port of server.properties: a free port of its own, where the game answers pings
  daemonEnv(extra?: Record<string, string>): Record<string, string>;
  tmux(...args: string[]): Promise<string>;
  startGame(): Promise<number>;
  startShell(): Promise<void>;
  stopGame(): Promise<void>;
  remove(): Promise<void>;
}

const TMUX_SESSION = 'gameserver';
// serv and servreport.sh put this variable (value: the root) into the environment of every process they start.
export const ROOT_MARKER = 'GAMESERVER_HOST_ROOT';

/**
 * The options the shipped unit gives node (ExecStart=/usr/bin/node … /opt/gameserver-api/dist/server.js): the demo,
 * the tests and the benchmark run the daemon as systemd does.
 */
export function unitNodeArgs(): string[] {
  const unit = fs.readFileSync(path.join(__dirname, '..', '..', 'gameserver-api.service'), 'utf8');
  return /^ExecStart=\S+ (.*?) ?\S+\/server\.js$/m.exec(unit)![1].split(' ').filter((arg) => arg !== '');
}
const GAME_READY_TIMEOUT_MS = 10_000;
const PROCESS_EXIT_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 10_000;
const POLL_INTERVAL_MS = 25;
const SYSTEM_PATH = process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// The bash fakes are not compiled: from dist/demo/host.js they are in ../../demo.
const SCRIPTS_DIR = path.resolve(__dirname, '..', '..', 'demo');
const GAME_SCRIPT = path.join(__dirname, 'game.js');
const WHITELISTED_PLAYERS = ['Alex', 'Steve'];
const BANNED_PLAYERS: ReadonlyArray<[name: string, source: string, reason: string]> = [['Griefer_1', 'Server', 'Griefing'], ['Spammer_2', 'Alex', 'Spam']];

// ---- Small helpers ----

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it gives a value; rejects with `failure` (or what it makes then) after `timeoutMs`. */
async function waitFor<T>(probe: () => Promise<T | null> | T | null, timeoutMs: number, failure: string | (() => string)): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(typeof failure === 'string' ? failure : failure());
    await sleep(POLL_INTERVAL_MS);
  }
}

/** Runs a program (never through a shell); resolves its stdout. */
function run(file: string, args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') reject(new Error(`${file} is not installed`));
      else if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

function readProc(pid: number, file: string): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

/** Gone or a zombie: PID 1 in containers does not always reap orphans, so a zombie can stay in /proc. */
function isGone(pid: number): boolean {
  const stat = readProc(pid, 'stat');
  return stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** The kernel's count of processes and threads started since boot, and the last PID it gave one of them. */
interface PidMark { started: number; lastPid: number }

function pidMark(): PidMark {
  // the count first: what starts between the two reads is counted when the mark is compared with a later one
  const started = Number(/^processes (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))![1]);
  return { started, lastPid: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[4]) };
}

let pidMax: number | undefined;

/**
 * Whether a PID now in /proc may belong to a process started after `since`: the kernel gives PIDs out in turn,
 * starting again low once it reaches pid_max, so one started since then has a PID from the mark's last one to
 * today's, round the turn; any PID once so many processes started that the turn may have passed the mark again.
 */
function startedSince(since: PidMark | undefined): (pid: number) => boolean {
  if (since === undefined) return () => true;
  const now = pidMark();
  pidMax ??= Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  if (!(now.started - since.started < pidMax / 2)) return () => true;
  return now.lastPid >= since.lastPid
    ? (pid) => pid > since.lastPid && pid <= now.lastPid
    : (pid) => pid > since.lastPid || pid <= now.lastPid;
}

/**
 * Every process started with ROOT_MARKER=root in its environment: what serv, the report and the game left running.
 * With `since`, the mark taken before the root existed, only the environments of processes started after it are
 * read: a look at every process of a machine as busy as a test run's cost a few milliseconds, a hundred times a run.
 */
function findMarkedProcesses(root: string, since: PidMark | undefined): number[] {
  const marker = Buffer.from(`\0${ROOT_MARKER}=${root}\0`);
  const pids: number[] = [];
  const entries = fs.readdirSync('/proc');
  const mayBeMarked = startedSince(since);   // read after the listing: every PID listed was given out by then
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry) || Number(entry) === process.pid || !mayBeMarked(Number(entry))) continue;
    try {
      const environ = Buffer.concat([Buffer.from('\0'), fs.readFileSync(`/proc/${entry}/environ`)]);
      if (environ.includes(marker)) pids.push(Number(entry));
    } catch {
      // exited meanwhile, or another user's process
    }
  }
  return pids;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: already gone
  }
}

// ---- Files of the server folder ----

/** Date.toString() of Java for the header of server.properties, e.g. "Sun Nov 22 17:24:46 UTC 2026". */
function javaDateString(when: Date): string {
  const [weekday, day, month, year, time] = when.toUTCString().replace(',', '').split(' ');   // "Sun, 22 Nov 2026 17:24:46 GMT"
  return `${weekday} ${month} ${day} ${time} UTC ${year}`;
}

// As Properties.store writes it on Java 21: sorted keys, `:` `!` escaped; the motd keeps a pre-1.20 \u escape.
function serverProperties(onlineMode: boolean, port: number): string {
  const values: Record<string, string> = {
    'accepts-transfers': 'false', 'allow-flight': 'false', 'allow-nether': 'true', 'broadcast-console-to-ops': 'true',
    'broadcast-rcon-to-ops': 'true', 'bug-report-link': '', difficulty: 'easy', 'enable-command-block': 'false',
    'enable-jmx-monitoring': 'false', 'enable-query': 'false', 'enable-rcon': 'true', 'enable-status': 'true',
    'enforce-secure-profile': 'true', 'enforce-whitelist': 'false', 'entity-broadcast-range-percentage': '100',
    'force-gamemode': 'false', 'function-permission-level': '2', gamemode: 'survival', 'generate-structures': 'true',
    'generator-settings': '{}', hardcore: 'false', 'hide-online-players': 'false', 'initial-disabled-packs': '',
    'initial-enabled-packs': 'vanilla', 'level-name': 'world', 'level-seed': '', 'level-type': 'minecraft\\:normal',
    'log-ips': 'true', 'max-chained-neighbor-updates': '1000000', 'max-players': '20', 'max-tick-time': '60000',
    'max-world-size': '29999984', motd: '\\u00A76Gameserver\\u00A7r survival \\u2014 be nice\\!',
    'network-compression-threshold': '256', 'online-mode': String(onlineMode), 'op-permission-level': '4',
    'pause-when-empty-seconds': '60', 'player-idle-timeout': '0', 'prevent-proxy-connections': 'false', pvp: 'true',
    'query.port': '25565', 'rate-limit': '0', 'rcon.password': 'rc0n-S3cret-do-not-share', 'rcon.port': '25575',
    'region-file-compression': 'deflate', 'require-resource-pack': 'false', 'resource-pack': '', 'resource-pack-id': '',
    'resource-pack-prompt': '', 'resource-pack-sha1': '', 'server-ip': '', 'server-port': String(port),
    'simulation-distance': '10', 'spawn-monsters': 'true', 'spawn-protection': '16', 'sync-chunk-writes': 'true',
    'text-filtering-config': '', 'text-filtering-version': '0', 'use-native-transport': 'true', 'view-distance': '10',
    'white-list': 'true',
  };
  const lines = Object.keys(values).sort().map((key) => `${key}=${values[key]}`);
  return ['#Minecraft server properties', `#${javaDateString(new Date())}`, ...lines, ''].join('\n');
}

// usercache.json: Gson on one line, no trailing newline; vanilla keeps entries for a month.
function userCache(): string {
  const expiresOn = '2026-12-21 21:10:40 +0000';
  return JSON.stringify(SIMULATED_PLAYERS.map((name) => ({ name, uuid: offlineUuid(name), expiresOn })));
}

// A previous run: an address to mask, a chat line, a clean stop. Rolled to logs/2026-11-21-2.log.gz at the next start.
const OLD_LATEST_LOG = [
  'Starting minecraft server version 1.21.4',
  'Done (2.918s)! For help, type "help"',
  'Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)',
  'Alex joined the game',
  '<Alex> see you tomorrow',
  'Alex lost connection: Disconnected',
  'Alex left the game',
  'Stopping the server',
  'Stopping server',
  'Saving worlds',
].map((message, i) => `[21:${String(10 + i).padStart(2, '0')}:00] [Server thread/INFO]: ${message}\n`).join('');

// The run before that one, already rolled by log4j; its server was killed, so it has no stop lines.
const OLDER_RUN_LOG = [
  '[08:00:00] [Server thread/INFO]: Starting minecraft server version 1.21.4\n',
  '[08:00:03] [Server thread/INFO]: Done (3.112s)! For help, type "help"\n',
  '[09:41:27] [Server thread/INFO]: Steve[/203.0.113.9:61022] logged in with entity id 87 at (-3.5, 64.0, 220.5)\n',
  '[09:41:27] [Server thread/INFO]: Steve joined the game\n',
].join('');
const OLDER_RUN_LOG_GZ = gzipSync(OLDER_RUN_LOG);

// The files of a host are written side by side through libuv's threads: the tests build a hundred hosts while their
// other groups run, and a synchronous write holds this process's one thread for each of them.

/** Waits for every one of `writes`, then fails with the first failure: nothing is still writing once it settles. */
async function allWritten(writes: Array<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(writes)).find((result) => result.status === 'rejected');
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
}

async function writeWorld(worldDir: string): Promise<void> {
  await allWritten([fsp.mkdir(path.join(worldDir, 'region'), { recursive: true }), fsp.mkdir(path.join(worldDir, 'playerdata'), { recursive: true })]);
  await allWritten([
    fsp.writeFile(path.join(worldDir, 'level.dat'), Buffer.alloc(2048, 7)),
    fsp.writeFile(path.join(worldDir, 'session.lock'), '\u2603'),   // what the server writes into its lock file
    fsp.writeFile(path.join(worldDir, 'region', 'r.0.0.mca'), Buffer.alloc(8192, 1)),
    fsp.writeFile(path.join(worldDir, 'playerdata', `${offlineUuid('Alex')}.dat`), Buffer.alloc(512, 3)),
  ]);
}

async function writeServerDir(serverDir: string, onlineMode: boolean, port: number): Promise<void> {
  const logsDir = path.join(serverDir, 'logs');
  await fsp.mkdir(logsDir, { recursive: true });
  const whitelist = WHITELISTED_PLAYERS.map((name) => ({ uuid: offlineUuid(name), name }));
  const lastWrite = new Date('2026-11-21T21:19:00Z');
  await allWritten([
    fsp.writeFile(path.join(serverDir, 'server.properties'), serverProperties(onlineMode, port)),
    fsp.writeFile(path.join(serverDir, 'eula.txt'), 'eula=true\n'),
    fsp.writeFile(path.join(serverDir, 'whitelist.json'), formatWhitelist(whitelist)),
    fsp.writeFile(path.join(serverDir, 'usercache.json'), userCache()),
    fsp.writeFile(path.join(serverDir, BANS_FILE), formatList(BANNED_PLAYERS.map(([name, source, reason]) =>
      banEntry({ uuid: offlineUuid(name), name }, reason, source, new Date('2026-11-19T20:30:00Z'))))),
    fsp.writeFile(path.join(serverDir, 'version_history.json'), '{"currentVersion":"git-Paper-211 (MC: 1.21.4)"}'),
    fsp.writeFile(path.join(logsDir, '2026-11-21-1.log.gz'), OLDER_RUN_LOG_GZ),
    fsp.writeFile(path.join(logsDir, 'latest.log'), OLD_LATEST_LOG).then(() => fsp.utimes(path.join(logsDir, 'latest.log'), lastWrite, lastWrite)),
    writeWorld(path.join(serverDir, 'world')),
  ]);
}

// Each archive: what to pack (relative to the server folder) and its modification time. notes.txt is not an archive.
const SAMPLE_BACKUPS: readonly { name: string; content: string; mtime: string }[] = [
  { name: 'snapshot_2026-11-20_03-00-00.tar.gz', content: 'world', mtime: '2026-11-20T03:00:04Z' },
  { name: 'gameserver_backup_2026-11-19.tar.gz', content: '.', mtime: '2026-11-19T04:00:21Z' },
  { name: 'restore_undo_2026-11-18.tar.gz', content: 'world', mtime: '2026-11-18T12:29:58Z' },
  { name: 'world-old.tar.gz', content: 'world', mtime: '2026-10-02T09:15:00Z' },
];

// The archives' bytes, made by tar for the first host of this process and written as they are for the next: a test
// run builds some fifty hosts, and four tar-and-gzip runs each were a fifth of the processes it started.
let sampleArchives: Promise<Map<string, Buffer>> | undefined;

function packSampleArchives(serverDir: string, scratchDir: string): Promise<Map<string, Buffer>> {
  return (sampleArchives ??= (async () => {
    const archives = new Map<string, Buffer>();
    for (const { name, content } of SAMPLE_BACKUPS) {
      const file = path.join(scratchDir, name);
      await run('tar', ['czf', file, '-C', serverDir, content], { PATH: SYSTEM_PATH });
      archives.set(name, fs.readFileSync(file));
    }
    return archives;
  })().catch((err: unknown) => {
    sampleArchives = undefined;   // a later host tries again
    throw err;
  }));
}

async function writeBackups(backupDir: string, serverDir: string): Promise<void> {
  await fsp.mkdir(backupDir);
  const archives = await packSampleArchives(serverDir, backupDir);
  await allWritten([
    ...SAMPLE_BACKUPS.map(async ({ name, mtime }) => {
      const file = path.join(backupDir, name);
      await fsp.writeFile(file, archives.get(name)!);
      await fsp.utimes(file, new Date(mtime), new Date(mtime));
    }),
    fsp.writeFile(path.join(backupDir, 'notes.txt'), 'world-old.tar.gz: the map before the 1.21 upgrade, keep it.\n'),
  ]);
}

const SNAPSHOT_LOG_LINES = [
  '[2026-11-18 12:29:58] restore: current world saved as restore_undo_2026-11-18.tar.gz',
  '[2026-11-19 04:00:21] full backup created: gameserver_backup_2026-11-19.tar.gz (24K)',
  '[2026-11-19 04:02:11] offsite copy of gameserver_backup_2026-11-19.tar.gz to 192.0.2.44 finished',
  '[2026-11-20 03:00:04] snapshot created: snapshot_2026-11-20_03-00-00.tar.gz (4.0K)',
];

// ---- Fakes in bin/ ----

// Named `java` and run through an absolute node shebang, so that /proc/PID/comm reads "java" as for the real server.
function writeJavaLauncher(binDir: string, players: boolean, threads: number | undefined): Promise<void> {
  const source = [
    `#!${process.execPath}`,
    '// Simulated Minecraft server, written by demo/host.ts. Usage: java -Dgameserver.console=<record> -jar server.jar nogui',
    // libuv starts its whole pool at the first task: a real JVM has 50 threads and more, and the kernel's cost of
    // /proc/PID/stat grows with them
    ...(threads === undefined ? [] : [`process.env.UV_THREADPOOL_SIZE = '${threads}';`, "require('node:fs').stat('.', () => undefined);"]),
    `require(${JSON.stringify(GAME_SCRIPT)}).runGame({ players: ${players}, controlDir: ${JSON.stringify(path.join(path.dirname(binDir), 'control'))} });`,
    '',
  ].join('\n');
  return fsp.writeFile(path.join(binDir, 'java'), source, { mode: 0o755 });
}

async function installFakes(binDir: string, players: boolean, threads: number | undefined): Promise<void> {
  await fsp.mkdir(binDir);
  await allWritten([
    writeJavaLauncher(binDir, players, threads),
    ...['serv', 'servreport.sh'].map(async (script) => {
      await fsp.copyFile(path.join(SCRIPTS_DIR, script), path.join(binDir, script));
      await fsp.chmod(path.join(binDir, script), 0o755);
    }),
  ]);
}

// ---- The host ----

function layout(root: string) {
  return {
    root,
    serverDir: path.join(root, 'server'),
    backupDir: path.join(root, 'backups'),
    binDir: path.join(root, 'bin'),
    snapshotLog: path.join(root, 'gameserver_snapshot.log'),
    tmuxSocket: path.join(root, 'tmux.sock'),
    tmuxSession: TMUX_SESSION,
    consoleRecord: path.join(root, 'console.txt'),
    servRecord: path.join(root, 'serv-calls.jsonl'),
    reportRecord: path.join(root, 'report-calls.txt'),
    controlDir: path.join(root, 'control'),
  };
}

const FIRST_FREE_PORT = 10_000;
const portsGiven = new Set<number>(); // by this process: two servers it starts never share one

/**
 * A loopback port nobody listens on now, below the kernel's ephemeral range, for a server started later: a game's
 * server-port, a daemon's PORT, a stub's. The tests' thousands of connections take their own ends from that range, and
 * one that held the port when the server starts would leave it unbound: a game's ping never answered (one run whose
 * server.ready never came), a demo's daemon that exits at start (`PORT … is already in use`). Ports given by one
 * process are never given again, as two servers on one machine must not share one; where that range leaves no room
 * below it, the kernel chooses.
 */
export async function freePort(): Promise<number> {
  const [firstEphemeral] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  for (let attempt = 0; firstEphemeral - FIRST_FREE_PORT > 1_000 && attempt < 100; attempt++) {
    const port = FIRST_FREE_PORT + Math.floor(Math.random() * (firstEphemeral - FIRST_FREE_PORT));
    if (!portsGiven.has(port) && await isFreePort(port)) {
      portsGiven.add(port);
      return port;
    }
  }
  return listenAndClose(0);
}

const isFreePort = (port: number): Promise<boolean> => listenAndClose(port).then(() => true, () => false);

/** The port a loopback listener got (0: the kernel's choice), closed again. */
function listenAndClose(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createTcpServer().once('error', reject);
    probe.listen(port, '127.0.0.1', () => {
      const { port: got } = probe.address() as AddressInfo;
      probe.close(() => resolve(got));
    });
  });
}

async function populate(paths: ReturnType<typeof layout>, options: HostOptions, port: number): Promise<void> {
  await allWritten([
    writeServerDir(paths.serverDir, options.onlineMode ?? false, port).then(() => writeBackups(paths.backupDir, paths.serverDir)),
    fsp.writeFile(paths.snapshotLog, SNAPSHOT_LOG_LINES.map((line) => `${line}\n`).join('')),
    installFakes(paths.binDir, options.players ?? false, options.gameThreads),
    fsp.mkdir(paths.controlDir),
  ]);
}

/** Builds a host in a new temp folder, or in options.root. On failure a folder it created is removed again. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const given = options.root;
  // a folder of its own is new, so nothing that runs yet can carry it as a marker; a given one may have had a host before
  const since = given === undefined ? pidMark() : undefined;
  const made = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-host-'));
  const created = given === undefined || fs.mkdirSync(given, { recursive: true }) !== undefined;
  const root = fs.realpathSync(made);   // the daemon compares /proc/PID/cwd with SERVER_DIR after resolving links
  const paths = { ...layout(root), serverPort: 0 };
  try {
    paths.serverPort = await freePort();
    await populate(paths, options, paths.serverPort);
  } catch (err) {
    if (created) fs.rmSync(root, { recursive: true, force: true });   // never a folder the caller already had
    throw err;
  }

  const daemonEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
    PATH: `${paths.binDir}:${SYSTEM_PATH}`,
    HOME: root,   // a tmux server started under this environment never reads the user's ~/.tmux.conf
    SERVER_DIR: paths.serverDir,
    BACKUP_DIR: paths.backupDir,
    SNAPSHOT_LOG: paths.snapshotLog,
    SERV_BIN: path.join(paths.binDir, 'serv'),
    REPORT_SCRIPT: path.join(paths.binDir, 'servreport.sh'),
    TMUX_SOCKET: paths.tmuxSocket,
    TMUX_SESSION,
    ...extra,
  });
  // Marked like the fakes mark theirs, so that remove() also finds a tmux server and game started from here.
  const tmuxEnv = { ...daemonEnv(), [ROOT_MARKER]: root };
  const tmux = (...args: string[]) => run('tmux', ['-S', paths.tmuxSocket, ...args], tmuxEnv);

  // Several words after `--`: tmux execs them without a shell, as `serv start` does, so the command leads the pane.
  const newSession = (options: string[], command: string[]) =>
    tmux('-f', '/dev/null', 'new-session', '-d', ...options, '-s', TMUX_SESSION, '-c', paths.serverDir, '-x', '200', '-y', '50', '--', ...command);

  // The Done line is read through the game's own descriptor of latest.log opened for writing: while the game
  // rolls the previous run's file it holds that one open for reading, and it has a Done line of its own.
  function hasLoggedDone(pid: number): boolean {
    const latestLog = path.join(paths.serverDir, 'logs', 'latest.log');
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== latestLog) continue;
      const flags = parseInt(/^flags:\s+([0-7]+)/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0', 8);
      if ((flags & 3) !== 0) return fs.readFileSync(`/proc/${pid}/fd/${fd}`, 'utf8').includes('] [Server thread/INFO]: Done (');
    }
    return false;
  }

  /** The pane's process once it is the game and has logged its Done line; throws once it has gone. */
  function readyGame(pid: number): number | null {
    if (isGone(pid)) throw new Error(`The simulated game exited during start-up; run ${paths.binDir}/java in ${paths.serverDir} to see why.`);
    try {
      return readProc(pid, 'comm') === 'java\n' && hasLoggedDone(pid) ? pid : null;
    } catch {
      return null;   // the pane is still between fork and exec, or /proc/PID/fd changed while we read it
    }
  }

  // tmux names the pane's process once (-P); start-up is then watched in /proc, not by asking tmux again and again
  async function startGame(): Promise<number> {
    const pid = Number(await newSession(['-P', '-F', '#{pane_pid}'],
      [path.join(paths.binDir, 'java'), `-Dgameserver.console=${paths.consoleRecord}`, '-jar', 'server.jar', 'nogui']));
    return waitFor(() => readyGame(pid), GAME_READY_TIMEOUT_MS, 'The simulated game did not log its Done line within 10 s.');
  }

  async function startShell(): Promise<void> {
    const pid = Number(await newSession(['-P', '-F', '#{pane_pid}'], ['bash', '--norc', '--noprofile']));
    await waitFor(() => (readProc(pid, 'comm') === 'bash\n' ? true : null), GAME_READY_TIMEOUT_MS, 'The shell in the tmux pane did not start within 10 s.');
  }

  // Killing the server hangs up the panes' terminals; the game answers SIGHUP with its shutdown lines and exits. The
  // panes' processes and the kill in one run of tmux (`;` parts its commands): each start of a program holds this
  // process's one thread until the program runs, on a busy machine for some 20 ms.
  async function stopGame(): Promise<void> {
    const out = await tmux('list-panes', '-a', '-F', '#{pane_pid}', ';', 'kill-server').catch(() => '');   // no server running: nothing to stop
    const pids = out.split('\n').filter((line) => line !== '').map(Number);
    await waitFor(() => (pids.every(isGone) ? true : null), PROCESS_EXIT_TIMEOUT_MS, `The panes' processes (${pids.join(', ')}) did not exit within 10 s.`);
  }

  // Everything this host started carries the marker, the tmux server and the game among them. Looked for again until
  // none is left: one may start another meanwhile (a `serv restart` opening a new tmux server and game). A look reads
  // the environment of every process of the machine, so between looks only the ones found are watched until gone.
  async function remove(): Promise<void> {
    let left: number[] = [];
    const deadline = Date.now() + PROCESS_EXIT_TIMEOUT_MS;
    for (;;) {
      left = findMarkedProcesses(root, since).filter((pid) => !isGone(pid));
      if (left.length === 0) break;
      left.forEach(killQuietly);
      await waitFor(() => (left.every(isGone) ? true : null), Math.max(0, deadline - Date.now()), () => `Processes ${left.join(', ')} did not exit.`);
    }
    // a process that got its hang-up a moment ago may still be writing its last log lines
    await fsp.rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }

  return { ...paths, daemonEnv, tmux, startGame, startShell, stopGame, remove };
}
