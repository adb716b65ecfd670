// Simulated Minecraft Java server (vanilla 1.21.4) for gameserver-api's tests, bench and `npm run demo`.
// bin/java, written by demo/host.ts, calls runGame() with cwd = the server folder and stdin = the tmux pane.
// It writes vanilla log lines to logs/latest.log, records every console line it reads, and answers list, say,
// banlist (ips), help, tellraw, whitelist add|remove|list, kick, ban, pardon, op, deop and stop the way the real
// server does (docs/formats.md), rewriting whitelist.json, banned-players.json and ops.json before its reply.
// Files in <root>/control/ change it, read at each command or action: `game-era` holding `1.12` gives the 1.7-1.12
// replies and lag warnings, `1.8` those (with 1.8-1.10's "That player cannot be found") and 1.8-1.11's achievements;
// `game-flavour` holding `paper` logs chat from Paper's chat threads and players' commands, `forge` writes Forge's
// line prefix; `game-ignores-<command>` (`game-ignores-whitelist`, `game-ignores-ban`…) makes it neither answer nor
// apply that command;
// `chat-after-reply` holds a chat line (`<Alex> hi`) that a player says right after the next command's reply, once;
// `lines-after-reply` holds a JSON list of [thread, message] logged right after the next reply, once; while
// `console-hold` exists, console lines are recorded but wait, as on a lagging server, and run in order once it is gone;
// `game-ping` holding `legacy` makes it answer only the pre-1.7 Server List Ping, as a 1.6 server does.
// It answers the Server List Ping on server-port of server.properties (127.0.0.1 only) once it has logged Done, and
// with enable-status=false closes such connections, as vanilla does.
// An `act-<n>.json` file, a JSON list of actions (GameAction), makes players do things: the game runs the lists in
// the order of n as soon as they appear, and removes each.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import type { Server as TcpServer, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

const MC_VERSION = '1.21.4';
const MC_PROTOCOL = 769; // 1.21.4's protocol number
const MAX_PLAYERS = 20;
const LATEST_LOG = 'logs/latest.log';
const WHITELIST_FILE = 'whitelist.json';
export const BANS_FILE = 'banned-players.json';
const OPS_FILE = 'ops.json';
const USERCACHE_FILE = 'usercache.json';
const CONSOLE_RECORD_ARG = '-Dgameserver.console=';
const WORLD_LOADING_MS = 300;
const CONSOLE_HOLD_POLL_MS = 20;
const VISITOR_MIN_DELAY_MS = 2_000;
const VISITOR_MAX_DELAY_MS = 6_000;
// A Floodgate (Bedrock) name with its leading dot among them (docs/formats.md, Bukkit family).
export const SIMULATED_PLAYERS: readonly string[] = ['Alex', 'Steve', '.Bramble_Crest', 'Kai_2'];
const CHAT_LINES = ['hello', 'anyone up for the nether?', 'brb', 'gg', 'who took my diamonds'];
const DEATHS = ['was slain by Zombie', 'fell from a high place', 'drowned', 'was shot by Skeleton', 'tried to swim in lava'];
const ADVANCEMENTS: ReadonlyArray<[AdvancementKind, string]> = [
  ['task', 'Stone Age'], ['task', 'Getting an Upgrade'], ['goal', 'The End?'], ['challenge', 'Return to Sender'],
];
const ACTION_FILE = /^act-(\d+)\.json$/;
const WATCHDOG_TICK_SECONDS = '60.00';

type AdvancementKind = 'task' | 'goal' | 'challenge';

/** What a test (or the demo) makes happen in the game, in the texts and threads of the era and flavour set. */
export type GameAction =
  | { do: 'join' | 'leave'; player: string }
  | { do: 'chat'; player: string; text: string; secure?: boolean } // 1.19.1+: unsigned chat is `[Not Secure]`
  | { do: 'say' | 'me'; player: string; text: string } // a player's /say and /me
  | { do: 'tell'; player: string; to: string; text: string } // a player's /tell: vanilla logs nothing
  | { do: 'die'; player: string; message: string } // the death message after the victim's name
  | { do: 'advance'; player: string; kind: AdvancementKind; title: string }
  | { do: 'lag'; ms: number }
  // a crash: the tick loop's (a report, then the shutdown) or the watchdog's (a report, then a halt)
  | { do: 'crash'; description: string; by?: 'tick-loop' | 'watchdog' };

export interface GameOptions {
  players: boolean;   // simulated players join, chat and leave every few seconds
  controlDir?: string; // where the control files above are
}

export interface WhitelistEntry {
  uuid: string;
  name: string;
}

/** An entry of banned-players.json (`created`, `source`, `expires`, `reason`) or ops.json (`level`, `bypassesPlayerLimit`). */
export interface ListEntry extends WhitelistEntry {
  [field: string]: unknown;
}

interface Game {
  controlDir: string | null;
  logFd: number;
  consoleRecord: string | null;
  online: Set<string>;
  nextEntityId: number;
  stopping: boolean;
  held: string[]; // console lines read and not yet run (console-hold)
  ready: boolean; // Done was logged: status requests are answered from then on
  pingListener: TcpServer | null;
}

// ---- Shared with host.ts ----

/** UUID.nameUUIDFromBytes(("OfflinePlayer:" + name) as UTF-8): MD5 with the version 3 and IETF variant bits set. */
export function offlineUuid(name: string): string {
  const b = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  b[6] = (b[6] & 0x0f) | 0x30;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** whitelist.json as the server writes it: Gson pretty printing, no trailing newline, entries in HashMap order. */
export function formatWhitelist(entries: readonly WhitelistEntry[]): string {
  return formatList(entries.map(({ uuid, name }) => ({ uuid, name })));
}

/** A player list as the server writes it: whitelist.json's layout, each entry's fields in the game's order. */
export function formatList(entries: readonly ListEntry[]): string {
  return JSON.stringify(orderLikeHashMap(entries, (entry) => entry.uuid), null, 2);
}

/** A ban as the game writes it: `created` in its date format, `source` the console's name. */
export function banEntry(profile: WhitelistEntry, reason: string | undefined, source = 'Server', when = new Date()): ListEntry {
  const offset = -when.getTimezoneOffset();
  const zone = `${offset < 0 ? '-' : '+'}${pad2(Math.floor(Math.abs(offset) / 60))}${pad2(Math.abs(offset) % 60)}`;
  const created = `${localDate(when)} ${clock(when)} ${zone}`;
  return { uuid: profile.uuid, name: profile.name, created, source, expires: 'forever', reason: reason ?? 'Banned by an operator.' };
}

/** Java's String.hashCode over UTF-16 code units, with int overflow. */
function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

// StoredUserList keeps its entries in a HashMap keyed by the UUID string and saves map.values(): the file lists
// them by hash bucket, then in insertion order within a bucket (the table grows at a load factor of 0.75).
function orderLikeHashMap<T>(items: readonly T[], key: (item: T) => string): T[] {
  let capacity = 16;
  while (items.length > capacity * 0.75) capacity *= 2;
  const bucket = (item: T) => {
    const hash = javaStringHash(key(item));
    return (hash ^ (hash >>> 16)) & (capacity - 1);
  };
  return [...items].sort((a, b) => bucket(a) - bucket(b));
}

// ---- Log ----

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function clock(now = new Date()): string {
  return `${pad2(now.getHours())}:${pad2(now.getMinutes())}:${pad2(now.getSeconds())}`;
}

function localDate(when: Date): string {
  return `${when.getFullYear()}-${pad2(when.getMonth() + 1)}-${pad2(when.getDate())}`;
}

/** log4j's OnStartupTriggeringPolicy: a non-empty latest.log becomes logs/<its date>-<N>.log.gz before the run logs anything. */
function rollLatestLog(): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(LATEST_LOG);
  } catch {
    return;
  }
  if (stat.size === 0) return;
  const day = localDate(stat.mtime);
  let n = 1;
  while (fs.existsSync(`logs/${day}-${n}.log.gz`)) n++;
  fs.writeFileSync(`logs/${day}-${n}.log.gz`, gzipSync(fs.readFileSync(LATEST_LOG)));
  fs.unlinkSync(LATEST_LOG);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The line prefix of the flavour: vanilla's (Paper's, Fabric's), or Forge 1.13+'s with its date and logger. */
function prefix(game: Game, thread: string, level: string): string {
  if (controlFile(game, 'game-flavour') !== 'forge') return `[${clock()}] [${thread}/${level}]: `;
  const now = new Date();
  const date = `${pad2(now.getDate())}${MONTHS[now.getMonth()]}${now.getFullYear()}`;
  const ms = String(now.getMilliseconds()).padStart(3, '0');
  return `[${date} ${clock(now)}.${ms}] [${thread}/${level}] [net.minecraft.server.MinecraftServer/]: `;
}

function writeLog(game: Game, message: string, thread = 'Server thread', level = 'INFO'): void {
  const line = `${prefix(game, thread, level)}${message}\n`;
  fs.writeSync(game.logFd, line);   // one write per event, like log4j, so a reader never sees half an event
  process.stdout.write(line);
}

// ---- Players ----

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)];
}

function randomCoordinate(min: number, max: number): string {
  return (Math.floor(min + Math.random() * (max - min)) + 0.5).toFixed(1);
}

function joinPlayer(game: Game, name: string): void {
  const port = 40_000 + Math.floor(Math.random() * 20_000);
  const at = `${randomCoordinate(-200, 200)}, ${randomCoordinate(63, 80)}, ${randomCoordinate(-200, 200)}`;
  writeLog(game, `${name}[/127.0.0.1:${port}] logged in with entity id ${game.nextEntityId++} at (${at})`);
  writeLog(game, `${name} joined the game`);
  game.online.add(name);
}

function disconnectPlayer(game: Game, name: string, reason: string): void {
  writeLog(game, `${name} lost connection: ${reason}`);
  writeLog(game, `${name} left the game`);
  game.online.delete(name);
}

function stepVisitors(game: Game): void {
  const away = SIMULATED_PLAYERS.filter((name) => !game.online.has(name));
  const here = [...game.online];
  const roll = Math.random();
  if (here.length > 0 && roll < 0.25) act(game, { do: 'chat', player: pick(here), text: pick(CHAT_LINES) });
  else if (here.length > 0 && roll < 0.3) act(game, { do: 'die', player: pick(here), message: pick(DEATHS) });
  else if (here.length > 0 && roll < 0.35) {
    const [kind, title] = pick(ADVANCEMENTS);
    act(game, { do: 'advance', player: pick(here), kind, title });
  } else if (away.length > 0 && (here.length === 0 || roll < 0.7)) joinPlayer(game, pick(away));
  else if (here.length > 0) disconnectPlayer(game, pick(here), 'Disconnected');
}

function scheduleVisitors(game: Game): void {
  const delayMs = VISITOR_MIN_DELAY_MS + Math.random() * (VISITOR_MAX_DELAY_MS - VISITOR_MIN_DELAY_MS);
  setTimeout(() => {
    if (game.stopping) return;
    stepVisitors(game);
    scheduleVisitors(game);
  }, delayMs);
}

// ---- Whitelist ----

// The real server would log a warning and start from an empty list; the next save then overwrites the file.
function readList(file: string): ListEntry[] {
  try {
    const entries: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return Array.isArray(entries) ? (entries as ListEntry[]) : [];
  } catch {
    return [];
  }
}

const readWhitelist = (): WhitelistEntry[] => readList(WHITELIST_FILE);

// A missing server.properties means the defaults, and online-mode defaults to true.
function isOnlineMode(): boolean {
  try {
    return !/^online-mode=false\s*$/m.test(fs.readFileSync('server.properties', 'utf8'));
  } catch {
    return true;
  }
}

/** A value of server.properties, with the escapes the game's own file uses (`\uXXXX`, `\n`, `\!`) undone. */
function readProperty(name: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync('server.properties', 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1).trimEnd()
    .replace(/\\u([0-9a-fA-F]{4})|\\(.)/g, (_, hex: string | undefined, c: string) =>
      (hex ? String.fromCharCode(parseInt(hex, 16)) : ({ n: '\n', t: '\t', r: '\r', f: '\f' } as Record<string, string>)[c] ?? c));
}

// A hand-edited entry may lack its name: Gson reads it as null.
const hasName = (name: string) => (entry: WhitelistEntry): boolean =>
  typeof entry.name === 'string' && entry.name.toLowerCase() === name.toLowerCase();

/**
 * GameProfileCache: a name seen before resolves, ignoring case, to the cached profile, and so does a name on the
 * whitelist (the server looked it up, or saw the player, to list it); offline mode invents the rest.
 */
function resolveProfile(name: string, whitelist: readonly WhitelistEntry[]): WhitelistEntry | null {
  let cache: WhitelistEntry[] = [];
  try {
    cache = JSON.parse(fs.readFileSync(USERCACHE_FILE, 'utf8')) as WhitelistEntry[];
  } catch {
    // no cache yet: a fresh server
  }
  const known = [...cache, ...whitelist].find(hasName(name));
  if (known) return { uuid: known.uuid, name: known.name };
  return isOnlineMode() ? null : { uuid: offlineUuid(name), name };
}

function controlFile(game: Game, name: string): string | null {
  if (game.controlDir === null) return null;
  try {
    return fs.readFileSync(`${game.controlDir}/${name}`, 'utf8').trim();
  } catch {
    return null;
  }
}

// 1.13+ replies name the canonical profile and check for no-ops; 1.7-1.12 echo the name as typed, "add" any
// name twice, "remove" the entry of that name in any letter case (UserListWhitelist.getByName), and word
// refusals as `Could not …` (docs/formats.md, console replies).
const isOldEra = (game: Game): boolean => ['1.12', '1.8'].includes(controlFile(game, 'game-era') ?? '');

function addToWhitelist(game: Game, name: string): void {
  const entries = readWhitelist();
  const profile = resolveProfile(name, entries);
  if (!profile) return writeLog(game, isOldEra(game) ? `Could not add ${name} to the whitelist` : 'That player does not exist');
  if (entries.some((entry) => entry.uuid === profile.uuid)) {
    return writeLog(game, isOldEra(game) ? `Added ${name} to the whitelist` : 'Player is already whitelisted');
  }
  fs.writeFileSync(WHITELIST_FILE, formatWhitelist([...entries, profile]));
  writeLog(game, `Added ${isOldEra(game) ? name : profile.name} to the whitelist`);
}

function removeFromWhitelist(game: Game, name: string): void {
  const entries = readWhitelist();
  const oldEra = isOldEra(game);
  const profile = oldEra ? entries.find(hasName(name)) : resolveProfile(name, entries);
  if (!profile) return writeLog(game, oldEra ? `Could not remove ${name} from the whitelist` : 'That player does not exist');
  const kept = entries.filter((entry) => entry.uuid !== profile.uuid);
  if (kept.length === entries.length) return writeLog(game, 'Player is not whitelisted');
  fs.writeFileSync(WHITELIST_FILE, formatWhitelist(kept));
  writeLog(game, `Removed ${oldEra ? name : profile.name} from the whitelist`);
}

function listWhitelist(game: Game): void {
  const names = readWhitelist().map((entry) => entry.name);
  if (names.length === 0) return writeLog(game, 'There are no whitelisted players');
  writeLog(game, `There are ${names.length} whitelisted player(s): ${names.join(', ')}`);
}

// ---- Moderation ----

// Each writes its file before its reply, as StoredUserList saves on every change. 1.13+ names the canonical profile
// and checks for no-ops; 1.8-1.12 name the player as typed, ban and op again without a word, and find the entry to
// remove by name in any letter case (docs/formats.md, moderation replies).

function kick(game: Game, name: string, reason: string | undefined): void {
  const player = [...game.online].find((online) => online.toLowerCase() === name.toLowerCase());
  const era = controlFile(game, 'game-era');
  if (player === undefined) {
    if (era === '1.8') return writeLog(game, 'That player cannot be found');
    return writeLog(game, era === '1.12' ? `Player '${name}' cannot be found` : 'No player was found');
  }
  // 1.13+ disconnects the player, then tells; 1.8-1.12 tell, and the player leaves at the next tick
  if (!isOldEra(game)) {
    disconnectPlayer(game, player, reason ?? 'Kicked by an operator');
    return writeLog(game, `Kicked ${player}: ${reason ?? 'Kicked by an operator'}`);
  }
  writeLog(game, reason === undefined ? `Kicked ${player} from the game` : `Kicked ${player} from the game: '${reason}'`);
  disconnectPlayer(game, player, reason ?? 'Kicked by an operator.');
}

function disconnectBanned(game: Game, profile: WhitelistEntry, farewell: string): void {
  const player = [...game.online].find((online) => online.toLowerCase() === profile.name.toLowerCase());
  if (player !== undefined) disconnectPlayer(game, player, farewell);
}

function ban(game: Game, name: string, reason: string | undefined): void {
  const bans = readList(BANS_FILE);
  const profile = resolveProfile(name, readWhitelist());
  if (isOldEra(game)) {
    if (!profile) return writeLog(game, `Could not ban player ${name}`);
    fs.writeFileSync(BANS_FILE, formatList([...bans.filter((e) => e.uuid !== profile.uuid), banEntry(profile, reason)]));
    disconnectBanned(game, profile, 'You are banned from this server.');
    return writeLog(game, `Banned player ${name}`);
  }
  if (!profile) return writeLog(game, 'That player does not exist');
  if (bans.some((e) => e.uuid === profile.uuid)) return writeLog(game, 'Nothing changed. The player is already banned');
  const entry = banEntry(profile, reason);
  fs.writeFileSync(BANS_FILE, formatList([...bans, entry]));
  writeLog(game, `Banned ${profile.name}: ${String(entry.reason)}`);
  disconnectBanned(game, profile, 'You are banned from this server');
}

function pardon(game: Game, name: string): void {
  const bans = readList(BANS_FILE);
  const oldEra = isOldEra(game);
  const profile = oldEra ? bans.find(hasName(name)) : resolveProfile(name, readWhitelist());
  if (!profile) return writeLog(game, oldEra ? `Could not unban player ${name}` : 'That player does not exist');
  const kept = bans.filter((e) => e.uuid !== profile.uuid);
  if (kept.length === bans.length) return writeLog(game, 'Nothing changed. The player isn\'t banned');
  fs.writeFileSync(BANS_FILE, formatList(kept));
  writeLog(game, oldEra ? `Unbanned player ${name}` : `Unbanned ${profile.name}`);
}

function op(game: Game, name: string): void {
  const ops = readList(OPS_FILE);
  const profile = resolveProfile(name, readWhitelist());
  const oldEra = isOldEra(game);
  if (!profile) return writeLog(game, oldEra ? `Could not op ${name}` : 'That player does not exist');
  const listed = ops.some((e) => e.uuid === profile.uuid);
  if (listed && !oldEra) return writeLog(game, 'Nothing changed. The player already is an operator');
  const entry = { uuid: profile.uuid, name: profile.name, level: 4, bypassesPlayerLimit: false };
  fs.writeFileSync(OPS_FILE, formatList([...ops.filter((e) => e.uuid !== profile.uuid), entry]));
  writeLog(game, oldEra ? `Opped ${name}` : `Made ${profile.name} a server operator`);
}

function deop(game: Game, name: string): void {
  const ops = readList(OPS_FILE);
  const oldEra = isOldEra(game);
  const profile = oldEra ? ops.find(hasName(name)) : resolveProfile(name, readWhitelist());
  if (!profile) return writeLog(game, oldEra ? `Could not de-op ${name}` : 'That player does not exist');
  const kept = ops.filter((e) => e.uuid !== profile.uuid);
  if (kept.length === ops.length) return writeLog(game, 'Nothing changed. The player is not an operator');
  fs.writeFileSync(OPS_FILE, formatList(kept));
  writeLog(game, oldEra ? `De-opped ${name}` : `Made ${profile.name} no longer a server operator`);
}

function listBans(game: Game): void {
  const bans = readList(BANS_FILE);
  if (isOldEra(game)) {
    writeLog(game, `There are ${bans.length} total banned players:`);
    return writeLog(game, bans.map((e) => e.name).join(', '));
  }
  if (bans.length === 0) return writeLog(game, 'There are no bans');
  writeLog(game, `There are ${bans.length} ban(s):`);
  for (const e of bans) writeLog(game, `${e.name} was banned by ${String(e.source)}: ${String(e.reason)}`);
}

// ---- Console ----

const HELP_LINES: readonly string[] = Array.from({ length: 110 }, (_, i) => `/command${String(i + 1).padStart(3, '0')} <arguments>`);

function reportUnknownCommand(game: Game, command: string): void {
  writeLog(game, 'Unknown or incomplete command, see below for error');
  writeLog(game, `${command}<--[HERE]`);
}

function runCommand(game: Game, text: string): void {
  const command = text.startsWith('/') ? text.slice(1) : text;   // the console accepts a leading slash
  if (command === '') return;
  const words = command.split(' ');
  if (command === 'list') {
    return writeLog(game, `There are ${game.online.size} of a max of ${MAX_PLAYERS} players online: ${[...game.online].join(', ')}`);
  }
  if (words[0] === 'say' && words.length > 1) return writeLog(game, `[Server] ${command.slice('say '.length)}`);
  // tellraw tells the console nothing when it reached someone, and 1.13+ that nobody was there otherwise
  if (words[0] === 'tellraw') return game.online.size === 0 && !isOldEra(game) ? writeLog(game, 'No player was found') : undefined;
  if (command === 'banlist ips') {
    writeLog(game, 'There are 1 ban(s):');
    return writeLog(game, '203.0.113.66 was banned by Server: Griefing');
  }
  if (command === 'banlist' || command === 'banlist players') return listBans(game);
  // one line per command, as vanilla's help prints them: more than a reply window holds
  if (command === 'help') return HELP_LINES.forEach((line) => writeLog(game, line));
  if (command === 'whitelist list') return listWhitelist(game);
  if (controlFile(game, `game-ignores-${words[0]}`) !== null) return;
  if (words.length === 3 && words[0] === 'whitelist' && words[1] === 'add') return addToWhitelist(game, words[2]);
  if (words.length === 3 && words[0] === 'whitelist' && words[1] === 'remove') return removeFromWhitelist(game, words[2]);
  const reason = words.length > 2 ? words.slice(2).join(' ') : undefined;
  if (words.length >= 2 && words[0] === 'kick') return kick(game, words[1], reason);
  if (words.length >= 2 && words[0] === 'ban') return ban(game, words[1], reason);
  if (words.length === 2 && words[0] === 'pardon') return pardon(game, words[1]);
  if (words.length === 2 && words[0] === 'op') return op(game, words[1]);
  if (words.length === 2 && words[0] === 'deop') return deop(game, words[1]);
  if (command === 'stop') return stopServer(game, true);
  reportUnknownCommand(game, command);
}

/** Records the line byte for byte (tests compare it with what they sent), then runs it, or holds it while told to. */
function acceptConsoleLine(game: Game, line: Buffer): void {
  if (game.consoleRecord) fs.appendFileSync(game.consoleRecord, Buffer.concat([line, Buffer.from('\n')]));
  game.held.push(line.toString('utf8').trim());
  if (game.held.length === 1) runHeldLines(game);
}

// A lagging server: the console thread queues what it reads, and the game runs it at a later tick, in order.
function runHeldLines(game: Game): void {
  if (game.controlDir !== null && fs.existsSync(`${game.controlDir}/console-hold`)) {
    setTimeout(() => runHeldLines(game), CONSOLE_HOLD_POLL_MS);
    return;
  }
  for (const command of game.held.splice(0)) {
    if (game.stopping) return;
    runCommand(game, command);
    sayChatAfterReply(game);
  }
}

// A chat line in the same moment as a reply, however busy the machine: a test that appended it itself could come
// after the reply's window had closed.
function sayChatAfterReply(game: Game): void {
  const chat = controlFile(game, 'chat-after-reply');
  if (chat !== null && game.controlDir !== null) {
    fs.rmSync(`${game.controlDir}/chat-after-reply`, { force: true });
    writeLog(game, chat, 'Async Chat Thread - #2');
  }
  const lines = controlFile(game, 'lines-after-reply');
  if (lines !== null && game.controlDir !== null) {
    fs.rmSync(`${game.controlDir}/lines-after-reply`, { force: true });
    for (const [thread, message] of JSON.parse(lines) as Array<[string, string]>) writeLog(game, message, thread);
  }
}

// Bytes, not strings: a UTF-8 character split across two reads must reach the record unchanged.
function readConsole(game: Game): void {
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let end = pending.indexOf(0x0a); end >= 0 && !game.stopping; end = pending.indexOf(0x0a)) {
      const line = pending.subarray(0, end);
      pending = pending.subarray(end + 1);
      acceptConsoleLine(game, line);
    }
  });
  process.stdin.on('end', () => {
    if (pending.length > 0 && !game.stopping) acceptConsoleLine(game, pending);   // like readLine() at end of input
    stopServer(game, false);
  });
  process.stdin.on('error', () => stopServer(game, false));   // EIO once the pane's terminal hangs up
}

// ---- Server List Ping (docs/formats.md#server-list-ping) ----

const PING_MAX_BYTES = 4096; // a client's handshake and requests are a few dozen bytes

function writeVarInt(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value >>> 0;
  do {
    bytes.push((rest & 0x7f) | (rest > 0x7f ? 0x80 : 0));
    rest >>>= 7;
  } while (rest !== 0);
  return Buffer.from(bytes);
}

/** A VarInt at `offset`: its value and the offset after it, or null when the bytes end first. */
function readVarInt(data: Buffer, offset: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (offset + i >= data.length) return null;
    value |= (data[offset + i] & 0x7f) << (7 * i);
    if ((data[offset + i] & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new Error('VarInt too long');
}

const frame = (id: number, payload: Buffer): Buffer => {
  const body = Buffer.concat([writeVarInt(id), payload]);
  return Buffer.concat([writeVarInt(body.length), body]);
};

/** The status JSON a vanilla 1.21.4 server sends: version, players with a sample of names, the MOTD as a component. */
function statusJson(game: Game): string {
  const online = [...game.online];
  return JSON.stringify({
    version: { name: MC_VERSION, protocol: MC_PROTOCOL },
    players: {
      max: Number(readProperty('max-players') ?? MAX_PLAYERS), online: online.length,
      ...online.length === 0 ? {} : { sample: online.slice(0, 12).map((name) => ({ name, id: offlineUuid(name) })) },
    },
    description: { text: readProperty('motd') ?? 'A Minecraft Server' },
    enforcesSecureChat: false,
  });
}

/** Pre-1.7 clients send 0xFE 0x01 (and 1.6's plugin message): one 0xFF kick packet of UTF-16BE text answers them. */
function legacyAnswer(game: Game): Buffer {
  const text = ['§1', '127', MC_VERSION, readProperty('motd') ?? 'A Minecraft Server', String(game.online.size),
    readProperty('max-players') ?? String(MAX_PLAYERS)].join('\0');
  const utf16 = Buffer.from(text, 'utf16le').swap16();
  const head = Buffer.alloc(3);
  head[0] = 0xff;
  head.writeUInt16BE(text.length, 1);
  return Buffer.concat([head, utf16]);
}

/** Answers status requests (handshake with next state 1, request, ping) the way the game's network thread does. */
function answerPings(game: Game, socket: Socket): void {
  let data = Buffer.alloc(0);
  let state = 0; // 0: handshake expected, 1: status
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    data = Buffer.concat([data, chunk]);
    if (data.length > PING_MAX_BYTES || !game.ready) return void socket.destroy();
    if (readProperty('enable-status') === 'false') return void socket.destroy();
    if (data[0] === 0xfe) {
      socket.end(legacyAnswer(game));
      return;
    }
    if (controlFile(game, 'game-ping') === 'legacy') return void socket.destroy(); // a 1.6 server reads no such packet
    for (;;) {
      const length = readVarInt(data, 0);
      if (length === null || data.length < length[1] + length[0]) return;
      const packet = data.subarray(length[1], length[1] + length[0]);
      data = data.subarray(length[1] + length[0]);
      const id = readVarInt(packet, 0)![0];
      if (state === 0 && id === 0x00) state = 1;
      else if (state === 1 && id === 0x00) {
        const json = Buffer.from(statusJson(game), 'utf8');
        socket.write(frame(0x00, Buffer.concat([writeVarInt(json.length), json])));
      } else if (state === 1 && id === 0x01) {
        socket.end(frame(0x01, packet.subarray(1, 9)));
        return;
      } else return void socket.destroy();
    }
  });
}

function listenForPings(game: Game, port: number): void {
  const listener = createTcpServer((socket) => answerPings(game, socket));
  // a port another program holds: the real server logs FAILED TO BIND and stops; the simulation plays on without it
  listener.on('error', () => writeLog(game, '**** FAILED TO BIND TO PORT!', 'Server thread', 'WARN'));
  listener.listen(port, '127.0.0.1');
  listener.unref();
  game.pingListener = listener;
}

// ---- Actions ----

/** Runs the action lists that appeared in the control folder, in order. */
function runActionFiles(game: Game): void {
  if (game.controlDir === null || game.stopping) return;
  const files = fs.readdirSync(game.controlDir)
    .map((name) => ACTION_FILE.exec(name))
    .filter((match) => match !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  for (const [name] of files) {
    const file = `${game.controlDir}/${name}`;
    const actions = JSON.parse(fs.readFileSync(file, 'utf8')) as GameAction[];
    fs.rmSync(file);
    for (const action of actions) if (!game.stopping) act(game, action);
  }
}

function act(game: Game, action: GameAction): void {
  const era = controlFile(game, 'game-era');
  const paper = controlFile(game, 'game-flavour') === 'paper';
  switch (action.do) {
    case 'join': return joinPlayer(game, action.player);
    case 'leave': return disconnectPlayer(game, action.player, 'Disconnected');
    case 'chat': {
      const tag = action.secure === false && era === null ? '[Not Secure] ' : '';
      return writeLog(game, `${tag}<${action.player}> ${action.text}`, paper ? 'Async Chat Thread - #0' : 'Server thread');
    }
    case 'say':
      if (paper) writeLog(game, `${action.player} issued server command: /say ${action.text}`);
      return writeLog(game, `[${action.player}] ${action.text}`);
    case 'me':
      if (paper) writeLog(game, `${action.player} issued server command: /me ${action.text}`);
      return writeLog(game, `* ${action.player} ${action.text}`);
    case 'tell':
      if (paper) writeLog(game, `${action.player} issued server command: /tell ${action.to} ${action.text}`);
      return;
    case 'die': return writeLog(game, `${action.player} ${action.message}`);
    case 'advance':
      if (era === '1.8') return writeLog(game, `${action.player} has just earned the achievement [${action.title}]`);
      return writeLog(game, `${action.player} ${ADVANCEMENT_TEXTS[action.kind]} [${action.title}]`);
    case 'lag': {
      const ticks = Math.floor(action.ms / 50);
      return writeLog(game, isOldEra(game)
        ? `Can't keep up! Did the system time change, or is the server overloaded? Running ${action.ms}ms behind, skipping ${ticks} tick(s)`
        : `Can't keep up! Is the server overloaded? Running ${action.ms}ms or ${ticks} ticks behind`, 'Server thread', 'WARN');
    }
    case 'crash': return crash(game, action.description, action.by ?? 'tick-loop');
  }
}

const ADVANCEMENT_TEXTS: Record<AdvancementKind, string> = {
  task: 'has made the advancement', goal: 'has reached the goal', challenge: 'has completed the challenge',
};

/** A crash as vanilla 1.19.1+ reports it: the report in crash-reports/, its path in the log, then the end. */
function crash(game: Game, description: string, by: 'tick-loop' | 'watchdog'): void {
  const now = new Date();
  const stamp = `${localDate(now)}_${pad2(now.getHours())}.${pad2(now.getMinutes())}.${pad2(now.getSeconds())}`;
  const report = `crash-reports/crash-${stamp}-server.txt`;
  const thread = by === 'watchdog' ? 'Server Watchdog' : 'Server thread';
  if (by === 'watchdog') {
    writeLog(game, `A single server tick took ${WATCHDOG_TICK_SECONDS} seconds (should be max 0.05)`, thread, 'ERROR');
    writeLog(game, 'Considering it to be crashed, server will forcibly shutdown.', thread, 'ERROR');
  } else {
    writeLog(game, 'Encountered an unexpected exception', thread, 'ERROR');
    fs.writeSync(game.logFd, 'java.lang.IllegalStateException: simulated\n\tat net.minecraft.server.MinecraftServer.tickServer(MinecraftServer.java:1)\n');
  }
  fs.mkdirSync('crash-reports', { recursive: true });
  fs.writeFileSync(report, [
    '---- Minecraft Crash Report ----', '// Why did you do that?', '',
    `Time: ${localDate(now)} ${clock(now)}`, `Description: ${description}`, '',
    'java.lang.IllegalStateException: simulated', '\tat net.minecraft.server.MinecraftServer.tickServer(MinecraftServer.java:1)',
    '', '', 'A detailed walkthrough of the error, its code path and all known details is as follows:', '-'.repeat(87), '',
  ].join('\n'));
  writeLog(game, `This crash report has been saved to: ${process.cwd()}/./${report}`, thread, 'ERROR');
  if (by === 'tick-loop') return stopServer(game, false, 1);
  fs.closeSync(game.logFd);
  process.exit(1); // Runtime.halt: no shutdown, no stop line
}

// ---- Life cycle ----

function startServer(game: Game): void {
  writeLog(game, 'Environment: Environment[sessionHost=https://sessionserver.mojang.com, servicesHost=https://api.minecraftservices.com, name=PROD]', 'ServerMain');
  writeLog(game, 'Loaded 1370 recipes', 'ServerMain');
  writeLog(game, 'Loaded 1481 advancements', 'ServerMain');
  writeLog(game, `Starting minecraft server version ${MC_VERSION}`);
  writeLog(game, 'Loading properties');
  writeLog(game, 'Default game type: SURVIVAL');
  writeLog(game, 'Generating keypair');
  const port = readProperty('server-port') ?? '25565';
  writeLog(game, `Starting Minecraft server on ${readProperty('server-ip') || '*'}:${port}`);
  listenForPings(game, Number(port));
  writeLog(game, 'Using epoll channel type');
  if (!isOnlineMode()) {
    writeLog(game, '**** SERVER IS RUNNING IN OFFLINE/INSECURE MODE!', 'Server thread', 'WARN');
    writeLog(game, 'The server will make no attempt to authenticate usernames. Beware.', 'Server thread', 'WARN');
  }
  writeLog(game, 'Preparing level "world"');
  writeLog(game, 'Preparing start region for dimension minecraft:overworld');
  writeLog(game, 'Preparing spawn area: 0%', 'Worker-Main-2');
}

function finishStartup(game: Game, startedMs: number, players: boolean): void {
  writeLog(game, `Done (${((Date.now() - startedMs) / 1000).toFixed(3)}s)! For help, type "help"`);
  game.ready = true;
  readConsole(game);
  if (game.controlDir !== null) {
    fs.watch(game.controlDir, () => runActionFiles(game));
    runActionFiles(game);
  }
  if (players) scheduleVisitors(game);
}

/** The shutdown sequence of vanilla: `/stop` adds its own first line; a signal or end of input starts at "Stopping server". */
function stopServer(game: Game, byCommand: boolean, exitCode = 0): void {
  if (game.stopping) return;
  game.stopping = true;
  if (byCommand) writeLog(game, 'Stopping the server');
  writeLog(game, 'Stopping server');
  writeLog(game, 'Saving players');
  for (const name of [...game.online]) disconnectPlayer(game, name, 'Server closed');
  writeLog(game, 'Saving worlds');
  writeLog(game, "Saving chunks for level 'ServerLevel[world]'/minecraft:overworld");
  writeLog(game, "Saving chunks for level 'ServerLevel[world]'/minecraft:the_nether");
  writeLog(game, "Saving chunks for level 'ServerLevel[world]'/minecraft:the_end");
  writeLog(game, 'ThreadedAnvilChunkStorage (world): All chunks are saved');
  writeLog(game, 'ThreadedAnvilChunkStorage: All dimensions are saved');
  game.pingListener?.close();
  fs.closeSync(game.logFd);
  process.exit(exitCode);
}

function consoleRecordPath(argv: readonly string[]): string | null {
  const arg = argv.find((a) => a.startsWith(CONSOLE_RECORD_ARG));
  return arg === undefined ? null : arg.slice(CONSOLE_RECORD_ARG.length);
}

/** Runs the simulated server in the current directory until `stop`, end of input, SIGTERM, SIGINT or SIGHUP. */
export function runGame(options: GameOptions): void {
  // The daemon finds the game by /proc/PID/comm, which is `java` for a real server. Node 22 and later name
  // their main thread `node-MainThread`; setting the title makes libuv call prctl(PR_SET_NAME) back to `java`.
  process.title = 'java';
  const startedMs = Date.now();
  process.stdout.on('error', () => undefined);   // the pane's terminal is gone after a hangup; the log file is what counts
  fs.mkdirSync('logs', { recursive: true });
  rollLatestLog();
  const game: Game = {
    controlDir: options.controlDir ?? null,
    logFd: fs.openSync(LATEST_LOG, 'a'),   // held open for the whole run, as log4j does
    consoleRecord: consoleRecordPath(process.argv.slice(2)),
    online: new Set(),
    nextEntityId: 212,
    stopping: false,
    held: [],
    ready: false,
    pingListener: null,
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stopServer(game, false));
  startServer(game);
  setTimeout(() => finishStartup(game, startedMs, options.players), WORLD_LOADING_MS);
}
