// gameserver-api: an HTTP/JSON API on port 6767 for one Minecraft (Java Edition) server host.
// Public GET routes report on the game server (process, players, whitelist, logs, backups, properties,
// a host report); POST routes, behind X-API-Key, steer it through the host's `serv` tool and its tmux console.
// Callers: a chat relay that holds the key, and admins with curl. Run `node dist/server.js`; it is configured
// by environment variables (README.md), under systemd from an EnvironmentFile of mode 600.

import { createServer, request as httpRequest, STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzip } from 'node:zlib';

// ---- Limits ----

const SERVICE_NAME = 'gameserver-api';
const VERSION = '1.0.0'; // equals package.json's version (a test checks): dist/server.js is deployed alone
const EX_CONFIG = 78;
const MAX_BODY_BYTES = 16 * 1024;
const LINES_DEFAULT = 200;
const LINES_MAX = 2_000;
const COMMAND_MAX_CHARS = 1_000;
const TAIL_FIRST_BLOCK_BYTES = 16 * 1024; // then doubling: 200 lines take one read, 2000 a few
const TAIL_BLOCK_MAX_BYTES = 1024 * 1024;
const TAIL_MAX_BYTES = 16 * 1024 * 1024; // a tail never reads more than this, however long the lines
const TAIL_REPLIES_KEPT = 4;
const TAIL_READS_AT_ONCE = 4;
const PRESENCE_CHUNK_BYTES = 1024 * 1024; // also the longest line presence looks at: no event line is near it
const HEAD_BYTES = 64; // of a followed log, kept to notice it was truncated and written again
const ARCHIVE_MAX_FILES = 8;
const ARCHIVE_MAX_BYTES = 64 * 1024 * 1024; // decompressed, all archives together
const SMALL_FILE_MAX_BYTES = 16 * 1024 * 1024; // server.properties, whitelist.json, usercache.json, version files
const BACKUP_LIVE_WINDOW_MS = 60_000; // an archive modified this recently may still be growing: re-stat it
const BACKUP_RESTAT_MS = 2_000; // every archive is re-statted at most this often, whatever the request rate
const PROCESS_SCAN_REUSE_MS = 5_000;
const REPORT_TIMEOUT_MS = 10_000;
const REPORT_REUSE_MS = 5_000;
const REPORT_MAX_BYTES = 1024 * 1024;
const REPORT_DRAIN_MS = 500; // after the script exits, for its output still in the pipe
const TMUX_TIMEOUT_MS = 5_000;
const LOOKUP_TIMEOUT_MS = 5_000;
const LOOKUP_MAX_BYTES = 64 * 1024;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000; // a whole request: bodies are 16 KiB at most
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const SHUTDOWN_GRACE_MS = 5_000;
const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: /proc reports clock_t in 1/100 s on every Linux architecture

const DISABLED_MESSAGE = 'Write endpoints are disabled: no API_KEY is configured.';
const UNAUTHORIZED_MESSAGE = 'Unauthorized — X-API-Key required for write endpoints.';
const NO_KEY_WARNING = '[WARN] No API_KEY set — write endpoints are disabled until one is configured.';

// ---- Errors ----

/** A failure with an HTTP status; the boundary turns it into `{ok: false, error}`. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

/** A bad setting: the daemon prints it and exits 78. */
export class ConfigError extends Error {}

// ---- Configuration ----

interface Config {
  apiKey: string | undefined; // undefined: writes disabled (unset or empty)
  port: number;
  host: string | undefined;
  serverDir: string;
  backupDir: string;
  snapshotLog: string;
  servBin: string;
  reportScript: string;
  tmuxSession: string;
  tmuxSocket: string | undefined;
  profileLookupUrl: string;
}

/** Reads and checks every setting once; throws ConfigError naming the variable, the range and the value. */
export function readConfig(env: NodeJS.ProcessEnv, cwd: string): Readonly<Config> {
  const text = (name: string): string | undefined => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const rawPort = text('PORT') ?? '6767';
  if (!/^[0-9]{1,5}$/.test(rawPort) || Number(rawPort) < 1 || Number(rawPort) > 65_535) {
    throw new ConfigError(`PORT must be an integer from 1 to 65535; got ${JSON.stringify(rawPort)}.`);
  }
  const serverDir = path.resolve(cwd, text('SERVER_DIR') ?? '.');
  const session = text('TMUX_SESSION') ?? 'gameserver';
  // tmux reads `.` and `:` in a target as window and pane separators, so such a session cannot be named exactly
  if (!/^[A-Za-z0-9_+@%=,-]{1,64}$/.test(session)) {
    throw new ConfigError(`TMUX_SESSION must be 1 to 64 characters from A-Z, a-z, 0-9 and _+@%=,-; got ${JSON.stringify(session)}.`);
  }
  const lookup = text('PROFILE_LOOKUP_URL') ?? 'https://api.mojang.com/users/profiles/minecraft/';
  if (!/^https?:\/\/[^\s/]+\/\S*$/.test(lookup)) {
    throw new ConfigError(`PROFILE_LOOKUP_URL must be an http:// or https:// URL with a path; got ${JSON.stringify(lookup)}.`);
  }
  const host = text('HOST');
  if (host !== undefined && !/^[A-Za-z0-9.:%_-]{1,255}$/.test(host)) {
    throw new ConfigError(`HOST must be an IP address or host name; got ${JSON.stringify(host)}.`);
  }
  return Object.freeze({
    apiKey: text('API_KEY'),
    port: Number(rawPort),
    host,
    serverDir,
    backupDir: path.resolve(cwd, text('BACKUP_DIR') ?? path.join(serverDir, 'backups')),
    snapshotLog: path.resolve(cwd, text('SNAPSHOT_LOG') ?? '/var/log/gameserver_snapshot.log'),
    servBin: text('SERV_BIN') ?? 'serv',
    reportScript: text('REPORT_SCRIPT') ?? 'servreport.sh',
    tmuxSession: session,
    tmuxSocket: text('TMUX_SOCKET') === undefined ? undefined : path.resolve(cwd, text('TMUX_SOCKET')!),
    profileLookupUrl: lookup,
  });
}

/** The start-up summary: every setting but the key. */
function describeConfig(c: Config): string {
  return [
    `SERVER_DIR=${c.serverDir}`, `BACKUP_DIR=${c.backupDir}`, `SNAPSHOT_LOG=${c.snapshotLog}`,
    `SERV_BIN=${c.servBin}`, `REPORT_SCRIPT=${c.reportScript}`, `TMUX_SESSION=${c.tmuxSession}`,
    `TMUX_SOCKET=${c.tmuxSocket ?? '(tmux default)'}`, `PROFILE_LOOKUP_URL=${c.profileLookupUrl}`,
    c.apiKey === undefined ? 'writes disabled' : 'writes enabled',
  ].join(', ');
}

// Set once by main(); handlers read it. Tests import the pure functions without it.
let config: Readonly<Config>;

// ---- Pure parsers and formatters ----

/** `java.util.Properties.load` on the bytes Minecraft reads: strict UTF-8, else the whole file as ISO-8859-1. */
export function parseProperties(bytes: Buffer): Record<string, string> {
  let text: string;
  try {
    // ignoreBOM keeps a BOM in the text, as Java does: it is not whitespace and becomes part of the first key
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    text = bytes.toString('latin1');
  }
  const properties: Record<string, string> = Object.create(null);
  for (const line of logicalPropertyLines(text)) {
    const [key, value] = splitPropertyLine(line);
    properties[unescapeProperty(key)] = unescapeProperty(value);
  }
  return { ...properties };
}

const isPropertyBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\f';

/** Properties.LineReader (JDK 9+): joins continued lines, drops comments and blank lines, keeps escapes. */
function* logicalPropertyLines(text: string): Generator<string> {
  let line = '';
  let skipBlanks = true;
  let continued = false; // at the start of a continuation line: a line break there ends the logical line
  let backslash = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === undefined) break;
    if (skipBlanks) {
      if (isPropertyBlank(c)) continue;
      if (!continued && (c === '\n' || c === '\r')) continue;
      skipBlanks = false;
      continued = false;
    }
    if (line.length === 0 && (c === '#' || c === '!')) {
      // JDK 9+ tests for a comment whenever the logical line is still empty
      while (i + 1 < text.length && text[i + 1] !== '\n' && text[i + 1] !== '\r') i++;
      skipBlanks = true;
      continue;
    }
    if (c !== '\n' && c !== '\r') {
      line += c;
      backslash = c === '\\' ? !backslash : false;
      continue;
    }
    if (c === '\r' && text[i + 1] === '\n') i++;
    if (backslash) {
      line = line.slice(0, -1);
      backslash = false;
      skipBlanks = true;
      continued = true;
      continue;
    }
    if (line.length > 0) yield line;
    line = '';
    skipBlanks = true;
  }
  // at the end of input, a dangling continuation backslash is dropped
  if (line.length > 0) yield backslash ? line.slice(0, -1) : line;
}

/** Properties.load0: the key ends at the first unescaped `=`, `:` or blank; one separator is consumed. */
function splitPropertyLine(line: string): [string, string] {
  let keyEnd = 0;
  let valueStart = line.length;
  let hasSeparator = false;
  let backslash = false;
  while (keyEnd < line.length) {
    const c = line[keyEnd];
    if ((c === '=' || c === ':') && !backslash) {
      valueStart = keyEnd + 1;
      hasSeparator = true;
      break;
    }
    if (isPropertyBlank(c) && !backslash) {
      valueStart = keyEnd + 1;
      break;
    }
    backslash = c === '\\' ? !backslash : false;
    keyEnd++;
  }
  while (valueStart < line.length) {
    const c = line[valueStart];
    if (!isPropertyBlank(c)) {
      if (!hasSeparator && (c === '=' || c === ':')) hasSeparator = true;
      else break;
    }
    valueStart++;
  }
  return [line.slice(0, keyEnd), line.slice(valueStart)];
}

/** Properties.loadConvert: `\uXXXX`, `\t \n \r \f`, and `\x` for any other x. */
function unescapeProperty(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\(u(.{0,4})|[^]?)/g, (_match, escape: string, hex: string | undefined) => {
    if (hex !== undefined) {
      // Java throws on a malformed \u, and Minecraft then refuses to start: such a file is not a server's
      if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw new Error('malformed \\uXXXX escape in properties');
      return String.fromCharCode(parseInt(hex, 16));
    }
    return ({ t: '\t', n: '\n', r: '\r', f: '\f' } as Record<string, string>)[escape] ?? escape;
  });
}

const SECRET_PROPERTY = /(password|secret)$/i;

/** decisions.md: `rcon.password`, `management-server-secret` and every *password / *secret key are hidden. */
export function redactProperties(properties: Record<string, string>, reveal: boolean): Record<string, string> {
  if (reveal) return properties;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) out[key] = SECRET_PROPERTY.test(key) ? '<redacted>' : value;
  return out;
}

// A log line is an event only behind one of these prefixes (formats.md 1.1 and 1.10); only that one prefix is
// stripped, so a whole fake line pasted into chat stays inside a chat message.
// Groups: thread and level of `[time] [thread/LEVEL]( [logger])?: `, level of the terminal form
// `[HH:MM:SS LEVEL]: `, and level of the pre-1.7 `YYYY-MM-DD HH:MM:SS [LEVEL] `. The first brackets must
// hold a time of day (any date around it): a kick screen's unprefixed line `[Staff] [Server thread/INFO]: …`
// is not a log line.
const LOG_PREFIX =
  /^(?:\[[^\]]*\d\d:\d\d:\d\d[^\]]*\] \[([^\]]*)\/([A-Z]+)\](?: \[[^\]]*\])?: |\[\d\d:\d\d:\d\d ([A-Z]+)\]: |\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[([A-Z]+)\] )/;
// ANSI SGR and other CSI sequences (old Spigot) and `§x` colour codes (mods) are stripped before matching.
const COLOUR_CODES = /\x1b\[[0-9;?]*[ -/]*[@-~]|§./g;
// Paper's name rule, which includes Floodgate's leading `.` for Bedrock players. A name never holds a space,
// `<`, `[` or `*`, so chat (`<Mallory> …`), /say (`[Mallory] …`), /me (`* Mallory …`) and admin echoes
// (`[Mallory: …]`) cannot start with one followed by an event text.
const NAME = '([A-Za-z0-9_.]{1,16})';
// Each pattern with a piece of text it cannot match without, looked for first (no allocation).
const PRESENCE_PATTERNS: ReadonlyArray<[string, RegExp, 'join' | 'leave']> = [
  // the login line carries the bare profile name and plugins cannot reword it; `.*` spans `/[v6]:port`
  ['] logged in with entity id ', new RegExp(`^${NAME}\\[.*\\] logged in with entity id -?\\d+ at \\(.*\\)$`), 'join'],
  // the join broadcast uses the display name: a team prefix or suffix (`[Staff] Alex`) makes it no name
  // at all, and the login line above still counts that player
  [' joined the game', new RegExp(`^${NAME} joined the game$`), 'join'],
  [') joined the game', new RegExp(`^${NAME} \\(formerly known as [A-Za-z0-9_.]{1,16}\\) joined the game$`), 'join'],
  [' left the game', new RegExp(`^${NAME} left the game$`), 'leave'],
  // every disconnect logs this with the bare name; the reason after `: ` is free text (a kick reason can read
  // `Alex left the game`), so the name comes from the start and nothing after the colon is looked at.
  // Players refused at login are logged as `Name (/ip:port) lost connection` or as a GameProfile: no match.
  [' lost connection: ', new RegExp(`^${NAME} lost connection: `), 'leave'],
];
const SESSION_START = /^Starting minecraft server version /;
// `/stop` logs the first, every shutdown the second; the game then stops reading its console
const SESSION_STOPPING = /^Stopping (?:the )?server$/;

// Every event line holds one of these. They are looked for first, in a decoded line or, while following a
// log, in its raw bytes (Buffer.indexOf): a chunk of chat and chunk loading is never decoded at all.
const EVENT_HINTS = [' the game', ' logged in with', ' lost connection: ', 'Starting minecraft', 'Stopping '];
const EVENT_NEEDLES = EVENT_HINTS.map((hint) => Buffer.from(hint));

export type PresenceEvent = { kind: 'join' | 'leave'; name: string } | { kind: 'reset' | 'stopping' };

/** The presence event a raw log line records, if any. */
export function parsePresenceLine(rawLine: string): PresenceEvent | null {
  if (!EVENT_HINTS.some((hint) => rawLine.includes(hint))) return null;
  const plain = rawLine.includes('\x1b') || rawLine.includes('§') ? rawLine.replace(COLOUR_CODES, '') : rawLine;
  const line = plain.endsWith('\r') ? plain.slice(0, -1) : plain;
  const prefix = line.match(LOG_PREFIX);
  if (prefix === null) return null; // continuation lines (stack traces, multi-line kick screens) are never events
  const thread = prefix[1];
  const level = prefix[2] ?? prefix[3] ?? prefix[4];
  if (level !== 'INFO') return null;
  // chat plugins may log a bare `Alex joined the game` from the chat pool; presence never comes from there
  if (thread !== undefined && thread.startsWith('Async Chat Thread')) return null;
  const message = line.slice(prefix[0].length);
  if (SESSION_START.test(message)) return { kind: 'reset' };
  if (SESSION_STOPPING.test(message)) return { kind: 'stopping' };
  for (const [hint, pattern, kind] of PRESENCE_PATTERNS) {
    if (!message.includes(hint)) continue;
    const match = message.match(pattern);
    if (match !== null) return { kind, name: match[1] };
  }
  return null;
}

/** A game session as its log tells it: who is online, and whether the server is shutting down. */
interface Session {
  players: Set<string>;
  stopping: boolean;
}

const newSession = (): Session => ({ players: new Set(), stopping: false });

/** Applies one log line to a session; returns whether it was a session start. */
function applyPresenceLine(session: Session, line: string): boolean {
  const event = parsePresenceLine(line);
  if (event === null) return false;
  if (event.kind === 'reset') {
    session.players.clear();
    session.stopping = false;
    return true;
  }
  // a player's second login (another location) kicks the first session; a set keeps one entry
  if (event.kind === 'join') session.players.add(event.name);
  else if (event.kind === 'leave') session.players.delete(event.name);
  else session.stopping = true;
  return false;
}

/** Applies every complete line of `text` (and a final unterminated one) to `players`. */
export function scanPresence(text: string, players: Set<string> = new Set()): Set<string> {
  const session = { players, stopping: false };
  for (const line of text.split('\n')) applyPresenceLine(session, line);
  return players;
}

const IPV6_MAPPED_IPV4 = /(?<![\w:.])::ffff:(?:\d{1,3}\.){3}\d{1,3}(?![\w.])/gi;
const IPV6_FULL = /(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:.])/g;
// compressed forms always hold `::`, which no time of day (`12:00:00`) or Java method reference (`A::b`) has
// next to hex digits alone
const IPV6_COMPRESSED = /(?<![\w:.])(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?::(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?(?:%[\w.-]+)?(?![\w:.])/g;
const IPV6_SEVEN_COLONS = /(?:[0-9A-Fa-f]{1,4}:){7}/;
const IPV4_HINT = /\d\.\d{1,3}\.\d/;
const IPV4 = /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.]*\d)/g;

/** Replaces IPv4 and IPv6 addresses with `<ip>`: public tails never disclose players' addresses. */
export function maskAddresses(line: string): string {
  let masked = line;
  // most log lines hold neither form: a cheap look first (every IPv6 form has `::` or seven colons)
  if (masked.includes('::') || IPV6_SEVEN_COLONS.test(masked)) {
    masked = masked
      .replace(IPV6_MAPPED_IPV4, '<ip>')
      .replace(IPV6_FULL, '<ip>')
      .replace(IPV6_COMPRESSED, (match) => (match === '::' ? match : '<ip>'));
  }
  return IPV4_HINT.test(masked) ? masked.replace(IPV4, '<ip>') : masked;
}

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** Base 1024, the largest unit whose value is at least 1, two decimals: `1.50 KB`. */
export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)} ${SIZE_UNITS[unit]}`;
}

/** `H:MM:SS` with unbounded hours: `49:03:07`. */
export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/** Resident memory as a share of the total, truncated to 0.1 % and capped at 99.9 %, as `ps -o %mem` prints it. */
export function formatMemory(rssBytes: number, totalBytes: number): string {
  const permille = Math.min(999, Math.floor((rssBytes * 1000) / totalBytes));
  return `${Math.floor(permille / 10)}.${permille % 10}%`;
}

const BACKUP_TYPES: ReadonlyArray<[string, BackupType]> = [
  ['snapshot_', 'snapshot'],
  ['gameserver_backup_', 'full_backup'],
  ['restore_undo', 'restore_undo'],
];
export type BackupType = 'snapshot' | 'full_backup' | 'restore_undo' | 'archive';

/** The spec's prefix table. */
export function backupType(name: string): BackupType {
  return BACKUP_TYPES.find(([prefix]) => name.startsWith(prefix))?.[1] ?? 'archive';
}

/** `UUID.nameUUIDFromBytes("OfflinePlayer:" + name)`: the UUID an offline-mode server gives a name. */
export function offlineUuid(name: string): string {
  const b = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  b[6] = (b[6] & 0x0f) | 0x30;
  b[8] = (b[8] & 0x3f) | 0x80;
  return dashUuid(b.toString('hex'));
}

/** 32 hex digits in the dashed layout whitelist.json uses. */
function dashUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toLowerCase();
}

/** `lines`: absent → 200; digits only, at least 1; above 2000 → 2000. */
export function parseLines(raw: string | null): number {
  if (raw === null) return LINES_DEFAULT;
  // Number() would take ' 80 ', '0x50', '1e3' and '' (as 0): the string is checked first
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) throw new HttpError(400, 'lines must be an integer from 1 to 2000.');
  return Math.min(Number(raw), LINES_MAX);
}

// The spec's fourteen characters, then every C0 control character and DEL (decisions.md)
const FORBIDDEN_IN_COMMAND = /[;&|`$(){}[\]<>\\\x00-\x1f\x7f]/;

/** The console command as sent: outer spaces trimmed, 1..1000 characters, no forbidden character. */
export function validateCommand(value: unknown): string {
  if (typeof value !== 'string') throw new HttpError(400, 'command is required and must be a string.');
  const command = value.replace(/^ +| +$/g, '');
  // a lone UTF-16 surrogate (`\ud800` in JSON) has no UTF-8 form: it would reach the console as U+FFFD
  if (/\p{Surrogate}/u.test(command)) throw new HttpError(400, 'command must be valid Unicode text.');
  if (FORBIDDEN_IN_COMMAND.test(command)) {
    throw new HttpError(400, 'command must not contain ; & | ` $ ( ) { } [ ] < > \\ or control characters.');
  }
  if (command.length < 1 || command.length > COMMAND_MAX_CHARS) {
    throw new HttpError(400, 'command must be 1 to 1000 characters long.');
  }
  return command;
}

/** A player name as the spec allows it: `[a-zA-Z0-9_]{1,16}`. */
export function validatePlayer(value: unknown): string {
  if (typeof value !== 'string') throw new HttpError(400, 'player is required and must be a string.');
  if (!/^[A-Za-z0-9_]{1,16}$/.test(value)) throw new HttpError(400, 'player must be 1 to 16 characters from A-Z, a-z, 0-9 and _.');
  return value;
}

// ---- Host access: /proc ----

/** The daemon's environment minus the key: `serv`, tmux and the game must never inherit it. */
function childEnv(): NodeJS.ProcessEnv {
  const { API_KEY: _key, ...rest } = process.env;
  return rest;
}

interface MachineConstants {
  memTotalBytes: number;
  pageSizeBytes: number;
  bootUptimeSeconds: number; // /proc/uptime when `bootMark` was taken
  bootMark: number; // performance.now() at that moment
}
let machine: MachineConstants;

/** Facts about the machine that do not change while it runs, learned once at start-up. */
function readMachineConstants(): MachineConstants {
  const memTotalKb = Number(fs.readFileSync('/proc/meminfo', 'latin1').match(/^MemTotal:\s+(\d+) kB/m)?.[1]);
  const uptimeSeconds = Number(fs.readFileSync('/proc/uptime', 'latin1').split(' ')[0]);
  const bootMark = performance.now();
  // the first mapping's page size; getconf would mean a child process
  const smapsHead = readFileHead('/proc/self/smaps', 16 * 1024);
  const pageKb = Number(smapsHead.match(/^KernelPageSize:\s+(\d+) kB/m)?.[1] ?? 4);
  if (!(memTotalKb > 0) || !(uptimeSeconds > 0)) throw new Error('/proc/meminfo or /proc/uptime is unreadable');
  return {
    memTotalBytes: memTotalKb * 1024,
    pageSizeBytes: pageKb * 1024,
    bootUptimeSeconds: uptimeSeconds,
    bootMark,
  };
}

function secondsSinceBoot(): number {
  return machine.bootUptimeSeconds + (performance.now() - machine.bootMark) / 1000;
}

/** When a process started, on the wall clock (to 10 ms: its start time is counted in clock ticks). */
function startedAtMs(stat: ProcStat): number {
  return Date.now() - (secondsSinceBoot() - stat.startTicks / CLOCK_TICKS_PER_SECOND) * 1000;
}

const procBuffer = Buffer.allocUnsafe(4096);

/** The first bytes of a file with one open, one read and one close: /proc files are small and generated. */
function readFileHead(file: string, maxBytes = procBuffer.length): string {
  const buffer = maxBytes === procBuffer.length ? procBuffer : Buffer.allocUnsafe(maxBytes);
  const fd = fs.openSync(file, 'r');
  try {
    return buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, buffer.length, null));
  } finally {
    fs.closeSync(fd);
  }
}

interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  pgrp: number;
  ttyNr: number;
  tpgid: number;
  startTicks: number;
  rssPages: number;
}

/** /proc/PID/stat, or undefined when the process is gone. */
function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(pid, readFileHead(`/proc/${pid}/stat`));
  } catch {
    return undefined;
  }
}

function parseProcStat(pid: number, stat: string): ProcStat {
  // field 2 is the name in parentheses and may itself hold spaces and `)`: split at the last `)`
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    pid,
    comm: stat.slice(stat.indexOf('(') + 1, close),
    state: fields[0],
    pgrp: Number(fields[2]),
    ttyNr: Number(fields[4]),
    tpgid: Number(fields[5]),
    startTicks: Number(fields[19]),
    rssPages: Number(fields[21]),
  };
}

// The game found last, with its /proc/PID/stat kept open: a read at offset 0 gives fresh figures, and once
// that process has exited the read fails, even when its pid number has been given to another process.
let cachedGame: { fd: number; stat: ProcStat } | undefined;
let lastScan = { atMs: -Infinity, lastPid: '' };

/** The newest PID the kernel handed out (last field of /proc/loadavg): no fork since a scan means no new process. */
function lastCreatedPid(): string {
  return readFileHead('/proc/loadavg').trim().split(' ').pop() ?? '';
}

function rereadCachedGame(): ProcStat | undefined {
  if (cachedGame === undefined) return undefined;
  try {
    const length = fs.readSync(cachedGame.fd, procBuffer, 0, procBuffer.length, 0);
    const stat = parseProcStat(cachedGame.stat.pid, procBuffer.toString('latin1', 0, length));
    if (length > 0 && isLiveJava(stat)) return (cachedGame.stat = stat);
  } catch {
    // ESRCH: the process has exited
  }
  fs.closeSync(cachedGame.fd);
  cachedGame = undefined;
  return undefined;
}

/**
 * The game server: the oldest process named `java` whose working directory is SERVER_DIR (decisions.md).
 * A found process is kept while it lives; a scan that found nothing is reused while no process has been
 * created since, for a few seconds at most, unless `fresh` is asked.
 */
function findGameProcess(fresh = false): ProcStat | undefined {
  const known = rereadCachedGame();
  if (known !== undefined) return known;
  const lastPid = lastCreatedPid();
  if (!fresh && lastPid === lastScan.lastPid && Date.now() - lastScan.atMs < PROCESS_SCAN_REUSE_MS) return undefined;
  lastScan = { atMs: Date.now(), lastPid };
  let oldest: ProcStat | undefined;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat === undefined || !isLiveJava(stat)) continue;
    if (oldest !== undefined && (stat.startTicks > oldest.startTicks || (stat.startTicks === oldest.startTicks && stat.pid > oldest.pid))) continue;
    if (isInServerDir(stat.pid)) oldest = stat;
  }
  if (oldest === undefined) return undefined;
  try {
    cachedGame = { fd: fs.openSync(`/proc/${oldest.pid}/stat`, 'r'), stat: oldest };
  } catch {
    return undefined; // it exited meanwhile
  }
  // the pid may have been reused between the scan and the open: the start time tells
  const now = rereadCachedGame();
  if (now?.startTicks === oldest.startTicks) return now;
  if (cachedGame !== undefined) fs.closeSync(cachedGame.fd);
  cachedGame = undefined;
  return undefined;
}

let realServerDir = '';

// an exited game whose parent has not reaped it yet (a container's PID 1 may never) is a zombie named java
const isLiveJava = (stat: ProcStat): boolean => stat.comm === 'java' && stat.state !== 'Z' && stat.state !== 'X';

function isInServerDir(pid: number): boolean {
  try {
    // another user's process gives EACCES: it cannot be ours (the API runs as the game's user)
    return fs.readlinkSync(`/proc/${pid}/cwd`) === realServerDir;
  } catch {
    return false;
  }
}

// ---- Host access: files ----

/** What identifies a file's content without reading it: a rewrite changes the inode, size, mtime or ctime. */
function statSignature(st: fs.Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

const fileCache = new Map<string, { signature: string; value: unknown }>();

/** A path's stat, or undefined when it does not exist; any other failure is a 500 naming it. */
function statIfPresent(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    throw new HttpError(500, `${path.basename(file)} could not be read.`);
  }
}

/**
 * A file parsed once and reused until it changes (a change is seen on the very next request: every call
 * stats the file), or undefined when it does not exist. An unreadable or unparsable file is a 500.
 */
function readParsedFileIfPresent<T>(file: string, parse: (bytes: Buffer) => T): T | undefined {
  const name = path.basename(file);
  const st = statIfPresent(file);
  if (st === undefined) return undefined;
  const signature = statSignature(st);
  const cached = fileCache.get(file);
  if (cached?.signature === signature) return cached.value as T;
  let bytes: Buffer;
  try {
    if (!st.isFile() || st.size > SMALL_FILE_MAX_BYTES) throw new Error('not a small regular file');
    bytes = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // removed between stat and read
    throw new HttpError(500, `${name} could not be read.`);
  }
  const value = parse(bytes);
  fileCache.set(file, { signature, value });
  return value;
}

/** The same for a file a route needs: a missing one is a 404 `<name> not found`. */
function readParsedFile<T>(file: string, parse: (bytes: Buffer) => T): T {
  const value = readParsedFileIfPresent(file, parse);
  if (value === undefined) throw new HttpError(404, `${path.basename(file)} not found`);
  return value;
}

function parseJsonFile(name: string): (bytes: Buffer) => unknown {
  return (bytes) => {
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new HttpError(500, `${name} is not valid JSON.`);
    }
  };
}

interface WhitelistEntry {
  uuid?: unknown;
  name?: unknown;
}

function whitelistPath(): string {
  return path.join(config.serverDir, 'whitelist.json');
}

// The parsers of the files read routes poll, made once: they run only when a file has changed
const parseWhitelistJson = parseJsonFile('whitelist.json');
const parseVersionHistory = parseJsonFile('version_history.json');
const parseUserCache = parseJsonFile('usercache.json');

function parseWhitelist(bytes: Buffer): WhitelistEntry[] {
  const entries = parseWhitelistJson(bytes);
  if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'object' && e !== null && !Array.isArray(e))) {
    throw new HttpError(500, 'whitelist.json is not a JSON array of entries.');
  }
  return entries as WhitelistEntry[];
}

function parseServerProperties(bytes: Buffer): Record<string, string> {
  try {
    return parseProperties(bytes);
  } catch {
    throw new HttpError(500, 'server.properties could not be parsed.');
  }
}

/** whitelist.json's entries, exactly as stored. */
function readWhitelist(): WhitelistEntry[] {
  return readParsedFile(whitelistPath(), parseWhitelist);
}

function readServerProperties(): Record<string, string> {
  return readParsedFile(path.join(config.serverDir, 'server.properties'), parseServerProperties);
}

let versionFiles: string[] = [];

/** `currentVersion` of version_history.json; Paper builds since July 2026 keep it in `.paper/`. */
function readGameVersion(): string | undefined {
  for (const file of versionFiles) {
    try {
      const history = readParsedFileIfPresent(file, parseVersionHistory) as { currentVersion?: unknown } | null | undefined;
      if (typeof history?.currentVersion === 'string') return history.currentVersion;
    } catch {
      // the spec: version is simply left out when the file is unreadable
    }
  }
  return undefined;
}

/** Writes a file so that readers see the old or the new content, never a part: same-folder temp file, fsync, rename. */
function writeFileAtomic(file: string, text: string): void {
  const temp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const mode = (fs.statSync(file, { throwIfNoEntry: false })?.mode ?? 0o644) & 0o7777;
  const fd = fs.openSync(temp, 'wx', mode);
  try {
    // writeFileSync on a descriptor loops over short writes and throws when one fails (EFBIG, ENOSPC)
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temp, file);
  } catch (err) {
    try { fs.closeSync(fd); } catch { /* already closed */ }
    fs.rmSync(temp, { force: true });
    throw err;
  }
  // the rename is durable once the folder's entry is on disk
  const dir = fs.openSync(path.dirname(file), 'r');
  try { fs.fsyncSync(dir); } finally { fs.closeSync(dir); }
}

/** The last `count` lines of a file, oldest first, read backwards from the end in growing blocks. */
export async function readTail(file: string, count: number): Promise<string[]> {
  const handle = await fs.promises.open(file, 'r');
  // one buffer, filled from its end and grown by doubling, borrowed from those earlier reads left: off-heap
  // memory that is only freed by a garbage collection is not asked for again on every request
  let window = tailWindows.pop() ?? Buffer.allocUnsafe(TAIL_FIRST_BLOCK_BYTES);
  try {
    // the handle pins the inode: a log replaced meanwhile is read whole from the old file
    for (let attempt = 0; ; attempt++) {
      const { size } = await handle.stat();
      let start = size; // file offset of window[filled]
      let filled = window.length; // window[filled, window.length) holds file[start, size)
      let blockBytes = TAIL_FIRST_BLOCK_BYTES;
      let newlines = 0;
      let truncated = false;
      // `count` complete lines need `count` + 1 line breaks, the first of which ends an older line
      while (start > 0 && newlines <= count && size - start < TAIL_MAX_BYTES) {
        const length = Math.min(blockBytes, start, TAIL_MAX_BYTES - (size - start));
        if (length > filled) {
          const grown = Buffer.allocUnsafe(Math.min(TAIL_MAX_BYTES, Math.max(window.length * 2, window.length - filled + length)));
          window.copy(grown, grown.length - (window.length - filled), filled);
          filled = grown.length - (window.length - filled);
          window = grown;
        }
        start -= length;
        filled -= length;
        const { bytesRead } = await handle.read(window, filled, length, start);
        if (bytesRead < length) {
          truncated = true; // the file shrank under us: read it again from its new end
          break;
        }
        for (let i = window.indexOf(10, filled); i !== -1 && i < filled + length; i = window.indexOf(10, i + 1)) newlines++;
        blockBytes = Math.min(blockBytes * 2, TAIL_BLOCK_MAX_BYTES);
      }
      if (truncated && attempt < 3) continue;
      return lastLines(window.subarray(filled), count, start === 0);
    }
  } finally {
    tailWindows.push(window);
    await handle.close();
  }
}

// Buffers of finished tail reads, for the next ones: at most TAIL_READS_AT_ONCE are ever out at once
const tailWindows: Buffer[] = [];

/** The last `count` lines of the end of a file; only they are decoded (leniently: bad bytes become U+FFFD). */
function lastLines(data: Buffer, count: number, fromFileStart: boolean): string[] {
  const end = data.length > 0 && data[data.length - 1] === 10 ? data.length - 1 : data.length; // a final break ends a line
  let begin = end;
  let found = 0;
  while (found < count && begin > 0) {
    const lineBreak = data.lastIndexOf(10, begin - 1);
    if (lineBreak === -1) break;
    begin = lineBreak;
    found++;
  }
  let from: number;
  if (found === count) from = begin + 1;
  else if (fromFileStart) from = 0; // the file's first line is whole
  else if (found > 0) from = begin + 1; // the oldest piece is the end of a longer line
  else return [];
  if (from > end || (from === end && data.length === 0)) return [];
  // line by line: small strings die young, where one string of the whole block (often hundreds of KiB) would
  // go to V8's large-object space, which only a full collection frees
  const lines: string[] = [];
  for (let at = from; at <= end; ) {
    let lineEnd = data.indexOf(10, at);
    if (lineEnd === -1 || lineEnd > end) lineEnd = end;
    lines.push(data.toString('utf8', at, lineEnd > at && data[lineEnd - 1] === 13 ? lineEnd - 1 : lineEnd));
    at = lineEnd + 1;
  }
  return lines;
}

// ---- Host access: presence from latest.log ----

interface Presence {
  handle: fs.promises.FileHandle; // the log followed: it keeps a rolled file readable to its end
  dev: number;
  ino: number;
  head: Buffer; // the file's first bytes: a copy-and-truncate that has grown again changes them
  size: number; // the size the view below was computed for
  offset: number; // bytes parsed into `session`: always the end of a complete line
  skipping: boolean; // inside a line longer than a chunk: no event, skip to its end
  game: string; // pid and start time of the game process the players belong to
  session: Session;
  view: Session; // the session plus the effect of a final unterminated line
}

let presence: Presence | undefined;
let presenceQueue: Promise<unknown> = Promise.resolve();

const gameIdentity = (game: ProcStat): string => `${game.pid}:${game.startTicks}`;
const latestLogPath = (): string => path.join(config.serverDir, 'logs', 'latest.log');

/** Who is online (and whether the server is stopping) by latest.log; only bytes appended since the last call are parsed. */
function readSession(game: ProcStat): Promise<Session> {
  const st = fs.statSync(latestLogPath(), { throwIfNoEntry: false });
  const current = presence;
  if (st !== undefined && current !== undefined && current.ino === st.ino && current.dev === st.dev && current.size === st.size && current.game === gameIdentity(game)) {
    return Promise.resolve(current.view);
  }
  // one update at a time: concurrent callers wait for it and then find it done
  const update = presenceQueue.then(() => updatePresence(game));
  presenceQueue = update.catch(() => undefined);
  return update;
}

async function updatePresence(game: ProcStat): Promise<Session> {
  const file = latestLogPath();
  const identity = gameIdentity(game);
  let state = presence;
  if (state !== undefined && state.game !== identity) {
    state.session = newSession(); // a new game process: everyone was disconnected
    state.game = identity;
  }
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (st === undefined) {
    // decisions.md: the server runs but has no log (yet): nobody online
    await state?.handle.close();
    presence = undefined;
    return newSession();
  }
  // a log last written before this process started is an earlier run's, until log4j rolls it at the first
  // line of this run: neither its players nor its shutdown belong to this game
  if (st.mtimeMs < startedAtMs(game)) return newSession();
  if (state !== undefined && (state.dev !== st.dev || state.ino !== st.ino)) {
    // log4j rolled latest.log (at start-up, or at midnight while the game runs): what was written to the old
    // file since the last call is read first, through the handle; the same process keeps its players
    await parseAppended(state, (await state.handle.stat()).size);
    await state.handle.close();
    presence = state = await followLog(file, state.session);
  } else if (state !== undefined && (st.size < state.offset || !(await isSameContent(state)))) {
    // truncated in place (log4j's copy-and-truncate fallback), perhaps already written again
    Object.assign(state, { offset: 0, skipping: false, head: Buffer.alloc(0) });
  }
  if (state === undefined) {
    state = await followLog(file, newSession());
    if (!(await parseAppended(state, (await state.handle.stat()).size))) {
      // the daemon starts after a midnight roll: the session's start is in the archives
      Object.assign(state, { session: await sessionFromArchives(path.dirname(file)), offset: 0, skipping: false });
    }
    state.game = identity;
    presence = state;
  }
  await parseAppended(state, (await state.handle.stat()).size);
  return state.view;
}

async function followLog(file: string, session: Session): Promise<Presence> {
  const handle = await fs.promises.open(file, 'r');
  const st = await handle.stat();
  const game = presence?.game ?? '';
  return { handle, dev: st.dev, ino: st.ino, head: Buffer.alloc(0), size: -1, offset: 0, skipping: false, game, session, view: session };
}

let presenceChunk: Buffer | undefined;

/** Whether the file still starts as it did, and a line still ends where parsing stopped. */
async function isSameContent(state: Presence): Promise<boolean> {
  const probe = Buffer.alloc(state.head.length + 1);
  if (state.head.length > 0) await state.handle.read(probe, 0, state.head.length, 0);
  if (!probe.subarray(0, state.head.length).equals(state.head)) return false;
  if (state.offset === 0) return true;
  await state.handle.read(probe, 0, 1, state.offset - 1);
  return probe[0] === 10;
}

/** Parses [offset, size) into the state in chunks; returns whether a session start was seen. */
async function parseAppended(state: Presence, size: number): Promise<boolean> {
  let sawStart = false;
  let tail = '';
  // updates run one at a time (presenceQueue), so they share one chunk
  presenceChunk ??= Buffer.allocUnsafe(PRESENCE_CHUNK_BYTES);
  const chunk = presenceChunk;
  while (state.offset < size) {
    const { bytesRead } = await state.handle.read(chunk, 0, Math.min(chunk.length, size - state.offset), state.offset);
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    if (state.head.length < HEAD_BYTES && state.offset === 0) state.head = Buffer.from(data.subarray(0, HEAD_BYTES));
    if (state.skipping) {
      const end = data.indexOf(10);
      state.offset += end === -1 ? bytesRead : end + 1;
      state.skipping = end === -1;
      continue;
    }
    const lastBreak = data.lastIndexOf(10);
    if (lastBreak === -1) {
      if (bytesRead === PRESENCE_CHUNK_BYTES) {
        state.offset += bytesRead; // a line longer than a chunk holds no event: skip to its end
        state.skipping = true;
        continue;
      }
      tail = data.toString('utf8'); // an unterminated last line
      break;
    }
    if (applyEventLines(state.session, data, lastBreak)) sawStart = true;
    state.offset += lastBreak + 1;
  }
  // log4j writes a line with one write: a final line that matches in full counts now, and is read again,
  // whole, once more bytes arrive (the offset stays at its start)
  const view = { players: new Set(state.session.players), stopping: state.session.stopping };
  if (tail !== '' && applyPresenceLine(view, tail)) sawStart = true;
  state.size = size;
  state.view = view;
  return sawStart;
}

/** Applies the event lines among the whole lines of data[0, end); returns whether a session start was seen. */
function applyEventLines(session: Session, data: Buffer, end: number): boolean {
  let sawStart = false;
  const next = EVENT_NEEDLES.map((needle) => data.indexOf(needle));
  for (let pos = 0; pos < end; ) {
    let hit = -1;
    for (let i = 0; i < next.length; i++) {
      // each needle's search only moves forward: a chunk is read once per needle, whatever the event count
      if (next[i] !== -1 && next[i] < pos) next[i] = data.indexOf(EVENT_NEEDLES[i], pos);
      if (next[i] !== -1 && (hit === -1 || next[i] < hit)) hit = next[i];
    }
    if (hit === -1 || hit >= end) break;
    const lineStart = hit === 0 ? 0 : data.lastIndexOf(10, hit - 1) + 1;
    const lineEnd = data.indexOf(10, hit);
    // only whole lines are decoded, so a UTF-8 sequence is never split
    if (applyPresenceLine(session, data.toString('utf8', lineStart, lineEnd))) sawStart = true;
    pos = lineEnd + 1;
  }
  return sawStart;
}

/** The session at the end of the newest `logs/*.log.gz` archives, read back to its start (bounded in files and bytes). */
async function sessionFromArchives(logDir: string): Promise<Session> {
  let names: string[];
  try {
    names = fs.readdirSync(logDir).filter((name) => name.endsWith('.log.gz'));
  } catch {
    return newSession();
  }
  const newestFirst = names
    .map((name) => ({ name, mtimeMs: fs.statSync(path.join(logDir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs || b.name.localeCompare(a.name, 'en', { numeric: true }))
    .slice(0, ARCHIVE_MAX_FILES);
  const texts: string[] = [];
  let budget = ARCHIVE_MAX_BYTES;
  for (const { name } of newestFirst) {
    const text = budget > 0 ? await gunzipFile(path.join(logDir, name), budget) : undefined;
    if (text === undefined) break;
    budget -= text.length;
    texts.unshift(text);
    if (text.split('\n').some((line) => parsePresenceLine(line)?.kind === 'reset')) break;
  }
  const session = newSession();
  for (const text of texts) for (const line of text.split('\n')) applyPresenceLine(session, line);
  return session;
}

function gunzipFile(file: string, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    fs.readFile(file, (readErr, bytes) => {
      if (readErr) return resolve(undefined);
      gunzip(bytes, { maxOutputLength: maxBytes }, (err, text) => resolve(err ? undefined : text.toString('utf8')));
    });
  });
}

// ---- Host access: backups ----

interface BackupFile {
  name: string;
  bytes: number;
  mtimeMs: number;
}

let backupCache: { signature: string; checkedAtMs: number; files: BackupFile[]; body: string } | undefined;

/** The `.tar.gz` archives, newest first; the listing is reused while the folder and its newest files stay put. */
function listBackups(): string {
  const dir = config.backupDir;
  const name = path.basename(dir);
  const st = statIfPresent(dir);
  if (st === undefined) throw new HttpError(404, `${name} not found`);
  if (!st.isDirectory()) throw new HttpError(500, `${name} could not be read.`);
  const signature = statSignature(st);
  const now = Date.now();
  // an archive written in place (growing, or overwritten under the same name) leaves the folder as it was:
  // the recent ones are checked on every request, all of them every few seconds
  if (
    backupCache?.signature === signature &&
    now - backupCache.checkedAtMs < BACKUP_RESTAT_MS &&
    backupCache.files.every((f) => now - f.mtimeMs > BACKUP_LIVE_WINDOW_MS || isUnchanged(dir, f))
  ) {
    return backupCache.body;
  }
  let entries: string[];
  try {
    entries = fs.readdirSync(dir).filter((entry) => entry.endsWith('.tar.gz'));
  } catch {
    throw new HttpError(500, `${name} could not be read.`);
  }
  const files: BackupFile[] = [];
  for (const entry of entries) {
    // a file may vanish between the listing and its stat: it is simply not listed
    const file = fs.statSync(path.join(dir, entry), { throwIfNoEntry: false });
    if (file?.isFile()) files.push({ name: entry, bytes: file.size, mtimeMs: file.mtimeMs });
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs || a.name.localeCompare(b.name));
  const backups = files.map((f) => ({
    name: f.name,
    type: backupType(f.name),
    size: formatSize(f.bytes),
    bytes: f.bytes,
    created: new Date(f.mtimeMs).toISOString(),
  }));
  backupCache = { signature, checkedAtMs: now, files, body: JSON.stringify({ ok: true, count: backups.length, backups }) };
  return backupCache.body;
}

function isUnchanged(dir: string, file: BackupFile): boolean {
  const st = fs.statSync(path.join(dir, file.name), { throwIfNoEntry: false });
  return st !== undefined && st.size === file.bytes && st.mtimeMs === file.mtimeMs;
}

// ---- Host access: the report script ----

let reportCache: { atMs: number; result: Promise<string> } | undefined;

/** The report, from at most one script run at a time, reused for a few seconds whatever the number of callers. */
function readReport(): Promise<string> {
  if (reportCache === undefined || Date.now() - reportCache.atMs > REPORT_REUSE_MS) {
    const result = runReportScript();
    reportCache = { atMs: Number.POSITIVE_INFINITY, result };
    // the reuse window starts when the run ends, so a slow script is never started twice at once
    result.then(
      () => { reportCache = { atMs: Date.now(), result }; },
      () => { reportCache = { atMs: Date.now(), result }; },
    );
  }
  return reportCache.result;
}

function runReportScript(): Promise<string> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      // its own process group, so a timeout can end everything it started
      child = spawn(config.reportScript, [], { detached: true, stdio: ['ignore', 'pipe', 'inherit'], env: childEnv() });
    } catch (err) {
      log(`report script could not be started: ${describeError(err)}`);
      return reject(new HttpError(500, 'The report script could not be started.'));
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let failure: HttpError | undefined;
    let settled = false;
    const killGroup = (): void => {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    };
    // settles once, from whichever comes first; a process that left the group (setsid) may hold stdout open
    // for ever, so the pipe is closed here rather than waited for
    const settle = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      child.stdout!.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      // decisions.md: a non-zero exit with output still counts
      if (failure === undefined && text.trim() === '') failure = new HttpError(500, 'The report script printed nothing.');
      if (failure !== undefined) reject(failure);
      else resolve(text);
    };
    let drainTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      failure ??= new HttpError(500, 'The report script timed out after 10 s.');
      killGroup();
      settle();
    }, REPORT_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= REPORT_MAX_BYTES) chunks.push(chunk);
    });
    child.once('error', (err) => {
      log(`report script could not be started: ${describeError(err)}`);
      failure ??= new HttpError(500, 'The report script could not be started.');
      settle();
    });
    child.once('exit', () => {
      // what the script left behind in its group is ended; output already written is still read
      killGroup();
      drainTimer = setTimeout(settle, REPORT_DRAIN_MS);
    });
    child.once('close', settle);
  });
}

// ---- Host access: tmux and serv ----

/** Runs tmux on the configured socket; resolves its stdout. */
function tmux(args: readonly string[]): Promise<string> {
  const socket = config.tmuxSocket === undefined ? [] : ['-S', config.tmuxSocket];
  return new Promise((resolve, reject) => {
    execFile('tmux', [...socket, ...args], { timeout: TMUX_TIMEOUT_MS, maxBuffer: 64 * 1024, env: childEnv() }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

let consoleQueue: Promise<unknown> = Promise.resolve();

/**
 * Types a command into the game console and presses Enter, one command at a time (two callers would
 * otherwise interleave their keys). The text is sent literally and only when the game server itself is the
 * pane's foreground process: a shell in the pane would run it as a command line.
 */
function sendConsoleCommand(command: string): Promise<void> {
  const delivery = consoleQueue.then(() => deliverToConsole(command));
  consoleQueue = delivery.catch(() => undefined);
  return delivery;
}

async function deliverToConsole(command: string): Promise<void> {
  const game = findGameProcess(true);
  if (game === undefined) throw new HttpError(409, 'Game server is not running.');
  // while it shuts down the game is still the pane's foreground process but reads no more: a line typed now
  // would wait in the terminal and be read by whatever the pane runs next, a shell perhaps
  if (stopSentTo === gameIdentity(game) || (await isStopping(game))) {
    throw new HttpError(503, 'The game console is not available: the game server is stopping.');
  }
  const target = `=${config.tmuxSession}:`; // `=`: this exact session, never a prefix match
  let paneTty: string;
  try {
    paneTty = (await tmux(['display-message', '-p', '-t', target, '#{pane_tty}'])).trim();
  } catch (err) {
    log(`console check failed: ${describeError(err)}`);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new HttpError(503, 'The game console is not available: tmux is not installed.');
    throw new HttpError(503, `The game console is not available: the tmux session "${config.tmuxSession}" was not found.`);
  }
  if (!isPaneForeground(game, paneTty)) {
    throw new HttpError(503, `The game console is not available: the game server is not the foreground process of the tmux session "${config.tmuxSession}".`);
  }
  // text and Enter in one tmux command sequence (`;`), so no other client's keys come between them
  await tmux(['send-keys', '-t', target, '-l', '--', command, ';', 'send-keys', '-t', target, 'Enter']);
  // vanilla's stop takes no argument (`stop now` is refused and the game runs on); any other shutdown shows in its log
  if (command === 'stop' || command === '/stop') stopSentTo = gameIdentity(game);
}

let stopSentTo = ''; // the game process this daemon typed `stop` into

async function isStopping(game: ProcStat): Promise<boolean> {
  try {
    return (await readSession(game)).stopping;
  } catch {
    return false; // an unreadable log tells nothing; the foreground check below still applies
  }
}

/**
 * Whether the pane's terminal is the game's controlling terminal and the game's process group is that
 * terminal's foreground group (fields 5, 7 and 8 of /proc/PID/stat). `#{pane_current_command}` cannot tell:
 * for a script it names the interpreter. A suspended game or a background job fails this test.
 */
function isPaneForeground(game: ProcStat, paneTty: string): boolean {
  const now = readProcStat(game.pid);
  const tty = paneTty === '' ? undefined : fs.statSync(paneTty, { throwIfNoEntry: false });
  if (now === undefined || tty === undefined || !tty.isCharacterDevice()) return false;
  // dev_t as glibc packs it, and tty_nr as the kernel does: major in bits 8-19, minor split around it
  const major = ((tty.rdev >> 8) & 0xfff) | Math.floor(tty.rdev / 2 ** 32) & ~0xfff;
  const minor = (tty.rdev & 0xff) | ((tty.rdev >> 12) & ~0xff);
  const ttyNr = (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12);
  return now.ttyNr === ttyNr && now.tpgid === now.pgrp;
}

let isBackupRunning = false;

/** Starts `serv <args>` in its own process group with our stdout and stderr; resolves once it exists. */
function launchServ(args: readonly string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(config.servBin, args, {
        detached: true, // own process group: a Ctrl-C to us or our exit does not reach it
        stdio: ['ignore', 'inherit', 'inherit'], // straight to the journal: a pipe of ours would break when we restart
        env: childEnv(),
      });
    } catch (err) {
      log(`serv ${args.join(' ')} could not be started: ${describeError(err)}`);
      return reject(new HttpError(500, 'Internal server error'));
    }
    child.once('error', (err) => {
      log(`serv ${args.join(' ')} could not be started: ${describeError(err)}`);
      reject(new HttpError(500, 'Internal server error'));
    });
    child.once('spawn', () => {
      child.unref();
      child.once('exit', (code, signal) => log(`serv ${args.join(' ')} (pid ${child.pid}) exited with ${signal ?? `status ${code}`}`));
      resolve(child);
    });
  });
}

// ---- Host access: player profiles ----

interface Profile {
  name: string;
  uuid: string;
}

/** The UUID and name case to write for a player, from the same sources the server would use. */
async function resolveProfile(player: string): Promise<Profile> {
  let properties: Record<string, string> = {};
  try {
    properties = readServerProperties();
  } catch {
    // Minecraft's default is online mode
  }
  // Minecraft reads the flag with Boolean.valueOf: any value but `true` (in any case, no blanks) is false
  const onlineMode = properties['online-mode'];
  if (onlineMode !== undefined && onlineMode.toLowerCase() !== 'true') return { name: player, uuid: offlineUuid(player) };
  const cached = findInUserCache(player);
  if (cached !== undefined) return cached;
  return lookupProfile(player);
}

function findInUserCache(player: string): Profile | undefined {
  let cache: unknown;
  try {
    cache = readParsedFile(path.join(config.serverDir, 'usercache.json'), parseUserCache);
  } catch {
    return undefined;
  }
  if (!Array.isArray(cache)) return undefined;
  const hit = cache.find((e) => typeof e?.name === 'string' && e.name.toLowerCase() === player.toLowerCase() && typeof e.uuid === 'string');
  return hit === undefined ? undefined : { name: hit.name, uuid: hit.uuid };
}

/** Asks PROFILE_LOOKUP_URL (Mojang's API by default) for a name; 502 when unknown or unreachable. */
function lookupProfile(player: string): Promise<Profile> {
  const url = new URL(config.profileLookupUrl + encodeURIComponent(player));
  const failed = (why: string): HttpError => {
    log(`profile lookup for ${player} failed: ${why}`);
    return new HttpError(502, 'The profile lookup failed; nothing was changed.');
  };
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { timeout: LOOKUP_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > LOOKUP_MAX_BYTES) request.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        // the service answered 204 for unknown names until 2023 and 404 since
        if (res.statusCode === 204 || res.statusCode === 404) return reject(new HttpError(502, `No Minecraft account is named ${player}.`));
        if (res.statusCode !== 200) return reject(failed(`status ${res.statusCode}`));
        let answer: { id?: unknown; name?: unknown };
        try {
          answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reject(failed('the answer is not JSON'));
        }
        const hex = typeof answer?.id === 'string' ? answer.id.replace(/-/g, '') : '';
        if (!/^[0-9a-fA-F]{32}$/.test(hex) || typeof answer.name !== 'string' || !/^[A-Za-z0-9_]{1,16}$/.test(answer.name)) {
          return reject(failed('the answer has no valid id and name'));
        }
        resolve({ name: answer.name, uuid: dashUuid(hex) });
      });
      res.on('error', (err) => reject(failed(describeError(err))));
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (err) => reject(failed(describeError(err))));
    request.end();
  });
}

// ---- Route handlers ----

interface Reply {
  status: number;
  body: string; // serialised JSON, or the text of a text/plain reply
  text?: boolean;
  headers?: Record<string, string>;
}

interface Request {
  req: IncomingMessage;
  search: string; // the query string after `?`, or ''
}

const json = (value: object, status = 200): Reply => ({ status, body: JSON.stringify(value) });
const done = (message: string): Reply => json({ ok: true, message });

// Replies built from a parsed file or a presence view, serialised once: they go with the value when it changes
const replyMemo = new WeakMap<object, Map<string, Reply>>();

function memoReply(source: object, variant: string, build: () => Reply): Reply {
  let replies = replyMemo.get(source);
  if (replies === undefined) replyMemo.set(source, (replies = new Map()));
  let reply = replies.get(variant);
  if (reply === undefined) replies.set(variant, (reply = build()));
  return reply;
}

function getStatus(): Reply {
  const game = findGameProcess();
  if (game === undefined) return json({ ok: true, online: false });
  const version = readGameVersion();
  return json({
    ok: true,
    online: true,
    pid: game.pid,
    uptime: formatUptime(secondsSinceBoot() - game.startTicks / CLOCK_TICKS_PER_SECOND),
    memory: formatMemory(game.rssPages * machine.pageSizeBytes, machine.memTotalBytes),
    ...(version === undefined ? {} : { version }),
  });
}

async function getOnlinePlayers(): Promise<Reply> {
  const game = findGameProcess();
  // the spec: offline means no players, and the log is not read
  if (game === undefined) return json({ ok: true, online: false, players: [] });
  const session = await readSession(game);
  return memoReply(session, '', () => json({ ok: true, online: true, count: session.players.size, players: [...session.players] }));
}

function getWhitelist(): Reply {
  const whitelist = readWhitelist();
  return memoReply(whitelist, '', () => json({ ok: true, count: whitelist.length, whitelist }));
}

function getProperties({ req }: Request): Reply {
  const properties = readServerProperties();
  const reveal = hasValidKey(req);
  return memoReply(properties, String(reveal), () => json({ ok: true, properties: redactProperties(properties, reveal) }));
}

function getBackups(): Reply {
  return { status: 200, body: listBackups() };
}

/**
 * A log tail: `file` is the spec's constant name, whatever path the log really has. An answer is reused
 * while the file is unchanged; a few of them, since `lines` can take 2000 values.
 */
function tailRoute(file: () => string, shownAs: string) {
  let memo = { signature: '', replies: new Map<string, Reply>() };
  return async ({ req, search }: Request): Promise<Reply> => {
    const all = new URLSearchParams(search).getAll('lines');
    if (all.length > 1) throw new HttpError(400, 'lines must be an integer from 1 to 2000.');
    const count = parseLines(all.length === 0 ? null : all[0]);
    const reveal = hasValidKey(req);
    const name = path.basename(file());
    let lines: string[];
    let current: typeof memo;
    try {
      const st = fs.statSync(file(), { throwIfNoEntry: false });
      if (st === undefined) throw new HttpError(404, `${name} not found`);
      const signature = statSignature(st);
      if (memo.signature !== signature || memo.replies.size >= TAIL_REPLIES_KEPT) memo = { signature, replies: new Map() };
      // the answer goes with the signature seen before reading: a newer one never receives older lines
      current = memo;
      const kept = current.replies.get(`${count}:${reveal}`);
      if (kept !== undefined) return kept;
      lines = await withTailSlot(() => readTail(file(), count));
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new HttpError(404, `${name} not found`);
      log(`reading ${file()} failed: ${describeError(err)}`);
      throw new HttpError(500, `${name} could not be read.`);
    }
    const reply = json({ ok: true, file: shownAs, lines: reveal ? lines : lines.map(maskAddresses) });
    current.replies.set(`${count}:${reveal}`, reply);
    return reply;
  };
}

let tailReadsRunning = 0;
const tailReadWaiters: Array<() => void> = [];

/** Runs at most a few tail reads at once: each may hold up to 16 MiB, and the routes are public. */
async function withTailSlot<T>(read: () => Promise<T>): Promise<T> {
  while (tailReadsRunning >= TAIL_READS_AT_ONCE) await new Promise<void>((resolve) => tailReadWaiters.push(resolve));
  tailReadsRunning++;
  try {
    return await read();
  } finally {
    tailReadsRunning--;
    tailReadWaiters.shift()?.();
  }
}

async function getReportText(): Promise<Reply> {
  try {
    return { status: 200, body: await readReport(), text: true };
  } catch (err) {
    // decisions.md: GET / fails as text/plain, like it succeeds
    if (err instanceof HttpError) return { status: err.status, body: err.message, text: true };
    throw err;
  }
}

async function getReportJson(): Promise<Reply> {
  return json({ ok: true, report: await readReport() });
}

function servRoute(args: readonly string[], message: string) {
  return async (): Promise<Reply> => {
    await launchServ(args);
    return done(message);
  };
}

async function postBackup(): Promise<Reply> {
  // taken before the spawn is awaited: requests pipelined on one connection arrive in the same turn
  if (isBackupRunning) throw new HttpError(409, 'A backup is already running.');
  isBackupRunning = true;
  try {
    const child = await launchServ(['backup', '-s']);
    child.once('exit', () => { isBackupRunning = false; });
  } catch (err) {
    isBackupRunning = false;
    throw err;
  }
  return done('Backup triggered. Check /api/backups shortly.');
}

async function postCommand({ req }: Request): Promise<Reply> {
  const command = validateCommand((await readJsonObject(req)).command);
  await sendConsoleCommand(command);
  return done(`Command sent: ${command}`);
}

let whitelistQueue: Promise<unknown> = Promise.resolve();

function whitelistRoute(action: 'add' | 'remove') {
  return async ({ req }: Request): Promise<Reply> => {
    const player = validatePlayer((await readJsonObject(req)).player);
    // one edit at a time: two read-modify-write cycles would lose one of the changes
    const edit = whitelistQueue.then(() => editWhitelist(action, player));
    whitelistQueue = edit.catch(() => undefined);
    return edit;
  };
}

async function editWhitelist(action: 'add' | 'remove', player: string): Promise<Reply> {
  const game = findGameProcess(true);
  let entries: WhitelistEntry[] = [];
  try {
    entries = readWhitelist();
  } catch (err) {
    // a running server keeps its own whitelist and creates the file itself; a corrupt file is never overwritten
    if (!(err instanceof HttpError && err.status === 404 && game !== undefined)) throw err;
  }
  const isPlayer = (e: WhitelistEntry): boolean => typeof e.name === 'string' && e.name.toLowerCase() === player.toLowerCase();
  const listed = entries.some(isPlayer);
  if (action === 'add' && listed) return done(`${player} is already on the whitelist.`);
  if (action === 'remove' && !listed) return done(`${player} is not on the whitelist.`);
  if (game !== undefined) {
    // the server owns whitelist.json while it runs and would overwrite a direct edit
    await sendConsoleCommand(`whitelist ${action} ${player}`);
  } else if (action === 'remove') {
    writeWhitelist(entries.filter((e) => !isPlayer(e)));
  } else {
    const profile = await resolveProfile(player);
    writeWhitelist([...entries, { uuid: profile.uuid, name: profile.name }]);
  }
  return done(action === 'add' ? `${player} added to whitelist.` : `${player} removed from whitelist.`);
}

/** Gson's layout, as the server writes the file: two-space indent, no final line break. */
function writeWhitelist(entries: WhitelistEntry[]): void {
  writeFileAtomic(whitelistPath(), JSON.stringify(entries, null, 2));
}

/** The request body as a JSON object, read once and bounded; its Content-Type is not looked at (curl -d). */
async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const bytes = await readBody(req);
  let value: unknown;
  try {
    // strict UTF-8: a lenient decode would turn bad bytes into U+FFFD and type that into the console
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, 'Request body must be a JSON object.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'Request body must be a JSON object.');
  return value as Record<string, unknown>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  // Connection: close, or clients may see a reset instead of the 413 while they are still sending
  const tooLarge = (): HttpError => new HttpError(413, 'Request body is larger than 16384 bytes.', { Connection: 'close' });
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge(); // chunked bodies announce no length
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

// ---- Routes ----

interface Route {
  method: 'GET' | 'POST';
  path: string; // exact; no parameters in this API
  auth: boolean; // write routes: 503, then 401, then the body
  handler: (request: Request) => Reply | Promise<Reply>;
}

const routes: readonly Route[] = [
  { method: 'GET', path: '/', auth: false, handler: getReportText },
  { method: 'GET', path: '/api', auth: false, handler: () => apiIndex },
  { method: 'GET', path: '/api/status', auth: false, handler: getStatus },
  { method: 'GET', path: '/api/players/online', auth: false, handler: getOnlinePlayers },
  { method: 'GET', path: '/api/players/whitelist', auth: false, handler: getWhitelist },
  { method: 'GET', path: '/api/logs/latest', auth: false, handler: tailRoute(() => path.join(config.serverDir, 'logs', 'latest.log'), 'latest.log') },
  { method: 'GET', path: '/api/logs/snapshot', auth: false, handler: tailRoute(() => config.snapshotLog, '/var/log/gameserver_snapshot.log') },
  { method: 'GET', path: '/api/backups', auth: false, handler: getBackups },
  { method: 'GET', path: '/api/properties', auth: false, handler: getProperties },
  { method: 'GET', path: '/api/report', auth: false, handler: getReportJson },
  { method: 'POST', path: '/api/server/start', auth: true, handler: servRoute(['start'], 'Server start command issued.') },
  { method: 'POST', path: '/api/server/stop', auth: true, handler: servRoute(['stop'], 'Server stop command issued.') },
  { method: 'POST', path: '/api/server/restart', auth: true, handler: servRoute(['restart'], 'Server restart command issued.') },
  { method: 'POST', path: '/api/command', auth: true, handler: postCommand },
  { method: 'POST', path: '/api/whitelist/add', auth: true, handler: whitelistRoute('add') },
  { method: 'POST', path: '/api/whitelist/remove', auth: true, handler: whitelistRoute('remove') },
  { method: 'POST', path: '/api/backup', auth: true, handler: postBackup },
];

// path → method → route. A duplicate is a programming error: fail at load, like Go's ServeMux.
const table = new Map<string, Map<string, Route>>();
for (const route of routes) {
  const byMethod = table.get(route.path) ?? new Map<string, Route>();
  if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
  table.set(route.path, byMethod.set(route.method, route));
}

function allowHeader(byMethod: Map<string, Route>): string {
  const methods = new Set<string>([...byMethod.keys(), 'OPTIONS']);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort().join(', ');
}

// path → the Allow list of 405 and of the preflight, worked out once
const allowByPath = new Map([...table].map(([pathname, byMethod]) => [pathname, allowHeader(byMethod)]));

// The index never changes: serialised once
const apiIndex: Reply = json({
  ok: true,
  service: SERVICE_NAME,
  version: VERSION,
  endpoints: routes.map((r) => ({ method: r.method, route: r.path, auth_required: r.auth })),
});

/** The same work for any key: both sides are hashed to equal lengths, then compared in constant time. */
function keyMatches(sent: string | undefined): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  const same = timingSafeEqual(digest(sent ?? ''), digest(config.apiKey ?? ''));
  return config.apiKey !== undefined && sent !== undefined && sent !== '' && same;
}

function hasValidKey(req: IncomingMessage): boolean {
  const sent = req.headers['x-api-key'];
  return sent !== undefined && keyMatches(Array.isArray(sent) ? sent.join(', ') : sent);
}

/** The request target's path and query string. Absolute-form targets (`http://host/path`) are reduced to their path. */
function splitTarget(target: string): [string, string] {
  // new URL('//api/status', base) would read `api` as a host: the target is split by hand
  const origin = target.startsWith('/') ? null : target.match(/^https?:\/\/[^/?#]*/i);
  const rest = origin === null ? target : target.slice(origin[0].length) || '/';
  const q = rest.indexOf('?');
  return q < 0 ? [rest, ''] : [rest.slice(0, q), rest.slice(q + 1)];
}

/** Whether the request names a Host; rawHeaders, because Node builds `req.headers` only when it is read. */
function hasHostHeader(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') return true;
  return false;
}

/** Finds the route for a request and runs it; every failure is thrown as an HttpError. */
function dispatch(req: IncomingMessage): Reply | Promise<Reply> {
  // Node 20 answers a missing Host on its own with a bare 400 (requireHostHeader is off); Node 18 not at all
  if (req.httpVersion === '1.1' && !hasHostHeader(req)) throw new HttpError(400, 'Bad request');
  const [pathname, search] = splitTarget(req.url ?? '/');
  const byMethod = table.get(pathname);
  if (byMethod === undefined) throw new HttpError(404, 'Not found');
  const allow = allowByPath.get(pathname)!;
  if (req.method === 'OPTIONS') {
    return {
      status: 204,
      body: '',
      headers: {
        'Access-Control-Allow-Methods': allow,
        'Access-Control-Allow-Headers': 'Content-Type, X-API-Key',
        'Access-Control-Max-Age': '600',
      },
    };
  }
  // node:http drops the body of a HEAD response itself and keeps GET's headers
  const route = byMethod.get(req.method === 'HEAD' ? 'GET' : req.method ?? '');
  if (route === undefined) throw new HttpError(405, 'Method not allowed', { Allow: allow });
  if (route.auth) {
    // decisions.md: the check order is 503, then 401, then the body
    if (config.apiKey === undefined) throw new HttpError(503, DISABLED_MESSAGE);
    if (!hasValidKey(req)) throw new HttpError(401, UNAUTHORIZED_MESSAGE);
  }
  return route.handler({ req, search });
}

// ---- The server ----

let shuttingDown = false;

// Every response's headers, as the flat [name, value, …] list writeHead takes. Measured here: a header
// object built with spreads per response doubled the young heap under load (peak RSS 92 MiB against
// 59 MiB for a bare server); a list costs nothing of the kind.
const COMMON_HEADERS: readonly string[] = [
  'Access-Control-Allow-Origin', '*',
  'Cache-Control', 'no-store',
  'X-Content-Type-Options', 'nosniff',
];
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

function errorReply(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return { status, body: JSON.stringify({ ok: false, error: message }), headers };
}

/** The one place a response is written: every reply carries the same headers. */
function send(res: ServerResponse, { status, body, text = false, headers }: Reply): void {
  const list = [...COMMON_HEADERS];
  if (status !== 204) list.push('Content-Type', text ? TEXT_TYPE : JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)));
  if (headers !== undefined) for (const name in headers) list.push(name, headers[name]);
  if (shuttingDown && headers?.Connection === undefined) list.push('Connection', 'close');
  res.writeHead(status, list);
  res.end(status === 204 ? undefined : body);
}

function handleRequest(req: IncomingMessage, res: ServerResponse): void {
  clientAddresses.set(req, req.socket.remoteAddress ?? '-');
  let result: Reply | Promise<Reply>;
  try {
    result = dispatch(req);
  } catch (err) {
    return fail(req, res, err);
  }
  // most read routes answer at once: no promise, no extra turn of the event loop
  if (result instanceof Promise) result.then((reply) => answer(req, res, reply), (err: unknown) => fail(req, res, err));
  else answer(req, res, result);
}

function fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  if (err instanceof HttpError) return answer(req, res, errorReply(err.status, err.message, err.headers));
  log(`internal error on ${req.method} ${(req.url ?? '').slice(0, 200)}: ${err instanceof Error ? err.stack : String(err)}`);
  if (res.headersSent) return void res.destroy(); // a status line cannot be written any more
  answer(req, res, errorReply(500, 'Internal server error'));
}

function answer(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  send(res, reply);
  if (req.method === 'POST') logWrite(req, reply);
}

// taken when the request arrives: a request whose body was refused may have lost its socket by the time it is logged
const clientAddresses = new WeakMap<IncomingMessage, string>();

/** One line per write: time, client, route, outcome. Never the key. */
function logWrite(req: IncomingMessage, reply: Reply): void {
  const [pathname] = splitTarget(req.url ?? '/');
  const route = table.get(pathname)?.get('POST');
  let outcome = '';
  try {
    const body = JSON.parse(reply.body) as { message?: string; error?: string };
    outcome = body.message ?? body.error ?? '';
  } catch {
    outcome = '';
  }
  const where = route === undefined ? 'POST (unknown route)' : `POST ${route.path}`;
  log(`${clientAddresses.get(req) ?? '-'} ${where} ${reply.status} ${JSON.stringify(outcome)}`);
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout'],
};

/** Requests Node's parser rejects get the same JSON error and headers as any other, never Node's bare reply. */
function handleClientError(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  // a reply already being written on this connection must not be cut into: close instead (Node's own rule)
  const pending = (socket as unknown as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent === true) return void socket.destroy();
  const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad request'];
  const body = JSON.stringify({ ok: false, error: message });
  const headers = [...COMMON_HEADERS, 'Content-Type', JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)), 'Connection', 'close'];
  let head = '';
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
}

function log(message: string): void {
  process.stdout.write(`${new Date().toISOString()} ${message}\n`);
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- Start-up ----

const USAGE = `Usage: node server.js [--generate-key | --help | --version]

Serves the gameserver-api HTTP API (default port 6767). Configured by environment variables:
API_KEY, PORT, HOST, SERVER_DIR, BACKUP_DIR, SNAPSHOT_LOG, SERV_BIN, REPORT_SCRIPT,
TMUX_SESSION, TMUX_SOCKET, PROFILE_LOOKUP_URL (see README.md).

  --generate-key  print a new random API key and exit
  --help          print this text and exit
  --version       print the version and exit
`;

function main(argv: readonly string[]): void {
  if (argv.includes('--generate-key')) return void process.stdout.write(`${randomBytes(32).toString('base64url')}\n`);
  if (argv.includes('--help')) return void process.stdout.write(USAGE);
  if (argv.includes('--version')) return void process.stdout.write(`${VERSION}\n`);
  if (argv.length > 0) {
    process.stderr.write(`Unknown argument: ${argv[0]}\n${USAGE}`);
    process.exit(2);
  }
  try {
    config = readConfig(process.env, process.cwd());
    realServerDir = fs.realpathSync(config.serverDir);
    versionFiles = [path.join(config.serverDir, '.paper', 'version_history.json'), path.join(config.serverDir, 'version_history.json')];
    if (!fs.statSync(realServerDir).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`SERVER_DIR must be an existing directory; got ${JSON.stringify(config?.serverDir ?? process.env.SERVER_DIR)}.\n`);
    process.exit(EX_CONFIG);
  }
  try {
    machine = readMachineConstants();
  } catch (err) {
    process.stderr.write(`gameserver-api needs Linux's /proc: ${describeError(err)}\n`);
    process.exit(1);
  }
  if (config.apiKey === undefined) process.stderr.write(`${NO_KEY_WARNING}\n`);
  if (process.getuid?.() === 0) process.stderr.write('[WARN] Running as root: run gameserver-api as the game server\'s user instead.\n');
  if (!fs.existsSync(path.join(config.serverDir, 'server.properties'))) {
    process.stderr.write(`[WARN] ${config.serverDir} holds no server.properties: is SERVER_DIR the game server's folder?\n`);
  }

  const server = createServer({
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    requireHostHeader: false,
    connectionsCheckingInterval: 1_000,
  } as Parameters<typeof createServer>[0], handleRequest);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', handleClientError);
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') {
      process.stderr.write(`PORT ${config.port} is already in use on ${config.host ?? 'all interfaces'}.\n`);
      process.exit(1);
    }
    process.stderr.write(`HOST ${JSON.stringify(config.host ?? '')} cannot be listened on: ${err.message}\n`);
    process.exit(EX_CONFIG);
  });
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const shown = typeof address === 'object' && address !== null ? `${address.address}:${address.port}` : String(address);
    process.stdout.write(`${SERVICE_NAME} ${VERSION} listening on ${shown} (${describeConfig(config)})\n`);
  });

  const shutdown = (signal: string): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    log(`${signal}: finishing requests in flight, then exiting`);
    // children are never signalled: serv and the game are detached on purpose
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => {
      server.closeAllConnections();
      process.exit(0);
    }, SHUTDOWN_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // the journal or a terminal can go away: a line that cannot be written is dropped. Left unhandled, the
  // EPIPE would reach the handler below, whose own log line fails again, round and round.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  // decisions.md: an unexpected exception never stops the daemon
  process.on('unhandledRejection', (err) => log(`unhandled rejection: ${err instanceof Error ? err.stack : String(err)}`));
  process.on('uncaughtException', (err) => log(`uncaught exception: ${err.stack ?? String(err)}`));
}

if (require.main === module) main(process.argv.slice(2));
