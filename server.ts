// gameserver-api: an HTTP/JSON API on port 6767 for one Minecraft (Java Edition) server host.
// Public GET routes report on the game server (process, players, whitelist, logs, backups, properties, a host report,
// live events, metrics); POST routes, behind X-API-Key, steer it through the host's `serv` tool and the game's tmux
// console. Callers: a chat relay that holds the key, and admins with curl. Run `node dist/server.js`, configured by
// environment variables (README.md; under systemd from an EnvironmentFile of mode 600). docs/api.md is the contract.
// The file reads top down: the core, then one section per feature, then the HTTP boundary (README.md#the-code).

import { Agent as HttpAgent, createServer, request as httpRequest, STATUS_CODES } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Agent as HttpsAgent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { connect as connectTcp, isIP, Socket } from 'node:net';
import * as path from 'node:path';
import { isAscii } from 'node:buffer';
import { createSecureContext } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import { gunzip } from 'node:zlib';
import { availableParallelism, cpus } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

// ==== The core: limits, errors, settings, replies, the route table, the daemon, main ====

// ---- Limits that cut across features (each feature's own are in its section) ----

const SERVICE_NAME = 'gameserver-api';
const VERSION = '1.4.5'; // equals package.json's version (a test checks): dist/server.js is deployed alone
const EX_CONFIG = 78;
const MAX_BODY_BYTES = 16 * 1024;
const SMALL_FILE_MAX_BYTES = 16 * 1024 * 1024; // server.properties, whitelist.json, usercache.json, version files
// docs/api.md#freshness: a read route's answer is shared this long, so that under load the host is read 20 times a
// second whatever the request rate; documented as "at most 100 ms old", which leaves room for a busy event loop
const SHARED_ANSWER_MAX_AGE_MS = 50;
const SHARED_ANSWERS_KEPT = 16; // distinct answers (route, lines, key or not) held at once
const SHARED_ANSWER_MAX_BYTES = 1024 * 1024; // a larger answer (a tail of long lines) is never held
const LOG_LINE_MAX_BYTES = 4 * 1024; // no line that means something is near it; longer lines are skipped unread
const SHUTDOWN_GRACE_MS = 5_000;

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

// Messages of every route, written once: the code answers them and the API description shows them
const UNAUTHORIZED = 'Unauthorized — X-API-Key required for write endpoints.';
const WRITES_DISABLED = 'Write endpoints are disabled: no API_KEY is configured.';
const NO_KEY_WARNING = '[WARN] No API_KEY set — write endpoints are disabled until one is configured.';
const BUSY = 'The server is busy; try again shortly.';
const INTERNAL_ERROR = 'Internal server error';
const NOT_FOUND = 'Not found';
// the body names what the Allow header lists: a person with curl reads the body, not the headers
const methodNotAllowed = (allow: string): string => `Method not allowed: this path takes ${allow}.`;
const NOT_A_JSON_OBJECT = 'Request body must be a JSON object.';
const BODY_TOO_LARGE = `Request body is larger than ${MAX_BODY_BYTES} bytes.`;

// ---- Errors ----

/** A failure with an HTTP status; the boundary turns it into `{ok: false, error}`. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

/** A bad setting: the daemon prints it and exits 78. */
export class ConfigError extends Error {}

const busy = (): HttpError => new HttpError(503, BUSY, { 'Retry-After': '1' });

// ---- Settings ----

const KEY_MIN_CHARS = 16;

// Every variable the daemon reads, with what --help says of it: readConfig reads no other, and `secret` ones never
// reach a child (serv, tmux, the report script, and so the game and its plugins) nor the start-up line.
const SETTINGS = {
  API_KEY: {
    secret: true,
    help: 'key for the write routes, 16+ printable ASCII characters; unset or empty: writes disabled',
  },
  API_KEY_FILE: { secret: true, help: 'read API_KEY from this file instead (one trailing newline removed)' },
  PORT: { secret: false, help: 'listening port, 1..65535 (default 6767)' },
  HOST: { secret: false, help: 'bind address (default: all interfaces)' },
  SERVER_DIR: { secret: false, help: 'the game server folder (default: the working directory)' },
  BACKUP_DIR: { secret: false, help: 'folder of the .tar.gz backups (default: $SERVER_DIR/backups)' },
  SNAPSHOT_LOG: {
    secret: false,
    help: 'file behind GET /api/logs/snapshot (default: /var/log/gameserver_snapshot.log)',
  },
  SERV_BIN: { secret: false, help: 'the host\'s control tool (default: serv, from PATH)' },
  REPORT_SCRIPT: { secret: false, help: 'the report script (default: servreport.sh, from PATH)' },
  TMUX_SESSION: { secret: false, help: 'tmux session of the game console (default: gameserver)' },
  TMUX_SOCKET: { secret: false, help: 'tmux socket path, passed as -S (default: tmux\'s own)' },
  PROFILE_LOOKUP_URL: {
    secret: false,
    help: 'name-to-UUID lookup (default: https://api.mojang.com/users/profiles/minecraft/)',
  },
  CONSOLE_SHELL_PANE: {
    secret: false,
    help: 'refuse (default) or allow a game typed into an interactive shell\'s pane',
  },
  EVENT_WEBHOOK_URL: { secret: true, help: 'http(s) URL every event is POSTed to (a Discord webhook URL is a secret)' },
  EVENT_WEBHOOK_URL_FILE: { secret: true, help: 'read EVENT_WEBHOOK_URL from this file instead' },
  EVENT_WEBHOOK_SECRET: { secret: true, help: 'signs each webhook body (X-Signature-256)' },
  EVENT_WEBHOOK_SECRET_FILE: { secret: true, help: 'read EVENT_WEBHOOK_SECRET from this file instead' },
  EVENT_WEBHOOK_FORMAT: { secret: false, help: 'json (default) or discord' },
  TLS_CERT_FILE: {
    secret: false,
    help: 'PEM certificate (chain): with TLS_KEY_FILE, HTTPS only on PORT; re-read when it changes',
  },
  TLS_KEY_FILE: { secret: false, help: 'PEM private key of TLS_CERT_FILE' },
  AVATAR_URL: {
    secret: false,
    help: 'players\' heads on GET /status: an http(s) URL with {name} or {uuid} (default: none, no third party)',
  },
  STATUS_PAGE_CHAT: { secret: false, help: 'on shows chat on GET /status; off (default) does not' },
  STATE_DIRECTORY: {
    secret: false,
    help: 'where the players history is kept across restarts (systemd\'s StateDirectory=; unset: nothing written)',
  },
} as const;
type SettingName = keyof typeof SETTINGS;

interface Config {
  apiKey: string | undefined; // undefined: writes disabled (unset or empty)
  port: number;
  host: string | undefined;
  serverDir: string; // resolved, and known to be a folder
  backupDir: string;
  snapshotLog: string;
  servBin: string;
  reportScript: string;
  tmuxSession: string;
  tmuxSocket: string | undefined;
  profileLookupUrl: URL; // a name, percent-encoded, is appended to its path
  consoleShellPane: 'refuse' | 'allow';
  webhookUrl: URL | undefined;
  webhookSecret: string | undefined;
  tls: TlsFiles | undefined; // undefined: plain HTTP
  webhookFormat: 'json' | 'discord';
  avatarUrl: string | undefined; // a template with {name} or {uuid}, known to make an http(s) URL
  statusPageChat: boolean;
  stateDir: string | undefined; // resolved; undefined: nothing is written
  childEnv: Readonly<Record<string, string>>; // the daemon's environment without its secrets, for every child
}

/**
 * Reads and checks every setting once, into the form the daemon uses (URLs as URL, paths resolved): a value that
 * would fail later fails here. Throws ConfigError naming the variable, the range and the value.
 */
export function readConfig(env: NodeJS.ProcessEnv, cwd: string): Readonly<Config> {
  const text = (name: SettingName): string | undefined =>
    (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const rawPort = text('PORT') ?? '6767';
  if (!/^[0-9]{1,5}$/.test(rawPort) || Number(rawPort) < 1 || Number(rawPort) > 65_535) {
    throw new ConfigError(`PORT must be an integer from 1 to 65535; got ${JSON.stringify(rawPort)}.`);
  }
  const serverDir = path.resolve(cwd, text('SERVER_DIR') ?? '.');
  let isFolder = false;
  try {
    isFolder = fs.statSync(fs.realpathSync(serverDir)).isDirectory();
  } catch {
    // missing or unreadable: said below
  }
  if (!isFolder) throw new ConfigError(`SERVER_DIR must be an existing directory; got ${JSON.stringify(serverDir)}.`);
  const session = text('TMUX_SESSION') ?? 'gameserver';
  // tmux reads `.` and `:` in a target as window and pane separators, so such a session cannot be named exactly
  if (!/^[A-Za-z0-9_+@%=,-]{1,64}$/.test(session)) {
    throw new ConfigError(
      `TMUX_SESSION must be 1 to 64 characters from A-Z, a-z, 0-9 and _+@%=,-; got ${JSON.stringify(session)}.`,
    );
  }
  const lookup = text('PROFILE_LOOKUP_URL') ?? 'https://api.mojang.com/users/profiles/minecraft/';
  const profileLookupUrl = parseHttpUrl(lookup);
  if (profileLookupUrl === undefined || !lookup.includes('/', lookup.indexOf('//') + 2) || /[?#]/.test(lookup)) {
    throw new ConfigError('PROFILE_LOOKUP_URL must be an http:// or https:// URL with a path, to which a name is '
      + `appended; got ${JSON.stringify(lookup)}.`);
  }
  const host = text('HOST');
  if (host !== undefined && !/^[A-Za-z0-9.:%_-]{1,255}$/.test(host)) {
    throw new ConfigError(`HOST must be an IP address or host name; got ${JSON.stringify(host)}.`);
  }
  const shellPane = text('CONSOLE_SHELL_PANE') ?? 'refuse';
  if (shellPane !== 'refuse' && shellPane !== 'allow') {
    throw new ConfigError(`CONSOLE_SHELL_PANE must be refuse or allow; got ${JSON.stringify(shellPane)}.`);
  }
  const fromFile = (name: SettingName, file: SettingName): { value: string | undefined; from: SettingName } => {
    const inline = text(name);
    const fileName = text(file);
    if (fileName === undefined) return { value: inline, from: name };
    if (inline !== undefined) throw new ConfigError(`${name} and ${file} are both set; set only one of them.`);
    return { value: readSecretFile(file, path.resolve(cwd, fileName)), from: file };
  };
  const webhook = fromFile('EVENT_WEBHOOK_URL', 'EVENT_WEBHOOK_URL_FILE');
  const webhookUrl = webhook.value === undefined ? undefined : parseHttpUrl(webhook.value);
  if (webhook.value !== undefined && webhookUrl === undefined) {
    throw new ConfigError(
      `${webhook.from} must be an http:// or https:// URL; got ${JSON.stringify(withoutSecrets(webhook.value))}.`,
    );
  }
  const webhookSecret = fromFile('EVENT_WEBHOOK_SECRET', 'EVENT_WEBHOOK_SECRET_FILE');
  if (webhookSecret.value === '') {
    throw new ConfigError('EVENT_WEBHOOK_SECRET_FILE must hold a secret; the file is empty.');
  }
  const webhookFormat = text('EVENT_WEBHOOK_FORMAT') ?? 'json';
  if (webhookFormat !== 'json' && webhookFormat !== 'discord') {
    throw new ConfigError(`EVENT_WEBHOOK_FORMAT must be json or discord; got ${JSON.stringify(webhookFormat)}.`);
  }
  const key = fromFile('API_KEY', 'API_KEY_FILE');
  const certFile = text('TLS_CERT_FILE');
  const keyFile = text('TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together (HTTPS) or not at all (HTTP); '
      + `only ${certFile === undefined ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} is set.`);
  }
  const tls = certFile === undefined
    ? undefined
    : { certFile: path.resolve(cwd, certFile), keyFile: path.resolve(cwd, keyFile!) };
  if (tls !== undefined) {
    try {
      readTlsCredentials(tls);
    } catch (err) {
      throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must name a readable PEM certificate and its private '
        + `key: ${describeError(err).replace(/\.$/, '')}.`);
    }
  }
  const avatarUrl = text('AVATAR_URL');
  if (avatarUrl !== undefined && (!/\{(?:name|uuid)\}/.test(avatarUrl)
    || parseHttpUrl(avatarUrl.replace(/\{(?:name|uuid)\}/g, 'x')) === undefined)) {
    throw new ConfigError('AVATAR_URL must be an http:// or https:// URL holding {name} or {uuid}; '
      + `got ${JSON.stringify(avatarUrl)}.`);
  }
  const statusPageChat = text('STATUS_PAGE_CHAT') ?? 'off';
  if (statusPageChat !== 'on' && statusPageChat !== 'off') {
    throw new ConfigError(`STATUS_PAGE_CHAT must be on or off; got ${JSON.stringify(statusPageChat)}.`);
  }
  // systemd joins several StateDirectory= folders with `:`; the unit names one
  const stateDir = text('STATE_DIRECTORY')?.split(':')[0];
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !(name in SETTINGS && SETTINGS[name as SettingName].secret)) childEnv[name] = value;
  }
  return Object.freeze({
    apiKey: checkApiKey(key.value, key.from),
    port: Number(rawPort),
    host,
    serverDir,
    backupDir: path.resolve(cwd, text('BACKUP_DIR') ?? path.join(serverDir, 'backups')),
    snapshotLog: path.resolve(cwd, text('SNAPSHOT_LOG') ?? '/var/log/gameserver_snapshot.log'),
    servBin: text('SERV_BIN') ?? 'serv',
    reportScript: text('REPORT_SCRIPT') ?? 'servreport.sh',
    tmuxSession: session,
    tmuxSocket: text('TMUX_SOCKET') === undefined ? undefined : path.resolve(cwd, text('TMUX_SOCKET')!),
    profileLookupUrl,
    consoleShellPane: shellPane,
    webhookUrl,
    webhookSecret: webhookSecret.value,
    webhookFormat,
    tls: tls === undefined ? undefined : Object.freeze(tls),
    avatarUrl,
    statusPageChat: statusPageChat === 'on',
    stateDir: stateDir === undefined || stateDir === '' ? undefined : path.resolve(cwd, stateDir),
    childEnv: Object.freeze(childEnv),
  });
}

/** A URL as it may be printed: its path and query (a Discord webhook's token) and user info cut off. */
function withoutSecrets(url: string): string {
  const authority = /^([^:/?#\s]{1,32}:\/\/)(?:[^@/?#]*@)?([^/?#]*)/.exec(url);
  if (authority === null) return url.length > 16 ? `${url.slice(0, 8)}…` : url;
  const shown = authority[1] + authority[2];
  return shown.length < url.length ? `${shown}/…` : shown;
}

/** An http: or https: URL with a host, or undefined: `new URL` alone takes `http:/x` and throws on `http://a:b:c/`. */
function parseHttpUrl(value: string): URL | undefined {
  if (!/^https?:\/\/[^\s/?#]+(?:[/?#]\S*)?$/i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return url.hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

/** A secret from a file (docs/api.md#key-from-a-file): one trailing newline removed; never printed. */
function readSecretFile(variable: SettingName, file: string): string {
  try {
    return readSmallFileSync(file).toString('utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError(
      `${variable} must name a readable regular file; got ${JSON.stringify(file)} (${describeError(err)}).`,
    );
  }
}

/** The key as a header can carry it, or undefined (writes disabled); never printed. */
function checkApiKey(key: string | undefined, from: SettingName): string | undefined {
  if (key === undefined) return undefined;
  // a header carries visible ASCII: a key with a space, a control or a non-ASCII character could never be sent
  const sendable = /^[\x21-\x7e]*$/.test(key);
  if (!sendable || key.length < KEY_MIN_CHARS) {
    throw new ConfigError(`${from} must hold a key of ${KEY_MIN_CHARS} or more printable ASCII characters without `
      + `spaces; got ${key.length} characters${sendable ? '' : ', not all of them printable ASCII'}.`);
  }
  return key;
}

/** The start-up summary: every setting but the secrets. */
function describeConfig(c: Config): string {
  return [
    `SERVER_DIR=${c.serverDir}`, `BACKUP_DIR=${c.backupDir}`, `SNAPSHOT_LOG=${c.snapshotLog}`,
    `SERV_BIN=${c.servBin}`, `REPORT_SCRIPT=${c.reportScript}`, `TMUX_SESSION=${c.tmuxSession}`,
    `TMUX_SOCKET=${c.tmuxSocket ?? '(tmux default)'}`, `PROFILE_LOOKUP_URL=${c.profileLookupUrl.href}`,
    `CONSOLE_SHELL_PANE=${c.consoleShellPane}`,
    // the URL may carry a token (Discord's does): only its origin is shown
    `EVENT_WEBHOOK_URL=${c.webhookUrl === undefined ? '(none)' : `${c.webhookUrl.origin}/…`}`,
    `EVENT_WEBHOOK_FORMAT=${c.webhookFormat}`,
    `EVENT_WEBHOOK_SECRET=${c.webhookSecret === undefined ? '(none)' : '(set)'}`,
    `AVATAR_URL=${c.avatarUrl ?? '(none)'}`, `STATUS_PAGE_CHAT=${c.statusPageChat ? 'on' : 'off'}`,
    `STATE_DIRECTORY=${c.stateDir ?? '(none)'}`,
    c.tls === undefined ? 'plain HTTP' : `HTTPS with TLS_CERT_FILE=${c.tls.certFile}, TLS_KEY_FILE=${c.tls.keyFile}`,
    c.apiKey === undefined ? 'writes disabled' : 'writes enabled',
  ].join(', ');
}

// ---- Replies ----

/** What a handler answers. `outcome` is what the write log prints: the message, or the error. */
interface Reply {
  status: number;
  body: string | Buffer; // serialised JSON, or text of `type`
  type?: string; // the content type when not JSON
  headers?: Record<string, string>;
  outcome?: string;
  stream?: (sink: StreamSink) => void; // an event stream: the headers are written, then it writes on its own
}

/** The narrow view of a response an event stream gets. */
interface StreamSink {
  write(text: string): void;
  end(): void;
  onClose(listener: () => void): void;
}

const jsonReply = (value: object, status = 200): Reply => ({ status, body: JSON.stringify(value) });
/** `{ok: true, message}`, the answer of every write. */
const messageReply = (message: string, status = 200): Reply =>
  ({ status, body: JSON.stringify({ ok: true, message }), outcome: message });
const errorReply = (status: number, message: string, headers: Record<string, string> = {}): Reply =>
  ({ status, body: JSON.stringify({ ok: false, error: message }), headers, outcome: message });
const asBytes = (reply: Reply): Reply =>
  (typeof reply.body === 'string' ? { ...reply, body: Buffer.from(reply.body) } : reply);

/** A request as a handler sees it. */
interface ApiRequest {
  req: IncomingMessage;
  search: string; // the query string after `?`, or ''
  reveal: boolean; // the valid key was sent: public reads show secrets and addresses as stored
  keySent: boolean; // a key was sent, valid or not
  allowBody(): void; // answers `Expect: 100-continue` once the checks before the body have passed
}

// ---- The route table ----

/** One status a route can answer, as GET /api/openapi.json describes it. */
interface Answer {
  description: string;
  schema: Schema;
  example: unknown; // a body exactly as the daemon sends it
  type?: string; // when not JSON
}

/** A JSON Schema of the subset the OpenAPI document uses, or the name of one of SCHEMAS. */
type Schema = string | { [keyword: string]: unknown };

interface Parameter {
  name: string;
  in: 'query' | 'header';
  schema: Schema;
  description: string;
}

/** What GET /api/openapi.json says of a route; each lives in its feature's section. */
interface RouteAbout {
  summary: string;
  description: string;
  parameters?: readonly Parameter[];
  body?: Schema; // the JSON request body, when the route reads one
  answers: Readonly<Record<number, Answer>>;
}

/** The daemon's features, as the route table reaches them (each is made in its section by createDaemon). */
interface Features {
  game: GameStatus;
  presence: Presence;
  tails: Tails;
  properties: Properties;
  whitelist: Whitelist;
  moderation: Moderation;
  backups: Backups;
  report: Report;
  console: GameConsole;
  serv: Serv;
  events: Events;
  readiness: Readiness;
  history: History;
  statusPage: StatusPage;
  metrics: Metrics;
  api: ApiDescription;
}

/** A success a route answers: its schema (a name of SCHEMAS, or inline) and an example exactly as sent. */
function success(description: string, schema: Schema, example: unknown, type?: string): Answer {
  return { description, schema, example, type };
}

/** A refusal a route answers: `{ok: false, error}` with the contract's message. */
function failure(description: string, error: string): Answer {
  return { description, schema: 'Error', example: { ok: false, error } };
}

const BUSY_ANSWER = failure(
  'Replies to slow readers fill the daemon\'s memory bound; try again (Retry-After: 1).',
  BUSY,
);
const WRITE_ANSWERS: Record<number, Answer> = {
  401: failure('X-API-Key is missing or wrong.', UNAUTHORIZED),
  500: failure(
    'An internal failure, such as `serv` that cannot be started; the cause is in the daemon\'s log.',
    INTERNAL_ERROR,
  ),
  503: failure('Writes are disabled (no API_KEY), or the daemon is busy.', WRITES_DISABLED),
};
const BODY_ANSWERS: Record<number, Answer> = { 413: failure('The body is larger than 16 KiB.', BODY_TOO_LARGE) };

interface Route {
  method: 'GET' | 'POST';
  path: string; // exact; no parameters in this API
  auth: boolean; // write routes: 503, then 401, then the body (docs/api.md#write-routes)
  basicAuth?: boolean; // the key may also come as the password of HTTP Basic auth (an SSE client's URL)
  about: RouteAbout;
  handle: (features: Features, request: ApiRequest) => Reply | Promise<Reply>;
}

/**
 * The routes, one line each; dispatch, 405's Allow, GET /api and the OpenAPI document all come from these rows, and
 * each row's handler and description live in its feature's section. A function, so that it can name them there.
 */
function routeTable(): readonly Route[] {
  return [
    get('/', REPORT_TEXT_ROUTE, (f) => f.report.text()),
    get('/api', INDEX_ROUTE, (f) => f.api.index()),
    get('/api/status', STATUS_ROUTE, (f) => f.game.status()),
    get('/api/players/online', PLAYERS_ROUTE, (f) => f.presence.players()),
    get('/api/players/whitelist', WHITELIST_ROUTE, (f) => f.whitelist.list()),
    get('/api/players/banned', LIST_ROUTES.banned, (f) => f.moderation.list('banned')),
    get('/api/players/ops', LIST_ROUTES.ops, (f) => f.moderation.list('ops')),
    get('/api/logs/latest', LATEST_LOG_ROUTE, (f, r) => f.tails.latest(r)),
    get('/api/logs/snapshot', SNAPSHOT_LOG_ROUTE, (f, r) => f.tails.snapshot(r)),
    get('/api/backups', BACKUPS_ROUTE, (f) => f.backups.list()),
    get('/api/properties', PROPERTIES_ROUTE, (f, r) => f.properties.read(r)),
    get('/api/report', REPORT_JSON_ROUTE, (f) => f.report.json()),
    get('/api/events', EVENTS_ROUTE, (f, r) => f.events.open(r), { basicAuth: true }),
    get('/metrics', METRICS_ROUTE, (f) => f.metrics.scrape()),
    get('/api/openapi.json', OPENAPI_ROUTE, (f) => f.api.document()),
    get('/api/ping', PING_ROUTE, (f) => f.readiness.ping()),
    get('/api/players/history', HISTORY_ROUTE, (f) => f.history.history()),
    get('/status', STATUS_PAGE_ROUTE, (f) => f.statusPage.render()),
    post('/api/server/start', SERV_ROUTES.start, (f) => f.serv.run('start')),
    post('/api/server/stop', SERV_ROUTES.stop, (f) => f.serv.run('stop')),
    post('/api/server/restart', SERV_ROUTES.restart, (f) => f.serv.run('restart')),
    post('/api/command', COMMAND_ROUTE, (f, r) => f.console.command(r)),
    post('/api/say', SAY_ROUTE, (f, r) => f.console.say(r)),
    post('/api/whitelist/add', EDIT_ROUTES.add, (f, r) => f.whitelist.edit('add', r)),
    post('/api/whitelist/remove', EDIT_ROUTES.remove, (f, r) => f.whitelist.edit('remove', r)),
    post('/api/players/kick', MODERATION_ROUTES.kick, (f, r) => f.moderation.act('kick', r)),
    post('/api/players/ban', MODERATION_ROUTES.ban, (f, r) => f.moderation.act('ban', r)),
    post('/api/players/pardon', MODERATION_ROUTES.pardon, (f, r) => f.moderation.act('pardon', r)),
    post('/api/players/op', MODERATION_ROUTES.op, (f, r) => f.moderation.act('op', r)),
    post('/api/players/deop', MODERATION_ROUTES.deop, (f, r) => f.moderation.act('deop', r)),
    post('/api/backup', BACKUP_ROUTE, (f) => f.backups.start()),
  ];
}

// The spec's two tiers: GET is public, POST needs the key (docs/api.md#authentication)
function get(path: string, about: RouteAbout, handle: Route['handle'], options: { basicAuth?: boolean } = {}): Route {
  return { method: 'GET', path, auth: false, about, handle, ...options };
}

function post(path: string, about: RouteAbout, handle: Route['handle']): Route {
  return { method: 'POST', path, auth: true, about, handle };
}

// ---- The daemon ----

interface Daemon {
  server: Server;
  /** Resolves once the daemon is ready to listen: with a webhook, once watching took the starting state. */
  ready: Promise<void>;
  /**
   * Stops listening and ends idle connections; requests in flight get `graceMs` to finish. Then a report script
   * still running is ended with its process group, remaining connections are closed, and so are open files.
   */
  close(graceMs?: number): Promise<void>;
}

/** Builds a daemon from its configuration. Nothing is shared between two daemons of one process. */
function createDaemon(config: Readonly<Config>, clock: Clock = readClock()): Daemon {
  const routes = routeTable();
  const shared = createSharedAnswers();
  const replies = createReplyBudget();
  const game = createGameFinder(config, clock);
  const presence = new LogFollower(config, clock, game);
  const gameConsole = createGameConsole(config, game, presence);
  const readiness = createReadiness(config, game, presence, shared);
  const events = new LiveEvents(config, clock, game, presence, [readiness.detect]);
  const history = new PlayersHistory(config, game, shared);
  const features: Features = {
    game: createGameStatus(config, clock, game, shared),
    presence,
    tails: createTails(config, replies, shared),
    properties: createProperties(config, shared),
    whitelist: createWhitelist(config, game, gameConsole, shared),
    moderation: createModeration(config, game, gameConsole, presence, shared),
    backups: createBackups(config, shared),
    report: createReport(config),
    console: gameConsole,
    serv: createServ(config),
    events,
    readiness,
    history,
    statusPage: createStatusPage(config, clock, presence, readiness, history, shared),
    metrics: new MetricsExporter(config, clock, game, presence, events, shared, readiness),
    api: createApiDescription(routes),
  };
  const server = new ApiServer(config, routes, features, replies).server;
  let closing: Promise<void> | undefined;
  const close = (graceMs = SHUTDOWN_GRACE_MS): Promise<void> => {
    closing ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      events.close(); // streams would hold the close for ever; their clients reconnect elsewhere or later
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
      if (await Promise.race([drained.then(() => false), late])) {
        log(`requests still in flight after ${graceMs / 1000} s are cut`);
      }
      clearTimeout(timer);
      features.report.stop();
      server.closeAllConnections();
      await Promise.allSettled([presence.close(), game.close(), clock.close()]);
    })();
    return closing;
  };
  return { server, ready: events.ready(), close };
}

// ---- Machinery the features share ----

/** Runs at most `limit` tasks at once, the others in the order they came; a task that fails frees its place too. */
type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

function createLimiter(limit: number): Limiter {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next === undefined) running--;
      else next(); // the place passes on as it is
    }
  };
}

/** Runs the tasks given to it one after another, in order. */
const createSerialQueue = (): Limiter => createLimiter(1);

/** A read route's answer, made at most every SHARED_ANSWER_MAX_AGE_MS; a failure is shared like an answer. */
type SharedAnswers = (key: string, compute: () => Promise<Reply>) => Promise<Reply>;

/**
 * docs/api.md#freshness: every read route answers from a read of the host at most 50 ms old, so the daemon's cost
 * under load does not follow the request rate (docs/performance.md: status, whitelist, backups, properties, tails,
 * metrics). Requests that arrive while a read is under way wait for it instead of starting another. Answers are held
 * as bytes, serialised once; a large one (a tail of long lines) is never held, and at most 16 at once. Always a
 * promise: a synchronous path measured no faster (docs/performance.md#shared-answers).
 */
function createSharedAnswers(): SharedAnswers {
  const answers = new Map<string, { atMs: number; answer: Promise<Reply> }>();
  const forget = (key: string, answer: Promise<Reply>): void => {
    if (answers.get(key)?.answer === answer) answers.delete(key);
  };
  return (key, compute) => {
    const now = performance.now();
    const kept = answers.get(key);
    if (kept !== undefined && now - kept.atMs < SHARED_ANSWER_MAX_AGE_MS) return kept.answer;
    const answer: Promise<Reply> = compute().then((reply) => {
      const bytes = asBytes(reply);
      if (bytes.body.length > SHARED_ANSWER_MAX_BYTES) forget(key, answer);
      return bytes;
    }, (err: unknown) => {
      // a refusal (404, 500 of a file) is an answer like another; anything else is not kept
      if (!(err instanceof HttpError)) forget(key, answer);
      throw err;
    });
    if (answers.size >= SHARED_ANSWERS_KEPT && !answers.has(key)) {
      for (const [k, held] of answers) if (now - held.atMs >= SHARED_ANSWER_MAX_AGE_MS) answers.delete(k);
    }
    if (answers.size < SHARED_ANSWERS_KEPT || answers.has(key)) answers.set(key, { atMs: now, answer });
    return answer;
  };
}

/**
 * A condition that holds over many checks (latest.log a FIFO, a full queue): logged when it begins or changes, and
 * when it ends (with `summary`, or the condition it ended), not at every check.
 */
function createFaultLog(what: string): (fault: string | undefined, summary?: string) => void {
  let current: string | undefined;
  return (fault, summary) => {
    if (fault === current) return;
    log(fault !== undefined ? `${what}: ${fault}` : `${what}: ${summary ?? `no longer: ${current}`}`);
    current = fault;
  };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What `promise` settles to within `waitMs`, or undefined after; the work behind it goes on either way. */
async function settleWithin<T>(promise: Promise<T>, waitMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function log(message: string): void {
  process.stdout.write(`${new Date().toISOString()} ${message}\n`);
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- Start-up ----

const USAGE = `Usage: node server.js [--generate-key | -h | --help | -v | --version]

Serves the gameserver-api HTTP API (README.md). Configured by environment variables:
${Object.entries(SETTINGS).map(([name, { help }]) => `  ${name.padEnd(26)}${help}`).join('\n')}

  --generate-key  print a new random API key and exit
  -h, --help      print this text and exit
  -v, --version   print the version and exit
`;

/** Runs the daemon from the process's arguments and environment; exits 78 on a bad setting. */
export function main(argv: readonly string[]): void {
  if (argv.includes('--generate-key')) return void process.stdout.write(`${randomBytes(32).toString('base64url')}\n`);
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(USAGE);
  if (argv.includes('--version') || argv.includes('-v')) return void process.stdout.write(`${VERSION}\n`);
  if (argv.length > 0) {
    process.stderr.write(`Unknown argument: ${argv[0]}\n${USAGE}`);
    process.exit(2);
  }
  let config: Readonly<Config>;
  try {
    config = readConfig(process.env, process.cwd());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return process.exit(EX_CONFIG);
  }
  // the Node it runs on is part of its set-up: a restart cannot mend either (the unit does not restart on 78)
  const internals = checkHttpInternals();
  if (internals !== undefined) {
    process.stderr.write(`${internals}\n`);
    return process.exit(EX_CONFIG);
  }
  let clock: Clock;
  try {
    clock = readClock();
  } catch (err) {
    process.stderr.write(`gameserver-api needs Linux's /proc: ${describeError(err)}\n`);
    return process.exit(1);
  }
  warmTickQueue();
  const daemon = createDaemon(config, clock);
  if (config.apiKey === undefined) process.stderr.write(`${NO_KEY_WARNING}\n`);
  if (process.getuid?.() === 0) {
    process.stderr.write('[WARN] Running as root: run gameserver-api as the game server\'s user instead.\n');
  }
  if (!fs.existsSync(path.join(config.serverDir, 'server.properties'))) {
    process.stderr.write(
      `[WARN] ${config.serverDir} holds no server.properties: is SERVER_DIR the game server's folder?\n`,
    );
  }
  // both are the host's own tools (README.md#the-hosts-serv-tool-and-report-script); the routes that need them answer
  // 500 until they can run, and a newcomer should learn why at start, not from the first failed request
  if (findExecutable(config.servBin, config.childEnv) === undefined) {
    process.stderr.write(`[WARN] SERV_BIN ${config.servBin} cannot be found or run: POST /api/server/start, stop, `
      + 'restart and POST /api/backup answer 500 until it can (README.md: the host\'s serv tool).\n');
  }
  if (findExecutable(config.reportScript, config.childEnv) === undefined) {
    process.stderr.write(`[WARN] REPORT_SCRIPT ${config.reportScript} cannot be found or run: GET / and `
      + 'GET /api/report answer 500 until it can (README.md: the report script).\n');
  }
  const { server } = daemon;
  server.on('error', (err: NodeJS.ErrnoException) => {
    const where = `${config.host ?? 'all interfaces'}`;
    if (err.code === 'EADDRINUSE') process.stderr.write(`PORT ${config.port} is already in use on ${where}.\n`);
    else if (err.code === 'EACCES') {
      process.stderr.write(`PORT ${config.port} needs privileges this user lacks (ports below 1024 do, unless `
        + 'CAP_NET_BIND_SERVICE is given).\n');
    } else process.stderr.write(`HOST ${JSON.stringify(config.host ?? '')} cannot be listened on: ${err.message}\n`);
    process.exit(err.code === 'EADDRINUSE' ? 1 : EX_CONFIG);
  });
  void daemon.ready.then(() => server.listen(config.port, config.host, () => {
    const address = server.address();
    const shown = typeof address === 'object' && address !== null
      ? `${address.address}:${address.port}`
      : String(address);
    process.stdout.write(`${SERVICE_NAME} ${VERSION} listening on ${shown} (${describeConfig(config)})\n`);
  }));

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: finishing requests in flight, then exiting`);
    // serv and the game are detached on purpose and never signalled; a report script is ours and ends with us
    daemon.close(SHUTDOWN_GRACE_MS).then(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // the journal or a terminal can go away: a line that cannot be written is dropped. Left unhandled, the
  // EPIPE would reach the handler below, whose own log line fails again, round and round.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  // docs/api.md#every-response: an exception outside any request (a timer, a watcher) leaves the daemon in a state
  // nobody knows; systemd restarts it in a known one
  const fatal = (what: string) => (err: unknown): void => {
    log(`${what}: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
}

/** The file `command` runs from, found as spawn finds it (a bare name through the PATH it is given), if any can run. */
function findExecutable(command: string, env: Readonly<Record<string, string>>): string | undefined {
  const candidates = command.includes('/')
    ? [path.resolve(command)]
    : (env.PATH ?? '').split(':').filter((dir) => dir !== '').map((dir) => path.join(dir, command));
  return candidates.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

// ==== The game process and GET /api/status ====

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: /proc reports clock_t in 1/100 s on every Linux architecture
const GAME_NOT_RUNNING = 'Game server is not running.';

interface Clock {
  memTotalBytes: number;
  pageSizeBytes: number;
  /** Seconds since boot by the clock process start times count in (it runs on during a suspend). */
  secondsSinceBoot(): number;
  /** When a process that started `startTicks` after boot started, on the wall clock. */
  startedAtMs(startTicks: number): number;
  /** The same in whole clock ticks from `btime`: the same figure at every call, as a metric must be. */
  startTimeSeconds(startTicks: number): number;
  close(): Promise<void>;
}

/** Facts that do not change while the machine runs, and /proc/uptime kept open: one read per use. */
function readClock(): Clock {
  const memTotalKb = Number(readProcText('/proc/meminfo', 4096).match(/^MemTotal:\s+(\d+) kB/m)?.[1]);
  // the first mapping's page size; getconf would mean a child process
  const pageKb = Number(readProcText('/proc/self/smaps', 16 * 1024).match(/^KernelPageSize:\s+(\d+) kB/m)?.[1] ?? 4);
  if (!(memTotalKb > 0)) throw new Error('/proc/meminfo is unreadable');
  const uptimeFd = fs.openSync('/proc/uptime', 'r');
  const buffer = Buffer.allocUnsafe(64);
  const secondsSinceBoot = (): number => {
    // CLOCK_BOOTTIME, like the start times in /proc/PID/stat: a monotonic clock stops while the machine sleeps
    const length = fs.readSync(uptimeFd, buffer, 0, buffer.length, 0);
    return parseFloat(buffer.toString('latin1', 0, length));
  };
  if (!(secondsSinceBoot() > 0)) throw new Error('/proc/uptime is unreadable');
  return {
    memTotalBytes: memTotalKb * 1024,
    pageSizeBytes: pageKb * 1024,
    secondsSinceBoot,
    startedAtMs: (startTicks) => Date.now() - (secondsSinceBoot() - startTicks / CLOCK_TICKS_PER_SECOND) * 1000,
    // btime moves only when the wall clock is set; a suspend leaves it as it is, like the start ticks
    startTimeSeconds: (startTicks) =>
      Number(readProcText('/proc/stat', 64 * 1024).match(/^btime (\d+)$/m)?.[1]) + startTicks / CLOCK_TICKS_PER_SECOND,
    close: async () => fs.closeSync(uptimeFd),
  };
}

/** The first bytes of a small generated file: one open, one read, one close. */
function readProcText(file: string, maxBytes: number): string {
  const buffer = Buffer.allocUnsafe(maxBytes);
  const fd = fs.openSync(file, 'r');
  try {
    return buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, maxBytes, null));
  } finally {
    fs.closeSync(fd);
  }
}

interface GameProcess {
  pid: number;
  startTicks: number; // clock ticks after boot: with the pid, it names this process and no later one
  residentBytes: number; // read when the process was found or checked, for this request
  // `pid:startTicks`, made when the process is found: players online compares it on every request
  identity: string;
}

/** A game process as one value: a pid with its start time names one process, never a later one with that pid. */
const gameIdentity = (game: GameProcess): string => game.identity;

interface GameFinder {
  /**
   * The game server process, as checked at most 50 ms ago; `fresh` checks (and rescans /proc) now: writes ask for it.
   */
  find(options?: { fresh?: boolean }): GameProcess | undefined;
  close(): Promise<void>;
}

/**
 * decisions on the game process (docs/api.md#finding-the-game-server): the oldest process named `java` whose working
 * directory is SERVER_DIR. The one found is followed through its /proc/PID/statm kept open: one read gives its
 * resident memory, and fails (or reads zeros, for a zombie) once that process is gone, even when its pid is reused.
 */
function createGameFinder(config: Readonly<Config>, clock: Clock): GameFinder {
  const realServerDir = fs.realpathSync(config.serverDir);
  const buffer = Buffer.allocUnsafe(4096); // the followed game's statm, and each process's comm in a scan: all sync
  let followed: { fd: number; game: GameProcess; checkedAtMs: number } | undefined;
  let lastScanAtMs = -Infinity;

  const forget = (): void => {
    if (followed !== undefined) fs.closeSync(followed.fd);
    followed = undefined;
  };

  // statm: the kernel sums nothing for it, where /proc/PID/stat adds up every thread's times (a JVM has dozens)
  const check = (fresh: boolean): GameProcess | undefined => {
    if (followed === undefined) return undefined;
    // docs/api.md#freshness: a check serves every read for 50 ms (docs/performance.md: status, players online)
    if (!fresh && performance.now() - followed.checkedAtMs < SHARED_ANSWER_MAX_AGE_MS) return followed.game;
    let resident = 0;
    try {
      const length = fs.readSync(followed.fd, buffer, 0, buffer.length, 0);
      resident = Number(buffer.toString('latin1', 0, length).split(' ')[1]);
    } catch {
      // ESRCH: the process has exited
    }
    if (!(resident > 0)) return void forget();
    followed.game.residentBytes = resident * clock.pageSizeBytes;
    followed.checkedAtMs = performance.now();
    return followed.game;
  };

  const scan = (): GameProcess | undefined => {
    let oldest: ProcStat | undefined;
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(entry) || !isNamedJava(entry, buffer)) continue;
      const stat = readProcStat(Number(entry));
      if (stat === undefined || !isLiveJava(stat)) continue;
      if (
        oldest !== undefined
        && (stat.startTicks > oldest.startTicks || (stat.startTicks === oldest.startTicks && stat.pid > oldest.pid))
      ) {
        continue;
      }
      if (isInDir(stat.pid, realServerDir)) oldest = stat;
    }
    if (oldest === undefined) return undefined;
    try {
      const fd = fs.openSync(`/proc/${oldest.pid}/statm`, 'r');
      followed = {
        fd,
        game: {
          pid: oldest.pid, startTicks: oldest.startTicks, residentBytes: 0, identity: `${oldest.pid}:${oldest.startTicks}`,
        },
        checkedAtMs: -Infinity,
      };
    } catch {
      return undefined; // it exited meanwhile
    }
    // the pid may have been reused between the scan and the open: the start time tells
    if (readProcStat(oldest.pid)?.startTicks !== oldest.startTicks) return void forget();
    return check(true);
  };

  return {
    find({ fresh = false } = {}) {
      const known = check(fresh);
      if (known !== undefined) return known;
      // a scan reads every process of the host: one that found no game serves reads for 50 ms
      if (!fresh && performance.now() - lastScanAtMs < SHARED_ANSWER_MAX_AGE_MS) return undefined;
      lastScanAtMs = performance.now();
      return scan();
    },
    close: async () => forget(),
  };
}

interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  pgrp: number;
  ttyNr: number;
  tpgid: number;
  utimeTicks: number;
  stimeTicks: number;
  startTicks: number;
}

/** /proc/PID/stat, or undefined when the process is gone. */
function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(pid, readProcText(`/proc/${pid}/stat`, 4096));
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
    utimeTicks: Number(fields[11]),
    stimeTicks: Number(fields[12]),
    startTicks: Number(fields[19]),
  };
}

const JAVA_COMM = Buffer.from('java\n');

/**
 * Whether /proc/PID/comm reads `java`. A scan asks it of every process on the host, twice a second while events are
 * watched and no game runs: comm is the cheapest of a process's files for the kernel to write (stat sums times and
 * memory), and read into a buffer the caller keeps it makes no string, so only a java process's stat is read.
 * Measured with 467 processes: 2.8 ms a scan instead of 6.5-7.1 ms (docs/performance.md#finding-the-game).
 */
function isNamedJava(entry: string, buffer: Buffer): boolean {
  let fd: number;
  try {
    fd = fs.openSync(`/proc/${entry}/comm`, 'r');
  } catch {
    return false; // exited meanwhile
  }
  try {
    const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return length === JAVA_COMM.length && JAVA_COMM.equals(buffer.subarray(0, length));
  } catch {
    return false; // ESRCH: it exited between the open and the read
  } finally {
    fs.closeSync(fd);
  }
}

// an exited game whose parent has not reaped it yet (a container's PID 1 may never) is a zombie named java
const isLiveJava = (stat: ProcStat): boolean => stat.comm === 'java' && stat.state !== 'Z' && stat.state !== 'X';

function isInDir(pid: number, realDir: string): boolean {
  try {
    // another user's process gives EACCES: it cannot be ours (the API runs as the game's user)
    return fs.readlinkSync(`/proc/${pid}/cwd`) === realDir;
  } catch {
    return false;
  }
}

/**
 * `currentVersion` of version_history.json; Paper builds since July 2026 keep it in `.paper/`
 * (docs/formats.md#version-history).
 */
function readGameVersion(config: Readonly<Config>): string | undefined {
  for (const file of [
    path.join(config.serverDir, '.paper', 'version_history.json'),
    path.join(config.serverDir, 'version_history.json'),
  ]) {
    try {
      const history = readJsonFile(file) as { currentVersion?: unknown } | null;
      if (typeof history?.currentVersion === 'string') return history.currentVersion;
    } catch {
      // the spec: version is simply left out when the file is missing or unreadable
    }
  }
  return undefined;
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

interface GameStatus {
  /** GET /api/status */
  status(): Promise<Reply>;
}

function createGameStatus(config: Readonly<Config>, clock: Clock, game: GameFinder, shared: SharedAnswers): GameStatus {
  return {
    status: () => shared('status', async () => {
      const found = game.find();
      if (found === undefined) return jsonReply({ ok: true, online: false });
      const version = readGameVersion(config);
      return jsonReply({
        ok: true,
        online: true,
        pid: found.pid,
        uptime: formatUptime(clock.secondsSinceBoot() - found.startTicks / CLOCK_TICKS_PER_SECOND),
        memory: formatMemory(found.residentBytes, clock.memTotalBytes),
        ...(version === undefined ? {} : { version }),
      });
    }),
  };
}

const STATUS_ROUTE: RouteAbout = {
  summary: 'The game server process',
  description: 'Whether the game\'s Java process runs, with its pid, uptime, memory and version. At most 100 ms old.',
  answers: {
    200: success('The process, or online false.', 'Status', {
      ok: true, online: true, pid: 4242, uptime: '49:03:07', memory: '12.3%', version: 'git-Paper-211 (MC: 1.21.4)',
    }),
    503: BUSY_ANSWER,
  },
};

// ==== Files, and GET /api/properties ====

const TIMESTAMP_GRANULARITY_MS = 50; // coarse (jiffy) file timestamps before Linux 6.13, with a margin
const OPEN_FOR_READING = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/**
 * Opens a file the daemon reads. O_NONBLOCK, then fstat: a FIFO, socket or device put where a file belongs can
 * neither block a thread in open() nor be read (docs/api.md#files-that-are-not-files). Missing: 404; not a regular
 * file: 500; unreadable: 500; each naming the file.
 */
function openRegularFileSync(file: string, name = path.basename(file)): { fd: number; stat: fs.Stats } {
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FOR_READING);
  } catch (err) {
    throw fileError(err, name);
  }
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    throw fileError(err, name);
  }
  if (!stat.isFile()) {
    fs.closeSync(fd);
    throw new HttpError(500, `${name} is not a regular file.`);
  }
  return { fd, stat };
}

/** The same as a FileHandle, for reads on libuv's threads. */
async function openRegularFile(
  file: string,
  name = path.basename(file),
): Promise<{ handle: fs.promises.FileHandle; stat: fs.Stats }> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, OPEN_FOR_READING);
  } catch (err) {
    throw fileError(err, name);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new HttpError(500, `${name} is not a regular file.`);
    return { handle, stat };
  } catch (err) {
    await handle.close();
    throw err instanceof HttpError ? err : fileError(err, name);
  }
}

function fileError(err: unknown, name: string): HttpError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new HttpError(404, `${name} not found`);
  // open() of a socket gives ENXIO: it is no more a file than a FIFO
  if (code === 'ENXIO' || code === 'EISDIR') return new HttpError(500, `${name} is not a regular file.`);
  return new HttpError(500, `${name} could not be read.`);
}

/** A small regular file's bytes (at most SMALL_FILE_MAX_BYTES), read without blocking on what is not a file. */
function readSmallFileSync(file: string): Buffer {
  const { fd, stat } = openRegularFileSync(file);
  try {
    if (stat.size > SMALL_FILE_MAX_BYTES) throw new HttpError(500, `${path.basename(file)} could not be read.`);
    const buffer = Buffer.allocUnsafe(stat.size);
    let filled = 0;
    while (filled < buffer.length) {
      const length = fs.readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (length === 0) break; // it shrank meanwhile
      filled += length;
    }
    return buffer.subarray(0, filled);
  } finally {
    fs.closeSync(fd);
  }
}

/** A small JSON file, parsed: 404 when missing, 500 when unreadable or not JSON. */
function readJsonFile(file: string): unknown {
  const bytes = readSmallFileSync(file);
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new HttpError(500, `${path.basename(file)} is not valid JSON.`);
  }
}

/** The statuses of a route that reads a file (docs/api.md#files-that-are-not-files). */
const missingOrUnreadable = (name: string): Record<number, Answer> => ({
  404: failure(`${name} does not exist.`, `${name} not found`),
  500: failure(`${name} cannot be read or parsed, or is not a regular file.`, `${name} could not be read.`),
});

/**
 * Whether what was read of a file at `readAtMs` can be taken to be unchanged while its stat stays the same (git's
 * racy rule, docs/api.md#freshness): not when its mtime is within the timestamp granularity of that moment, since a
 * write in the same tick would leave the stat as it was. Whole-second mtimes mean a filesystem that keeps seconds.
 */
export function isSettled(mtimeMs: number, readAtMs: number): boolean {
  const granularityMs = mtimeMs % 1000 === 0 ? 1000 : TIMESTAMP_GRANULARITY_MS;
  return readAtMs - mtimeMs > granularityMs;
}

/** A path's stat as a signature, or '' when it is missing or changed too recently to be trusted (isSettled). */
function settledSignature(file: string): string {
  const readAtMs = Date.now();
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (st === undefined || !isSettled(st.mtimeMs, readAtMs)) return '';
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/**
 * Writes a file so that readers see the old or the new content, never a part: a temporary file beside the real
 * target (a symlink is written through, and stays a link), with the target's mode and owner, fsync, rename.
 */
function writeFileAtomic(file: string, text: string): void {
  // a file that is missing (no link either) is created as the game creates one: the umask's mode, the daemon's owner
  const missing = fs.lstatSync(file, { throwIfNoEntry: false }) === undefined;
  const target = missing ? file : fs.realpathSync(file);
  const current = missing ? undefined : fs.statSync(target);
  const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = fs.openSync(temp, 'wx', current === undefined ? 0o666 : 0o600);
  try {
    if (current !== undefined) {
      fs.fchmodSync(fd, current.mode & 0o7777); // the umask would narrow a mode given to open()
      if (current.uid !== process.geteuid?.() || current.gid !== process.getegid?.()) {
        fs.fchownSync(fd, current.uid, current.gid);
      }
    }
    // writeFileSync on a descriptor loops over short writes and throws when one fails (EFBIG, ENOSPC)
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temp, target);
  } catch (err) {
    try { fs.closeSync(fd); } catch { /* already closed */ }
    fs.rmSync(temp, { force: true });
    throw err;
  }
  // the rename is durable once the folder's entry is on disk
  const dir = fs.openSync(path.dirname(target), 'r');
  try { fs.fsyncSync(dir); } finally { fs.closeSync(dir); }
}

// ---- server.properties ----

// docs/api.md#get-apiproperties: a second way into the console, a filter service's key, the seed servers keep
// from players, and anything named like a secret
const SECRET_PROPERTIES = new Set(['rcon.password', 'management-server-secret', 'text-filtering-config', 'level-seed']);
const SECRET_PROPERTY_NAME = /(password|secret)$/i;

/** `java.util.Properties.load` on the bytes Minecraft reads: strict UTF-8, else the whole file as ISO-8859-1. */
export function parseProperties(bytes: Buffer): Record<string, string> {
  let text: string;
  try {
    // ignoreBOM keeps a BOM in the text, as Java does: it is not whitespace and becomes part of the first key
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    text = bytes.toString('latin1');
  }
  const properties = new Map<string, string>();
  for (const line of logicalPropertyLines(text)) {
    const [key, value] = splitPropertyLine(line);
    properties.set(unescapeProperty(key), unescapeProperty(value));
  }
  // fromEntries defines each key as an own property: `__proto__` is a key like any other
  return Object.fromEntries(properties);
}

const isPropertyBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\f';

/** Properties.LineReader (JDK 9+): joins continued lines, drops comments and blank lines, keeps escapes. */
function* logicalPropertyLines(text: string): Generator<string> {
  let line = '';
  let skipBlanks = true;
  let continued = false; // at the start of a continuation line: a line break there ends the logical line
  let backslash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
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

/** Public answers replace secret values, empty ones too, with `<redacted>`; the valid key sees them as stored. */
export function redactProperties(properties: Record<string, string>, reveal: boolean): Record<string, string> {
  if (reveal) return properties;
  return Object.fromEntries(Object.entries(properties)
    .map(([key, value]) => [key, SECRET_PROPERTIES.has(key) || SECRET_PROPERTY_NAME.test(key) ? '<redacted>' : value]));
}

/** server.properties parsed: 404 when missing, 500 when unreadable or malformed. */
function readServerProperties(config: Readonly<Config>): Record<string, string> {
  const bytes = readSmallFileSync(path.join(config.serverDir, 'server.properties'));
  try {
    return parseProperties(bytes);
  } catch {
    throw new HttpError(500, 'server.properties could not be parsed.');
  }
}

interface Properties {
  /** GET /api/properties */
  read(request: ApiRequest): Promise<Reply>;
}

function createProperties(config: Readonly<Config>, shared: SharedAnswers): Properties {
  return {
    // the key is part of what is shared: the valid key's answer never reaches a request without it
    read: ({ reveal }) => shared(`properties:${reveal}`, async () =>
      jsonReply({ ok: true, properties: redactProperties(readServerProperties(config), reveal) })),
  };
}

const PROPERTIES_ROUTE: RouteAbout = {
  summary: 'server.properties as a map',
  description: 'Read as Java reads it. Secrets (rcon.password, management-server-secret, text-filtering-config, '
    + 'level-seed, keys ending in password or secret) are "<redacted>" unless the valid X-API-Key is sent. '
    + 'At most 100 ms old.',
  answers: {
    200: success('The properties.', 'Properties', {
      ok: true, properties: { motd: '§6A Minecraft Server', 'online-mode': 'true', 'rcon.password': '<redacted>' },
    }),
    ...missingOrUnreadable('server.properties'), 503: BUSY_ANSWER,
  },
};

// ==== Log tails: GET /api/logs/latest and GET /api/logs/snapshot ====

const LINES_DEFAULT = 200;
const LINES_MAX = 2_000;
const LINES_REFUSED = 'lines must be an integer from 1 to 2000.';
const TAIL_FIRST_BLOCK_BYTES = 16 * 1024; // then doubling: 200 lines take one read, 2000 a few
const TAIL_BLOCK_MAX_BYTES = 1024 * 1024;
// a tail never reads more than this, however long the lines (2000 usual lines are ~300 KB)
const TAIL_MAX_BYTES = 1024 * 1024;
const TAIL_READS_AT_ONCE = 4;
const ADDRESS_RUN_MAX_CHARS = 64;

/** `lines`: absent → 200; digits only, at least 1; above 2000 → 2000. */
export function parseLines(raw: string | null): number {
  if (raw === null) return LINES_DEFAULT;
  // Number() would take ' 80 ', '0x50', '1e3' and '' (as 0): the string is checked first
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) throw new HttpError(400, LINES_REFUSED);
  return Math.min(Number(raw), LINES_MAX);
}

interface Tails {
  /** GET /api/logs/latest */
  latest(request: ApiRequest): Promise<Reply>;
  /** GET /api/logs/snapshot */
  snapshot(request: ApiRequest): Promise<Reply>;
}

/**
 * Tails are read at most four at once, each at most 1 MiB, and not at all while slow readers hold the reply budget
 * (docs/api.md#limits-and-protection); an answer is shared for 50 ms per file, line count and key.
 */
function createTails(config: Readonly<Config>, replies: ReplyBudget, shared: SharedAnswers): Tails {
  const reading = createLimiter(TAIL_READS_AT_ONCE);
  // the buffers of finished reads, lent to the next ones: off-heap memory that only a collection frees is not asked
  // for again on every request (docs/performance.md: peak memory); at most TAIL_READS_AT_ONCE are out at once
  const windows: Buffer[] = [];
  const tail = ({ search, reveal }: ApiRequest, file: string, shownAs: string): Promise<Reply> => {
    const all = new URLSearchParams(search).getAll('lines');
    if (all.length > 1) throw new HttpError(400, LINES_REFUSED);
    const count = parseLines(all.length === 0 ? null : all[0]);
    return shared(`${shownAs}:${count}:${reveal}`, () => reading(async () => {
      if (replies.isSpent()) throw busy();
      const lines = await readTail(file, count, windows);
      return { status: 200, body: tailBody(shownAs, reveal ? lines : lines.map(maskAddresses)) };
    }));
  };
  return {
    latest: async (request) => tail(request, latestLogPath(config), 'latest.log'),
    // the spec's constant name, whatever path SNAPSHOT_LOG gives
    snapshot: async (request) => tail(request, config.snapshotLog, '/var/log/gameserver_snapshot.log'),
  };
}

const latestLogPath = (config: Readonly<Config>): string => path.join(config.serverDir, 'logs', 'latest.log');

/** The last `count` lines of a file, oldest first, read backwards from the end in growing blocks. */
export async function readTail(file: string, count: number, windows: Buffer[] = []): Promise<string[]> {
  const { handle } = await openRegularFile(file);
  // one buffer, filled from its end and grown by doubling, borrowed from those earlier reads left
  let window = windows.pop() ?? Buffer.allocUnsafe(TAIL_FIRST_BLOCK_BYTES);
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
          const grown = Buffer.allocUnsafe(
            Math.min(TAIL_MAX_BYTES, Math.max(window.length * 2, window.length - filled + length)),
          );
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
        for (let i = window.indexOf(10, filled); i !== -1 && i < filled + length; i = window.indexOf(10, i + 1)) {
          newlines++;
        }
        blockBytes = Math.min(blockBytes * 2, TAIL_BLOCK_MAX_BYTES);
      }
      if (truncated && attempt < 3) continue;
      return lastLines(window.subarray(filled), count, start === 0);
    }
  } finally {
    windows.push(window);
    await handle.close();
  }
}

/** The last `count` lines of the end of a file; only they are decoded (leniently: bad bytes become U+FFFD). */
function lastLines(data: Buffer, count: number, fromFileStart: boolean): string[] {
  // a final break ends a line
  const end = data.length > 0 && data[data.length - 1] === 10 ? data.length - 1 : data.length;
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
  // line by line: small strings die young, where one string of the whole block would go to V8's large-object space
  const lines: string[] = [];
  for (let at = from; at <= end; ) {
    let lineEnd = data.indexOf(10, at);
    if (lineEnd === -1 || lineEnd > end) lineEnd = end;
    lines.push(data.toString('utf8', at, lineEnd > at && data[lineEnd - 1] === 13 ? lineEnd - 1 : lineEnd));
    at = lineEnd + 1;
  }
  return lines;
}

/**
 * `{ok, file, lines}` serialised line by line into one Buffer: a tail may be megabytes, and one JSON string of it
 * would go to V8's large-object space, which only a full collection frees (400 slow readers took it to 250 MiB).
 */
function tailBody(shownAs: string, lines: readonly string[]): Buffer {
  const head = `{"ok":true,"file":${JSON.stringify(shownAs)},"lines":[`;
  const quoted = lines.map((line) => JSON.stringify(line));
  let size = Buffer.byteLength(head) + Math.max(0, quoted.length - 1) + 2;
  for (const line of quoted) size += Buffer.byteLength(line);
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head);
  for (let i = 0; i < quoted.length; i++) at += body.write(i === 0 ? quoted[i] : `,${quoted[i]}`, at);
  body.write(']}', at);
  return body;
}

// ---- Addresses ----

/**
 * Replaces IPv4 and IPv6 addresses with `<ip>`: public tails and command output never disclose players' addresses
 * (docs/api.md#addresses). Linear: one pass over the line, and each candidate is at most 64 characters.
 */
export function maskAddresses(line: string): string {
  // colour codes are cut out first, so that `§e10.1.2.3` and `ESC[33m10.1.2.3` end in an address of their own
  if (!line.includes('\x1b') && !line.includes('§')) return maskSegment(line);
  let out = '';
  let from = 0;
  for (const match of line.matchAll(COLOUR_CODES)) {
    out += maskSegment(line.slice(from, match.index)) + match[0];
    from = match.index! + match[0].length;
  }
  return out + maskSegment(line.slice(from));
}

const isHexDigit = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isWordChar = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

function maskSegment(text: string): string {
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (!isHexDigit(c) && c !== 58 && c !== 46) {
      i++;
      continue;
    }
    let end = i;
    let hasDigit = false;
    let hasSeparator = false;
    for (; end < text.length; end++) {
      const d = text.charCodeAt(end);
      if (d === 58 || d === 46) hasSeparator = true;
      else if (d >= 48 && d <= 57) hasDigit = true;
      else if (!isHexDigit(d)) break;
    }
    // `IP:1.2.3.4`, `client_ip:203.0.113.5`: a word and a colon name what follows; the colon is the label's
    const labelled = c === 58 && i > 0 && isWordChar(text.charCodeAt(i - 1)) && text.charCodeAt(i + 1) !== 58;
    const from = labelled ? i + 1 : i;
    // a letter or `_` glued to either side makes it a word (`v1.2.3.4`, `Foo::bar`), not an address
    const glued = (!labelled && i > 0 && isWordChar(text.charCodeAt(i - 1)))
      || (end < text.length && isWordChar(text.charCodeAt(end)));
    if (hasDigit && hasSeparator && !glued && end - from <= ADDRESS_RUN_MAX_CHARS) {
      const masked = maskRun(text.slice(from, end));
      if (masked !== undefined) {
        // an IPv6 zone (`fe80::1%eth0`) names the host's interface: it goes with the address
        const zone = masked.startsWith('<ip>') && text.charCodeAt(end) === 37
          ? /^%[A-Za-z0-9_.-]{1,32}/.exec(text.slice(end, end + 33))
          : null;
        out += text.slice(copied, from) + masked;
        copied = end + (zone?.[0].length ?? 0);
      }
    }
    i = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A run of hex digits, dots and colons as masked, or undefined when it holds no address. */
function maskRun(run: string, labelled = false): string | undefined {
  // a sentence may end right after an address; a colon may follow one (`1.2.3.4:`)
  const trimmed = run.replace(/[.:]+$/, '');
  const after = run.slice(trimmed.length);
  if (trimmed === '::' || trimmed === '') return undefined;
  if (isIP(trimmed) !== 0) return `<ip>${after}`;
  // `host:port`; Java 13 and older wrote IPv6 unbracketed, `/2001:db8:0:0:0:0:0:7:50122`
  const colon = trimmed.lastIndexOf(':');
  if (colon > 0 && /^\d{1,5}$/.test(trimmed.slice(colon + 1)) && isIP(trimmed.slice(0, colon)) !== 0) {
    return `<ip>${trimmed.slice(colon)}${after}`;
  }
  // `cafe:10.1.2.3`: a label of hex letters runs into the address
  const label = labelled ? -1 : run.indexOf(':');
  if (label > 0 && !run.slice(0, label).includes('.')) {
    const rest = maskRun(run.slice(label + 1), true);
    if (rest !== undefined) return `${run.slice(0, label + 1)}${rest}`;
  }
  return undefined;
}

const LINES_PARAMETER: Parameter = {
  name: 'lines', in: 'query', schema: { type: 'integer', minimum: 1 },
  description: 'How many lines, oldest first: 200 when absent; values above 2000 are clamped to 2000; '
    + '0, negatives, fractions, empty or non-numeric values give 400.',
};
const LINES_ANSWER = failure('`lines` is not an integer of 1 or more, or is given twice.', LINES_REFUSED);

const LATEST_LOG_ROUTE: RouteAbout = {
  summary: 'The last lines of latest.log',
  description: 'Addresses are masked as <ip> unless the valid X-API-Key is sent. At most 100 ms old.',
  parameters: [LINES_PARAMETER],
  answers: {
    200: success('The lines, oldest first.', 'LogTail', {
      ok: true, file: 'latest.log', lines: ['[12:00:01] [Server thread/INFO]: Alex joined the game'],
    }),
    400: LINES_ANSWER, ...missingOrUnreadable('latest.log'), 503: BUSY_ANSWER,
  },
};

const SNAPSHOT_LOG_ROUTE: RouteAbout = {
  summary: 'The last lines of the snapshot log',
  description: 'The file is SNAPSHOT_LOG; `file` is always /var/log/gameserver_snapshot.log. '
    + 'Addresses masked as for latest.log.',
  parameters: [LINES_PARAMETER],
  answers: {
    200: success('The lines, oldest first.', 'LogTail', {
      ok: true, file: '/var/log/gameserver_snapshot.log',
      lines: ['[2026-11-20 03:00:04] snapshot created: snapshot_2026-11-20_03-00-00.tar.gz (4.0K)'],
    }),
    400: LINES_ANSWER, ...missingOrUnreadable('gameserver_snapshot.log'), 503: BUSY_ANSWER,
  },
};

// ==== The log grammar, and presence: GET /api/players/online ====

// A log line means something only behind one of these prefixes (docs/formats.md#line-prefixes); only that one prefix
// is stripped, so a whole fake line pasted into chat stays inside a chat message. Groups: time, thread and level of
// `[time] [thread/LEVEL]( [logger])?: `; time and level of the terminal form `[HH:MM:SS LEVEL]: `; time and level of
// the pre-1.7 `YYYY-MM-DD HH:MM:SS [LEVEL] `. Every part is bounded, so no line makes the match slower than a constant.
const LOG_PREFIX =
  /^(?:\[([^\]]{8,40})\] \[([^\]]{1,128})\/([A-Z]{1,10})\](?: \[[^\]]{0,256}\])?: |\[(\d\d:\d\d:\d\d) ([A-Z]{1,10})\]: |(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[([A-Z]{1,10})\] )/;
const LOG_PREFIX_MAX_CHARS = 512; // what LOG_PREFIX can span, with room
// the first brackets must hold a time of day (any date around it): a kick screen's unprefixed line
// `[Staff] [Server thread/INFO]: …` is not a log line
const TIME_OF_DAY = /\d\d:\d\d:\d\d/;
// ANSI SGR and other CSI sequences (old Spigot) and `§x` colour codes (mods) are stripped before matching.
const COLOUR_CODES = /\x1b\[[0-9;?]*[ -/]*[@-~]|§./g;
const COLOURED = /[\x1b§]/; // one look for either, before anything is replaced
// Paper's name rule, which includes Floodgate's leading `.` for Bedrock players. A name never holds a space,
// `<`, `[` or `*`, so chat (`<Mallory> …`), /say (`[Mallory] …`), /me (`* Mallory …`) and admin echoes
// (`[Mallory: …]`) cannot start with one followed by an event text.
const NAME = '([A-Za-z0-9_.]{1,16})';
/** A text as a regular expression that matches it alone: the grammar's literal texts in its patterns. */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SERVER_THREAD = 'Server thread';

/**
 * A line of latest.log taken apart: the time as written, the thread (none in the older forms), the level, the message.
 */
interface LogLine {
  time: string;
  thread: string | undefined;
  level: string;
  message: string; // colour codes removed
}

/**
 * The one reading of a log line that presence, command output, whitelist verdicts, events and metrics share; null for
 * text that is no log line (stack traces, multi-line kick screens, anything a plugin printed raw).
 */
export function parseLogLine(raw: string): LogLine | null {
  const plain = COLOURED.test(raw) ? raw.replace(COLOUR_CODES, '') : raw;
  const line = plain.endsWith('\r') ? plain.slice(0, -1) : plain;
  const prefix = LOG_PREFIX.exec(line.length <= LOG_PREFIX_MAX_CHARS ? line : line.slice(0, LOG_PREFIX_MAX_CHARS));
  if (prefix === null || (prefix[1] !== undefined && !TIME_OF_DAY.test(prefix[1]))) return null;
  return {
    time: prefix[1] ?? prefix[4] ?? prefix[6],
    thread: prefix[2],
    level: prefix[3] ?? prefix[5] ?? prefix[7],
    message: line.slice(prefix[0].length),
  };
}

// What follows the victim's name in a death message: every `death.*` text of vanilla's English language file from 1.8
// to 26.1 but the two that are never logged (docs/formats.md#deaths), as the game wrote them; `%2$s` is the killer
// (any text: a mob's name tag is a player's), `%3$s` an item's name, which the game always shows in brackets.
const DEATH_TAILS = [
  'blew up', 'burned to death', "didn't want to live in the same world as %2$s", 'died', 'died because of %2$s',
  'died from dehydration', 'died from dehydration while trying to escape %2$s',
  'died from dehydration whilst trying to escape %2$s', 'discovered floor was lava', 'discovered the floor was lava',
  'drowned', 'drowned while trying to escape %2$s', 'drowned whilst trying to escape %2$s',
  'experienced kinetic energy', 'experienced kinetic energy while trying to escape %2$s',
  'experienced kinetic energy whilst trying to escape %2$s', 'fell from a high place', 'fell off a ladder',
  'fell off scaffolding', 'fell off some twisting vines', 'fell off some vines', 'fell off some weeping vines',
  'fell out of the water', 'fell out of the world', 'fell too far and was finished by %2$s',
  'fell too far and was finished by %2$s using %3$s', 'fell while climbing', 'froze to death',
  'hit the ground too hard', 'hit the ground too hard while trying to escape %2$s',
  'hit the ground too hard whilst trying to escape %2$s', 'left the confines of this world',
  'left the confines of this world while fighting %2$s', 'left the confines of this world whilst fighting %2$s',
  'starved to death', 'starved to death while fighting %2$s', 'starved to death whilst fighting %2$s',
  'suffocated in a wall', 'suffocated in a wall while fighting %2$s', 'suffocated in a wall whilst fighting %2$s',
  'tried to swim in lava', 'tried to swim in lava to escape %2$s', 'walked into a cactus while trying to escape %2$s',
  'walked into a cactus whilst trying to escape %2$s', 'walked into danger zone due to %2$s',
  'walked into fire while fighting %2$s', 'walked into fire whilst fighting %2$s',
  'walked into the danger zone due to %2$s', 'was blown up by %2$s', 'was blown up by %2$s using %3$s',
  'was burned to a crisp while fighting %2$s', 'was burned to a crisp while fighting %2$s wielding %3$s',
  'was burnt to a crisp whilst fighting %2$s', 'was burnt to a crisp whilst fighting %2$s wielding %3$s',
  'was doomed to fall', 'was doomed to fall by %2$s', 'was doomed to fall by %2$s using %3$s',
  'was fireballed by %2$s', 'was fireballed by %2$s using %3$s', 'was frozen to death by %2$s', 'was impaled by %2$s',
  'was impaled by %2$s with %3$s', 'was impaled on a stalagmite', 'was impaled on a stalagmite while fighting %2$s',
  'was impaled on a stalagmite whilst fighting %2$s', 'was killed', 'was killed by magic',
  'was killed by magic while trying to escape %2$s', 'was killed by magic whilst trying to escape %2$s',
  'was killed by %2$s', 'was killed by %3$s trying to hurt %2$s', 'was killed by %2$s using magic',
  'was killed by %2$s using %3$s', 'was killed by %3$s while trying to hurt %2$s', 'was killed trying to hurt %2$s',
  'was killed while fighting %2$s', 'was killed while trying to hurt %2$s', 'was killed whilst fighting %2$s',
  'was obliterated by a sonically-charged shriek',
  'was obliterated by a sonically-charged shriek while trying to escape %2$s',
  'was obliterated by a sonically-charged shriek while trying to escape %2$s wielding %3$s',
  'was obliterated by a sonically-charged shriek whilst trying to escape %2$s',
  'was obliterated by a sonically-charged shriek whilst trying to escape %2$s wielding %3$s',
  'was poked to death by a sweet berry bush', 'was poked to death by a sweet berry bush while trying to escape %2$s',
  'was poked to death by a sweet berry bush whilst trying to escape %2$s', 'was pricked to death',
  'was pummeled by %2$s', 'was pummeled by %2$s using %3$s', 'was roasted in dragon breath',
  'was roasted in dragon breath by %2$s', "was roasted in dragon's breath", "was roasted in dragon's breath by %2$s",
  'was shot by a skull from %2$s', 'was shot by a skull from %2$s using %3$s', "was shot by a %2$s's skull",
  'was shot by %2$s', 'was shot by %2$s using %3$s', 'was skewered by a falling stalactite',
  'was skewered by a falling stalactite while fighting %2$s',
  'was skewered by a falling stalactite whilst fighting %2$s', 'was slain by %2$s', 'was slain by %2$s using %3$s',
  'was smashed by %2$s', 'was smashed by %2$s with %3$s', 'was speared by %2$s', 'was speared by %2$s using %3$s',
  'was squashed by a falling anvil', 'was squashed by a falling anvil while fighting %2$s',
  'was squashed by a falling anvil whilst fighting %2$s', 'was squashed by a falling block',
  'was squashed by a falling block while fighting %2$s', 'was squashed by a falling block whilst fighting %2$s',
  'was squashed by %2$s', 'was squished too much', 'was struck by lightning',
  'was struck by lightning while fighting %2$s', 'was struck by lightning whilst fighting %2$s', 'was stung to death',
  'was stung to death by %2$s', 'was stung to death by %2$s using %3$s', 'went off with a bang',
  'went off with a bang due to a firework fired from %3$s by %2$s', 'went off with a bang while fighting %2$s',
  'went off with a bang whilst fighting %2$s', 'went up in flames', 'withered away',
  'withered away while fighting %2$s', 'withered away whilst fighting %2$s',
];
// every death message holds the first word of its text after the name
const DEATH_HINTS = [...new Set(DEATH_TAILS.map((tail) => ` ${tail.split(' ')[0]}`))];
// one pattern of them all, anchored at both ends: a tail that is a prefix of another (`died`, `died because of …`)
// matches only as itself
const DEATH_MESSAGE = new RegExp(`^${NAME} (?:${DEATH_TAILS.map((tail) => escapeRegExp(tail)
  .replace('%2\\$s', '.+').replace('%3\\$s', '\\[.+\\]')).join('|')})$`, 's');

// How the game words each kind of advancement: `<name> <verb> [<title>]` (docs/formats.md#advancements)
const ADVANCEMENT_VERBS = {
  task: 'has made the advancement', goal: 'has reached the goal', challenge: 'has completed the challenge',
  achievement: 'has just earned the achievement',
};
type AdvancementKind = keyof typeof ADVANCEMENT_VERBS;

/** What a line means. Presence changes use the vocabulary the events publish (docs/api.md#get-apievents). */
type LineMeaning =
  | { type: 'session.started' } // `Starting minecraft server version …`: a new run of the game, nobody online
  | { type: 'server.stopping' }
  | { type: 'server.ready' } // `Done (…)!`: the run's world is loaded
  | { type: 'player.joined'; player: string }
  | { type: 'player.left'; player: string }
  // whether the player is online is the reader's to say: these are as the line wrote them
  | { type: 'player.chat'; player: string; text: string }
  | { type: 'player.died'; player: string; message: string }
  | { type: 'player.advancement'; player: string; advancement: string; kind: AdvancementKind }
  | { type: 'server.lagging'; behind_ms: string; ticks: string }
  | { type: 'player.wrote' } // /me, a player's /say
  | { type: 'whitelist.added' | 'whitelist.removed' | 'whitelist.not-added' | 'whitelist.not-removed'; player: string }
  | { type: 'whitelist.already-listed' | 'whitelist.not-listed' | 'player.unknown' }
  | {
    type: 'kick.done' | 'kick.not-found' | 'ban.added' | 'ban.not-added' | 'ban.removed' | 'ban.not-removed'
      | 'op.added' | 'op.not-added' | 'op.removed' | 'op.not-removed';
    player: string;
  }
  | { type: 'kick.no-player' | 'ban.already' | 'ban.not-banned' | 'op.already' | 'op.not-op' };

/**
 * One kind of log line: the threads that write it (`game`: any but a chat thread, whose plugins may write anything;
 * `server`: the server thread alone), the level, the text every such line holds (looked for in raw bytes before
 * anything is decoded), the pattern on the message, what it means, and an example message.
 */
interface LineKind {
  type: LineMeaning['type'];
  threads: 'game' | 'server' | 'any';
  level?: string;
  hint: string | readonly string[]; // or texts one of which every such line holds
  pattern: RegExp;
  fields?: (match: RegExpExecArray) => Record<string, string>; // what the line tells besides its type
  example: string;
  // the example again with `%s` where text a player chose stands (chat, a name tag, an item's name, a title, a kick
  // reason): a test puts every character a player can type there, line separators included
  typed?: string;
}

/** The log's grammar: every reader of latest.log takes its meaning of a line from these rows (docs/formats.md). */
export const LINE_KINDS: readonly LineKind[] = [
  {
    type: 'session.started', threads: 'game', level: 'INFO', hint: 'Starting minecraft server version ',
    pattern: /^Starting minecraft server version /s, example: 'Starting minecraft server version 1.21.4',
  },
  // `/stop` logs the first, every shutdown the second; the game then stops reading its console
  {
    type: 'server.stopping', threads: 'game', level: 'INFO', hint: 'Stopping ', pattern: /^Stopping (?:the )?server$/s,
    example: 'Stopping the server',
  },
  // the world is loaded and the game takes players (docs/formats.md#start-and-stop-lines): 1.13+ `type "help"`, up to
  // 1.12 `type "help" or "?"`; the seconds are formatted in the JVM's locale (`3,112s`), and betas counted `ns`
  {
    type: 'server.ready', threads: 'game', level: 'INFO', hint: 'Done (',
    pattern: /^Done \(\d{1,12}(?:[.,]\d{1,9})?n?s\)! For help, type "help"(?: or "\?")?$/s,
    example: 'Done (12.345s)! For help, type "help"',
  },
  // the login line carries the bare profile name and plugins cannot reword it; `.*` spans `/[v6]:port`
  {
    type: 'player.joined', threads: 'game', level: 'INFO', hint: '] logged in with entity id ',
    pattern: new RegExp(`^${NAME}\\[[^\\]]*(?:\\][^\\]]*)?\\] logged in with entity id -?\\d+ at \\(.*\\)$`, 's'),
    fields: (m) => ({ player: m[1] }),
    example: 'Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)',
  },
  // the join broadcast uses the display name: a team prefix or suffix (`[Staff] Alex`) makes it no name at all, and
  // the login line above still counts that player
  {
    type: 'player.joined', threads: 'game', level: 'INFO', hint: ' joined the game',
    pattern: new RegExp(`^${NAME} joined the game$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Alex joined the game',
  },
  {
    type: 'player.joined', threads: 'game', level: 'INFO', hint: ') joined the game',
    pattern: new RegExp(`^${NAME} \\(formerly known as [A-Za-z0-9_.]{1,16}\\) joined the game$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Alex (formerly known as OldAlex) joined the game',
  },
  {
    type: 'player.left', threads: 'game', level: 'INFO', hint: ' left the game',
    pattern: new RegExp(`^${NAME} left the game$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Alex left the game',
  },
  // every disconnect logs this with the bare name; the reason after `: ` is free text (a kick reason can read `Alex
  // left the game`), so the name comes from the start and nothing after the colon is looked at. Players refused at
  // login are logged as `Name (/ip:port) lost connection` or as a GameProfile: no match.
  {
    type: 'player.left', threads: 'game', level: 'INFO', hint: ' lost connection: ',
    pattern: new RegExp(`^${NAME} lost connection: `, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Alex lost connection: Disconnected', typed: 'Alex lost connection: Kicked: %s',
  },
  // what players write, whatever thread logs it: chat (vanilla's server thread, Paper's chat threads) and, since
  // 1.19.1, unsigned chat with its tag; /me; a player's /say (the console's own is `[Server] …`); a player's command
  // as Paper and Spigot log it on the server thread. Vanilla's chat takes U+2028 and U+2029, which `.` does not match
  // without the `s` flag: every pattern has it, so that no player's line falls through to be read as the game's.
  {
    type: 'player.chat', threads: 'any', hint: '> ', pattern: /^(?:\[Not Secure\] )?<([^<>]{1,64})> (.*)$/s,
    fields: (m) => ({ player: m[1], text: m[2] }), example: '<Alex> hello there', typed: '<Alex> %s',
  },
  {
    type: 'player.wrote', threads: 'any', hint: '* ', pattern: /^(?:\[Not Secure\] )?\* (?!Server )[^ ]{1,64} /s,
    example: '* Alex waves', typed: '* Alex %s',
  },
  {
    type: 'player.wrote', threads: 'any', hint: '] ', pattern: /^(?:\[Not Secure\] )?\[(?!Server\])[^\]:]{1,64}\] /s,
    example: '[Alex] hello', typed: '[Alex] %s',
  },
  {
    type: 'player.wrote', threads: 'any', hint: ' issued server command: ',
    pattern: new RegExp(`^${NAME} issued server command: `, 's'),
    example: 'Alex issued server command: /tell Steve hi', typed: 'Alex issued server command: /tell Steve %s',
  },
  // what the game tells of a player (docs/formats.md#deaths): a death message is the victim's name
  // and one of the game's texts, and nothing else in it is fixed
  {
    type: 'player.died', threads: 'server', level: 'INFO', hint: DEATH_HINTS, pattern: DEATH_MESSAGE,
    fields: (m) => ({ player: m[1], message: m[0] }), example: 'Alex was slain by Zombie',
    typed: 'Alex was slain by %s using [%s]',
  },
  // the title is the game's (or a datapack's) and shown in brackets; an achievement is 1.8-1.11's advancement
  ...Object.entries(ADVANCEMENT_VERBS).map(([kind, verb]): LineKind => ({
    type: 'player.advancement', threads: 'server', level: 'INFO', hint: ` ${verb} [`,
    pattern: new RegExp(`^${NAME} ${verb} \\[(.+)\\]$`, 's'),
    fields: (m) => ({ player: m[1], advancement: m[2], kind }),
    example: `Alex ${verb} [Stone Age]`, typed: `Alex ${verb} [%s]`,
  })),
  // the tick loop's warning, 1.13+ and 1.8-1.12 (docs/formats.md#lag); Paper removed it in 1.21.9
  {
    type: 'server.lagging', threads: 'server', level: 'WARN', hint: 'Can\'t keep up! ',
    pattern: /^Can't keep up! Is the server overloaded\? Running (\d{1,9})ms or (\d{1,9}) ticks behind$/s,
    fields: (m) => ({ behind_ms: m[1], ticks: m[2] }),
    example: 'Can\'t keep up! Is the server overloaded? Running 2034ms or 40 ticks behind',
  },
  {
    type: 'server.lagging', threads: 'server', level: 'WARN', hint: 'Can\'t keep up! ',
    pattern: new RegExp('^Can\'t keep up! Did the system time change, or is the server overloaded\\? '
      + 'Running (\\d{1,9})ms behind, skipping (\\d{1,9}) tick\\(s\\)$', 's'),
    fields: (m) => ({ behind_ms: m[1], ticks: m[2] }),
    example: 'Can\'t keep up! Did the system time change, or is the server overloaded? Running 2897ms behind, '
      + 'skipping 57 tick(s)',
  },
  // the console's replies to whitelist edits (docs/formats.md#console-replies): 1.13+ and 1.7-1.12 texts
  {
    type: 'whitelist.added', threads: 'server', hint: ' to the whitelist',
    pattern: new RegExp(`^Added ${NAME} to the whitelist$`, 'is'), fields: (m) => ({ player: m[1] }),
    example: 'Added Alex to the whitelist',
  },
  {
    type: 'whitelist.removed', threads: 'server', hint: ' from the whitelist',
    pattern: new RegExp(`^Removed ${NAME} from the whitelist$`, 'is'), fields: (m) => ({ player: m[1] }),
    example: 'Removed Alex from the whitelist',
  },
  {
    type: 'whitelist.not-added', threads: 'server', hint: ' to the whitelist',
    pattern: new RegExp(`^Could not add ${NAME} to the whitelist$`, 'is'), fields: (m) => ({ player: m[1] }),
    example: 'Could not add Alex to the whitelist',
  },
  {
    type: 'whitelist.not-removed', threads: 'server', hint: ' from the whitelist',
    pattern: new RegExp(`^Could not remove ${NAME} from the whitelist$`, 'is'), fields: (m) => ({ player: m[1] }),
    example: 'Could not remove Alex from the whitelist',
  },
  // 1.13+: the game knows no account of that name (whitelist, ban, pardon, op, deop)
  {
    type: 'player.unknown', threads: 'server', hint: 'That player does not exist',
    pattern: /^That player does not exist$/s, example: 'That player does not exist',
  },
  {
    type: 'whitelist.already-listed', threads: 'server', hint: 'Player is already whitelisted',
    pattern: /^Player is already whitelisted$/s, example: 'Player is already whitelisted',
  },
  {
    type: 'whitelist.not-listed', threads: 'server', hint: 'Player is not whitelisted',
    pattern: /^Player is not whitelisted$/s, example: 'Player is not whitelisted',
  },
  // the console's replies to kick, ban, pardon, op and deop (docs/formats.md#moderation-replies): each 1.13+ text,
  // then its 1.8-1.12 one. A 1.13+ kick names the player by display name: a team prefix makes it no name at all.
  {
    type: 'kick.done', threads: 'server', hint: 'Kicked ', pattern: new RegExp(`^Kicked ${NAME}: .*$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Kicked Alex: Kicked by an operator', typed: 'Kicked Alex: %s',
  },
  {
    type: 'kick.done', threads: 'server', hint: 'Kicked ',
    pattern: new RegExp(`^Kicked ${NAME} from the game(?:: '.*')?$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Kicked Alex from the game: \'Griefing\'', typed: 'Kicked Alex from the game: \'%s\'',
  },
  {
    type: 'kick.no-player', threads: 'server', hint: ['No player was found', 'That player cannot be found'],
    pattern: /^(?:No player was found|That player cannot be found)$/s, example: 'No player was found',
  },
  {
    type: 'kick.not-found', threads: 'server', hint: ' cannot be found',
    pattern: new RegExp(`^Player '${NAME}' cannot be found$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Player \'Alex\' cannot be found',
  },
  {
    type: 'ban.added', threads: 'server', hint: 'Banned ', pattern: new RegExp(`^Banned ${NAME}: .*$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Banned Alex: Banned by an operator.', typed: 'Banned Alex: %s',
  },
  {
    type: 'ban.added', threads: 'server', hint: 'Banned player ', pattern: new RegExp(`^Banned player ${NAME}$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Banned player Alex',
  },
  {
    type: 'ban.already', threads: 'server', hint: 'Nothing changed. The player is already banned',
    pattern: /^Nothing changed\. The player is already banned$/s,
    example: 'Nothing changed. The player is already banned',
  },
  {
    type: 'ban.not-added', threads: 'server', hint: 'Could not ban player ',
    pattern: new RegExp(`^Could not ban player ${NAME}$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Could not ban player Alex',
  },
  {
    type: 'ban.removed', threads: 'server', hint: 'Unbanned ', pattern: new RegExp(`^Unbanned ${NAME}$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Unbanned Alex',
  },
  {
    type: 'ban.removed', threads: 'server', hint: 'Unbanned player ',
    pattern: new RegExp(`^Unbanned player ${NAME}$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Unbanned player Alex',
  },
  {
    type: 'ban.not-banned', threads: 'server', hint: 'Nothing changed. The player isn\'t banned',
    pattern: /^Nothing changed\. The player isn't banned$/s, example: 'Nothing changed. The player isn\'t banned',
  },
  {
    type: 'ban.not-removed', threads: 'server', hint: 'Could not unban player ',
    pattern: new RegExp(`^Could not unban player ${NAME}$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Could not unban player Alex',
  },
  {
    type: 'op.added', threads: 'server', hint: ' a server operator',
    pattern: new RegExp(`^Made ${NAME} a server operator$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Made Alex a server operator',
  },
  {
    type: 'op.added', threads: 'server', hint: 'Opped ', pattern: new RegExp(`^Opped ${NAME}$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Opped Alex',
  },
  {
    type: 'op.already', threads: 'server', hint: 'Nothing changed. The player already is an operator',
    pattern: /^Nothing changed\. The player already is an operator$/s,
    example: 'Nothing changed. The player already is an operator',
  },
  {
    type: 'op.not-added', threads: 'server', hint: 'Could not op ', pattern: new RegExp(`^Could not op ${NAME}$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'Could not op Alex',
  },
  {
    type: 'op.removed', threads: 'server', hint: ' no longer a server operator',
    pattern: new RegExp(`^Made ${NAME} no longer a server operator$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Made Alex no longer a server operator',
  },
  {
    type: 'op.removed', threads: 'server', hint: 'De-opped ', pattern: new RegExp(`^De-opped ${NAME}$`, 's'),
    fields: (m) => ({ player: m[1] }), example: 'De-opped Alex',
  },
  {
    type: 'op.not-op', threads: 'server', hint: 'Nothing changed. The player is not an operator',
    pattern: /^Nothing changed\. The player is not an operator$/s,
    example: 'Nothing changed. The player is not an operator',
  },
  {
    type: 'op.not-removed', threads: 'server', hint: 'Could not de-op ',
    pattern: new RegExp(`^Could not de-op ${NAME}$`, 's'), fields: (m) => ({ player: m[1] }),
    example: 'Could not de-op Alex',
  },
];

const holdsHint = (message: string, hint: LineKind['hint']): boolean =>
  typeof hint === 'string' ? message.includes(hint) : hint.some((text) => message.includes(text));

const isChatThread = (thread: string | undefined): boolean =>
  thread !== undefined && thread.startsWith('Async Chat Thread');

/** What a log line means by LINE_KINDS, among the kinds of `types` (all when absent); undefined when nothing. */
function meaningOf(line: LogLine, types?: ReadonlySet<LineMeaning['type']>): LineMeaning | undefined {
  for (const kind of LINE_KINDS) {
    if (types !== undefined && !types.has(kind.type)) continue;
    const meaning = lineOfKind(line, kind);
    if (meaning !== undefined) return meaning;
  }
  return undefined;
}

/** What a log line means by the first of these rows it matches. */
function kindOf(line: LogLine, kinds: readonly LineKind[]): LineMeaning | undefined {
  for (const kind of kinds) {
    const meaning = lineOfKind(line, kind);
    if (meaning !== undefined) return meaning;
  }
  return undefined;
}

/** What a log line means if it is of this kind. */
function lineOfKind(line: LogLine, kind: LineKind): LineMeaning | undefined {
  // the cheap tests first: most lines a reader decodes are chat, which no server-thread kind can be
  if (kind.level !== undefined && line.level !== kind.level) return undefined;
  const thread = line.thread;
  if (kind.threads === 'server' ? thread !== SERVER_THREAD : kind.threads === 'game' && isChatThread(thread)) {
    return undefined;
  }
  if (!holdsHint(line.message, kind.hint)) return undefined;
  const match = kind.pattern.exec(line.message);
  if (match === null) return undefined;
  // the row's fields are a new object: it becomes the meaning (copying it into another costs a chat line 5 %)
  const meaning: Record<string, string> = kind.fields?.(match) ?? {};
  meaning.type = kind.type;
  return meaning as unknown as LineMeaning;
}

/** What a raw line of latest.log means, if anything. Lines over 4 KiB mean nothing (and are never matched). */
export function readLogLine(raw: string, types?: ReadonlySet<LineMeaning['type']>): LineMeaning | undefined {
  if (raw.length > LOG_LINE_MAX_BYTES) return undefined;
  const line = parseLogLine(raw);
  return line === null ? undefined : meaningOf(line, types);
}

// What a player says or does is never the game's reply to a console command
const PLAYER_DOINGS = new Set<LineMeaning['type']>(['player.joined', 'player.left', 'player.chat', 'player.wrote']);

/**
 * Whether a line can be the game's reply to a console command (docs/api.md#command-output): the server thread's,
 * and nothing a player said or did (chat, /me, a player's /say, a join, a leave, a login).
 */
export function isConsoleReply(line: LogLine): boolean {
  return line.thread === SERVER_THREAD && meaningOf(line, PLAYER_DOINGS) === undefined;
}

// ---- Presence ----

const PRESENCE_CHUNK_BYTES = 1024 * 1024;
const PRESENCE_SYNC_MAX_BYTES = 64 * 1024; // an append this small is read at once, without a turn of the event loop
// docs/api.md#the-bridges-events: a larger backlog is read for presence alone (at 4 µs a chat line, 0.7 s of reading)
const LIVE_BACKLOG_MAX_BYTES = 16 * 1024 * 1024;
// docs/api.md#freshness: no read route waits longer on the log
const READ_WAIT_MAX_MS = 1_500; // and the answer within 2 s
const LOG_BEHIND = 'latest.log is still being read; players online are not known yet. Try again shortly.';
const HEAD_BYTES = 64; // of a followed log, kept to notice it was truncated and written again
const ARCHIVE_MAX_FILES = 8;
const ARCHIVE_MAX_BYTES = 64 * 1024 * 1024; // decompressed, all archives together
const SESSION_START_SLACK_MS = 2_000; // log times have whole seconds; the process start has 10 ms ticks
const ARCHIVE_NAME = /^(\d{4})-(\d\d)-(\d\d)-\d+\.log\.gz$/;

// The kinds presence follows: who is online, and whether the game is stopping. Their hints are looked for in the
// raw bytes, so a chunk of chat and chunk loading is never decoded at all.
export const PRESENCE_TYPES = new Set<LineMeaning['type']>([
  'session.started', 'server.stopping', 'server.ready', 'player.joined', 'player.left',
]);
// What the follower also tells, of a log followed live: what players say and do, and lag. The lines of a game that ran
// before the daemon first read its log are taken for presence alone: events and counters are of what happens after.
const TOLD_TYPES = new Set<LineMeaning['type']>(['player.chat', 'player.died', 'player.advancement', 'server.lagging']);
export const FOLLOWED_TYPES = new Set([...PRESENCE_TYPES, ...TOLD_TYPES]);

/**
 * A reader of some kinds of line: their rows in table order, one search for all their hints (a regular expression of
 * them all), and for each hint the rows that hold it. No line is of two kinds (a test holds the table to that), so a
 * line is tried first against the rows of the hint found in it, and against all the reader's rows only when none of
 * those matches. Chat's hint is a group of the search: a line it is found in is tried against USUAL_CHAT alone before
 * the rows, any other against USUAL_PRESENCE when the reader reads joins and leaves (most lines a follower reads are
 * chat: parsing a log of chat takes 3.6 ms a MiB instead of 4.0).
 */
interface LineReader {
  kinds: readonly LineKind[];
  readsPresence: boolean; // joins and leaves among them: the usual ones are read in place (USUAL_PRESENCE)
  hints: RegExp;
  chatGroup: number; // the search's group of chat's hint, which the usual chat line holds; 0 when chat is not read
  byHint: ReadonlyMap<string, readonly LineKind[]>;
}

export function readerOf(types: ReadonlySet<LineMeaning['type']>): LineReader {
  const kinds = LINE_KINDS.filter((kind) => types.has(kind.type));
  const keysOf = (of: readonly LineKind[]): string[] =>
    [...new Set(of.flatMap((kind) => [kind.hint].flat().map(searchKeyOf)))];
  const keys = keysOf(kinds);
  const chatKey = keysOf(kinds.filter((kind) => kind.type === 'player.chat'))[0];
  // the group stands where the hint stood: the search tries its texts in the order it does without it
  const search = keys.map((key) => (key === chatKey ? `(${escapeRegExp(key)})` : escapeRegExp(key)));
  return {
    kinds,
    readsPresence: types.has('player.joined') && types.has('player.left'),
    hints: new RegExp(search.join('|'), 'g'),
    chatGroup: chatKey === undefined ? 0 : 1,
    byHint: new Map(keys.map((key) => [key, kinds.filter((kind) => [kind.hint].flat().some((hint) => hint.includes(key)))])),
  };
}

// What is searched for of a hint: the hint without a leading bracket. Brackets are in every line's prefix, and a
// search whose texts begin with one stops at each: dropping it makes the search of presence a quarter faster. (A
// leading space stays: dropping it from a short word, ` was`, costs the follower's search half its speed.) Every line
// that holds the hint holds its key.
const searchKeyOf = (hint: string): string => {
  const key = hint.replace(/^[\])]+/, '');
  return key.length >= 8 ? key : hint;
};

const PRESENCE_READER = readerOf(PRESENCE_TYPES);
const FOLLOWED_READER = readerOf(FOLLOWED_TYPES);
const NON_ASCII = /[^\x00-\x7f]/;
// buffer.isAscii came in Node 18.15
const isAsciiBytes: (bytes: Uint8Array) => boolean =
  isAscii ?? ((bytes) => !NON_ASCII.test(Buffer.from(bytes).toString('latin1')));

/**
 * Calls `visit` with what each line of data[0, end) that holds one of the reader's hints means, and the line (a last
 * one without its line end too); no other line is decoded. The hints are found by one search over the bytes seen as
 * latin1 (every hint is ASCII, so a character's index is its byte's, and a line of ASCII alone is already decoded).
 * Lines over 4 KiB mean nothing and are skipped.
 */
export function forEachHintedLine(
  data: Buffer,
  end: number,
  reader: LineReader,
  visit: (meaning: LineMeaning, time: string) => void,
): void {
  const text = data.toString('latin1', 0, end);
  // a chunk of ASCII alone (most logs, most of the time) is decoded already, line by line
  const ascii = isAsciiBytes(data.subarray(0, end));
  // and in a chunk without escape sequences, a line's prefix is read in place
  const inPlace = text.indexOf('\x1b') === -1;
  const { hints } = reader;
  hints.lastIndex = 0;
  for (let found = hints.exec(text); found !== null; found = hints.exec(text)) {
    const lineStart = text.lastIndexOf('\n', found.index) + 1;
    const lineBreak = text.indexOf('\n', found.index);
    const lineEnd = lineBreak === -1 ? end : lineBreak;
    hints.lastIndex = lineEnd + 1;
    if (lineEnd - lineStart > LOG_LINE_MAX_BYTES) continue;
    const chatHinted = reader.chatGroup > 0 && found[reader.chatGroup] !== undefined;
    USUAL_PRESENCE.lastIndex = lineStart;
    const usual = inPlace && reader.readsPresence && !chatHinted ? USUAL_PRESENCE.exec(text) : null;
    if (usual !== null) {
      const time = text.slice(lineStart + 1, lineStart + 9);
      // a leave or a lost connection; a join or a login
      const type = usual[2] === 'left' || usual[3] !== undefined ? 'player.left' : 'player.joined';
      visit({ type, player: usual[1] }, time);
      continue;
    }
    USUAL_CHAT.lastIndex = lineStart;
    const chat = inPlace && chatHinted ? USUAL_CHAT.exec(text) : null;
    if (chat !== null) {
      const time = text.slice(lineStart + 1, lineStart + 9);
      const message = messageAt(text, USUAL_CHAT.lastIndex, lineEnd, ascii ? undefined : data);
      visit({ type: 'player.chat', player: chat[1], text: message }, time);
      continue;
    }
    const line = (inPlace ? readUsualLine(text, lineStart, lineEnd, ascii ? undefined : data) : undefined)
      // only whole lines are decoded, so a UTF-8 sequence is never split
      ?? parseLogLine(ascii ? text.slice(lineStart, lineEnd) : data.toString('utf8', lineStart, lineEnd));
    if (line === null) continue;
    const meaning = kindOf(line, reader.byHint.get(found[0])!) ?? kindOf(line, reader.kinds);
    if (meaning !== undefined) visit(meaning, line.time);
  }
}

// The usual presence lines, as vanilla and its forks write them: the server thread's `[HH:MM:SS] [Server thread/INFO]: `
// and a bare name's join, leave, lost connection or login, in ASCII. One match of it at a line's start says what the
// grammar's rows say of the line, for a fraction of the work (a test holds the two equal over generated lines): so it
// names nothing a row would not. What a login ends with is read only when it holds no escape and no other byte.
const LINE_ENDS_HERE = '(?=\\r?\\n|\\r?$)'; // the text ends at a line's end; a CRLF line's CR is no part of it
const USUAL_PRESENCE = new RegExp(
  `\\[\\d\\d:\\d\\d:\\d\\d\\] \\[${SERVER_THREAD}/INFO\\]: ${NAME}(?:`
    + ` (joined|left) the game${LINE_ENDS_HERE}`
    + '|( lost connection: )'
    // the address may hold one `]` (an IPv6 one in brackets), as the row allows; no other byte than ASCII
    + `|\\[[^\\]\\n\\x80-\\xff]*(?:\\][^\\]\\n\\x80-\\xff]*)?\\] logged in with entity id -?\\d+ at \\([^\\n\\x1b\\x80-\\xff]*\\)`
    + `${LINE_ENDS_HERE})`,
  'y',
);

// The usual chat line, of any thread: `[HH:MM:SS] [thread/LEVEL]( [logger])?: ([Not Secure] )?<name> `, its prefix and
// name in ASCII. As USUAL_PRESENCE, held equal to the grammar's chat row by the same tests; the text is the rest of the
// line. Most lines a follower reads are chat: read so, a chat log is read a tenth faster, a busy one a fifth.
const USUAL_CHAT = new RegExp(
  '\\[\\d\\d:\\d\\d:\\d\\d\\] \\[[^\\]\\n\\x80-\\xff]{1,128}/[A-Z]{1,10}\\](?: \\[[^\\]\\n\\x80-\\xff]{0,256}\\])?: '
    + '(?:\\[Not Secure\\] )?<([^<>\\n\\x80-\\xff]{1,64})> ',
  'y',
);

/**
 * The rest of a line from `start`, text[start, end), as the grammar has it: decoded from `bytes` (the chunk; none when
 * it is ASCII alone) when it holds other bytes, without colour codes, and a CRLF line's CR taken off after them, as
 * parseLogLine does. What comes before `start` is ASCII, so these bytes decode alone as they would in the line, and
 * only they can hold a `§`.
 */
function messageAt(text: string, start: number, end: number, bytes: Buffer | undefined): string {
  let message = text.slice(start, end);
  if (bytes !== undefined && NON_ASCII.test(message)) {
    message = bytes.toString('utf8', start, end);
    if (message.includes('§')) message = message.replace(COLOUR_CODES, '');
  }
  return message.endsWith('\r') ? message.slice(0, -1) : message;
}

const isDigitAt = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  return code >= 48 && code <= 57;
};

const isCapitalAt = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  return code >= 65 && code <= 90;
};

/**
 * parseLogLine's reading of text[start, end), for a line of the usual shape `[HH:MM:SS] [thread/LEVEL]( [logger])?: `
 * in a chunk without escape sequences, read in place: no regular expression, and of a line with other bytes than
 * ASCII (`bytes`, the chunk) only the message is decoded. Undefined for any other line, which parseLogLine reads; a
 * test holds the two equal over every shape of prefix and many mutations of it.
 */
export function readUsualLine(text: string, start: number, end: number, bytes?: Buffer): LogLine | undefined {
  if (
    text.charCodeAt(start) !== 91 || !isDigitAt(text, start + 1) || !isDigitAt(text, start + 2)
    || text.charCodeAt(start + 3) !== 58 || !isDigitAt(text, start + 4) || !isDigitAt(text, start + 5)
    || text.charCodeAt(start + 6) !== 58 || !isDigitAt(text, start + 7) || !isDigitAt(text, start + 8)
    || !text.startsWith('] [', start + 9)
  ) {
    return undefined;
  }
  const close = text.indexOf(']', start + 12);
  if (close === -1 || close >= end) return undefined;
  // the level is the capitals between the thread's last slash and the bracket (the thread may hold slashes)
  let slash = close - 1;
  while (slash > close - 11 && isCapitalAt(text, slash)) slash--;
  if (text.charCodeAt(slash) !== 47 || slash === close - 1 || slash <= start + 12 || slash - (start + 12) > 128) {
    return undefined;
  }
  let messageStart = close + 3;
  if (!text.startsWith(': ', close + 1)) {
    if (!text.startsWith(' [', close + 1)) return undefined;
    const loggerEnd = text.indexOf(']', close + 3);
    if (loggerEnd === -1 || loggerEnd - (close + 3) > 256 || !text.startsWith(': ', loggerEnd + 1)) return undefined;
    messageStart = loggerEnd + 3;
  }
  if (messageStart > end || (bytes !== undefined && !isAsciiBytes(bytes.subarray(start, messageStart)))) return undefined;
  return {
    time: text.slice(start + 1, start + 9), thread: text.slice(start + 12, slash), level: text.slice(slash + 1, close),
    message: messageAt(text, messageStart, end, bytes),
  };
}

/** What the log told since the daemon started: the counters of GET /metrics. */
interface LogCounts {
  backlogBytes: number; // read for presence alone: nothing in them was told or counted
  chat: number;
  deaths: number;
  advancements: number;
  overloads: number;
  ticksBehind: number;
}

/** A game session as its log tells it: who is online, and whether the server is shutting down. */
interface Session {
  players: Set<string>;
  stopping: boolean;
  ready: boolean; // the run logged its Done line
  reply?: Reply; // GET /api/players/online's answer for this view, made once (docs/performance.md: players online)
}

const newSession = (): Session => ({ players: new Set(), stopping: false, ready: false });

/** A change of presence, as the events publish it, and the game process whose log line made it. */
type PresenceListener = (change: LineMeaning, game: string) => void;

interface Presence {
  /** GET /api/players/online: the list when it is current, 503 while the log is read past the 2 s bound. */
  players(): Reply | Promise<Reply>;
  /** Who is online, after parsing what was appended to latest.log since the last call; at once when little was. */
  read(game: GameProcess): Session | Promise<Session>;
  /** The same, or undefined when the log is not read up to now within `waitMs` (reading goes on meanwhile). */
  readWithin(game: GameProcess, waitMs: number): Promise<Session | undefined>;
  /**
   * The lines appended to the log it follows, read at once through the handle it holds, when that is all a change of
   * the file calls for; false, having parsed nothing, when it is not (nothing followed yet, another game, a read under
   * way, the file rewritten, more than a few lines): read() then.
   */
  readAppendedNow(game: GameProcess): boolean;
  /** Bytes of latest.log not read yet, as its size was last seen. */
  unreadBytes(): number;
  /** Who is online by what was read so far, without reading. */
  known(): Session;
  /** Whether what was already read says this game is shutting down: no I/O, so the console never waits for the log. */
  isKnownStopping(game: GameProcess): boolean;
  /**
   * Calls `listener` with each change that lines parsed from now on make, and with what they tell of players online
   * and lag (live events); or stops with undefined.
   */
  listen(listener: PresenceListener | undefined): void;
  /** What lines followed live told so far. */
  counts(): Readonly<LogCounts>;
  /** The game process whose log lines were parsed last. */
  followedGame(): string | undefined;
  close(): Promise<void>;
}

interface FollowedLog {
  handle: fs.promises.FileHandle; // the log followed: it keeps a rolled file readable to its end
  dev: number;
  ino: number;
  head: Buffer; // the file's first bytes: a copy-and-truncate that has grown again changes them
  size: number; // the size the view below was computed for
  mtimeMs: number; // and the mtime
  settled: boolean; // whether a write since could have left size and mtime as they were (isSettled)
  offset: number; // bytes parsed into `session`: always the end of a complete line
  skipping: boolean; // inside a line longer than a chunk: no event, skip to its end
  sawStart: boolean; // a session start was parsed
  game: string; // the game process the players belong to
  session: Session;
  view: Session; // the session plus the effect of a final unterminated line
  viewStale: boolean; // the session changed since the view was made
  live: boolean; // whether lines are told (TOLD_TYPES), not only applied to the session
}

/**
 * What a reader of appended bytes takes of a piece read at its offset: its whole lines, handed to `apply` (the end of
 * the last one), or, inside a line longer than a piece (which means nothing), the piece up to that line's end. 0: the
 * piece is a last line still being written, to be read again once it is whole.
 */
function takeWholeLines(
  piece: Buffer,
  full: boolean,
  cursor: { skipping: boolean },
  apply: (end: number) => void,
): number {
  if (cursor.skipping) {
    const end = piece.indexOf(10);
    cursor.skipping = end === -1;
    return end === -1 ? piece.length : end + 1;
  }
  const lastBreak = piece.lastIndexOf(10);
  if (lastBreak === -1) {
    if (!full) return 0;
    cursor.skipping = true;
    return piece.length;
  }
  apply(lastBreak);
  return lastBreak + 1;
}

/** One read of the parser: `length` bytes at `position` into the follower's chunk; the bytes read come back. */
type ChunkRead = [length: number, position: number];

/** A parser of appended bytes: asks for reads, and returns a last line still being written (undefined: none). */
type AppendedLines = Generator<ChunkRead, string | undefined, number>;

/**
 * The one parser of appended bytes, [cursor.offset, size): asks for each piece's read into `chunk`, is handed the
 * bytes read, and hands `applyLines` the whole lines of each piece, moving the cursor past them. Driven at once
 * (readLinesNow) or on libuv's threads.
 */
function* appendedLines(
  cursor: { offset: number; skipping: boolean },
  size: number,
  chunk: Buffer,
  applyLines: (data: Buffer, end: number) => void,
): AppendedLines {
  while (cursor.offset < size) {
    const bytesRead: number = yield [Math.min(chunk.length, size - cursor.offset), cursor.offset];
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    const taken = takeWholeLines(data, bytesRead === chunk.length, cursor, (end) => applyLines(data, end));
    if (taken === 0) return data.length <= LOG_LINE_MAX_BYTES ? data.toString('utf8') : undefined;
    cursor.offset += taken;
  }
  return undefined;
}

/**
 * Drives a parser of appended bytes with reads of `fd` at once; `inChunk`: bytes already read into the chunk at the
 * parser's offset (to learn where the file ends), which its first read asks for.
 */
function readLinesNow(lines: AppendedLines, fd: number, chunk: Buffer, inChunk = 0): string | undefined {
  for (let step = lines.next(); ; inChunk = 0) {
    if (step.done) return step.value;
    const [length, position] = step.value;
    step = lines.next(length === inChunk ? inChunk : fs.readSync(fd, chunk, 0, length, position));
  }
}

// ---- A large backlog, read on two threads ----

// a backlog this large read for presence alone (docs/performance.md#the-backlog) is halved between this thread and a
// worker's. A worker costs some 50 ms and 90 ms of CPU to start, and 60 MiB of memory at its peak: on 100 MiB it gains
// nothing, on 256 MiB about 0.3 s, on 1 GiB a second and more
const SPLIT_BACKLOG_MIN_BYTES = 256 * 1024 * 1024;
const CORES = availableParallelism?.() ?? cpus().length; // Node 18.14 has availableParallelism
const WORKER_MEMORY_MB = 64; // the worker holds a chunk and the players it saw: a bound, not a need

/** Where the first line that starts at or after `position` starts; undefined when none does within 64 KiB. */
async function lineStartAfter(handle: fs.promises.FileHandle, position: number): Promise<number | undefined> {
  const probe = Buffer.allocUnsafe(64 * 1024);
  const { bytesRead } = await handle.read(probe, 0, probe.length, position - 1);
  const lineEnd = probe.subarray(0, bytesRead).indexOf(10);
  return lineEnd === -1 ? undefined : position + lineEnd;
}

/** What a stretch of the log, read on its own, does to who is online; `end`: where its last whole line ends. */
interface NetPresence {
  meanings: LineMeaning[];
  end: number;
}

/**
 * A string of its own. V8 makes a piece of 13 characters or more of a string a view of the whole string, which it keeps
 * alive as long as the piece lives: a name read from a 1 MiB chunk of the log and kept (a player online) is kept as a
 * copy (docs/performance.md#a-name-kept-its-chunk).
 */
const ownCopy = (text: string): string => Buffer.from(text).toString();

/**
 * What a stretch of presence lines comes to, as few meanings as give the same session when applied in order: the last
 * session start, whether that run then logged ready and stopping, and each player's last join or leave after it
 * (docs/api.md#the-bridges-events: a large backlog tells joins and leaves as their net change).
 */
function createNetPresence(): { add(meaning: LineMeaning): void; meanings(): LineMeaning[] } {
  let started = false;
  let ready = false;
  let stopping = false;
  // each player's last join or leave, and when it came: a Map that deletes and sets again to keep that order pays for
  // its holes at every one of a busy log's millions of lines; the name kept once, a copy, and no line's meaning
  const last = new Map<string, { type: 'player.joined' | 'player.left'; at: number }>();
  let order = 0;
  return {
    add(meaning) {
      if (meaning.type === 'session.started') {
        started = true;
        ready = stopping = false;
        last.clear();
      } else if (meaning.type === 'server.ready') ready = true;
      else if (meaning.type === 'server.stopping') stopping = true;
      else if (meaning.type === 'player.joined' || meaning.type === 'player.left') {
        const seen = last.get(meaning.player);
        if (seen === undefined) last.set(ownCopy(meaning.player), { type: meaning.type, at: order++ });
        else {
          seen.type = meaning.type;
          seen.at = order++;
        }
      }
    },
    meanings: () => [
      ...started ? [{ type: 'session.started' } as const] : [],
      ...ready ? [{ type: 'server.ready' } as const] : [],
      ...stopping ? [{ type: 'server.stopping' } as const] : [],
      // in the order of each player's last line, as players online lists them
      ...[...last].sort(([, a], [, b]) => a.at - b.at).map(([player, { type }]) => ({ type, player })),
    ],
  };
}

/** Reads [start, end) of the open log `fd` for presence alone: the worker thread's whole work. */
export function readNetPresence(fd: number, start: number, end: number): NetPresence {
  const net = createNetPresence();
  const cursor = { offset: start, skipping: false };
  const chunk = Buffer.allocUnsafe(PRESENCE_CHUNK_BYTES);
  readLinesNow(appendedLines(cursor, end, chunk, (data, lineEnd) => {
    forEachHintedLine(data, lineEnd, PRESENCE_READER, (meaning) => net.add(meaning));
  }), fd, chunk);
  return { meanings: net.meanings(), end: cursor.offset };
}

/** readNetPresence on a worker thread (this file run again); undefined when no worker could do it. */
function readPresenceOnWorker(fd: number, start: number, end: number): Promise<NetPresence | undefined> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(__filename, {
        workerData: { readNetPresence: [fd, start, end] },
        resourceLimits: { maxOldGenerationSizeMb: WORKER_MEMORY_MB },
      });
    } catch {
      return resolve(undefined);
    }
    worker.once('message', resolve);
    // the first to come settles it: an error or an exit without a message leaves the far half to this thread
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}

/**
 * The log follower (docs/formats.md#presence-lines): latest.log read as it grows, for presence, events and metrics.
 * Only bytes appended since the last call are parsed, and only lines that hold a hint of the kinds followed are
 * decoded. Players belong to one game process: a new process starts with nobody, and a log or archive of an earlier
 * run never gives players to the running one. Reads share one update at a time (a burst of requests after a write
 * costs two updates, not one each: docs/performance.md, players online on a live log).
 */
class LogFollower implements Presence {
  private readonly file: string;
  private readonly createdAtMs = Date.now();
  private listener: PresenceListener | undefined;
  private followed: FollowedLog | undefined;
  private followedBefore: string | undefined; // the game whose log was read once: its lines from then on are live
  private readonly told: LogCounts = {
    backlogBytes: 0, chat: 0, deaths: 0, advancements: 0, overloads: 0, ticksBehind: 0,
  };
  private readonly updates = createSerialQueue();
  private updateAsked = false; // an update asked for and not begun yet: every read that comes meanwhile shares it
  private nextUpdate: Promise<Session> = Promise.resolve(newSession());
  private updating = false;
  private latestGame: GameProcess | undefined;
  private seenSize = 0; // latest.log's size at the last look: what is beyond `offset` is unread
  private turnStat: { st: fs.Stats | undefined; readAtMs: number } | undefined; // statThisTurn()
  private readonly chunk = Buffer.allocUnsafe(PRESENCE_CHUNK_BYTES);
  private readonly probe = Buffer.allocUnsafe(HEAD_BYTES + 1);

  constructor(config: Readonly<Config>, private readonly clock: Clock, private readonly game: GameFinder) {
    this.file = latestLogPath(config);
  }

  /** Fresh on every request (statThisTurn): only what was appended is parsed, the answer made once per view. */
  players(): Reply | Promise<Reply> {
    const found = this.game.find();
    // the spec: offline means no players, and the log is not read
    if (found === undefined) return jsonReply({ ok: true, online: false, players: [] });
    const session = this.read(found);
    if (!(session instanceof Promise)) return playersReply(session);
    return settleWithin(session, READ_WAIT_MAX_MS).then((current) => {
      // never a list of the past as if it were current
      if (current === undefined) throw new HttpError(503, LOG_BEHIND, { 'Retry-After': '2' });
      return playersReply(current);
    });
  }

  read(current: GameProcess): Session | Promise<Session> {
    this.latestGame = current;
    const state = this.followed;
    if (state !== undefined && !this.updating && !this.updateAsked && state.game === gameIdentity(current)) {
      const { st, readAtMs } = this.statThisTurn();
      if (st !== undefined && state.ino === st.ino && state.dev === st.dev) {
        this.seenSize = st.size;
        // only appends are looked for: the same size and mtime mean nothing new, once that stat can be trusted
        if (state.settled && state.size === st.size && state.mtimeMs === st.mtimeMs) return state.view;
        // a few lines appended (a live server's usual case), and nothing truncated: read them now
        if (st.size >= state.size && st.size - state.offset <= PRESENCE_SYNC_MAX_BYTES && this.isSameContent(state)) {
          this.parseAppendedNow(state, st.size);
          state.mtimeMs = st.mtimeMs;
          state.settled = isSettled(st.mtimeMs, readAtMs);
          return state.view;
        }
      }
    }
    if (!this.updateAsked) {
      this.updateAsked = true;
      // the queue may begin it at once, before this assignment: `updateAsked` is then already false again
      this.nextUpdate = this.updates(async () => {
        this.updateAsked = false;
        this.updating = true;
        try {
          return await this.update(this.latestGame!);
        } finally {
          this.updating = false;
        }
      });
    }
    return this.nextUpdate;
  }

  /**
   * latest.log's stat, taken once for the requests read in one turn of the event loop: a connection that became
   * readable after a line was written is read in a turn that began after it (docs/api.md#freshness). Under load a turn
   * reads several requests, and a stat is 3-4 µs of the 20 a request costs (docs/performance.md#where-a-reads-time-goes).
   */
  private statThisTurn(): { st: fs.Stats | undefined; readAtMs: number } {
    if (this.turnStat !== undefined) return this.turnStat;
    const readAtMs = Date.now();
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(this.file, { throwIfNoEntry: false });
    } catch {
      st = undefined;
    }
    this.turnStat = { st, readAtMs };
    setImmediate(() => (this.turnStat = undefined));
    return this.turnStat;
  }

  // No stat of the path: a roll is noticed by the watcher's rename, or by the pulse within 0.5 s when inotify lost that
  // event (docs/performance.md#the-floor-of-following)
  readAppendedNow(current: GameProcess): boolean {
    const state = this.followed;
    if (state === undefined || this.updating || this.updateAsked || state.game !== gameIdentity(current)) return false;
    if (!this.isSameContent(state)) return false;
    // how much was appended, learnt from a read of it (a Stats object costs more): more than a few lines is read()'s to
    // weigh, a backlog too large to tell being read for presence alone
    const appended = fs.readSync(state.handle.fd, this.chunk, 0, PRESENCE_SYNC_MAX_BYTES + 1, state.offset);
    if (appended > PRESENCE_SYNC_MAX_BYTES) return false;
    this.seenSize = state.offset + appended;
    this.parseAppendedNow(state, this.seenSize, appended);
    state.settled = false; // a size read, not stated: the next request's stat takes the mtime that goes with it
    return true;
  }

  readWithin(current: GameProcess, waitMs: number): Promise<Session | undefined> {
    const session = this.read(current);
    return session instanceof Promise ? settleWithin(session, waitMs) : Promise.resolve(session);
  }

  unreadBytes(): number {
    return this.followed === undefined ? this.seenSize : Math.max(0, this.seenSize - this.followed.offset);
  }

  known(): Session {
    // while an update reads, its session holds what it has read so far
    return (this.updating ? this.followed?.session : this.followed?.view) ?? newSession();
  }

  isKnownStopping(current: GameProcess): boolean {
    return this.followed !== undefined && this.followed.game === gameIdentity(current) && this.followed.view.stopping;
  }

  listen(next: PresenceListener | undefined): void {
    this.listener = next;
  }

  counts(): Readonly<LogCounts> {
    return this.told;
  }

  followedGame(): string | undefined {
    return this.followed?.game;
  }

  async close(): Promise<void> {
    await this.updates(async () => undefined);
    await this.followed?.handle.close();
    this.followed = undefined;
  }

  private async follow(session: Session, current: GameProcess): Promise<FollowedLog> {
    const identity = gameIdentity(current);
    const { handle, stat } = await openRegularFile(this.file);
    const state: FollowedLog = {
      handle, dev: stat.dev, ino: stat.ino, head: Buffer.alloc(0), size: -1, mtimeMs: -1, settled: false, offset: 0,
      skipping: false, sawStart: false, game: identity, session, view: session, viewStale: true,
      // a game started after the daemon: every line of its log is news
      live: this.followedBefore === identity || this.clock.startedAtMs(current.startTicks) >= this.createdAtMs,
    };
    this.followedBefore = identity;
    return state;
  }

  /** Brings the followed log up to its end: rolls, truncations, a new game process, the first read of a log. */
  private async update(current: GameProcess): Promise<Session> {
    const readAtMs = Date.now();
    const identity = gameIdentity(current);
    let state = this.followed;
    if (state !== undefined && state.game !== identity) {
      // what the earlier process wrote last (its shutdown, its players leaving) is its own, not the new one's
      await this.parseAppended(state, (await state.handle.stat()).size);
      state.session = newSession(); // a new game process: everyone was disconnected
      state.game = this.followedBefore = identity;
      state.viewStale = true;
    }
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(this.file, { throwIfNoEntry: false });
    } catch (err) {
      throw fileError(err, 'latest.log');
    }
    if (st === undefined) {
      // docs/api.md#get-apiplayersonline: the server runs but has no log (yet): nobody online
      await state?.handle.close();
      this.followed = undefined;
      this.seenSize = 0;
      return newSession();
    }
    if (!st.isFile()) throw new HttpError(500, 'latest.log is not a regular file.');
    this.seenSize = st.size;
    // a log last written before this process started is an earlier run's, until log4j rolls it at the first
    // line of this run: neither its players nor its shutdown belong to this game
    const startedAtMs = this.clock.startedAtMs(current.startTicks);
    if (st.mtimeMs < startedAtMs) return newSession();
    if (state !== undefined && (state.dev !== st.dev || state.ino !== st.ino)) {
      // log4j rolled latest.log (at start-up, or at midnight while the game runs): what was written to the old
      // file since the last call is read first, through the handle
      await this.parseAppended(state, (await state.handle.stat()).size);
      // the last lines of a process that has ended, read once a later one rolled the log at its start: the new file
      // is the later run's, and this read ends with the old one
      if (this.isLaterRunsLog(current, st)) return state.view;
      // a roll at midnight: the same process goes on in the new file, and keeps its players
      await state.handle.close();
      this.followed = undefined;
      this.followed = state = await this.follow(state.session, current);
    } else if (state !== undefined && (st.size < state.offset || !this.isSameContent(state))) {
      // truncated in place (log4j's copy-and-truncate fallback), perhaps already written again
      Object.assign(state, { offset: 0, skipping: false, head: Buffer.alloc(0), viewStale: true });
    }
    if (state === undefined) {
      state = await this.follow(newSession(), current);
      await this.parseAppended(state, (await state.handle.stat()).size);
      if (!state.sawStart) {
        // the daemon starts after a midnight roll: the session's start is in the archives; the file is then read
        // again for presence alone (what it told, it told once)
        Object.assign(state, {
          session: await sessionFromArchives(path.dirname(this.file), startedAtMs),
          offset: 0,
          skipping: false,
          live: false,
          viewStale: true,
        });
      }
      this.followed = state;
    }
    const now = await state.handle.stat();
    this.seenSize = now.size;
    if (state.live && now.size - state.offset > LIVE_BACKLOG_MAX_BYTES) {
      // docs/api.md#the-bridges-events: a backlog this large (a flood of chat, a long time nobody asked) is read for
      // presence alone, at the speed of the disk; what it held besides joins and leaves is neither told nor counted
      const backlog = now.size - state.offset;
      state.live = false;
      await this.parseAppended(state, now.size);
      this.told.backlogBytes += backlog;
    } else await this.parseAppended(state, now.size);
    state.mtimeMs = now.mtimeMs;
    state.settled = isSettled(now.mtimeMs, readAtMs);
    state.live = true; // caught up: what is appended from now on is news
    return state.view;
  }

  /**
   * Parses [offset, size) into the state, a chunk at a time on libuv's threads; of a large backlog read for presence
   * alone, the far half on a worker thread meanwhile.
   */
  private async parseAppended(state: FollowedLog, size: number): Promise<void> {
    if (!state.live && size - state.offset >= SPLIT_BACKLOG_MIN_BYTES && CORES > 1) await this.parseHalves(state, size);
    this.settleView(state, await this.readLines(state, size), size);
  }

  /**
   * The same for a small append, read at once: one read of bytes the kernel still has in its cache (none when the
   * chunk holds them already: `inChunk`).
   */
  private parseAppendedNow(state: FollowedLog, size: number, inChunk = 0): void {
    this.settleView(state, readLinesNow(this.appendedLines(state, size), state.handle.fd, this.chunk, inChunk), size);
  }

  /**
   * The lines of [offset, size) applied to the state, or handed to `visit`; what a last line still being written
   * holds.
   */
  private async readLines(
    state: FollowedLog,
    size: number,
    visit?: (meaning: LineMeaning) => void,
  ): Promise<string | undefined> {
    const lines = this.appendedLines(state, size, visit);
    for (let step = lines.next(); ; ) {
      if (step.done) return step.value;
      const [length, position] = step.value;
      step = lines.next((await state.handle.read(this.chunk, 0, length, position)).bytesRead);
    }
  }

  private appendedLines(
    state: FollowedLog,
    size: number,
    visit = (meaning: LineMeaning): void => this.apply(state, meaning),
  ): AppendedLines {
    return appendedLines(state, size, this.chunk, (data, end) => {
      if (state.head.length < HEAD_BYTES && state.offset === 0) state.head = Buffer.from(data.subarray(0, HEAD_BYTES));
      forEachHintedLine(data, end, state.live ? FOLLOWED_READER : PRESENCE_READER, visit);
    });
  }

  /**
   * Reads [offset, size) on two threads: the near half here, the far half on a worker, whose net presence is then
   * applied. When the worker cannot run, or the file changed under it, the far half is left to be read here.
   */
  private async parseHalves(state: FollowedLog, size: number): Promise<void> {
    const middle = await lineStartAfter(state.handle, state.offset + Math.floor((size - state.offset) / 2));
    if (middle === undefined || middle >= size) return;
    const far = readPresenceOnWorker(state.handle.fd, middle, size);
    if (this.listener === undefined) {
      // nobody is told: the near half too comes to its net change, which leaves the same session at a fraction of the
      // work a line (a fresh daemon's first read of a busy log)
      const near = createNetPresence();
      await this.readLines(state, middle, (meaning) => near.add(meaning));
      for (const meaning of near.meanings()) this.apply(state, meaning);
    } else await this.readLines(state, middle);
    const net = await far;
    if (net === undefined || state.offset !== middle || state.skipping) return;
    for (const meaning of net.meanings) this.apply(state, meaning);
    state.offset = net.end;
  }

  /**
   * Whether the log was written since another game process than `current` started: it is that later run's (log4j's
   * start rolls an earlier run's log away), as a log last written before a process started is an earlier run's. The
   * mtime tells, because two runs of one server never overlap: an ended run wrote its last line before the later one
   * started. Checked now, not from the last 50 ms: a restart is what this is about.
   */
  private isLaterRunsLog(current: GameProcess, st: fs.Stats): boolean {
    const running = this.game.find({ fresh: true });
    return running !== undefined && gameIdentity(running) !== gameIdentity(current)
      && st.mtimeMs >= this.clock.startedAtMs(running.startTicks);
  }

  /** Whether the file still starts as it did, and a line still ends where parsing stopped: two small reads. */
  private isSameContent(state: FollowedLog): boolean {
    const { probe } = this;
    const { fd } = state.handle;
    // a file now shorter than either read is not the same (the probe would still hold an earlier read's bytes)
    if (state.head.length > 0 && fs.readSync(fd, probe, 0, state.head.length, 0) !== state.head.length) return false;
    if (!probe.subarray(0, state.head.length).equals(state.head)) return false;
    if (state.offset === 0) return true;
    return fs.readSync(fd, probe, 0, 1, state.offset - 1) === 1 && probe[0] === 10;
  }

  /** Applies what one line means. */
  private apply(state: FollowedLog, meaning: LineMeaning): void {
    if (TOLD_TYPES.has(meaning.type)) return this.tell(state, meaning);
    if (applyMeaning(state.session, meaning, (change) => {
      state.viewStale = true;
      this.listener?.(change, state.game);
    })) {
      state.sawStart = true;
      state.viewStale = true;
    }
  }

  /** What a line tells of a player online (or of lag): counted, and told to the listener. */
  private tell(state: FollowedLog, meaning: LineMeaning): void {
    if ('player' in meaning && !state.session.players.has(meaning.player)) return;
    const { told } = this;
    if (meaning.type === 'player.chat') told.chat++;
    else if (meaning.type === 'player.died') told.deaths++;
    else if (meaning.type === 'player.advancement') told.advancements++;
    else if (meaning.type === 'server.lagging') {
      told.overloads++;
      told.ticksBehind += Number(meaning.ticks);
    }
    this.listener?.(meaning, state.game);
  }

  // log4j writes a line with one write: a final line that matches in full counts now, and is read again, whole, once
  // more bytes arrive (the offset stays at its start)
  private settleView(state: FollowedLog, partial: string | undefined, size: number): void {
    const meaning = partial === undefined ? undefined : readLogLine(partial, PRESENCE_TYPES);
    state.size = size;
    if (meaning === undefined && !state.viewStale) return; // the view as it was, and its answer made once
    const view = {
      players: new Set(state.session.players), stopping: state.session.stopping, ready: state.session.ready,
    };
    if (meaning !== undefined && applyMeaning(view, meaning)) state.sawStart = true;
    state.view = view;
    state.viewStale = meaning !== undefined; // a view with the final line in it is not the session's
  }
}

/** GET /api/players/online's answer of a session, made once per view, as bytes. */
const playersReply = (session: Session): Reply => (session.reply ??= asBytes(jsonReply({
  ok: true, online: true, count: session.players.size, players: [...session.players],
})));

/**
 * Applies a presence line's meaning to a session, telling `listener` what changed;
 * returns whether it started a session.
 */
function applyMeaning(session: Session, meaning: LineMeaning, listener?: (change: LineMeaning) => void): boolean {
  switch (meaning.type) {
    case 'session.started':
      if (listener !== undefined) for (const player of session.players) listener({ type: 'player.left', player });
      session.players.clear();
      session.stopping = false;
      session.ready = false;
      return true;
    case 'server.ready':
      session.ready = true;
      return false;
    case 'player.joined': {
      // a player's second login (another location) kicks the first session; a set keeps one entry
      if (session.players.has(meaning.player)) return false;
      const player = ownCopy(meaning.player);
      listener?.({ type: 'player.joined', player });
      session.players.add(player);
      return false;
    }
    case 'player.left':
      if (session.players.delete(meaning.player)) listener?.(meaning);
      return false;
    case 'server.stopping':
      // vanilla logs `Stopping the server`, then `Stopping server`: one shutdown
      if (!session.stopping) listener?.(meaning);
      session.stopping = true;
      return false;
    default:
      return false;
  }
}

/** Applies every complete line of `text` (and a final unterminated one) to `players`. */
export function scanPresence(text: string, players: Set<string> = new Set()): Set<string> {
  return scanSession(text, { ...newSession(), players }).players;
}

function scanSession(text: string, session: Session): Session {
  for (const line of text.split('\n')) {
    const meaning = readLogLine(line, PRESENCE_TYPES);
    if (meaning !== undefined) applyMeaning(session, meaning);
  }
  return session;
}

/**
 * The session at the end of the newest `logs/*.log.gz` archives, read back to its start (bounded in files and
 * bytes) — but only when that start is this process's: its archive's date and its line's time of day, in the
 * host's time zone, no earlier than the process started (docs/formats.md#midnight-roll). An archive rolled when
 * this process started holds an earlier run, and its players were never this game's.
 */
async function sessionFromArchives(logDir: string, startedAtMs: number): Promise<Session> {
  let names: string[];
  try {
    names = fs.readdirSync(logDir).filter((name) => ARCHIVE_NAME.test(name));
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
    const bytes = budget > 0 ? await gunzipFile(path.join(logDir, name), budget) : undefined;
    if (bytes === undefined) return newSession();
    budget -= bytes.length;
    const text = bytes.toString('utf8');
    texts.unshift(text);
    const start = text.split('\n').reverse()
      .find((line) => readLogLine(line, PRESENCE_TYPES)?.type === 'session.started');
    if (start === undefined) continue;
    const [, year, month, day] = ARCHIVE_NAME.exec(name)!;
    const clock = /(\d\d):(\d\d):(\d\d)/.exec(start.slice(0, 64));
    if (clock === null) return newSession();
    const startMs = new Date(
      Number(year), Number(month) - 1, Number(day), Number(clock[1]), Number(clock[2]), Number(clock[3]),
    ).getTime();
    if (startMs < startedAtMs - SESSION_START_SLACK_MS) return newSession();
    const session = newSession();
    for (const archived of texts) scanSession(archived, session);
    return { ...session, stopping: false };
  }
  return newSession(); // no start within the bound: nothing can be said of this process's players
}

/** A gzip file's content, at most `maxBytes` of it decompressed; undefined when it cannot be read or is larger. */
async function gunzipFile(file: string, maxBytes: number): Promise<Buffer | undefined> {
  let opened: { handle: fs.promises.FileHandle; stat: fs.Stats };
  try {
    opened = await openRegularFile(file);
  } catch {
    return undefined;
  }
  let bytes: Buffer;
  try {
    if (opened.stat.size > maxBytes) return undefined;
    bytes = await opened.handle.readFile();
  } catch {
    return undefined;
  } finally {
    await opened.handle.close();
  }
  return new Promise((resolve) =>
    gunzip(bytes, { maxOutputLength: maxBytes }, (err, content) => resolve(err ? undefined : content)));
}

const PLAYERS_ROUTE: RouteAbout = {
  summary: 'Players online',
  description: 'Who is online by the join and leave lines of latest.log; fresh on every request, and never '
    + 'older than the log: while the log is read past 2 s, 503.',
  answers: {
    200: success('The players, or online false.', 'Players', {
      ok: true, online: true, count: 2, players: ['Alex', '.Bramble_Crest'],
    }),
    500: failure('latest.log cannot be read or is not a regular file.', 'latest.log is not a regular file.'),
    503: failure('latest.log is still being read past the 2 s bound (a fresh daemon on a large log, a flood); '
      + 'Retry-After says when to ask again. Or the daemon is busy.', LOG_BEHIND),
  },
};

// ==== The console and serv: POST /api/command, POST /api/server/start|stop|restart ====

const COMMAND_MAX_CHARS = 1_000;
const TMUX_TIMEOUT_MS = 5_000;
const OUTPUT_FIRST_LINE_MS = 3_000;
const OUTPUT_QUIET_MS = 300;
const OUTPUT_WINDOW_MS = 2_000; // after the first line: a stream of lines cannot hold the console
const OUTPUT_MAX_LINES = 100;
const OUTPUT_MAX_BYTES = 64 * 1024;
const OUTPUT_WAITING_MAX = 8;
const LOG_POLL_MS = 25; // while a command's output or a whitelist verdict is awaited
const LOG_READ_MAX_BYTES = 256 * 1024; // of new log text per look: output never needs more
const CONSOLE_UNAVAILABLE = 'The game console is not available: ';
const TOO_MANY_WAITING = 'Too many commands waiting for output; try again.';
const COMMAND_REQUIRED = 'command is required and must be a string.';
const COMMAND_CHARACTERS = 'command must not contain ; & | ` $ ( ) { } [ ] < > \\ or control characters.';
const COMMAND_LENGTH = `command must be 1 to ${COMMAND_MAX_CHARS} characters long.`;
const COMMAND_UNICODE = 'command must be valid Unicode text.';
const OUTPUT_FLAG = 'output must be true or false.';

const SAY_TEXT_MAX_CHARS = 256;
const SAY_FROM_MAX_CHARS = 32;
const TEXT_REQUIRED = 'text is required and must be a string.';
const TEXT_LENGTH = `text must be 1 to ${SAY_TEXT_MAX_CHARS} characters long.`;
const FROM_TYPE = 'from must be a string when given.';
const FROM_LENGTH = `from must be 1 to ${SAY_FROM_MAX_CHARS} characters long.`;
const SAY_UNICODE = 'text and from must be valid Unicode text.';
const FROM_SERVER = 'from must not be Server: players read [Server] as the console itself.';
const FROM_BRACKETS = 'from must not contain [ or ]: players would read two speakers.';
const MESSAGE_SENT = 'Message sent.';

// The spec's fourteen characters, then the C0 controls, DEL and the C1 controls (docs/api.md#post-apicommand)
const FORBIDDEN_IN_COMMAND = /[;&|`$(){}[\]<>\\\x00-\x1f\x7f-\x9f]/;
// The body as the API description shows it, and as validateCommand reads it (a test holds them to each other)
const COMMAND_BODY: Schema = {
  type: 'object', required: ['command'],
  properties: {
    command: {
      type: 'string', minLength: 1, maxLength: COMMAND_MAX_CHARS,
      // a JSON Schema pattern reads as a Unicode regex, where the surrogate range matches a lone surrogate alone
      pattern: `^[^${FORBIDDEN_IN_COMMAND.source.slice(1, -1)}\\uD800-\\uDFFF]*$`,
    },
    output: { type: 'boolean' },
  },
};

const CONTROL_CHARACTERS = /[\x00-\x1f\x7f-\x9f]/g;
// a say field holds something besides white space and control characters, and no lone surrogate
const SAY_FIELD_PATTERN = '^[^\\uD800-\\uDFFF]*[^\\s\\x00-\\x1f\\x7f-\\x9f\\uD800-\\uDFFF][^\\uD800-\\uDFFF]*$';
// and `from` is no name that reads as another speaker: not Server in any letter case, no brackets
const SAY_FROM_PATTERN = '^(?![Ss][Ee][Rr][Vv][Ee][Rr]$)[^\\[\\]\\uD800-\\uDFFF]*'
  + '[^\\s\\[\\]\\x00-\\x1f\\x7f-\\x9f\\uD800-\\uDFFF][^\\[\\]\\uD800-\\uDFFF]*$';
const SAY_BODY: Schema = {
  type: 'object', required: ['text'],
  properties: {
    text: { type: 'string', minLength: 1, maxLength: SAY_TEXT_MAX_CHARS, pattern: SAY_FIELD_PATTERN },
    from: { type: ['string', 'null'], minLength: 1, maxLength: SAY_FROM_MAX_CHARS, pattern: SAY_FROM_PATTERN },
  },
};

/**
 * A field of POST /api/say as players see it: control characters (a chat platform's line breaks) become spaces, the
 * ends are trimmed, and it must hold 1 to `max` characters (code points) then.
 */
function sayField(value: string, max: number, lengthError: string): string {
  if (/\p{Surrogate}/u.test(value)) throw new HttpError(400, SAY_UNICODE);
  const shown = value.replace(CONTROL_CHARACTERS, ' ').trim();
  const length = [...shown].length;
  if (length < 1 || length > max) throw new HttpError(400, lengthError);
  return shown;
}

// Letters of other scripts that look like those of `server` in chat's font (Unicode's confusables, the few that matter)
const LOOKALIKES: Readonly<Record<string, string>> = {
  ѕ: 's', ꜱ: 's', ʂ: 's', е: 'e', ҽ: 'e', ε: 'e', ɛ: 'e', г: 'r', ʀ: 'r', ᴦ: 'r', ɼ: 'r', ν: 'v', ѵ: 'v', ᴠ: 'v',
};

/**
 * Whether a name would read as `Server` in chat: after compatibility forms (fullwidth letters), with invisible
 * characters (format characters, combining marks, spaces) left out and lookalike letters read as the Latin ones.
 */
function readsAsServer(name: string): boolean {
  const seen = name.normalize('NFKD').replace(/[\p{Cf}\p{Mn}\p{Me}\s]/gu, '').toLowerCase();
  return [...seen].map((c) => LOOKALIKES[c] ?? c).join('') === 'server';
}

/** The body of POST /api/say: `text`, and `from` when given (null counts as not given). */
export function validateSay(body: Record<string, unknown>): { text: string; from: string | undefined } {
  if (typeof body.text !== 'string') throw new HttpError(400, TEXT_REQUIRED);
  if (body.from !== undefined && body.from !== null && typeof body.from !== 'string') {
    throw new HttpError(400, FROM_TYPE);
  }
  const text = sayField(body.text, SAY_TEXT_MAX_CHARS, TEXT_LENGTH);
  const from = typeof body.from === 'string' ? sayField(body.from, SAY_FROM_MAX_CHARS, FROM_LENGTH) : undefined;
  // `[Server] x` is what the console's own /say shows, and `[Alex] [Server] x` reads as two speakers
  if (from !== undefined && readsAsServer(from)) throw new HttpError(400, FROM_SERVER);
  if (from !== undefined && /[[\]]/.test(from)) throw new HttpError(400, FROM_BRACKETS);
  return { text, from };
}

// Typed as `\uXXXX` though printable: what would end the string (`"`, `\`), and what the spec keeps out of every typed
// line (docs/api.md#post-apisay)
const TELLRAW_ESCAPED = new Set('"\\;&|`$()<>');

/**
 * The console line of POST /api/say (docs/formats.md#tellraw): `tellraw @a {"text":"[from] text"}`, one compound with a
 * quoted key and a string, which JSON (1.8 to 1.21.4, lenient and strict Gson) and SNBT (1.21.5 on) both read the same.
 * Only printable ASCII is typed: every other UTF-16 unit, and the characters above, as `\uXXXX`, the one escape all
 * of them read alike (SNBT has no `\/`, strict Gson no `\x`). Players see the text as it was, but for two things
 * text cannot show safely: `§` (which every client reads as a formatting code) is shown as `⸹`, and `${` gets a
 * zero-width space (log4j before 2.15, in clients of 1.8 to 1.18, looks up `${…}` in the chat it logs).
 */
export function tellrawLine(from: string | undefined, text: string): string {
  const shown = `[${from ?? 'Server'}] ${text}`.replace(/§/g, '\u2E39').replace(/\$\{/g, '$\u200B{');
  let escaped = '';
  for (let i = 0; i < shown.length; i++) {
    const unit = shown.charCodeAt(i);
    escaped += unit >= 0x20 && unit <= 0x7e && !TELLRAW_ESCAPED.has(shown[i])
      ? shown[i]
      : `\\u${unit.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  // at most 3,481 characters: under the 4,095 a terminal's line discipline takes in one line
  return `tellraw @a {"text":"${escaped}"}`;
}

/** The console command as sent: outer spaces trimmed, 1..1000 characters, no forbidden character. */
export function validateCommand(value: unknown): string {
  if (typeof value !== 'string') throw new HttpError(400, COMMAND_REQUIRED);
  const command = value.replace(/^ +| +$/g, '');
  // a lone UTF-16 surrogate (`\ud800` in JSON) has no UTF-8 form: it would reach the console as U+FFFD
  if (/\p{Surrogate}/u.test(command)) throw new HttpError(400, COMMAND_UNICODE);
  if (FORBIDDEN_IN_COMMAND.test(command)) throw new HttpError(400, COMMAND_CHARACTERS);
  const length = [...command].length; // in characters (code points), as the description's maxLength counts
  if (length < 1 || length > COMMAND_MAX_CHARS) throw new HttpError(400, COMMAND_LENGTH);
  return command;
}

/** The request body as a JSON object, read once and bounded; its Content-Type is not looked at (curl -d). */
async function readJsonObject(request: ApiRequest): Promise<Record<string, unknown>> {
  request.allowBody();
  const bytes = await readBody(request.req);
  let value: unknown;
  try {
    // strict UTF-8: a lenient decode would turn bad bytes into U+FFFD and type that into the console
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, NOT_A_JSON_OBJECT);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, NOT_A_JSON_OBJECT);
  return value as Record<string, unknown>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  // Connection: close, or clients may see a reset instead of the 413 while they are still sending
  const tooLarge = (): HttpError => new HttpError(413, BODY_TOO_LARGE, { Connection: 'close' });
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

interface GameConsole {
  /** POST /api/command */
  command(request: ApiRequest): Promise<Reply>;
  /** POST /api/say */
  say(request: ApiRequest): Promise<Reply>;
  /**
   * Types `command`, in its turn, then `watch` reads the log from where it ended when the command was typed: no other
   * command is typed until it returns, so no other command's reply can fall into what it reads (a whitelist verdict).
   */
  sendAndWatch<T>(command: string, watch: (log: LogReader, mark: LogMark) => Promise<T>): Promise<T>;
}

interface Pane {
  id: string; // %N: unique on the tmux server, whichever window or pane is active
  tty: string;
  inMode: boolean;
  mode: string;
  synchronized: boolean;
  dead: boolean;
  pid: number;
}

// `|`, not a tab: without a UTF-8 locale tmux prints control characters as `_`; no field can hold a `|`
const PANE_FORMAT = [
  '#{pane_id}', '#{pane_tty}', '#{pane_in_mode}', '#{pane_mode}', '#{synchronize-panes}', '#{pane_dead}', '#{pane_pid}',
].join('|');

/**
 * The console (docs/api.md#console-delivery): one command at a time, each with its window (two callers would
 * interleave their keys, and one's reply would be read as another's), typed literally into the pane whose terminal is
 * the game's own, by its pane id, and only when nothing but the game would read it: a shell in the pane would run it
 * as a command line.
 */
function createGameConsole(config: Readonly<Config>, game: GameFinder, presence: Presence): GameConsole {
  let stopSentTo = ''; // the game process this daemon typed `stop` into

  const tmux = (args: readonly string[]): Promise<string> => {
    const socket = config.tmuxSocket === undefined ? [] : ['-S', config.tmuxSocket];
    return new Promise((resolve, reject) => {
      execFile(
        'tmux',
        [...socket, ...args],
        { timeout: TMUX_TIMEOUT_MS, maxBuffer: 64 * 1024, env: config.childEnv },
        (err, stdout) => err ? reject(err) : resolve(stdout),
      );
    });
  };
  const unavailable = (why: string): HttpError => new HttpError(503, `${CONSOLE_UNAVAILABLE}${why}`);

  const deliver = async (command: string): Promise<void> => {
    const found = game.find({ fresh: true });
    if (found === undefined) throw new HttpError(409, GAME_NOT_RUNNING);
    // while it shuts down the game is still the pane's process but reads no more: a line typed now waits in the
    // terminal for whatever reads it next. Only what is already known counts: delivery never waits for the log.
    if (stopSentTo === gameIdentity(found) || presence.isKnownStopping(found)) {
      throw unavailable('the game server is stopping.');
    }
    let listing: string;
    try {
      // `=name:` with its colon: tmux 3.3 resolves `=name` alone to another session whose name begins with it
      listing = await tmux(['list-panes', '-s', '-t', `=${config.tmuxSession}:`, '-F', PANE_FORMAT]);
    } catch (err) {
      log(`console check failed: ${describeError(err)}`);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw unavailable('tmux is not installed.');
      throw unavailable(`the tmux session "${config.tmuxSession}" was not found.`);
    }
    const stat = readProcStat(found.pid);
    if (stat === undefined) throw new HttpError(409, GAME_NOT_RUNNING);
    const pane = parsePaneList(listing).find((p) => ttyNumber(p.tty) === stat.ttyNr && stat.ttyNr !== 0);
    if (pane === undefined) {
      throw unavailable(`the game server does not run in a pane of the tmux session "${config.tmuxSession}".`);
    }
    if (pane.dead) throw unavailable('its tmux pane is dead.');
    // copy mode takes the keys as its own commands: a `stop` would be swallowed, and `q` typed by us would leave it
    if (pane.inMode) {
      throw unavailable(`its tmux pane is in ${pane.mode || 'a mode'}; leave that mode (press q in the pane) `
        + 'and try again.');
    }
    if (pane.synchronized) {
      throw unavailable('synchronize-panes is on in its tmux window, so the keys would also reach its other panes; '
        + 'turn it off with: tmux set-window-option synchronize-panes off.');
    }
    if (config.consoleShellPane !== 'allow' && isInteractiveShell(readCmdline(pane.pid))) {
      throw unavailable('the game server was typed into an interactive shell in its tmux pane, which would read the '
        + 'command if the game exited first; start the game as the pane\'s command '
        + `(tmux new-session -d -s ${config.tmuxSession} 'java …') or set CONSOLE_SHELL_PANE=allow.`);
    }
    // last, so that the moment between this check and the keys is as short as it can be: the game's process group
    // must be its terminal's foreground group (a suspended game or a background job is not)
    const now = readProcStat(found.pid);
    if (now === undefined || now.startTicks !== found.startTicks) throw new HttpError(409, GAME_NOT_RUNNING);
    if (now.tpgid !== now.pgrp) throw unavailable('the game server is not the foreground process of its tmux pane.');
    // text and Enter in one tmux command sequence (`;`), so no other client's keys come between them
    await tmux(['send-keys', '-t', pane.id, '-l', '--', command, ';', 'send-keys', '-t', pane.id, 'Enter']);
    // vanilla's stop takes no argument (`stop now` is refused and the game runs on);
    // any other shutdown shows in its log
    if (command === 'stop' || command === '/stop') stopSentTo = gameIdentity(found);
  };

  // docs/api.md#command-output: one command at a time, each with its window: the next is typed once the window
  // before it closed, so what a window reads holds no reply to a command typed during it
  const turns = createSerialQueue();
  const latestLog = createLogReader(latestLogPath(config));
  let outputWaiting = 0;
  const sendAndWatch = <T>(command: string, watch: (log: LogReader, mark: LogMark) => Promise<T>): Promise<T> =>
    turns(async () => {
      const mark = latestLog.mark();
      await deliver(command);
      return watch(latestLog, mark);
    });

  return {
    async command(request) {
      const body = await readJsonObject(request);
      const command = validateCommand(body.command);
      if (body.output !== undefined && typeof body.output !== 'boolean') throw new HttpError(400, OUTPUT_FLAG);
      const message = `Command sent: ${command}`;
      if (body.output !== true) {
        await turns(() => deliver(command));
        return messageReply(message);
      }
      // the window open now does not count: at most 8 wait behind it
      if (outputWaiting >= OUTPUT_WAITING_MAX) throw new HttpError(429, TOO_MANY_WAITING);
      outputWaiting++;
      const output = await turns(async () => {
        outputWaiting--;
        const mark = latestLog.mark();
        await deliver(command);
        return collectOutput(latestLog, mark);
      });
      return { status: 200, body: JSON.stringify({ ok: true, message, output }), outcome: message };
    },
    async say(request) {
      const { text, from } = validateSay(await readJsonObject(request));
      // tellraw logs nothing when it reaches players (and `No player was found` when nobody is online): no window
      await turns(() => deliver(tellrawLine(from, text)));
      return messageReply(MESSAGE_SENT);
    },
    sendAndWatch,
  };
}

/**
 * The game's reply to a command (docs/api.md#command-output): the server thread's lines logged after the command was
 * sent, nothing a player said or did, addresses masked, as message texts; until 300 ms pass without a new one once one
 * came, 2 s after the first whatever still arrives, or 3 s when none comes; at most 100 lines and 64 KiB.
 */
async function collectOutput(log: LogReader, mark: LogMark): Promise<string[]> {
  const output: string[] = [];
  let bytes = 0;
  const sentAtMs = performance.now();
  let firstLineAtMs = 0;
  let lastLineAtMs = 0;
  for (;;) {
    const now = performance.now();
    if (
      output.length === 0
        ? now - sentAtMs >= OUTPUT_FIRST_LINE_MS
        : now - lastLineAtMs >= OUTPUT_QUIET_MS || now - firstLineAtMs >= OUTPUT_WINDOW_MS
    ) {
      return output;
    }
    await delay(LOG_POLL_MS);
    for (const raw of await log.linesSince(mark)) {
      const line = parseLogLine(raw);
      if (line === null || !isConsoleReply(line)) continue;
      const text = maskAddresses(line.message);
      bytes += Buffer.byteLength(text);
      if (output.length >= OUTPUT_MAX_LINES || bytes > OUTPUT_MAX_BYTES) return output;
      output.push(text);
      lastLineAtMs = performance.now();
      if (output.length === 1) firstLineAtMs = lastLineAtMs;
    }
  }
}

interface LogMark {
  dev: number;
  ino: number;
  offset: number; // the end of the last complete line taken
}

interface LogReader {
  /** Where latest.log ends now: what follows is written after this moment. */
  mark(): LogMark;
  /** The complete lines written since `mark`, which moves past them; a log rolled meanwhile is read from its start. */
  linesSince(mark: LogMark): Promise<string[]>;
}

function createLogReader(file: string): LogReader {
  return {
    mark() {
      const st = fs.statSync(file, { throwIfNoEntry: false });
      return st?.isFile() ? { dev: st.dev, ino: st.ino, offset: st.size } : { dev: -1, ino: -1, offset: 0 };
    },
    async linesSince(mark) {
      let opened: { handle: fs.promises.FileHandle; stat: fs.Stats };
      try {
        opened = await openRegularFile(file);
      } catch {
        return []; // no log (yet): no output
      }
      const { handle, stat } = opened;
      try {
        if (stat.dev !== mark.dev || stat.ino !== mark.ino || stat.size < mark.offset) {
          Object.assign(mark, { dev: stat.dev, ino: stat.ino, offset: 0 });
        }
        const length = Math.min(stat.size - mark.offset, LOG_READ_MAX_BYTES);
        if (length <= 0) return [];
        const buffer = Buffer.allocUnsafe(length);
        const { bytesRead } = await handle.read(buffer, 0, length, mark.offset);
        const end = buffer.lastIndexOf(10, bytesRead - 1);
        if (end === -1) {
          if (bytesRead === LOG_READ_MAX_BYTES) mark.offset += bytesRead; // one enormous line: no reply text
          return [];
        }
        mark.offset += end + 1;
        return buffer.toString('utf8', 0, end).split('\n');
      } finally {
        await handle.close();
      }
    },
  };
}

export function parsePaneList(listing: string): Pane[] {
  return listing.split('\n').filter((line) => line !== '').map((line) => {
    const [id, tty, inMode, mode, synchronized, dead, pid] = line.split('|');
    return {
      id, tty, inMode: inMode === '1', mode, synchronized: synchronized === '1', dead: dead === '1', pid: Number(pid),
    };
  });
}

/** The tty_nr /proc/PID/stat gives for a terminal device: major in bits 8-15 (and up), minor split around it. */
function ttyNumber(ttyPath: string): number | undefined {
  const st = ttyPath === '' ? undefined : fs.statSync(ttyPath, { throwIfNoEntry: false });
  if (st === undefined || !st.isCharacterDevice()) return undefined;
  // dev_t as glibc packs it
  const major = ((st.rdev >> 8) & 0xfff) | (Math.floor(st.rdev / 2 ** 32) & ~0xfff);
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & ~0xff);
  return (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12);
}

function readCmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      .filter((arg, i, all) => arg !== '' || i < all.length - 1);
  } catch {
    return [];
  }
}

const SHELLS = new Set([
  'sh', 'bash', 'dash', 'ash', 'zsh', 'ksh', 'mksh', 'pdksh', 'oksh', 'yash', 'fish', 'tcsh', 'csh', 'busybox',
  'elvish', 'nu',
]);
// options that take the next argument: it is not a script to run
const SHELL_OPTIONS_WITH_ARGUMENT = new Set([
  '-o', '+o', '-O', '+O', '--rcfile', '--init-file', '--init-command', '-C',
]);

/**
 * Whether a command line is a shell that reads its commands from the terminal: no `-c` and no script to run.
 * `sh -c 'java …'` and `bash start.sh` read nothing from the terminal once java exits; `bash`, `-bash`, `bash -i` do.
 */
export function isInteractiveShell(argv: readonly string[]): boolean {
  if (argv.length === 0) return false;
  const name = path.basename(argv[0]).replace(/^-/, '');
  if (!SHELLS.has(name)) return false;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return i + 1 >= argv.length; // what follows `--` is a script
    if (arg === '--command') return false;
    if (SHELL_OPTIONS_WITH_ARGUMENT.has(arg)) {
      i++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(arg)) {
      if (arg[0] === '-' && arg.includes('i')) return true;
      if (arg[0] === '-' && arg.includes('c')) return false;
      continue;
    }
    if (arg.startsWith('--')) continue; // --norc, --login, --noprofile …
    return false; // a script operand
  }
  return true;
}

const CONSOLE_ANSWERS: Record<number, Answer> = {
  409: failure('The game server is not running.', GAME_NOT_RUNNING),
  503: failure(
    'Writes are disabled, the daemon is busy, or the console is not available '
      + '(the reason and what to do follow the prefix).',
    `${CONSOLE_UNAVAILABLE}the tmux session "gameserver" was not found.`,
  ),
};

const COMMAND_ROUTE: RouteAbout = {
  summary: 'Type a command into the game console',
  description: 'The command, trimmed, goes literally to the game\'s tmux pane, then Enter. With "output": true the '
    + 'answer waits for the server-thread lines the game logs in reply (no chat, joins or logins; addresses masked).',
  body: COMMAND_BODY,
  answers: {
    200: success('Delivered; with output, the reply lines.', 'CommandSent', {
      ok: true, message: 'Command sent: list', output: ['There are 1 of a max of 20 players online: Alex'],
    }),
    400: failure('`command` is missing, not a string, too long, or holds a forbidden or control character; '
      + '`output` is not a boolean; or the body is not a JSON object.', COMMAND_CHARACTERS),
    429: failure('Eight commands are already waiting for their output.', TOO_MANY_WAITING),
    ...BODY_ANSWERS, ...WRITE_ANSWERS, ...CONSOLE_ANSWERS,
  },
};

const SAY_ROUTE: RouteAbout = {
  summary: 'Show a line of chat to every player',
  description: 'Every player sees `[from] text` (`[Server] text` without from; no other sender may be Server or hold '
    + 'brackets), sent with tellraw: the text is only '
    + 'ever text, never a selector, a component or a command. Line breaks and other control characters become '
    + 'spaces; `§` shows as `⸹`. The line typed into the console is printable ASCII.',
  body: SAY_BODY,
  answers: {
    200: success('Delivered to the console.', 'Message', { ok: true, message: MESSAGE_SENT }),
    400: failure('`text` is missing or not 1 to 256 characters, `from` is not 1 to 32 characters, reads as Server '
      + '(any letter case, invisible characters, lookalike letters) or holds `[` or `]`, either holds a lone '
      + 'surrogate, or the body is not a JSON object.',
    TEXT_LENGTH),
    ...BODY_ANSWERS, ...WRITE_ANSWERS, ...CONSOLE_ANSWERS,
  },
};

// ---- serv ----

interface Serv {
  /** POST /api/server/start, stop, restart */
  run(verb: 'start' | 'stop' | 'restart'): Promise<Reply>;
}

const SERV_MESSAGES = {
  start: 'Server start command issued.',
  stop: 'Server stop command issued.',
  restart: 'Server restart command issued.',
};

function createServ(config: Readonly<Config>): Serv {
  return {
    async run(verb) {
      await launchServ(config, [verb]);
      return messageReply(SERV_MESSAGES[verb]);
    },
  };
}

/** Starts `serv <args>` in its own process group with our stdout and stderr; resolves once it exists. */
function launchServ(
  config: Readonly<Config>,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): Promise<ChildProcess> {
  const what = `serv ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(config.servBin, args, {
        detached: true, // own process group: a Ctrl-C to us or our exit does not reach it
        stdio: ['ignore', 'inherit', 'inherit'], // straight to the journal: a pipe of ours would break when we restart
        env: { ...config.childEnv, ...extraEnv },
      });
    } catch (err) {
      log(`${what} could not be started: ${describeError(err)}`);
      return reject(new HttpError(500, INTERNAL_ERROR));
    }
    child.once('error', (err) => {
      log(`${what} could not be started: ${describeError(err)}`);
      reject(new HttpError(500, INTERNAL_ERROR));
    });
    child.once('spawn', () => {
      child.unref();
      child.once('exit', (code, signal) => log(`${what} (pid ${child.pid}) exited with ${signal ?? `status ${code}`}`));
      resolve(child);
    });
  });
}

const servRoute = (verb: 'start' | 'stop' | 'restart'): RouteAbout => ({
  summary: `Issue \`serv ${verb}\``,
  description: `Starts \`serv ${verb}\` in its own process group and answers once it runs: `
    + 'poll GET /api/status for the result.',
  answers: {
    200: success('The command was issued.', 'Message', { ok: true, message: SERV_MESSAGES[verb] }),
    ...WRITE_ANSWERS,
  },
});
const SERV_ROUTES = { start: servRoute('start'), stop: servRoute('stop'), restart: servRoute('restart') };

// ==== The whitelist and profiles: GET /api/players/whitelist, POST /api/whitelist/add and /remove ====

const VERDICT_MS = 5_000; // of a whitelist edit or a moderation command
const REFUSAL_GRACE_MS = 500; // for a reply naming the player after an unnamed refusal (another command's)
const LOOKUP_IDLE_TIMEOUT_MS = 5_000;
const LOOKUP_DEADLINE_MS = 5_000; // the whole lookup: a server that drips bytes never holds an edit longer
const LOOKUP_MAX_BYTES = 64 * 1024;
const PLAYER_REQUIRED = 'player is required and must be a string.';
const PLAYER_PATTERN = 'player must be 1 to 16 characters from A-Z, a-z, 0-9 and _.';
const LOOKUP_FAILED = 'The profile lookup failed; nothing was changed.';
const DASHED_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

// The body as the API description shows it, and as validatePlayer reads it
const PLAYER_BODY = {
  type: 'object', required: ['player'],
  properties: { player: { type: 'string', pattern: '^[A-Za-z0-9_]{1,16}$' } },
} as const;
const PLAYER_NAME = new RegExp(PLAYER_BODY.properties.player.pattern);

/** A player name as the spec allows it: `[a-zA-Z0-9_]{1,16}`. */
export function validatePlayer(value: unknown): string {
  if (typeof value !== 'string') throw new HttpError(400, PLAYER_REQUIRED);
  if (!PLAYER_NAME.test(value)) throw new HttpError(400, PLAYER_PATTERN);
  return value;
}

/** An entry of one of the game's player lists (whitelist.json, banned-players.json, ops.json) as stored. */
interface PlayerEntry {
  uuid?: unknown;
  name?: unknown;
  [field: string]: unknown; // a ban's dates, source and reason; an operator's level
}

const whitelistPath = (config: Readonly<Config>): string => path.join(config.serverDir, 'whitelist.json');

/** A player list's entries, exactly as stored: 404 when missing, 500 when unreadable or not an array of entries. */
function readEntries(file: string): PlayerEntry[] {
  const entries = readJsonFile(file);
  if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'object' && e !== null && !Array.isArray(e))) {
    throw new HttpError(500, `${path.basename(file)} is not a JSON array of entries.`);
  }
  return entries as PlayerEntry[];
}

const readWhitelist = (config: Readonly<Config>): PlayerEntry[] => readEntries(whitelistPath(config));

/** Gson's layout, as the server writes its lists: two-space indent, no final line break. */
function writeEntries(file: string, entries: PlayerEntry[]): void {
  try {
    writeFileAtomic(file, JSON.stringify(entries, null, 2));
  } catch (err) {
    log(`writing ${file} failed: ${describeError(err)}`);
    throw new HttpError(500, `${path.basename(file)} could not be written.`);
  }
}

const isNamed = (player: string) => (e: PlayerEntry): boolean =>
  typeof e.name === 'string' && e.name.toLowerCase() === player.toLowerCase();

/**
 * How the game words its verdict on one console command about a player (docs/formats.md#console-replies), and what
 * its own state says meanwhile. A reply of `done`, `namedUnchanged` or `namedRefused` names the player; `unchanged`
 * and `refused` name nobody, so they count only when the state agrees.
 */
interface VerdictRules {
  player: string;
  done: LineMeaning['type'];
  namedUnchanged?: LineMeaning['type'];
  namedRefused?: LineMeaning['type'];
  unchanged?: LineMeaning['type'];
  refused: LineMeaning['type'];
  leaves?: boolean; // done only once the player's leave lines came too (a kick), in either order
  /** What the game's state tells now; undefined while it cannot tell (a half-written file). */
  state(): GameState | undefined | Promise<GameState | undefined>;
  answers: { done(): Reply; unchanged(): Reply; refused(): Reply; unconfirmed(): Reply };
}

interface GameState {
  done: boolean; // shows the change
  unchanged: boolean; // agrees with an unnamed "nothing changed"
  refusal: boolean; // agrees with an unnamed refusal
}

/**
 * docs/api.md#confirmed-whitelist-edits: the game's verdict, from its state or its reply in the log. A reply that names
 * no player may be the late reply to a command typed just before this one, so it counts only when the state agrees;
 * a refusal waits a moment for a reply that names the player or a change of the state.
 */
async function awaitVerdict(log: LogReader, mark: LogMark, rules: VerdictRules): Promise<Reply> {
  const { player, answers } = rules;
  const kinds = new Set<LineMeaning['type']>([rules.done, rules.refused]);
  for (const kind of [rules.namedUnchanged, rules.namedRefused, rules.unchanged]) {
    if (kind !== undefined) kinds.add(kind);
  }
  if (rules.leaves) kinds.add('player.left');
  let sawDone = false;
  let sawLeave = false;
  let sawUnchanged = false;
  let refusedAtMs: number | undefined;
  const deadline = performance.now() + VERDICT_MS;
  while (performance.now() < deadline) {
    await delay(LOG_POLL_MS * 2);
    for (const raw of await log.linesSince(mark)) {
      // only the game's own replies (LINE_KINDS): a chat line or a line a plugin printed raw can read like one
      const said = readLogLine(raw, kinds);
      if (said === undefined) continue;
      const ours = 'player' in said && said.player.toLowerCase() === player.toLowerCase();
      if (ours && said.type === rules.done) sawDone = true;
      if (ours && said.type === 'player.left') sawLeave = true;
      if (ours && said.type === rules.namedUnchanged) return answers.unchanged();
      if (ours && said.type === rules.namedRefused) return answers.refused();
      if (said.type === rules.unchanged) sawUnchanged = true;
      if (said.type === rules.refused) refusedAtMs ??= performance.now();
    }
    if (sawDone && (sawLeave || !rules.leaves)) return answers.done();
    const state = await rules.state();
    if (state === undefined) continue;
    if (state.done) return answers.done();
    if (sawUnchanged && state.unchanged) return answers.unchanged();
    if (refusedAtMs !== undefined && performance.now() - refusedAtMs >= REFUSAL_GRACE_MS && state.refusal) {
      return answers.refused();
    }
  }
  return answers.unconfirmed();
}

/**
 * What a player list tells of a change that leaves the player in it (`holds`) or out: the name, in any letter case,
 * shows the change; "nothing changed" needs the entry the game would match, by the UUID it would give the name where
 * that is known here, else by name. The game rewrites its files in place: a half-written one tells nothing yet.
 */
function listState(
  config: Readonly<Config>,
  read: () => PlayerEntry[],
  player: string,
  holds: boolean,
): () => GameState | undefined {
  const uuid = localUuid(config, player);
  return () => {
    let entries: PlayerEntry[];
    try {
      entries = read();
    } catch {
      return undefined;
    }
    const held = entries.some((e) =>
      (uuid !== undefined && typeof e.uuid === 'string' ? e.uuid.toLowerCase() === uuid : isNamed(player)(e)));
    return { done: entries.some(isNamed(player)) === holds, unchanged: held === holds, refusal: true };
  };
}

interface Whitelist {
  /** GET /api/players/whitelist */
  list(): Promise<Reply>;
  /** POST /api/whitelist/add and /remove */
  edit(action: 'add' | 'remove', request: ApiRequest): Promise<Reply>;
}

/**
 * docs/api.md#post-apiwhitelistadd-and-remove: a running server owns whitelist.json and would overwrite a direct
 * edit, so it gets the console command; a stopped one has its file edited atomically. One edit at a time: two
 * read-modify-write cycles would lose one of the changes.
 */
function createWhitelist(
  config: Readonly<Config>,
  game: GameFinder,
  gameConsole: GameConsole,
  shared: SharedAnswers,
): Whitelist {
  const edits = createSerialQueue();

  const edit = async (action: 'add' | 'remove', player: string): Promise<Reply> => {
    const confirmed = (): Reply =>
      messageReply(action === 'add' ? `${player} added to whitelist.` : `${player} removed from whitelist.`);
    const unchanged = (): Reply =>
      messageReply(action === 'add' ? `${player} is already on the whitelist.` : `${player} is not on the whitelist.`);
    const running = game.find({ fresh: true });
    let entries: PlayerEntry[] = [];
    try {
      entries = readWhitelist(config);
    } catch (err) {
      // a running server creates the file itself; a corrupt file is never overwritten
      if (!(err instanceof HttpError && err.status === 404 && running !== undefined)) throw err;
    }
    if (entries.some(isNamed(player)) === (action === 'add')) return unchanged();
    if (running !== undefined) {
      return gameConsole.sendAndWatch(`whitelist ${action} ${player}`, (log, mark) => awaitVerdict(log, mark, {
        player,
        ...(action === 'add'
          ? { done: 'whitelist.added', namedRefused: 'whitelist.not-added', unchanged: 'whitelist.already-listed' }
          : { done: 'whitelist.removed', namedUnchanged: 'whitelist.not-removed', unchanged: 'whitelist.not-listed' }),
        refused: 'player.unknown',
        state: listState(config, () => readWhitelist(config), player, action === 'add'),
        answers: {
          done: confirmed, unchanged,
          refused: () => errorReply(404, `${player} is not a Minecraft account.`),
          unconfirmed: () =>
            messageReply(`${player}: whitelist ${action} sent; the game server has not confirmed it yet.`, 202),
        },
      }));
    } else if (action === 'remove') {
      writeEntries(whitelistPath(config), entries.filter((e) => !isNamed(player)(e)));
    } else {
      const profile = await resolveProfile(config, player);
      writeEntries(whitelistPath(config), [...entries, { uuid: profile.uuid, name: profile.name }]);
    }
    return confirmed();
  };

  return {
    list: () => shared('whitelist', async () => {
      const whitelist = readWhitelist(config);
      return jsonReply({ ok: true, count: whitelist.length, whitelist });
    }),
    async edit(action, request) {
      const player = validatePlayer((await readJsonObject(request)).player);
      return edits(() => edit(action, player));
    },
  };
}

// ---- Profiles ----

interface Profile {
  name: string;
  uuid: string;
}

/** One setting of server.properties as the game starts with it; undefined (its default) when unset or unreadable. */
function readGameSetting(config: Readonly<Config>, key: string): string | undefined {
  try {
    return readServerProperties(config)[key];
  } catch {
    return undefined;
  }
}

function isOnlineMode(config: Readonly<Config>): boolean {
  // Minecraft reads the flag with Boolean.valueOf: any value but `true` (in any case, no blanks) is false; unset,
  // its default is online mode
  const onlineMode = readGameSetting(config, 'online-mode');
  return onlineMode === undefined || onlineMode.toLowerCase() === 'true';
}

/** The UUID and name case to write for a player, from the same sources the server would use. */
async function resolveProfile(config: Readonly<Config>, player: string): Promise<Profile> {
  if (!isOnlineMode(config)) return { name: player, uuid: offlineUuid(player) };
  const cached = findInUserCache(config, player);
  if (cached !== undefined) return cached;
  return lookupProfile(config, player);
}

/** The UUID the game would give a name without asking the network (usercache.json, or the offline rule), if any. */
function localUuid(config: Readonly<Config>, player: string): string | undefined {
  const cached = findInUserCache(config, player);
  if (cached !== undefined) return cached.uuid;
  return isOnlineMode(config) ? undefined : offlineUuid(player);
}

function findInUserCache(config: Readonly<Config>, player: string): Profile | undefined {
  let cache: unknown;
  try {
    cache = readJsonFile(path.join(config.serverDir, 'usercache.json'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(cache)) return undefined;
  // an entry the server itself would reject (an undashed or malformed UUID) is not used
  const hit = cache.find((e) =>
    typeof e?.name === 'string' && e.name.toLowerCase() === player.toLowerCase()
    && typeof e.uuid === 'string' && DASHED_UUID.test(e.uuid));
  return hit === undefined ? undefined : { name: hit.name, uuid: hit.uuid.toLowerCase() };
}

/** Asks PROFILE_LOOKUP_URL (Mojang's API by default) for a name; 502 when unknown or unreachable. */
function lookupProfile(config: Readonly<Config>, player: string): Promise<Profile> {
  const url = new URL(config.profileLookupUrl.href + encodeURIComponent(player));
  const failed = (why: string): HttpError => {
    log(`profile lookup for ${player} failed: ${why}`);
    return new HttpError(502, LOOKUP_FAILED);
  };
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { timeout: LOOKUP_IDLE_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > LOOKUP_MAX_BYTES) request.destroy(new Error('answer too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(deadline);
          // the service answered 204 for unknown names until 2023 and 404 since
          if (res.statusCode === 204 || res.statusCode === 404) {
            return reject(new HttpError(502, `No Minecraft account is named ${player}.`));
          }
          if (res.statusCode !== 200) return reject(failed(`status ${res.statusCode}`));
          let answer: { id?: unknown; name?: unknown };
          try {
            answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(failed('the answer is not JSON'));
          }
          const hex = typeof answer?.id === 'string' ? answer.id.replace(/-/g, '') : '';
          if (!/^[0-9a-fA-F]{32}$/.test(hex) || typeof answer.name !== 'string' || !PLAYER_NAME.test(answer.name)) {
            return reject(failed('the answer has no valid id and name'));
          }
          resolve({ name: answer.name, uuid: dashUuid(hex) });
        });
        res.on('error', (err) => reject(failed(describeError(err))));
      },
    );
    // the idle timeout alone lets a server that sends a byte every few seconds hold the edit for ever
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${LOOKUP_DEADLINE_MS / 1000} s`)),
      LOOKUP_DEADLINE_MS,
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (err) => {
      clearTimeout(deadline);
      reject(failed(describeError(err)));
    });
    request.end();
  });
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
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    .toLowerCase();
}

const WHITELIST_ROUTE: RouteAbout = {
  summary: 'The whitelist as stored',
  description: 'The entries of whitelist.json exactly as stored. At most 100 ms old.',
  answers: {
    200: success('The entries.', 'Whitelist', {
      ok: true, count: 1, whitelist: [{ uuid: 'b50ad385-829d-3141-a216-7e7d7539ba7f', name: 'Notch' }],
    }),
    ...missingOrUnreadable('whitelist.json'), 503: BUSY_ANSWER,
  },
};

const editRoute = (action: 'add' | 'remove'): RouteAbout => ({
  summary: action === 'add' ? 'Add a player to the whitelist' : 'Remove a player from the whitelist',
  description: `While the game runs, \`whitelist ${action} <player>\` goes to its console and the answer waits `
    + 'up to 5 s for the game\'s verdict; while it is stopped, whitelist.json is edited atomically (a new entry '
    + 'takes its UUID from the offline rule, usercache.json or the profile lookup).',
  body: PLAYER_BODY,
  answers: {
    200: success('Done, or nothing to do (already listed / not listed).', 'Message', {
      ok: true, message: action === 'add' ? 'Alex added to whitelist.' : 'Alex removed from whitelist.',
    }),
    202: success('Sent to the console; the game has not confirmed it within 5 s.', 'Message', {
      ok: true, message: `Alex: whitelist ${action} sent; the game server has not confirmed it yet.`,
    }),
    400: failure(
      '`player` is missing or not 1 to 16 characters from A-Z, a-z, 0-9 and _, or the body is not a JSON object.',
      PLAYER_PATTERN,
    ),
    404: failure(
      'No such Minecraft account (the game\'s verdict), or whitelist.json is missing while the game is stopped.',
      'Alex is not a Minecraft account.',
    ),
    502: failure('The profile lookup failed or knows no such name; nothing was changed.', LOOKUP_FAILED),
    ...BODY_ANSWERS, ...WRITE_ANSWERS, ...CONSOLE_ANSWERS,
  },
});
const EDIT_ROUTES = { add: editRoute('add'), remove: editRoute('remove') };

// ==== Moderation: GET /api/players/banned and /ops, POST /api/players/kick|ban|pardon|op|deop ====

const REASON_MAX_CHARS = 256;
const REASON_TYPE = 'reason must be a string when given.';
const REASON_LENGTH = `reason must be 1 to ${REASON_MAX_CHARS} characters long.`;
const REASON_CHARACTERS = 'reason must not contain ; & | ` $ ( ) { } [ ] < > \\ or control characters.';
const REASON_UNICODE = 'reason must be valid Unicode text.';
const REASON_TEXT = 'reason must be text: no target selector (@a, @e, @p, @r, @s), no § and no invisible format '
  + 'characters.';
// the game reads a reason as a message: a selector in it is resolved to every name it matches (thousands, for @e), `§`
// formats the kick screen, and bidirectional overrides reorder how it reads
const REASON_NOT_TEXT = /@[aeprs]|§|\p{Cf}/u;
const DEFAULT_OP_LEVEL = 4; // op-permission-level's default
const DEFAULT_BAN_REASON = 'Banned by an operator.'; // what the game writes for a ban without a reason

type ModerationAction = 'kick' | 'ban' | 'pardon' | 'op' | 'deop';
type ModerationList = 'banned' | 'ops';

const LIST_FILES: Record<ModerationList, string> = { banned: 'banned-players.json', ops: 'ops.json' };
const LIST_EVENTS: Record<ModerationList, ListEventType> = { banned: 'bans.changed', ops: 'ops.changed' };

// The body as the API description shows it, and as validateReason reads it (a test holds them to each other)
const REASON_BODY: Schema = {
  type: 'object', required: ['player'],
  properties: {
    player: PLAYER_BODY.properties.player,
    reason: {
      type: 'string', minLength: 1, maxLength: REASON_MAX_CHARS,
      pattern: `^(?![\\s\\S]*(?:${REASON_NOT_TEXT.source}))(?=[\\s\\S]*\\S)`
        + `[^${FORBIDDEN_IN_COMMAND.source.slice(1, -1)}\\uD800-\\uDFFF]*$`,
    },
  },
};

/** A kick's or a ban's reason as typed after the name: absent, or 1 to 256 characters the console takes literally. */
export function validateReason(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, REASON_TYPE);
  // a lone UTF-16 surrogate has no UTF-8 form: it would reach the console as U+FFFD
  if (/\p{Surrogate}/u.test(value)) throw new HttpError(400, REASON_UNICODE);
  if (FORBIDDEN_IN_COMMAND.test(value)) throw new HttpError(400, REASON_CHARACTERS);
  if (REASON_NOT_TEXT.test(value)) throw new HttpError(400, REASON_TEXT);
  const length = [...value].length;
  // a reason of spaces alone is none: the game would take the next word of nothing
  if (length < 1 || length > REASON_MAX_CHARS || value.trim() === '') throw new HttpError(400, REASON_LENGTH);
  return value;
}

const listPath = (config: Readonly<Config>, list: ModerationList): string =>
  path.join(config.serverDir, LIST_FILES[list]);

/** banned-players.json or ops.json as stored; a missing file is an empty list (a server that never banned anyone). */
function readModerationList(config: Readonly<Config>, list: ModerationList): PlayerEntry[] {
  try {
    return readEntries(listPath(config, list));
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) return [];
    throw err;
  }
}

/** `yyyy-MM-dd HH:mm:ss Z` in local time: the game's date format of a ban's `created` (BanListEntry.DATE_FORMAT). */
export function formatBanDate(when: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  const offsetMinutes = -when.getTimezoneOffset();
  const offset = Math.abs(offsetMinutes);
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())} `
    + `${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())} `
    + `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(offset / 60))}${pad(offset % 60)}`;
}

/** The level a new operator gets: op-permission-level of server.properties as the game reads it, 4 when unset. */
function opLevel(config: Readonly<Config>): number {
  const level = readGameSetting(config, 'op-permission-level');
  return level !== undefined && /^[0-4]$/.test(level.trim()) ? Number(level.trim()) : DEFAULT_OP_LEVEL;
}

/** What each action is, in the game's words and ours (docs/api.md#post-apiplayerskick-ban-pardon-op-deop). */
interface ModerationRules {
  list?: ModerationList; // the file it changes; none for a kick
  holds: boolean; // whether that file holds the player afterwards
  done: (player: string) => string;
  unchanged: (player: string) => string;
  replies: Pick<VerdictRules, 'done' | 'namedUnchanged' | 'namedRefused' | 'unchanged' | 'refused'>;
}

// for pardon and deop, an unknown account's refusal is as true said as "not banned" / "not an operator"
const MODERATION: Record<ModerationAction, ModerationRules> = {
  kick: {
    holds: false, done: (player) => `${player} was kicked.`, unchanged: (player) => `${player} is not online.`,
    replies: { done: 'kick.done', namedRefused: 'kick.not-found', refused: 'kick.no-player' },
  },
  ban: {
    list: 'banned', holds: true,
    done: (player) => `${player} banned.`, unchanged: (player) => `${player} is already banned.`,
    replies: { done: 'ban.added', namedRefused: 'ban.not-added', unchanged: 'ban.already', refused: 'player.unknown' },
  },
  pardon: {
    list: 'banned', holds: false,
    done: (player) => `${player} unbanned.`, unchanged: (player) => `${player} is not banned.`,
    replies: {
      done: 'ban.removed', namedUnchanged: 'ban.not-removed', unchanged: 'ban.not-banned', refused: 'player.unknown',
    },
  },
  op: {
    list: 'ops', holds: true,
    done: (player) => `${player} is now an operator.`, unchanged: (player) => `${player} is already an operator.`,
    replies: { done: 'op.added', namedRefused: 'op.not-added', unchanged: 'op.already', refused: 'player.unknown' },
  },
  deop: {
    list: 'ops', holds: false,
    done: (player) => `${player} is no longer an operator.`, unchanged: (player) => `${player} is not an operator.`,
    replies: {
      done: 'op.removed', namedUnchanged: 'op.not-removed', unchanged: 'op.not-op', refused: 'player.unknown',
    },
  },
};

interface Moderation {
  /** GET /api/players/banned and /ops */
  list(list: ModerationList): Promise<Reply>;
  /** POST /api/players/kick, ban, pardon, op and deop */
  act(action: ModerationAction, request: ApiRequest): Promise<Reply>;
}

/**
 * docs/api.md#post-apiplayerskick-ban-pardon-op-deop, as the whitelist's edits: a running game gets the console
 * command and the answer waits for its verdict; a stopped one has banned-players.json or ops.json edited atomically,
 * entries in the game's shape. One action at a time, for the same reason.
 */
function createModeration(
  config: Readonly<Config>,
  game: GameFinder,
  gameConsole: GameConsole,
  presence: Presence,
  shared: SharedAnswers,
): Moderation {
  const actions = createSerialQueue();

  // the refusal names nobody, so it counts once the log says the player is not online
  const kickState = (player: string) => async (): Promise<GameState> => {
    const running = game.find();
    const online = running === undefined ? [] : [...(await presence.read(running)).players];
    const absent = !online.some((name) => name.toLowerCase() === player.toLowerCase());
    return { done: false, unchanged: false, refusal: absent };
  };

  /** The entry the game would write for the player, in its own field order. */
  const newEntry = async (action: 'ban' | 'op', player: string, reason: string | undefined): Promise<PlayerEntry> => {
    const profile = await resolveProfile(config, player);
    return action === 'ban'
      ? {
        uuid: profile.uuid, name: profile.name, created: formatBanDate(new Date()), source: 'Server',
        expires: 'forever', reason: reason ?? DEFAULT_BAN_REASON,
      }
      : { uuid: profile.uuid, name: profile.name, level: opLevel(config), bypassesPlayerLimit: false };
  };

  const act = async (action: ModerationAction, player: string, reason: string | undefined): Promise<Reply> => {
    const rules = MODERATION[action];
    const running = game.find({ fresh: true });
    const list = rules.list;
    // a corrupt file is never overwritten
    const entries = list === undefined ? [] : readModerationList(config, list);
    if (list !== undefined && entries.some(isNamed(player)) === rules.holds) {
      return messageReply(rules.unchanged(player));
    }
    if (running !== undefined) {
      const command = reason === undefined ? `${action} ${player}` : `${action} ${player} ${reason}`;
      return gameConsole.sendAndWatch(command, (log, mark) => awaitVerdict(log, mark, {
        player, ...rules.replies, leaves: action === 'kick',
        state: list === undefined
          ? kickState(player)
          : listState(config, () => readModerationList(config, list), player, rules.holds),
        answers: {
          done: () => messageReply(rules.done(player)),
          unchanged: () => messageReply(rules.unchanged(player)),
          refused: () => {
            if (action === 'kick') return errorReply(409, `${player} is not online.`);
            if (action === 'ban' || action === 'op') return errorReply(404, `${player} is not a Minecraft account.`);
            return messageReply(rules.unchanged(player));
          },
          unconfirmed: () =>
            messageReply(`${player}: ${action} sent; the game server has not confirmed it yet.`, 202),
        },
      }));
    }
    if (list === undefined) throw new HttpError(409, GAME_NOT_RUNNING);
    const file = listPath(config, list);
    if (action === 'ban' || action === 'op') writeEntries(file, [...entries, await newEntry(action, player, reason)]);
    else writeEntries(file, entries.filter((e) => !isNamed(player)(e)));
    return messageReply(rules.done(player));
  };

  return {
    list: (list) => shared(list, async () => {
      const entries = readModerationList(config, list);
      return jsonReply({ ok: true, count: entries.length, [list]: entries });
    }),
    async act(action, request) {
      const body = await readJsonObject(request);
      const player = validatePlayer(body.player);
      const reason = action === 'kick' || action === 'ban' ? validateReason(body.reason) : undefined;
      return actions(() => act(action, player, reason));
    },
  };
}

/** banned-players.json and ops.json changed, by the API, an operator in game or another tool. */
const detectModeration = (config: Readonly<Config>, publish: Publish): Detector[] =>
  (['banned', 'ops'] as const).map((list) => detectPlayerList(listPath(config, list), LIST_EVENTS[list], publish));

const listRoute = (list: ModerationList): RouteAbout => ({
  summary: list === 'banned' ? 'The banned players as stored' : 'The operators as stored',
  description: `The entries of ${LIST_FILES[list]} exactly as stored; a missing file is an empty list. `
    + 'At most 100 ms old.',
  answers: {
    200: list === 'banned'
      ? success('The entries.', 'Banned', {
        ok: true, count: 1, banned: [{
          uuid: '5c1a2c4b-8a3c-3d0e-9b55-2ad5d2f8f1a0', name: 'Mallory', created: '2026-11-27 12:00:00 +0000',
          source: 'Server', expires: 'forever', reason: 'Griefing',
        }],
      })
      : success('The entries.', 'Ops', {
        ok: true, count: 1,
        ops: [{ uuid: 'b50ad385-829d-3141-a216-7e7d7539ba7f', name: 'Notch', level: 4, bypassesPlayerLimit: false }],
      }),
    500: failure(`${LIST_FILES[list]} cannot be read or parsed, or is not a regular file.`,
      `${LIST_FILES[list]} could not be read.`),
    503: BUSY_ANSWER,
  },
});
const LIST_ROUTES = { banned: listRoute('banned'), ops: listRoute('ops') };

const moderationRoute = (action: ModerationAction): RouteAbout => {
  const rules = MODERATION[action];
  const takesReason = action === 'kick' || action === 'ban';
  const refusal: Record<number, Answer> = action === 'kick'
    ? {
      409: failure('The player is not online (the game\'s verdict), or the game server is not running.',
        'Alex is not online.'),
    }
    : action === 'ban' || action === 'op'
      ? {
        404: failure('No such Minecraft account (the game\'s verdict).', 'Alex is not a Minecraft account.'),
        502: failure('The profile lookup failed or knows no such name; nothing was changed.', LOOKUP_FAILED),
      }
      : {};
  return {
    summary: { kick: 'Kick a player', ban: 'Ban a player', pardon: 'Unban a player', op: 'Make a player an operator',
      deop: 'Take operator status from a player' }[action],
    description: `While the game runs, \`${action} <player>${takesReason ? ' [reason]' : ''}\` goes to its console and `
      + 'the answer waits up to 5 s for the game\'s verdict, from its reply'
      + (action === 'kick' ? ' and the player\'s leave lines; while it is stopped, 409.'
        : ` and ${LIST_FILES[rules.list!]}; while it is stopped, the file is edited atomically as the game would.`),
    body: takesReason ? REASON_BODY : PLAYER_BODY,
    answers: {
      200: success(action === 'kick' ? 'Done.' : 'Done, or nothing to do.', 'Message', {
        ok: true, message: rules.done('Alex'),
      }),
      202: success('Sent to the console; the game has not confirmed it within 5 s.', 'Message', {
        ok: true, message: `Alex: ${action} sent; the game server has not confirmed it yet.`,
      }),
      400: failure(
        '`player` is missing or not 1 to 16 characters from A-Z, a-z, 0-9 and _'
          + (takesReason ? ', `reason` is not 1 to 256 characters free of ; & | ` $ ( ) { } [ ] < > \\ and controls'
            : '')
          + ', or the body is not a JSON object.',
        PLAYER_PATTERN,
      ),
      ...BODY_ANSWERS, ...WRITE_ANSWERS, ...CONSOLE_ANSWERS, ...refusal,
    },
  };
};
const MODERATION_ROUTES = {
  kick: moderationRoute('kick'), ban: moderationRoute('ban'), pardon: moderationRoute('pardon'),
  op: moderationRoute('op'), deop: moderationRoute('deop'),
};

// ==== Backups: GET /api/backups, POST /api/backup ====

const BACKUP_RUNNING = 'A backup is already running.';
const BACKUP_TRIGGERED = 'Backup triggered. Check /api/backups shortly.';
// serv backup -s runs with this in its environment, set to BACKUP_DIR, and so does everything it starts: a later
// run of the daemon finds a backup of the same folder in /proc by it (docs/api.md#post-apibackup)
const BACKUP_MARKER_NAME = 'GAMESERVER_API_BACKUP';
const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];
const BACKUP_TYPES: ReadonlyArray<[string, BackupType]> = [
  ['snapshot_', 'snapshot'],
  ['gameserver_backup_', 'full_backup'],
  ['restore_undo', 'restore_undo'],
];
type BackupType = 'snapshot' | 'full_backup' | 'restore_undo' | 'archive';

/** An archive as GET /api/backups lists it (and backup.finished carries it). */
interface BackupEntry {
  name: string;
  type: BackupType;
  size: string;
  bytes: number;
  created: string;
}

/** The spec's prefix table. */
export function backupType(name: string): BackupType {
  return BACKUP_TYPES.find(([prefix]) => name.startsWith(prefix))?.[1] ?? 'archive';
}

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

/** The `.tar.gz` archives of a folder, newest first (docs/api.md#get-apibackups). */
function listBackups(dir: string): BackupEntry[] {
  const name = path.basename(dir);
  let entries: string[];
  try {
    if (!fs.statSync(dir).isDirectory()) throw new Error('not a directory');
    entries = fs.readdirSync(dir).filter((entry) => entry.endsWith('.tar.gz'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new HttpError(404, `${name} not found`);
    throw new HttpError(500, `${name} could not be read.`);
  }
  const files: Array<{ name: string; bytes: number; mtimeMs: number }> = [];
  for (const entry of entries) {
    // a file may vanish between the listing and its stat, and a FIFO is no archive: neither is listed
    const file = fs.statSync(path.join(dir, entry), { throwIfNoEntry: false });
    if (file?.isFile()) files.push({ name: entry, bytes: file.size, mtimeMs: file.mtimeMs });
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs || a.name.localeCompare(b.name));
  return files.map((f): BackupEntry => ({
    name: f.name,
    type: backupType(f.name),
    size: formatSize(f.bytes),
    bytes: f.bytes,
    created: new Date(f.mtimeMs).toISOString(),
  }));
}

/** Whether a process started with the marker of this backup folder still runs (a zombie's environment is empty). */
function isBackupRunning(backupDir: string): boolean {
  const marker = `${BACKUP_MARKER_NAME}=${backupDir}\0`;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (environ.startsWith(marker) || environ.includes(`\0${marker}`)) return true;
    } catch {
      // exited meanwhile, or another user's process
    }
  }
  return false;
}

interface Backups {
  /** GET /api/backups */
  list(): Promise<Reply>;
  /** POST /api/backup: launches `serv backup -s` unless a backup already runs on the host. */
  start(): Promise<Reply>;
}

function createBackups(config: Readonly<Config>, shared: SharedAnswers): Backups {
  let launching = false;
  return {
    list: () => shared('backups', async () => {
      const backups = listBackups(config.backupDir);
      return jsonReply({ ok: true, count: backups.length, backups });
    }),
    async start() {
      // taken before the spawn is awaited: two requests may be handled in one turn of the event loop
      if (launching || isBackupRunning(config.backupDir)) throw new HttpError(409, BACKUP_RUNNING);
      launching = true;
      try {
        await launchServ(config, ['backup', '-s'], { [BACKUP_MARKER_NAME]: config.backupDir });
      } finally {
        launching = false;
      }
      return messageReply(BACKUP_TRIGGERED);
    },
  };
}

const BACKUPS_ROUTE: RouteAbout = {
  summary: 'The .tar.gz backups, newest first',
  description: 'Only `.tar.gz` regular files of BACKUP_DIR, typed by their name. At most 100 ms old.',
  answers: {
    200: success('The archives.', 'Backups', {
      ok: true, count: 1,
      backups: [{
        name: 'snapshot_2026-11-20_03-00-00.tar.gz', type: 'snapshot', size: '1.50 MB', bytes: 1572864,
        created: '2026-11-20T03:00:04.000Z',
      }],
    }),
    404: failure('BACKUP_DIR does not exist.', 'backups not found'),
    500: failure('BACKUP_DIR is not a readable folder.', 'backups could not be read.'),
    503: BUSY_ANSWER,
  },
};

const BACKUP_ROUTE: RouteAbout = {
  summary: 'Run `serv backup -s` in the background',
  description: 'Answers once `serv backup -s` runs; the archive appears in GET /api/backups (and as backup.finished) '
    + 'when it is done.',
  answers: {
    200: success('The backup was launched.', 'Message', { ok: true, message: BACKUP_TRIGGERED }),
    409: failure('A backup is already running on the host.', BACKUP_RUNNING),
    ...WRITE_ANSWERS,
  },
};

// ==== The report: GET / and GET /api/report ====

const REPORT_TIMEOUT_MS = 10_000;
const REPORT_REUSE_MS = 5_000;
const REPORT_MAX_BYTES = 1024 * 1024;
const REPORT_DRAIN_MS = 500; // after the script exits, for its output still in the pipe
const REPORT_NOT_STARTED = 'The report script could not be started.';
const REPORT_EMPTY = 'The report script printed nothing.';
const REPORT_TIMED_OUT = 'The report script timed out after 10 s.';

interface Report {
  /** GET /: the report as text, its failures too. */
  text(): Promise<Reply>;
  /** GET /api/report */
  json(): Promise<Reply>;
  /** Ends a running script and everything it started (the daemon is stopping). */
  stop(): void;
}

/** One run of the report script; its two answers are made once, as bytes, whatever the number of requests. */
interface ReportRun {
  atMs: number; // when it ended: infinity while it runs
  result: Promise<string>;
  text?: Promise<Reply>;
  json?: Promise<Reply>;
}

/** The report, from at most one script run at a time, reused for 5 s after it ended whatever the number of callers. */
function createReport(config: Readonly<Config>): Report {
  let cache: ReportRun | undefined;
  let running: ChildProcess | undefined;
  const read = (): ReportRun => {
    if (cache === undefined || performance.now() - cache.atMs > REPORT_REUSE_MS) {
      const result = runReportScript(config, (child) => (running = child));
      const run: ReportRun = { atMs: Number.POSITIVE_INFINITY, result };
      cache = run;
      // the reuse window starts when the run ends, so a slow script is never started twice at once
      const settle = (): void => {
        running = undefined;
        run.atMs = performance.now();
      };
      result.then(settle, settle);
    }
    return cache;
  };
  return {
    text() {
      const run = read();
      return run.text ??= run.result.then(
        (report): Reply => ({ status: 200, body: Buffer.from(report), type: TEXT_TYPE }),
        (err: unknown): Reply => {
          // docs/api.md#get-: GET / fails as text/plain, like it succeeds
          if (err instanceof HttpError) return { status: err.status, body: err.message, type: TEXT_TYPE };
          throw err;
        },
      );
    },
    json() {
      const run = read();
      return run.json ??= run.result.then((report) => asBytes(jsonReply({ ok: true, report })));
    },
    stop() {
      if (running?.pid !== undefined) killGroup(running.pid);
    },
  };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function runReportScript(config: Readonly<Config>, started: (child: ChildProcess) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      // its own process group, so a timeout can end everything it started
      child = spawn(config.reportScript, [], {
        detached: true,
        stdio: ['ignore', 'pipe', 'inherit'],
        env: config.childEnv,
      });
    } catch (err) {
      log(`report script could not be started: ${describeError(err)}`);
      return reject(new HttpError(500, REPORT_NOT_STARTED));
    }
    started(child);
    const chunks: Buffer[] = [];
    let bytes = 0;
    let failure: HttpError | undefined;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    // settles once, from whichever comes first; a process that left the group (setsid) may hold stdout open
    // for ever, so the pipe is closed here rather than waited for
    const settle = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      child.stdout!.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      // docs/api.md#get-apireport: a non-zero exit with output still counts
      if (failure === undefined && text.trim() === '') failure = new HttpError(500, REPORT_EMPTY);
      if (failure !== undefined) reject(failure);
      else resolve(text);
    };
    const timer = setTimeout(() => {
      failure ??= new HttpError(500, REPORT_TIMED_OUT);
      if (child.pid !== undefined) killGroup(child.pid);
      settle();
    }, REPORT_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= REPORT_MAX_BYTES) chunks.push(chunk);
    });
    child.once('error', (err) => {
      log(`report script could not be started: ${describeError(err)}`);
      failure ??= new HttpError(500, REPORT_NOT_STARTED);
      settle();
    });
    child.once('exit', () => {
      // what the script left behind in its group is ended; output already written is still read
      if (child.pid !== undefined) killGroup(child.pid);
      drainTimer = setTimeout(settle, REPORT_DRAIN_MS);
    });
    child.once('close', settle);
  });
}

const REPORT_TEXT_ROUTE: RouteAbout = {
  summary: 'The host report as text',
  description: 'The standard output of REPORT_SCRIPT, from at most one run at a time, reused for 5 s; '
    + 'failures are text too.',
  answers: {
    200: success('The report.', { type: 'string' }, 'Gameserver host report\n', TEXT_TYPE),
    500: success(
      'The script could not start, printed nothing, or ran over 10 s.',
      { type: 'string' },
      REPORT_TIMED_OUT,
      TEXT_TYPE,
    ),
    503: BUSY_ANSWER,
  },
};

const REPORT_JSON_ROUTE: RouteAbout = {
  summary: 'The host report as JSON',
  description: 'The same report as GET /, wrapped.',
  answers: {
    200: success('The report.', 'Report', { ok: true, report: 'Gameserver host report\n' }),
    500: failure('The script could not start, printed nothing, or ran over 10 s.', REPORT_EMPTY),
    503: BUSY_ANSWER,
  },
};

// ==== Live events: GET /api/events, and the webhook ====

const EVENTS_KEPT = 1_000;
const EVENT_STREAMS_MAX = 64;
const EVENT_STREAMS_KEPT_FOR_KEY = 8;
const EVENT_STREAM_RETRY_MS = 3_000;
const EVENT_KEEPALIVE_MS = 15_000;
const EVENT_STREAM_MAX_PENDING_BYTES = 1024 * 1024; // a stream whose reader is that far behind is closed
const WATCH_PULSE_MS = 500; // the safety net behind fs.watch, the process's pulse, keep-alives: events within 1 s
const WATCH_COALESCE_MS = 50; // docs/performance.md#the-bridge: a chat line reaches a stream within 100 ms
const WATCH_LINGER_MS = 10_000; // after the last stream closed: a reconnect after `retry` misses nothing
const BACKUP_SETTLE_MS = 250; // a new archive's size and time must hold this long before it counts as finished
const WEBHOOK_QUEUE_MAX = 1_000;
const WEBHOOK_FIRST_RETRY_MS = 1_000;
const WEBHOOK_RETRY_MAX_MS = 60_000;
const WEBHOOK_GIVE_UP_MS = 10 * 60_000;
const WEBHOOK_TIMEOUT_MS = 10_000;
// a 2xx status is the delivery; a body that has not ended this long after it is cut, with its connection, so that a
// receiver that trickles it holds no later event
const WEBHOOK_BODY_GRACE_MS = 1_000;
const DISCORD_CONTENT_MAX_CHARS = 2_000;
const LAG_SUMMARY_MS = 60_000;
const EVENT_TEXT_MAX_CHARS = 256; // of a player's chat, a death message, an advancement's title
const CRASH_REASON_MAX_CHARS = 200;
const CRASH_REPORT_HEAD_BYTES = 16 * 1024; // the Description is on the report's fourth line
const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';
const TOO_MANY_STREAMS = 'Too many event streams are open; try again later.';
const WRONG_KEY = 'Unauthorized — the key sent (X-API-Key, or the password of Basic auth) is wrong.';

/** An event as streams and the webhook carry it: `{type, time, ...}` (docs/api.md#get-apievents). */
interface ApiEvent {
  type: string;
  time: string;
  [field: string]: unknown;
}

/** Who was added to a list of the game's and who removed, by the file (whoever changed it). */
interface ListChange {
  added: string[];
  removed: string[];
}

/** The fields of each event type the daemon publishes. */
interface EventFields {
  'server.started': { pid: number };
  'server.ready': { pid: number };
  'server.stopping': Record<string, never>;
  'server.stopped': { pid: number; crashed: boolean; reason?: string };
  'player.joined': { player: string };
  'player.left': { player: string };
  'player.chat': { player: string; text: string };
  'player.died': { player: string; message: string };
  'player.advancement': { player: string; advancement: string; kind: AdvancementKind };
  'server.lagging': { behind_ms: number; ticks: number; overloads: number };
  'whitelist.changed': ListChange;
  'bans.changed': ListChange;
  'ops.changed': ListChange;
  'backup.finished': { backup: BackupEntry };
}
type EventType = keyof EventFields;

type Publish = <T extends EventType>(type: T, fields: EventFields[T]) => void;

/** What the API says of an event type, the schema of its fields, and its line in a chat channel. */
interface EventKind<T extends EventType> {
  about: string; // in the events route's description
  fields: Record<string, Schema>;
  optional?: Record<string, Schema>;
  discord(event: EventFields[T]): string; // EVENT_WEBHOOK_FORMAT=discord: players' text escaped (escapeForDiscord)
}

const PID_SCHEMA: Schema = { type: 'integer', minimum: 1 };
const NAMES_SCHEMA: Schema = { type: 'array', items: { type: 'string' } };
type ListEventType = 'whitelist.changed' | 'bans.changed' | 'ops.changed';
const listChangeKind = <T extends ListEventType>(name: string): EventKind<T> => ({
  about: `${name.toLowerCase()} changed by anyone`,
  fields: { added: NAMES_SCHEMA, removed: NAMES_SCHEMA },
  discord: ({ added, removed }) => `${name}: ${[
    added.length > 0 ? `added ${added.map(escapeForDiscord).join(', ')}` : '',
    removed.length > 0 ? `removed ${removed.map(escapeForDiscord).join(', ')}` : '',
  ].filter((part) => part !== '').join('; ')}.`,
});

/**
 * Every event type, in the order the API lists them: a type published without its row here, or a row without its
 * description, schema or Discord line, does not compile (docs/api.md#get-apievents).
 */
const EVENT_KINDS: { readonly [T in EventType]: EventKind<T> } = {
  'server.started': {
    about: 'the game\'s process started', fields: { pid: PID_SCHEMA },
    discord: ({ pid }) => `The Minecraft server started (pid ${pid}).`,
  },
  'server.ready': {
    about: 'once a run, when the game answers its ping or logged Done', fields: { pid: PID_SCHEMA },
    discord: ({ pid }) => `The Minecraft server is ready: players can join (pid ${pid}).`,
  },
  'server.stopping': {
    about: 'the game logged its shutdown', fields: {}, discord: () => 'The Minecraft server is stopping.',
  },
  'server.stopped': {
    about: 'the process ended; crashed, with the crash report\'s reason after a crash',
    fields: { pid: PID_SCHEMA, crashed: { type: 'boolean' } },
    optional: { reason: { type: 'string', maxLength: CRASH_REASON_MAX_CHARS } },
    discord: ({ pid, crashed, reason }) => {
      if (reason !== undefined) return `The Minecraft server crashed: ${escapeForDiscord(reason)} (pid ${pid}).`;
      return crashed
        ? `The Minecraft server stopped without shutting down: it crashed or was killed (pid ${pid}).`
        : `The Minecraft server stopped (pid ${pid}).`;
    },
  },
  'player.joined': {
    about: 'a player joined', fields: { player: { type: 'string' } },
    discord: ({ player }) => `${escapeForDiscord(player)} joined the game.`,
  },
  'player.left': {
    about: 'a player left', fields: { player: { type: 'string' } },
    discord: ({ player }) => `${escapeForDiscord(player)} left the game.`,
  },
  'player.chat': {
    about: 'a player online wrote in chat',
    fields: { player: { type: 'string' }, text: { type: 'string', maxLength: EVENT_TEXT_MAX_CHARS } },
    discord: ({ player, text }) => `${escapeForDiscord(`<${player}>`)} ${escapeForDiscord(text)}`,
  },
  'player.died': {
    about: 'a player online died',
    fields: { player: { type: 'string' }, message: { type: 'string', maxLength: EVENT_TEXT_MAX_CHARS } },
    discord: ({ message }) => escapeForDiscord(message),
  },
  'player.advancement': {
    about: 'a player online made an advancement',
    fields: {
      player: { type: 'string' }, advancement: { type: 'string', maxLength: EVENT_TEXT_MAX_CHARS },
      kind: { enum: Object.keys(ADVANCEMENT_VERBS) },
    },
    discord: ({ player, advancement, kind }) =>
      escapeForDiscord(`${player} ${ADVANCEMENT_VERBS[kind]} [${advancement}]`),
  },
  'server.lagging': {
    about: 'the server falls behind, at most one a minute',
    fields: {
      behind_ms: { type: 'integer', minimum: 0 }, ticks: { type: 'integer', minimum: 0 },
      overloads: { type: 'integer', minimum: 1 },
    },
    discord: ({ behind_ms: behindMs, overloads }) => `The server is lagging: ${(behindMs / 1000).toFixed(1)} s behind `
      + `(${overloads === 1 ? '1 warning' : `${overloads} warnings`} in the last minute).`,
  },
  'whitelist.changed': listChangeKind('Whitelist'),
  'bans.changed': listChangeKind('Bans'),
  'ops.changed': listChangeKind('Operators'),
  'backup.finished': {
    about: 'a new archive holds still', fields: { backup: 'Backup' },
    discord: ({ backup }) => `Backup finished: ${escapeForDiscord(backup.name)} (${backup.size}).`,
  },
};

/** The one wire format of a stream: an event's `data:` line of JSON after its `id:` (a reset has none). */
function sseFrame(data: string, id?: string): string {
  return id === undefined ? `data: ${data}\n\n` : `id: ${id}\ndata: ${data}\n\n`;
}

interface EventLog {
  /** Keeps an event (its JSON) and gives its frame. */
  append(data: string): string;
  /** The frames of the events after `id`, or undefined when that id is not among those kept. */
  replayAfter(id: string): string[] | undefined;
  /** Makes every id given so far unknown: events were not watched for a while, and one after them may be missing. */
  forget(): void;
}

/**
 * The last 1,000 events, for a reconnect's Last-Event-ID. Ids carry a random era, new at every start of the daemon and
 * after every pause in watching, so an id of an earlier run or from before a pause is not found: its stream gets
 * `stream.reset` first.
 */
function createEventLog(): EventLog {
  const newEra = (): string => randomBytes(6).toString('base64url');
  let era = newEra();
  let sequence = 0;
  // a ring: the oldest is overwritten, not shifted out (a busy chat appends an event every 50 ms)
  const kept: Array<{ id: string; frame: string }> = [];
  let oldest = 0;
  return {
    append(data) {
      const id = `${era}-${++sequence}`;
      const frame = sseFrame(data, id);
      if (kept.length < EVENTS_KEPT) kept.push({ id, frame });
      else {
        kept[oldest] = { id, frame };
        oldest = (oldest + 1) % EVENTS_KEPT;
      }
      return frame;
    },
    replayAfter(id) {
      const inOrder = [...kept.slice(oldest), ...kept.slice(0, oldest)];
      const at = inOrder.findIndex((event) => event.id === id);
      return at === -1 ? undefined : inOrder.slice(at + 1).map((event) => event.frame);
    },
    forget() {
      era = newEra();
      sequence = 0;
      kept.length = 0;
      oldest = 0;
    },
  };
}

/** A detector of changes on the host: its first look takes the starting state, without events. */
interface Detector {
  dir: string; // the folder whose changes it looks at (a pulse looks at everything)
  look(): void | Promise<void>;
  /** What a change in its folder calls for when that is less than a look: the game's log, its new lines alone. */
  glance?(): void | Promise<void>;
  /** That glance done at once, when it needs no stat and no wait: true; false when it needs the queue of checks. */
  glanceNow?(): boolean;
  file?: string; // the name of the one file in `dir` whose changes concern it; unset: any change in `dir`
  close?(): void; // a timer it holds
}

/**
 * The game process starting and ending (`crashed` when it ended without a stop line, or wrote a crash report), and
 * what its log says, in order: lines of a process whose start was not seen yet wait for it.
 */
function detectGame(
  config: Readonly<Config>,
  clock: Clock,
  game: GameFinder,
  presence: Presence,
  publish: Publish,
): Detector & { onPresence: PresenceListener } {
  const crashReports = path.join(config.serverDir, 'crash-reports');
  const dir = path.dirname(latestLogPath(config));
  const lag = createLagSummary(publish);
  let current: GameProcess | undefined;
  let reportBefore: CrashReport | undefined; // the newest crash report when the current process was first seen
  let stopping = false;
  let online = new Set<string>();
  let early: Array<[string, LineMeaning]> = [];
  let ready = false;

  const apply = (change: LineMeaning): void => {
    switch (change.type) {
      case 'server.stopping':
        if (!stopping) publish('server.stopping', {});
        stopping = true;
        break;
      case 'player.joined':
        if (!online.has(change.player)) publish('player.joined', { player: change.player });
        online.add(change.player);
        break;
      case 'player.left':
        if (online.delete(change.player)) publish('player.left', { player: change.player });
        break;
      case 'player.chat':
        publish('player.chat', { player: change.player, text: eventText(change.text) });
        break;
      case 'player.died':
        publish('player.died', { player: change.player, message: eventText(change.message) });
        break;
      case 'player.advancement':
        publish('player.advancement', {
          player: change.player, advancement: eventText(change.advancement), kind: change.kind,
        });
        break;
      case 'server.lagging':
        lag.add(Number(change.behind_ms), Number(change.ticks));
        break;
    }
  };

  return {
    dir,
    onPresence(change, gameId) {
      if (!ready) return;
      if (current === undefined || gameIdentity(current) !== gameId) early.push([gameId, change]);
      else apply(change);
    },
    async look() {
      const quiet = !ready;
      const now = game.find();
      const before = current;
      if (before !== undefined && (now === undefined || gameIdentity(now) !== gameIdentity(before))) {
        // the process ended: its last lines first (its shutdown, players leaving), then players it never logged out
        if (presence.followedGame() === gameIdentity(before)) await presence.read(before);
        for (const player of online) publish('player.left', { player });
        const reason = readCrashReason(crashReports, reportBefore, clock.startedAtMs(before.startTicks));
        publish('server.stopped', {
          pid: before.pid, crashed: !stopping || reason !== undefined, ...reason === undefined ? {} : { reason },
        });
        current = undefined;
        stopping = false;
        online = new Set();
      }
      if (now !== undefined && current === undefined) {
        current = now;
        reportBefore = newestCrashReport(crashReports);
        if (!quiet) publish('server.started', { pid: now.pid });
        const waiting = early.filter(([id]) => id === gameIdentity(now));
        early = [];
        for (const [, change] of waiting) apply(change);
      }
      if (now !== undefined) {
        const session = await presence.read(now);
        if (quiet) {
          online = new Set(session.players);
          stopping = session.stopping;
        }
      }
      ready = true;
    },
    file: path.basename(latestLogPath(config)),
    glanceNow: () => current !== undefined && presence.readAppendedNow(current),
    // a line written by the game it knows: the process's end is the pulse's to see (within 0.5 s)
    async glance() {
      if (current === undefined) return this.look();
      await presence.read(current);
    },
    close: lag.close,
  };
}

/** Text from the log as an event carries it: addresses masked, at most `max` characters (whole code points). */
function eventText(text: string, max = EVENT_TEXT_MAX_CHARS): string {
  const masked = maskAddresses(text);
  // no more UTF-16 units than `max` is no more code points either: most lines are not split into them
  return masked.length <= max ? masked : [...masked].slice(0, max).join('');
}

/**
 * Lag at most once a minute (docs/api.md#get-apievents): the first warning of a quiet minute at once, the ones after
 * it summed and published when its minute ends.
 */
export function createLagSummary(
  publish: Publish,
  minuteMs = LAG_SUMMARY_MS,
): { add(behindMs: number, ticks: number): void; close(): void } {
  let sums: { behind_ms: number; ticks: number; overloads: number } | undefined;
  let minute: NodeJS.Timeout | undefined;
  const endMinute = (): void => {
    minute = undefined;
    if (sums === undefined) return; // a quiet minute: the next warning is news again
    publish('server.lagging', sums);
    sums = undefined;
    minute = setTimeout(endMinute, minuteMs);
  };
  return {
    add(behindMs, ticks) {
      if (minute === undefined) {
        publish('server.lagging', { behind_ms: behindMs, ticks, overloads: 1 });
        minute = setTimeout(endMinute, minuteMs);
        return;
      }
      sums ??= { behind_ms: 0, ticks: 0, overloads: 0 };
      sums.behind_ms += behindMs;
      sums.ticks += ticks;
      sums.overloads++;
    },
    close: () => clearTimeout(minute),
  };
}

interface CrashReport {
  file: string;
  mtimeMs: number;
}

/**
 * The newest crash report, by when it was written: a name is the game's clock at the time (a clock once ahead, a
 * daylight-saving hour), so a name that sorts last can be years old. Regular files only: a FIFO is never opened.
 */
function newestCrashReport(dir: string): CrashReport | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return undefined; // no folder: no report
  }
  let newest: CrashReport | undefined;
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = fs.lstatSync(file, { throwIfNoEntry: false });
    if (stat?.isFile() && (newest === undefined || stat.mtimeMs > newest.mtimeMs)) {
      newest = { file, mtimeMs: stat.mtimeMs };
    }
  }
  return newest;
}

/**
 * Why the game crashed (docs/formats.md#crash-reports): the `Description:` of a crash report that is new since the
 * process was first seen and was written after it started; undefined when there is none.
 */
function readCrashReason(dir: string, before: CrashReport | undefined, startedAtMs: number): string | undefined {
  const report = newestCrashReport(dir);
  if (report === undefined || report.mtimeMs < startedAtMs) return undefined;
  if (report.file === before?.file && report.mtimeMs === before.mtimeMs) return undefined;
  let head: string;
  try {
    const { fd } = openRegularFileSync(report.file);
    try {
      const bytes = Buffer.alloc(CRASH_REPORT_HEAD_BYTES);
      head = bytes.toString('utf8', 0, fs.readSync(fd, bytes, 0, bytes.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const description = /^Description: (.*?)\r?$/m.exec(head)?.[1].trim();
  return description === undefined || description === ''
    ? undefined
    : eventText(description.replace(COLOUR_CODES, ''), CRASH_REASON_MAX_CHARS);
}

/** whitelist.json changed, by the API or anyone else: who was added and who removed (by UUID, else by name). */
const detectWhitelist = (config: Readonly<Config>, publish: Publish): Detector =>
  detectPlayerList(whitelistPath(config), 'whitelist.changed', publish);

/** A player list changed, by the API or anyone else: `type` with who was added and who removed (by UUID, else name). */
function detectPlayerList(file: string, type: ListEventType, publish: Publish): Detector {
  let entries: Map<string, string> | undefined; // uuid (or name) → name
  let signature = '';
  let missing = false; // at the last look: a list still missing is not read again (each pulse would make an error)
  return {
    dir: path.dirname(file),
    look() {
      const now = settledSignature(file);
      if (now !== '' && now === signature) return;
      if (now === '' && missing && !fs.existsSync(file)) return;
      let seen: Map<string, string>;
      try {
        seen = new Map(readEntries(file).map((e) =>
          [String(typeof e.uuid === 'string' ? e.uuid.toLowerCase() : e.name), String(e.name)]));
        missing = false;
      } catch (err) {
        // the game rewrites it in place: a half-written file says nothing yet
        if (!(err instanceof HttpError && err.status === 404)) return;
        seen = new Map();
        missing = true;
      }
      const before = entries;
      entries = seen;
      signature = now;
      if (before === undefined) return;
      const added = [...seen].filter(([key]) => !before.has(key)).map(([, name]) => name);
      const removed = [...before].filter(([key]) => !seen.has(key)).map(([, name]) => name);
      if (added.length > 0 || removed.length > 0) publish(type, { added, removed });
    },
  };
}

/** A new archive in the backup folder, once its size and time held still for a moment (it may still be growing). */
function detectBackups(config: Readonly<Config>, publish: Publish, lookAgain: () => void): Detector {
  let archives: Map<string, string> | undefined; // name → size and time
  let signature = '';
  const pending = new Map<string, { signature: string; atMs: number }>();
  return {
    dir: config.backupDir,
    look() {
      const now = settledSignature(config.backupDir);
      if (now !== '' && now === signature && pending.size === 0) return;
      let listing: BackupEntry[];
      try {
        listing = listBackups(config.backupDir);
      } catch {
        return;
      }
      signature = now;
      const seen = new Map(listing.map((b) => [b.name, `${b.bytes}:${b.created}`]));
      const before = archives;
      archives = seen;
      if (before === undefined) return;
      const atMs = performance.now();
      for (const backup of listing) {
        if (before.has(backup.name) && !pending.has(backup.name)) continue;
        const held = pending.get(backup.name);
        const current = seen.get(backup.name)!;
        if (held === undefined || held.signature !== current) {
          pending.set(backup.name, { signature: current, atMs });
          setTimeout(lookAgain, BACKUP_SETTLE_MS);
        } else if (atMs - held.atMs >= BACKUP_SETTLE_MS) {
          pending.delete(backup.name);
          publish('backup.finished', { backup });
        }
      }
      for (const name of pending.keys()) if (!seen.has(name)) pending.delete(name);
    },
  };
}

interface Watching {
  watchers: fs.FSWatcher[];
  pulse: NodeJS.Timeout;
  detectors: Detector[];
  ready: Promise<void>; // the first look is done
  looked(): void;
}

interface Events {
  /** GET /api/events: a Server-Sent Events stream (docs/api.md#get-apievents). */
  open(request: ApiRequest): Reply;
  /** How many streams are open. */
  streamsOpen(): number;
  /** What became of webhook deliveries so far; undefined without a webhook. */
  webhookDeliveries(): Readonly<WebhookDeliveries> | undefined;
  /** Resolves once watching took the starting state, when it runs from the start (a webhook is set). */
  ready(): Promise<void>;
  /** Ends every stream, stops watching, and drops webhook deliveries still waiting. */
  close(): void;
}

/**
 * Live events (docs/api.md#get-apievents): detectors turn what changes on the host into events, which are kept (the
 * last 1,000) for a reconnect's Last-Event-ID, written to every open stream and posted to the webhook. Watching runs
 * only while a stream is open, for 10 s after the last one closed, or always when a webhook is set: it costs nothing
 * while nobody listens.
 */
class LiveEvents implements Events {
  private readonly streams = new Map<StreamSink, number>(); // → when it was last written to (performance.now())
  // begun, waiting for the starting state: they hold slots, and get no events yet
  private readonly opening = new Set<StreamSink>();
  private readonly kept = createEventLog();
  private readonly webhook: Webhook | undefined;
  private readonly fault = createFaultLog('watching for events');
  private watching: Watching | undefined;
  private linger: NodeJS.Timeout | undefined;
  private checking = false;
  private due = new Map<Detector, boolean>(); // detectors asked to look (true) or glance (false) at the host
  private readonly watchingReady: Promise<void>;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly clock: Clock,
    private readonly game: GameFinder,
    private readonly presence: Presence,
    private readonly moreDetectors: ReadonlyArray<(publish: Publish) => Detector> = [], // other sections' (readiness)
  ) {
    this.webhook = config.webhookUrl === undefined ? undefined : createWebhook(config);
    // with a webhook, every event from the start: the daemon listens once the starting state is taken
    this.watchingReady = this.webhook === undefined ? Promise.resolve() : this.startWatching();
  }

  open(request: ApiRequest): Reply {
    if (request.keySent && !request.reveal) throw new HttpError(401, WRONG_KEY);
    // docs/api.md#get-apievents: the last 8 slots are the key holder's,
    // so that anonymous streams never keep the relay out
    const open = this.streams.size + this.opening.size;
    if (open >= (request.reveal ? EVENT_STREAMS_MAX : EVENT_STREAMS_MAX - EVENT_STREAMS_KEPT_FOR_KEY)) {
      throw new HttpError(503, TOO_MANY_STREAMS);
    }
    // EventSource sends the header on a reconnect; clients that cannot send headers use the query
    const header = request.req.headers['last-event-id'];
    const lastId = typeof header === 'string'
      ? header
      : new URLSearchParams(request.search).get('lastEventId') ?? undefined;
    return {
      status: 200,
      body: '',
      headers: { 'Content-Type': EVENT_STREAM_TYPE, 'X-Accel-Buffering': 'no' },
      stream: (sink) => this.begin(sink, lastId),
    };
  }

  streamsOpen(): number {
    return this.streams.size + this.opening.size;
  }

  webhookDeliveries(): Readonly<WebhookDeliveries> | undefined {
    return this.webhook?.deliveries;
  }

  ready(): Promise<void> {
    return this.watchingReady;
  }

  close(): void {
    clearTimeout(this.linger);
    this.stopWatching();
    for (const sink of [...this.streams.keys(), ...this.opening]) sink.end();
    this.webhook?.close();
  }

  /**
   * A stream's first bytes come once the starting state is taken: a change after them is an event
   * (docs/api.md#get-apievents).
   */
  private begin(sink: StreamSink, lastId: string | undefined): void {
    const { streams, opening } = this;
    opening.add(sink);
    sink.onClose(() => {
      opening.delete(sink);
      streams.delete(sink);
      if (streams.size + opening.size === 0 && this.webhook === undefined) {
        clearTimeout(this.linger);
        this.linger = setTimeout(() => this.stopWatching(), WATCH_LINGER_MS);
      }
    });
    void this.startWatching().then(() => {
      if (!opening.delete(sink)) return; // closed meanwhile
      let first = `retry: ${EVENT_STREAM_RETRY_MS}\n\n`;
      if (lastId !== undefined && lastId !== '') {
        const replay = this.kept.replayAfter(lastId);
        first += replay === undefined
          ? sseFrame(JSON.stringify({ type: 'stream.reset', time: new Date().toISOString() }))
          : replay.join('');
      }
      sink.write(first);
      streams.set(sink, performance.now());
    });
  }

  /** An event: kept, written to every open stream, and posted to the webhook. */
  private readonly publish: Publish = (type, fields) => {
    const event: ApiEvent = { type, time: new Date().toISOString(), ...fields };
    const data = JSON.stringify(event);
    const frame = this.kept.append(data);
    const now = performance.now();
    for (const sink of this.streams.keys()) {
      sink.write(frame);
      this.streams.set(sink, now);
    }
    // Discord pings nobody, whatever the line holds (its escaping is the second guard)
    this.webhook?.deliver(this.config.webhookFormat === 'discord'
      ? JSON.stringify({ content: describeEvent(event), allowed_mentions: { parse: [] } })
      : data);
  };

  /**
   * Has these detectors look (`full`) or glance at the host, one check at a time; what is asked for meanwhile follows
   * the current check.
   */
  private async check(detectors: readonly Detector[], full: boolean): Promise<void> {
    // a look asked for by a watch that has ended since (a glance's timer) asks nothing of the next one's detectors
    for (const detector of detectors) {
      if (this.watching?.detectors.includes(detector)) this.due.set(detector, full || this.due.get(detector) === true);
    }
    if (this.checking) return;
    this.checking = true;
    try {
      while (this.due.size > 0 && this.watching !== undefined) {
        const current = this.watching;
        const now = this.due;
        this.due = new Map();
        let failed: string | undefined;
        // each detector on its own: a log that cannot be read does not hide a whitelist change
        for (const [detector, look] of now) {
          try {
            await (look || detector.glance === undefined ? detector.look() : detector.glance());
          } catch (err) {
            // a file that cannot be read now (a roll, a half-written rewrite) is looked at again on the next pulse
            if (!(err instanceof HttpError) && (err as NodeJS.ErrnoException).code === undefined) throw err;
            failed ??= describeError(err);
          }
        }
        // a fault is over once every detector has looked again (the pulse)
        if (failed !== undefined || (now.size === current.detectors.length && [...now.values()].every(Boolean))) {
          this.fault(failed);
        }
        current.looked(); // even a look that failed: streams wait for no file to come right
      }
    } finally {
      this.checking = false;
    }
  }

  /**
   * Twice a second: a look at the host, and the keep-alive comments that are due. One timer for all: every timer wakes
   * the daemon, and the wake-ups are what idle streams cost (docs/performance.md#live-events).
   */
  private pulse(): void {
    const now = performance.now();
    for (const [sink, writtenAtMs] of this.streams) {
      // due before the next pulse: no stream stays quiet longer than EVENT_KEEPALIVE_MS
      if (now - writtenAtMs < EVENT_KEEPALIVE_MS - WATCH_PULSE_MS) continue;
      sink.write(': keep-alive\n\n');
      this.streams.set(sink, now);
    }
    void this.check(this.watching!.detectors, true);
  }

  /** Watches, if it does not yet; resolves once the first look took the starting state. */
  private startWatching(): Promise<void> {
    clearTimeout(this.linger);
    this.linger = undefined;
    if (this.watching !== undefined) return this.watching.ready;
    const { config, publish } = this;
    const gameDetector = detectGame(config, this.clock, this.game, this.presence, publish);
    const backups: Detector = detectBackups(config, publish, () => void this.check([backups], true));
    const detectors = [
      gameDetector, detectWhitelist(config, publish), ...detectModeration(config, publish), backups,
      ...this.moreDetectors.map((make) => make(publish)),
    ];
    let looked = (): void => undefined;
    const ready = new Promise<void>((resolve) => (looked = resolve));
    this.watching = {
      watchers: this.watchFolders(detectors),
      pulse: setInterval(() => this.pulse(), WATCH_PULSE_MS),
      detectors,
      ready,
      looked,
    };
    this.presence.listen(gameDetector.onPresence);
    void this.check(detectors, true);
    return ready;
  }

  /** One watcher per folder the detectors look at. */
  private watchFolders(detectors: readonly Detector[]): fs.FSWatcher[] {
    const watchers: fs.FSWatcher[] = [];
    for (const dir of new Set(detectors.map((detector) => detector.dir))) {
      const inDir = detectors.filter((detector) => detector.dir === dir);
      try {
        // the changes of a moment are looked at together: a busy chat's lines cost a glance each 50 ms, not each
        let glance: NodeJS.Timeout | undefined;
        let renamed = false; // in this moment: a file replaced (a roll), which only a look with a stat notices
        const glanceable = inDir.every((detector) => detector.glanceNow !== undefined);
        const glanceSoon = (event: string, name: string | null): void => {
          // a write to another file of the folder (Forge's debug.log) concerns none of them
          if (event === 'change' && name !== null
            && inDir.every((detector) => detector.file !== undefined && detector.file !== name)) return;
          renamed ||= event === 'rename';
          glance ??= setTimeout(() => {
            glance = undefined;
            const atOnce = glanceable && !renamed && !this.checking && this.watching?.detectors.includes(inDir[0]);
            renamed = false;
            const left = atOnce ? this.glanceAtOnce(inDir) : inDir;
            if (left.length > 0) void this.check(left, false);
          }, WATCH_COALESCE_MS);
        };
        watchers.push(fs.watch(dir, { persistent: false }, glanceSoon).on('error', () => undefined));
      } catch {
        // a folder that does not exist (yet): the pulse looks at it instead
      }
    }
    return watchers;
  }

  /**
   * The glances that can be done at once, done: the log's new lines read without a stat or the queue of checks, the
   * path of a followed line kept short (docs/performance.md#the-floor-of-following). The detectors left for the queue.
   */
  private glanceAtOnce(detectors: readonly Detector[]): Detector[] {
    return detectors.filter((detector) => {
      try {
        return !detector.glanceNow!();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === undefined) throw err;
        return true; // a read that failed (the file gone meanwhile): the queue's glance reads again, and logs the fault
      }
    });
  }

  private stopWatching(): void {
    const { watching } = this;
    if (watching === undefined) return;
    for (const watcher of watching.watchers) watcher.close();
    for (const detector of watching.detectors) detector.close?.();
    this.due.clear();
    clearInterval(watching.pulse);
    this.presence.listen(undefined);
    this.watching = undefined;
    this.kept.forget(); // what happens while nobody watches is not known: ids from before cannot be replayed
  }
}

/**
 * Text for a Discord message that reads as it was written and does nothing else (docs/api.md#escaped-for-discord).
 * Discord's markdown characters (backslash, backtick, `* _ ~ | < > # [ ] ( ) -`) are escaped, so nothing formats and
 * no masked link, mention, channel, timestamp, custom emoji or command (`[x](url)`, `<@id>`, `<#id>`, `<t:…>`,
 * `<:e:id>`) is left; a zero-width space follows every `@` (`@everyone`), every `/` before another `/` (no `https://`
 * link), and every `discord`, `discordapp` or `dsc` before a dot, in any letter case (no invite, gift or template:
 * `discord.gg`, `discord.com/invite`, `discord.gift`, `discord.new`, `dsc.gg`). The workflows in docs/n8n write these
 * four replacements into every text they post to Discord, character for character: a test holds them to this one.
 */
export function escapeForDiscord(text: string): string {
  return text
    .replace(/[\\*_~`|<>#[\]()-]/g, '\\$&')
    .replace(/@/g, '@\u200b')
    // a link needs its `://`, an invite its domain: a zero-width space breaks both, and the text reads the same
    .replace(/\/(?=\/)/g, '/\u200b')
    .replace(/(?:discord(?:app)?|dsc)(?=\.)/gi, '$&\u200b');
}

/**
 * One readable line for a chat channel (EVENT_WEBHOOK_FORMAT=discord). What players wrote (names, chat, a named mob in
 * a death message, a datapack's advancement title) reaches the channel through escapeForDiscord().
 */
export function describeEvent(event: { type: string; [field: string]: unknown }): string {
  const kind = (EVENT_KINDS as Record<string, EventKind<EventType> | undefined>)[event.type];
  // EventKind<T>'s line takes its own type's fields: the table pairs each type with its own
  const text = kind === undefined ? `Event ${escapeForDiscord(event.type)}.` : kind.discord(event as never);
  // cut between code points, never inside one
  const points = [...text];
  if (points.length <= DISCORD_CONTENT_MAX_CHARS) return text;
  return `${points.slice(0, DISCORD_CONTENT_MAX_CHARS - 1).join('')}…`;
}

/** Counts of webhook attempts: each event delivered once, or dropped; each failed attempt, and each one retried. */
interface WebhookDeliveries {
  delivered: number;
  failed: number;
  retried: number;
  dropped: number;
}

interface Webhook {
  deliver(body: string): void;
  readonly deliveries: Readonly<WebhookDeliveries>;
  close(): void;
}

/**
 * EVENT_WEBHOOK_URL (docs/api.md#webhook): every event POSTed, in order, one at a time; delivered once a 2xx status
 * arrives (the body is not waited for). A failure is retried after 1 s, doubling to 60 s, for 10 minutes, then
 * dropped. At most 1,000 wait; beyond that the oldest waiting one is dropped. An outage is logged when it begins and
 * when it ends, with what it cost. With EVENT_WEBHOOK_SECRET each body is signed: `X-Signature-256: sha256=<hex HMAC>`.
 */
function createWebhook(config: Readonly<Config>): Webhook {
  const url = config.webhookUrl!;
  // made once, and one connection kept open (Node 18's global agent closes each): a busy chat posts every 50 ms
  const target = {
    ...urlToHttpOptions(url),
    agent: new (url.protocol === 'https:' ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: 1 }),
  };
  const queue: Array<{ body: string; firstAttemptMs: number | undefined; failures: number }> = [];
  const deliveries: WebhookDeliveries = { delivered: 0, failed: 0, retried: 0, dropped: 0 };
  let sending = false;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let overflowing = 0; // dropped while the queue is full
  let outage: { failed: number; dropped: number } | undefined; // since the first failure after a delivery
  const overflow = createFaultLog('webhook');

  const post = (body: string): Promise<number> => new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      'User-Agent': `${SERVICE_NAME}/${VERSION}`,
    };
    if (config.webhookSecret !== undefined) {
      headers['X-Signature-256'] = `sha256=${createHmac('sha256', config.webhookSecret).update(body).digest('hex')}`;
    }
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      { ...target, method: 'POST', headers },
      (res) => {
        clearTimeout(deadline);
        resolve(res.statusCode ?? 0);
        res.resume(); // the answer's body is not needed, and must not fill memory
        const cut = setTimeout(() => res.destroy(), WEBHOOK_BODY_GRACE_MS);
        res.on('close', () => clearTimeout(cut));
        res.on('error', () => {}); // cut, or the receiver went: the delivery was done
      },
    );
    // one bound for the whole exchange, not an idle timeout as well (a timer more per event, set and reset on the
    // kept-alive socket): an idle timeout alone lets a receiver that trickles its status line hold every later event
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`)),
      WEBHOOK_TIMEOUT_MS,
    );
    request.on('close', () => clearTimeout(deadline));
    request.on('error', reject);
    request.end(body);
  });

  const drop = (count: number): void => {
    deliveries.dropped += count;
    if (outage !== undefined) outage.dropped += count;
  };

  const pump = async (): Promise<void> => {
    if (sending || closed || retry !== undefined || queue.length === 0) return;
    sending = true;
    const head = queue[0];
    head.firstAttemptMs ??= Date.now();
    let why: string;
    try {
      const status = await post(head.body);
      why = status >= 200 && status < 300 ? '' : `status ${status}`;
    } catch (err) {
      why = describeError(err);
    }
    sending = false;
    if (closed) return;
    if (why === '') {
      deliveries.delivered++;
      if (outage !== undefined) {
        log(`webhook: delivering again, after ${outage.failed} failed attempts and ${outage.dropped} dropped events`);
        outage = undefined;
      }
    } else {
      deliveries.failed++;
      if (outage === undefined) {
        log(`webhook: deliveries are failing (${why}); each event is retried for up to 10 minutes`);
        outage = { failed: 0, dropped: 0 };
      }
      outage.failed++;
    }
    if (why === '' || Date.now() - head.firstAttemptMs >= WEBHOOK_GIVE_UP_MS) {
      if (queue[0] === head) queue.shift();
      if (why !== '') drop(1);
      if (overflowing > 0 && queue.length < WEBHOOK_QUEUE_MAX) {
        overflow(undefined, `${overflowing} events were dropped`);
        overflowing = 0;
      }
      return pump();
    }
    deliveries.retried++;
    const waitMs = Math.min(WEBHOOK_FIRST_RETRY_MS * 2 ** head.failures++, WEBHOOK_RETRY_MAX_MS);
    retry = setTimeout(() => {
      retry = undefined;
      void pump();
    }, waitMs);
  };

  return {
    deliver(body) {
      queue.push({ body, firstAttemptMs: undefined, failures: 0 });
      if (queue.length > WEBHOOK_QUEUE_MAX) {
        queue.splice(sending ? 1 : 0, 1); // the oldest that is not being sent
        overflowing++;
        drop(1);
        overflow(`${WEBHOOK_QUEUE_MAX} events are waiting; the oldest are dropped`);
      }
      void pump();
    },
    deliveries,
    close() {
      closed = true;
      clearTimeout(retry);
      target.agent.destroy(); // its kept-alive connection would hold the daemon's exit
      if (queue.length > 0) log(`webhook: ${queue.length} events were not delivered before the daemon stopped`);
    },
  };
}

const EVENTS_ROUTE: RouteAbout = {
  summary: 'Live events (Server-Sent Events)',
  description: 'Unnamed events with an id and one data line of JSON {type, time, ...} (the Event schema): '
    + `${Object.entries(EVENT_KINDS).map(([type, { about }]) => `${type} (${about})`).join(', ')}, `
    + 'and stream.reset after an unknown Last-Event-ID. A comment after 15 s of quiet. '
    + 'Public; the key, as X-API-Key or as the password of HTTP Basic auth (http://relay:KEY@host:6767/api/events), '
    + 'opens one of the 8 of the 64 streams kept for it.',
  parameters: [
    {
      name: 'Last-Event-ID', in: 'header', schema: { type: 'string' },
      description: 'The last id received: the events after it are sent first.',
    },
    {
      name: 'lastEventId', in: 'query', schema: { type: 'string' },
      description: 'The same, for clients that cannot send headers.',
    },
  ],
  answers: {
    200: success(
      'The stream.',
      { type: 'string' },
      'retry: 3000\n\nid: 1a2b-1\ndata: {"type":"player.joined","time":"2026-11-25T12:00:00.000Z","player":"Alex"}\n\n',
      EVENT_STREAM_TYPE,
    ),
    401: failure('A key was sent (X-API-Key or Basic auth) and it is wrong.', WRONG_KEY),
    503: failure('56 streams are open already (64 for the key holder), or the daemon is busy.', TOO_MANY_STREAMS),
  },
};

// ==== Readiness: GET /api/ping ====

const PING_TIMEOUT_MS = 1_000; // the whole exchange, the legacy ping after a modern one included
const PING_REUSE_MS = 5_000; // a ready answer is reused this long
const PING_RETRY_MS = 1_000; // a not-ready one this long: a start is seen within a second or two
// the status packet: its JSON string is at most 32,767 characters by the protocol (96 KiB of UTF-8), favicon included;
// a server that announces or sends more is cut off there, its answer refused
const PING_ANSWER_MAX_BYTES = 100 * 1024;
const FAVICON_MAX_CHARS = 64 * 1024; // a data URL; a 64×64 PNG is a few KiB
const MOTD_MAX_CHARS = 1_024;
const MOTD_MAX_RUNS = 256;
const MOTD_MAX_DEPTH = 16; // of nested text components
const VERSION_NAME_MAX_CHARS = 256;
const DEFAULT_GAME_PORT = 25_565;
const LEGACY_PING_PROTOCOL = 74; // 1.6.4's, what its client sends
const FAVICON_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;

// The 16 colours of the game's text (docs/formats.md#colour-codes), by `§` code and by a component's name; a hex
// colour (1.16+) takes the nearest of them, so that the status page needs no inline style
const MC_COLOURS = [
  'black', 'dark_blue', 'dark_green', 'dark_aqua', 'dark_red', 'dark_purple', 'gold', 'gray', 'dark_gray', 'blue',
  'green', 'aqua', 'red', 'light_purple', 'yellow', 'white',
] as const;
const MC_COLOUR_RGB = [
  0x000000, 0x0000aa, 0x00aa00, 0x00aaaa, 0xaa0000, 0xaa00aa, 0xffaa00, 0xaaaaaa, 0x555555, 0x5555ff, 0x55ff55,
  0x55ffff, 0xff5555, 0xff55ff, 0xffff55, 0xffffff,
];
const MC_STYLES = { l: 'b', o: 'i', n: 'u', m: 's', k: 'k' } as const; // § code → the page's class suffix
const COMPONENT_STYLES = { bold: 'b', italic: 'i', underlined: 'u', strikethrough: 's', obfuscated: 'k' } as const;

/** A piece of the MOTD in one style: `classes` as the status page writes them (`mc-gold mc-b`), or ''. */
export interface MotdRun {
  text: string;
  classes: string;
}

/** What the game answered to the Server List Ping. */
interface PingAnswer {
  latencyMs: number;
  version?: { name: string; protocol: number }; // servers before 1.4 tell none
  motd: MotdRun[];
  players: { online: number; max: number };
  favicon?: string;
}

interface ReadyState {
  game: GameProcess | undefined;
  ready: boolean;
  answer?: PingAnswer;
}

interface Style {
  colour?: string;
  flags: ReadonlySet<string>;
}

const nearestColour = (rgb: number): string => {
  const distance = (other: number): number =>
    ((rgb >> 16) - (other >> 16)) ** 2
    + (((rgb >> 8) & 255) - ((other >> 8) & 255)) ** 2
    + ((rgb & 255) - (other & 255)) ** 2;
  let best = 0;
  MC_COLOUR_RGB.forEach((other, i) => (best = distance(other) < distance(MC_COLOUR_RGB[best]) ? i : best));
  return MC_COLOURS[best];
};

/**
 * The MOTD of a status answer (a string with `§` codes, or a JSON text component with `extra`, colours and styles,
 * which may hold `§` codes too) as runs of one style each; bounded in characters, runs and depth.
 */
export function motdRuns(description: unknown): MotdRun[] {
  const runs: MotdRun[] = [];
  let chars = 0;
  const push = (text: string, style: Style): void => {
    const room = MOTD_MAX_CHARS - chars;
    if (text === '' || room <= 0 || runs.length >= MOTD_MAX_RUNS) return;
    const kept = text.length > room ? text.slice(0, room) : text;
    chars += kept.length;
    const classes = [
      style.colour === undefined ? '' : `mc-${style.colour}`,
      ...[...style.flags].sort().map((f) => `mc-${f}`),
    ].filter((c) => c !== '').join(' ');
    const last = runs[runs.length - 1];
    if (last !== undefined && last.classes === classes) last.text += kept;
    else runs.push({ text: kept, classes });
  };
  // `§x§R§R§G§G§B§B` is Spigot's hex colour; a colour code ends the styles before it, `§r` ends everything
  const pushLegacy = (text: string, base: Style): void => {
    let style = base;
    let from = 0;
    for (let at = text.indexOf('§'); at !== -1; at = text.indexOf('§', from)) {
      push(text.slice(from, at), style);
      const code = text.charAt(at + 1).toLowerCase();
      const hex = /^§x((?:§[0-9a-f]){6})/i.exec(text.slice(at, at + 14));
      if (hex !== null) {
        style = { colour: nearestColour(parseInt(hex[1].replace(/§/g, ''), 16)), flags: new Set() };
        from = at + 14;
        continue;
      }
      const colour = '0123456789abcdef'.indexOf(code);
      if (colour !== -1 && code !== '') style = { colour: MC_COLOURS[colour], flags: new Set() };
      else if (code === 'r') style = { flags: new Set() };
      else if (code in MC_STYLES) {
        style = { ...style, flags: new Set([...style.flags, MC_STYLES[code as keyof typeof MC_STYLES]]) };
      }
      from = at + 2;
    }
    push(text.slice(from), style);
  };
  const walk = (node: unknown, inherited: Style, depth: number): void => {
    if (depth > MOTD_MAX_DEPTH || runs.length >= MOTD_MAX_RUNS || chars >= MOTD_MAX_CHARS) return;
    if (typeof node === 'string') return pushLegacy(node, inherited);
    if (Array.isArray(node)) return node.slice(0, MOTD_MAX_RUNS).forEach((child) => walk(child, inherited, depth + 1));
    if (node === null || typeof node !== 'object') return;
    const component = node as Record<string, unknown>;
    let colour = inherited.colour;
    if (typeof component.color === 'string') {
      const named = MC_COLOURS.indexOf(component.color as typeof MC_COLOURS[number]);
      if (named !== -1) colour = MC_COLOURS[named];
      else if (/^#[0-9a-fA-F]{6}$/.test(component.color)) {
        colour = nearestColour(parseInt(component.color.slice(1), 16));
      }
    }
    const flags = new Set(inherited.flags);
    for (const [key, flag] of Object.entries(COMPONENT_STYLES)) {
      if (component[key] === true) flags.add(flag);
      else if (component[key] === false) flags.delete(flag);
    }
    const style = { colour, flags };
    if (typeof component.text === 'string') pushLegacy(component.text, style);
    else if (typeof component.translate === 'string') pushLegacy(component.translate, style);
    if (Array.isArray(component.extra)) walk(component.extra, style, depth + 1);
  };
  walk(description, { flags: new Set() }, 0);
  return runs;
}

const plainMotd = (runs: readonly MotdRun[]): string => runs.map((run) => run.text).join('');

// ---- The protocol (docs/formats.md#server-list-ping) ----

function varInt(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value >>> 0;
  do {
    bytes.push((rest & 0x7f) | (rest > 0x7f ? 0x80 : 0));
    rest >>>= 7;
  } while (rest !== 0);
  return Buffer.from(bytes);
}

/** A VarInt at `offset`: its value and the offset after it; undefined when the bytes end first, null when invalid. */
function readVarInt(data: Buffer, offset: number): [number, number] | undefined | null {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (offset + i >= data.length) return undefined;
    value |= (data[offset + i] & 0x7f) << (7 * i);
    if ((data[offset + i] & 0x80) === 0) return [value, offset + i + 1];
  }
  return null;
}

const packet = (id: number, ...fields: Buffer[]): Buffer => {
  const body = Buffer.concat([varInt(id), ...fields]);
  return Buffer.concat([varInt(body.length), body]);
};

const protocolString = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([varInt(bytes.length), bytes]);
};

/** The status JSON's fields, checked; undefined when it is no status answer. */
function readStatusJson(text: string, latencyMs: number): PingAnswer | undefined {
  let status: unknown;
  try {
    status = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (status === null || typeof status !== 'object' || Array.isArray(status)) return undefined;
  const { version, players, description, favicon } = status as Record<string, unknown>;
  const count = (value: unknown): number =>
    (Number.isSafeInteger(value) && (value as number) >= 0 ? value as number : 0);
  const known = (value: unknown): Record<string, unknown> =>
    (value !== null && typeof value === 'object' ? value as Record<string, unknown> : {});
  const { name, protocol } = known(version);
  return {
    latencyMs,
    version: {
      name: typeof name === 'string' ? [...name].slice(0, VERSION_NAME_MAX_CHARS).join('') : '',
      protocol: Number.isSafeInteger(protocol) ? protocol as number : -1,
    },
    motd: motdRuns(description),
    players: { online: count(known(players).online), max: count(known(players).max) },
    ...typeof favicon === 'string' && favicon.length <= FAVICON_MAX_CHARS && FAVICON_URL.test(favicon)
      ? { favicon }
      : {},
  };
}

/** The answer to 1.4–1.6's ping, `§1\0protocol\0version\0motd\0online\0max`, or before 1.4 `motd§online§max`. */
export function readLegacyAnswer(text: string, latencyMs: number): PingAnswer | undefined {
  const number = (value: string | undefined): number => (/^\d{1,9}$/.test(value ?? '') ? Number(value) : 0);
  if (text.startsWith('§1\0')) {
    const [, protocol, name, motd, online, max] = text.split('\0');
    if (max === undefined) return undefined;
    return {
      latencyMs, version: { name: [...name].slice(0, VERSION_NAME_MAX_CHARS).join(''), protocol: number(protocol) },
      motd: motdRuns(motd), players: { online: number(online), max: number(max) },
    };
  }
  const parts = text.split('§');
  if (parts.length < 3) return undefined;
  const max = parts.pop();
  const online = parts.pop();
  return { latencyMs, motd: motdRuns(parts.join('§')), players: { online: number(online), max: number(max) } };
}

/**
 * One exchange over TCP: `request` is written, `read` looks at all bytes received so far and says whether they are
 * complete (a value), need more (undefined) or are wrong (null); at most `PING_ANSWER_MAX_BYTES` are read.
 */
function exchange<T>(
  address: string,
  port: number,
  deadline: number,
  request: Buffer,
  read: (data: Buffer, socket: Socket) => T | undefined | null,
  onClose: (received: number) => T | null = () => null,
): Promise<T | null> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let done = false;
    const socket = connectTcp({ host: address, port });
    const finish = (result: T | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(onClose(-1)), Math.max(0, deadline - performance.now()));
    socket.setNoDelay(true);
    socket.on('connect', () => socket.write(request));
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(onClose(received.length)));
    socket.on('data', (chunk: Buffer) => {
      if (received.length + chunk.length > PING_ANSWER_MAX_BYTES) return finish(null);
      received = Buffer.concat([received, chunk]);
      const result = read(received, socket);
      if (result !== undefined) finish(result);
    });
  });
}

/**
 * The Server List Ping of 1.7 and later (a handshake with next state 1, a status request, then a ping whose pong
 * gives the latency; a server that answers the status but not the ping gets the status's round trip). 'legacy' when
 * the server speaks the older protocol (a 0xFF kick, or a close without a word).
 */
function pingModern(address: string, port: number, deadline: number): Promise<PingAnswer | 'legacy' | null> {
  const handshake = Buffer.alloc(2);
  handshake.writeUInt16BE(port);
  const startedAt = performance.now();
  let status: PingAnswer | undefined;
  let pingedAt = 0;
  let offset = 0; // of the packet after the status
  return exchange<PingAnswer | 'legacy'>(
    address, port, deadline,
    Buffer.concat([packet(0x00, varInt(-1), protocolString(address), handshake, varInt(1)), packet(0x00)]),
    (data, socket) => {
      if (status === undefined && data[0] === 0xff) return 'legacy';
      const length = readVarInt(data, offset);
      if (length === null || (length !== undefined && length[0] > PING_ANSWER_MAX_BYTES)) return null;
      if (length === undefined || data.length < length[1] + length[0]) return undefined;
      const body = data.subarray(length[1], length[1] + length[0]);
      if (status !== undefined) return body[0] === 0x01 ? { ...status, latencyMs: performance.now() - pingedAt } : null;
      const text = readVarInt(body, 1);
      if (body[0] !== 0x00 || !text || body.length < text[1] + text[0]) return null;
      status = readStatusJson(body.toString('utf8', text[1], text[1] + text[0]), performance.now() - startedAt);
      if (status === undefined) return null;
      offset = length[1] + length[0];
      const payload = Buffer.alloc(8);
      payload.writeBigInt64BE(BigInt(Date.now()));
      pingedAt = performance.now();
      socket.write(packet(0x01, payload));
      return undefined;
    },
    (received) => status ?? (received === 0 ? 'legacy' : null),
  );
}

/** 1.4–1.6's ping (`FE 01`, and 1.6's `MC|PingHost` plugin message), answered by a 0xFF packet of UTF-16BE text. */
function pingLegacy(address: string, port: number, deadline: number): Promise<PingAnswer | null> {
  const utf16 = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16();
  const host = utf16(address);
  const rest = Buffer.alloc(1 + 2 + host.length + 4);
  rest.writeUInt8(LEGACY_PING_PROTOCOL, 0);
  rest.writeUInt16BE(address.length, 1);
  host.copy(rest, 3);
  rest.writeInt32BE(port, 3 + host.length);
  const channel = utf16('MC|PingHost');
  const sizes = Buffer.alloc(4);
  sizes.writeUInt16BE('MC|PingHost'.length, 0);
  sizes.writeUInt16BE(rest.length, 2);
  const startedAt = performance.now();
  return exchange(address, port, deadline,
    Buffer.concat([Buffer.from([0xfe, 0x01, 0xfa]), sizes.subarray(0, 2), channel, sizes.subarray(2), rest]),
    (data) => {
      if (data[0] !== 0xff) return null;
      if (data.length < 3) return undefined;
      const end = 3 + 2 * data.readUInt16BE(1);
      if (data.length < end) return undefined;
      return readLegacyAnswer(
        Buffer.from(data.subarray(3, end)).swap16().toString('utf16le'),
        performance.now() - startedAt,
      ) ?? null;
    });
}

/** Where the game listens (server.properties): `server-ip` (loopback when unset or a wildcard) and `server-port`. */
function gameAddress(properties: Record<string, string>): { address: string; port: number } {
  const ip = properties['server-ip'] ?? '';
  const port = /^\d{1,5}$/.test(properties['server-port'] ?? '')
    ? Number(properties['server-port'])
    : DEFAULT_GAME_PORT;
  return {
    address: ip === '' || ip === '0.0.0.0' || ip === '::' ? '127.0.0.1' : ip,
    port: port >= 1 && port <= 65_535 ? port : DEFAULT_GAME_PORT,
  };
}

/** The game's answer to the Server List Ping within 1 s, the modern one or else the legacy one; null when none. */
async function pingGame(address: string, port: number): Promise<PingAnswer | null> {
  const deadline = performance.now() + PING_TIMEOUT_MS;
  const modern = await pingModern(address, port, deadline);
  if (modern !== 'legacy') return modern;
  return performance.now() < deadline ? pingLegacy(address, port, deadline) : null;
}

// ---- The state ----

interface Readiness {
  /** GET /api/ping */
  ping(): Promise<Reply>;
  /** Whether the running game is ready, and its answer to the ping: at most one ping at a time, answers reused. */
  check(): Promise<ReadyState>;
  /** For the events: `server.ready` once per run of the game, pinging on its own while it is watched until then. */
  detect(publish: Publish): Detector;
}

/**
 * Readiness (docs/api.md#get-apiping): the game's own answer on its own port, or with enable-status=false the Done line
 * of the current run. A ready answer is reused for 5 s, a not-ready one for 1 s; one ping at a time.
 */
function createReadiness(
  config: Readonly<Config>,
  game: GameFinder,
  presence: Presence,
  shared: SharedAnswers,
): Readiness {
  let last: { atMs: number; identity: string | undefined; state: ReadyState } | undefined;
  let inFlight: Promise<ReadyState> | undefined;

  const look = async (current: GameProcess | undefined): Promise<ReadyState> => {
    if (current === undefined) return { game: undefined, ready: false };
    let properties: Record<string, string> = {};
    try {
      properties = readServerProperties(config);
    } catch {
      // no properties: the game's defaults
    }
    // such a game closes every status request: its log says when it is ready
    if (properties['enable-status'] === 'false') return { game: current, ready: (await presence.read(current)).ready };
    const { address, port } = gameAddress(properties);
    const answer = await pingGame(address, port);
    return answer === null ? { game: current, ready: false } : { game: current, ready: true, answer };
  };

  const check = (): Promise<ReadyState> => {
    const current = game.find();
    const identity = current === undefined ? undefined : gameIdentity(current);
    if (last !== undefined && last.identity === identity
      && Date.now() - last.atMs < (last.state.ready ? PING_REUSE_MS : PING_RETRY_MS)) {
      return Promise.resolve(last.state);
    }
    inFlight ??= look(current).then((state) => {
      last = { atMs: Date.now(), identity, state };
      return state;
    }).finally(() => (inFlight = undefined));
    return inFlight;
  };

  return {
    // the answer made once per 50 ms like every read route's; the game's own answer is reused for up to 5 s
    ping: () => shared('ping', async () => {
      const { game: current, ready, answer } = await check();
      return jsonReply({
        ok: true, online: current !== undefined, ready,
        ...answer === undefined ? {} : {
          latency_ms: Math.round(answer.latencyMs * 10) / 10,
          ...answer.version === undefined ? {} : { version: answer.version },
          motd: plainMotd(answer.motd), players: answer.players,
          ...answer.favicon === undefined ? {} : { favicon: answer.favicon },
        },
      });
    }),
    check,
    detect(publish) {
      let announced: string | undefined; // the run whose readiness is known
      let first = true;
      return {
        dir: path.dirname(latestLogPath(config)),
        file: path.basename(latestLogPath(config)),
        // a run told ready: a line of its log asks nothing more of readiness
        glanceNow() {
          const current = game.find();
          return current !== undefined && announced === gameIdentity(current);
        },
        look() {
          const current = game.find();
          const quiet = first; // the first look takes the starting state: a run ready before it is no news
          first = false;
          if (current === undefined || announced === gameIdentity(current)) return;
          const identity = gameIdentity(current);
          // not awaited: a ping may take its second, and the other detectors' events must not wait for it
          void check().then((state) => {
            if (!state.ready || state.game === undefined || gameIdentity(state.game) !== identity) return;
            if (announced === identity) return;
            announced = identity;
            if (!quiet) publish('server.ready', { pid: current.pid });
          });
        },
      };
    },
  };
}

const PING_ROUTE: RouteAbout = {
  summary: 'Whether the game is ready, by its own Server List Ping',
  description: 'online: the Java process runs; ready: the game answered the Server List Ping on its own port '
    + '(server-ip or loopback, server-port of server.properties) within 1 s, or with enable-status=false logged the '
    + 'Done line of its current run. With an answer: its latency, version, MOTD (colour codes removed), players and '
    + 'favicon. One ping at a time; a ready answer is reused for 5 s, a not-ready one for 1 s.',
  answers: {
    200: success('Readiness, and the game\'s answer when it gave one.', 'Ping', {
      ok: true, online: true, ready: true, latency_ms: 0.4, version: { name: '1.21.4', protocol: 769 },
      motd: 'Gameserver survival — be nice!', players: { online: 2, max: 20 },
    }),
    503: BUSY_ANSWER,
  },
};

// ==== History: GET /api/players/history ====

const HISTORY_MINUTES = 1_440;
const MINUTE_MS = 60_000;
const HISTORY_LOG_MAX_BYTES = 64 * 1024 * 1024; // of latest.log at the first read: before that, nothing is known
const HISTORY_CHUNK_BYTES = 64 * 1024; // read and decoded in pieces that the heap's new space collects
const HISTORY_LINE_SLACK_S = 120; // log lines of several threads may be a little out of order
const HISTORY_FILE = 'players-history.json';
const RECENT_KEPT = 20;

// What the history and the status page read of a log: presence, and what players do
export const HISTORY_TYPES = new Set<LineMeaning['type']>([
  ...PRESENCE_TYPES, 'player.chat', 'player.died', 'player.advancement',
]);
const HISTORY_READER = readerOf(HISTORY_TYPES);

/** A meaningful line at its time. */
interface TimedLine {
  atMs: number;
  meaning: LineMeaning;
}

/** What the logs tell of the last day, as GET /status shows it. */
interface Timeline {
  counts: Array<number | null>; // most players online in each minute, oldest first
  fromMs: number; // the first minute
  recent: TimedLine[]; // the latest joins, leaves, deaths, advancements and chat lines, newest first
  lastStartMs?: number; // the current (or last) run's start line
  lastStopMs?: number; // its stop line
}

interface History {
  /** GET /api/players/history */
  history(): Promise<Reply>;
  timeline(): Promise<Timeline>;
}

/** Calls `visit` with each meaningful line of the whole lines of `data` at its time of day (seconds since midnight). */
function hintedLines(data: Buffer, end: number, visit: (secondOfDay: number, meaning: LineMeaning) => void): void {
  forEachHintedLine(data, end, HISTORY_READER, (meaning, lineTime) => {
    const time = /(\d\d):(\d\d):(\d\d)/.exec(lineTime);
    if (time !== null) visit(Number(time[1]) * 3600 + Number(time[2]) * 60 + Number(time[3]), meaning);
  });
}

/** hintedLines over a whole decompressed archive, a piece of about HISTORY_CHUNK_BYTES at a time between turns. */
async function hintedLinesInPieces(
  bytes: Buffer,
  visit: (secondOfDay: number, meaning: LineMeaning) => void,
): Promise<void> {
  for (let start = 0; start < bytes.length;) {
    let end = Math.min(bytes.length, start + HISTORY_CHUNK_BYTES);
    if (end < bytes.length) {
      const lastBreak = bytes.lastIndexOf(10, end - 1);
      // a piece ends at a line's end; a line longer than a piece ends its own piece
      end = lastBreak >= start ? lastBreak + 1 : bytes.indexOf(10, end) + 1 || bytes.length;
    }
    hintedLines(bytes.subarray(start, end), end - start, visit);
    start = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** What a gzip file holds decompressed, as its trailer tells (gunzipFile bounds what is read whatever it tells). */
function gzipSize(file: string): number | undefined {
  let opened: { fd: number; stat: fs.Stats };
  try {
    opened = openRegularFileSync(file);
  } catch {
    return undefined;
  }
  try {
    const trailer = Buffer.alloc(4);
    const { size } = opened.stat;
    return fs.readSync(opened.fd, trailer, 0, 4, Math.max(0, size - 4)) === 4 ? trailer.readUInt32LE(0) : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** Players online in a minute that lines were logged in. */
interface MinuteCount {
  max: number; // the most at any moment of it
  // set on a minute that was the latest yet when its first line came: how many were online when a later minute's line
  // came, which the minutes between hold
  end?: number;
}

/**
 * A log's lines (an archive, or what latest.log appended) replayed in order from the players online before the first:
 * no line is kept, only what the history and the status page tell of them. A line has a time of day, not a date: a
 * time earlier than the line before by more than the slack is the next day, and until `anchorReplay` dates the last
 * line, every time and minute counts from midnight of the first line's day.
 */
export interface Replay {
  startKey: string; // the players online before it: it holds while these are the same
  players: Set<string>;
  minutes: Map<number, MinuteCount>; // of the last day before the latest minute (and the latest before those)
  known: number; // the latest minute a line was in; -1 before the first line
  recent: TimedLine[]; // its latest news, newest first
  started: boolean; // it holds a start line: the bounds before it are of an earlier run
  lastStartMs?: number;
  lastStopMs?: number;
  day: number; // the last line's, from the first's
  lastSecondOfDay?: number;
  notBefore?: Date; // the day of the line before its first, read earlier
  firstDay?: Date; // midnight of the first line's day, once dated
}

const DAY_MS = 24 * 3600 * 1000;
// minutes kept before the latest: a day, and a clock change's hour
const REPLAY_KEPT_MINUTES = HISTORY_MINUTES + 61;
const NEWS_TYPES = new Set<LineMeaning['type']>([
  'player.joined', 'player.left', 'player.died', 'player.advancement', 'player.chat',
]);

const playersKey = (players: Iterable<string>): string => JSON.stringify([...players].sort());

/** A replay from `players` online; `after`: the lines follow that replay's, in the same file. */
export function newReplay(players: Iterable<string>, after?: Replay): Replay {
  const firstDay = after?.firstDay;
  return {
    startKey: playersKey(players), players: new Set(players), minutes: new Map(), known: -1, recent: [], started: false,
    day: 0, lastSecondOfDay: after?.lastSecondOfDay,
    notBefore: firstDay && new Date(firstDay.getFullYear(), firstDay.getMonth(), firstDay.getDate() + after!.day),
  };
}

/** Replays one line: who is online, the most in its minute, and whether the status page lists it. */
export function replayLine(replay: Replay, secondOfDay: number, meaning: LineMeaning, withChat: boolean): void {
  if (replay.lastSecondOfDay !== undefined && secondOfDay < replay.lastSecondOfDay - HISTORY_LINE_SLACK_S) replay.day++;
  replay.lastSecondOfDay = secondOfDay;
  const atMs = replay.day * DAY_MS + secondOfDay * 1000;
  const minute = Math.floor(atMs / MINUTE_MS);
  const { players, minutes } = replay;
  let count = minutes.get(minute);
  if (count === undefined) {
    count = { max: 0 };
    minutes.set(minute, count);
    if (minute > replay.known) replay.known = minute;
  }
  count.max = Math.max(count.max, players.size);
  let news = false;
  switch (meaning.type) {
    case 'session.started':
      players.clear();
      replay.started = true;
      replay.lastStartMs = atMs;
      replay.lastStopMs = undefined;
      break;
    case 'server.stopping':
      replay.lastStopMs ??= atMs;
      break;
    case 'player.joined':
      // a join is logged twice (the login line, then the broadcast): once is news
      news = !players.has(meaning.player);
      players.add(meaning.player);
      break;
    case 'player.left':
      news = players.delete(meaning.player);
      break;
    default:
      news = NEWS_TYPES.has(meaning.type) && (meaning.type !== 'player.chat' || withChat);
  }
  count.max = Math.max(count.max, players.size);
  minutes.get(replay.known)!.end = players.size;
  if (news) {
    replay.recent.unshift({ atMs, meaning });
    if (replay.recent.length > RECENT_KEPT) replay.recent.pop();
  }
  if (minutes.size > 2 * REPLAY_KEPT_MINUTES) forgetMinutes(replay);
}

/** Forgets the minutes a day before the latest, but the last one whose end the minutes after it hold. */
function forgetMinutes(replay: Replay): void {
  const before = replay.known - REPLAY_KEPT_MINUTES;
  let carrying = -1;
  for (const [minute, count] of replay.minutes) {
    if (minute < before && count.end !== undefined && minute > carrying) carrying = minute;
  }
  for (const minute of replay.minutes.keys()) if (minute < before && minute !== carrying) replay.minutes.delete(minute);
}

/**
 * Dates a replay by its last line, on `lastDay` (the archive's name, or latest.log's modification), or the day before
 * when later than `lastSecondOfDay` by more than the slack; never before the lines read before it.
 */
export function anchorReplay(replay: Replay, lastDay: Date, lastSecondOfDay: number): void {
  if (replay.known === -1) return;
  const back = replay.day + (replay.lastSecondOfDay! > lastSecondOfDay + HISTORY_LINE_SLACK_S ? 1 : 0);
  let first = new Date(lastDay.getFullYear(), lastDay.getMonth(), lastDay.getDate() - back);
  // a file not written for days: its days without lines cannot be seen in the times of day
  if (replay.notBefore !== undefined && replay.notBefore > first) first = replay.notBefore;
  const at = (relativeMs: number): number => new Date(first.getFullYear(), first.getMonth(),
    first.getDate() + Math.floor(relativeMs / DAY_MS), 0, 0, 0, relativeMs % DAY_MS).getTime();
  const minuteOf = (relative: number): number => Math.floor(at(relative * MINUTE_MS) / MINUTE_MS);
  const minutes = new Map<number, MinuteCount>();
  for (const [relative, count] of replay.minutes) {
    // a clock set back an hour makes two minutes one
    const minute = minuteOf(relative);
    const same = minutes.get(minute);
    minutes.set(minute, same === undefined
      ? count
      : { max: Math.max(same.max, count.max), end: count.end ?? same.end });
  }
  replay.minutes = minutes;
  replay.known = minuteOf(replay.known);
  for (const line of replay.recent) line.atMs = at(line.atMs);
  if (replay.lastStartMs !== undefined) replay.lastStartMs = at(replay.lastStartMs);
  if (replay.lastStopMs !== undefined) replay.lastStopMs = at(replay.lastStopMs);
  replay.firstDay = first;
}

/** Adds to `into` (dated) the dated replay of the lines that follow its own. */
export function appendReplay(into: Replay, later: Replay): void {
  for (const [minute, count] of later.minutes) {
    const same = into.minutes.get(minute);
    if (minute > into.known || same === undefined) {
      // a minute before the latest already replayed holds what the minutes around it held: it is not the latest yet
      into.minutes.set(minute, minute > into.known ? { ...count } : { max: count.max });
    } else {
      same.max = Math.max(same.max, count.max);
      if (minute === into.known) same.end = count.end ?? same.end;
    }
  }
  into.known = Math.max(into.known, later.known);
  into.players = later.players;
  into.recent = [...later.recent, ...into.recent].slice(0, RECENT_KEPT);
  if (later.started) {
    into.started = true;
    into.lastStartMs = later.lastStartMs;
    into.lastStopMs = later.lastStopMs;
  } else into.lastStopMs ??= later.lastStopMs;
  if (later.firstDay !== undefined) {
    into.day = later.day;
    into.lastSecondOfDay = later.lastSecondOfDay;
    into.firstDay = later.firstDay;
  }
  forgetMinutes(into);
}

/**
 * Most players online in each of `minutes` minutes from `fromMs`, as the dated replay tells: null before its first
 * line; after its last, the count then, or 0 when the game no longer runs.
 */
export function countsOf(replay: Replay, fromMs: number, minutes: number, running: boolean): Array<number | null> {
  const first = Math.floor(fromMs / MINUTE_MS);
  let carried = -1;
  for (const [minute, count] of replay.minutes) {
    if (minute < first && count.end !== undefined && minute > carried) carried = minute;
  }
  let held = replay.minutes.get(carried)?.end;
  const counts: Array<number | null> = new Array(minutes).fill(null);
  for (let i = 0; i < minutes; i++) {
    const minute = first + i;
    const count = replay.minutes.get(minute);
    if (count !== undefined) {
      counts[i] = count.end === undefined ? Math.max(held ?? 0, count.max) : count.max;
      held = count.end ?? held;
    } else if (held !== undefined) counts[i] = minute > replay.known && !running ? 0 : held;
  }
  return counts;
}

/**
 * History (docs/api.md#get-apiplayershistory), replayed from the logs (docs/performance.md#the-players-history): each
 * archive of the last day once, then latest.log once and only its appends after, keeping no line; the answer is made
 * again only when a log changed or the minute turned. With STATE_DIRECTORY the counts are kept there too, once a
 * minute, and stand where the logs tell less (archives deleted, or a roll beyond the archive bounds).
 */
class PlayersHistory implements History {
  private readonly logDir: string;
  private listed: { mtimeMs: number; readMs: number; names: string[] } | undefined;
  private readonly archives = new Map<string, { signature: string; bytes: number; replay: Replay }>();
  private archivesKey = '';
  // skipping: inside a line longer than a piece, whose rest is no line of its own (as the log follower's)
  private latest: { dev: number; ino: number; offset: number; skipping: boolean; replay: Replay } | undefined;
  private changes = 0; // of the replays: an answer is made again when they changed
  private answer: { key: string; timeline: Timeline } | undefined;
  private readonly stateFile: string | undefined;
  private kept: Map<number, number> | undefined; // minute → count, from the state file
  private savedMinute = -1;
  private readonly fault = createFaultLog('keeping the players history');
  // one reading at a time: the history route and the status page share what was read, and neither reads it twice
  private readonly turns = createSerialQueue();

  constructor(
    private readonly config: Readonly<Config>,
    private readonly game: GameFinder,
    private readonly shared: SharedAnswers,
  ) {
    this.logDir = path.dirname(latestLogPath(config));
    this.stateFile = config.stateDir === undefined ? undefined : path.join(config.stateDir, HISTORY_FILE);
  }

  history(): Promise<Reply> {
    return this.shared('history', async () => {
      const { counts, fromMs } = await this.timeline();
      return jsonReply({ ok: true, step_s: 60, from: new Date(fromMs).toISOString(), counts });
    });
  }

  timeline(): Promise<Timeline> {
    return this.turns(() => this.makeTimeline());
  }

  private async makeTimeline(): Promise<Timeline> {
    const nowMinute = Math.floor(Date.now() / MINUTE_MS);
    const fromMs = (nowMinute - HISTORY_MINUTES + 1) * MINUTE_MS;
    // in time order: the archives oldest first, then latest.log from the players the last of them left online
    const replays = await this.readArchives(fromMs);
    replays.push(await this.readLatest(replays[replays.length - 1]?.players ?? new Set()));
    const running = this.game.find() !== undefined;
    const key = `${this.changes} ${nowMinute} ${running}`;
    if (this.answer?.key === key) return this.answer.timeline;
    const whole = newReplay([]);
    for (const replay of replays) appendReplay(whole, replay);
    const counts = countsOf(whole, fromMs, HISTORY_MINUTES, running);
    const stored = this.readKept();
    const first = Math.floor(fromMs / MINUTE_MS);
    // what was kept was read from logs that may be gone since: where the logs now tell less, it stands
    counts.forEach((count, i) => {
      const keptCount = stored.get(first + i);
      if (keptCount !== undefined && (count === null || keptCount > count)) counts[i] = keptCount;
    });
    for (let i = 0; i < counts.length; i++) if (counts[i] !== null) stored.set(first + i, counts[i]!);
    for (const minute of stored.keys()) if (minute < first) stored.delete(minute);
    this.save(fromMs, counts);
    const { recent, lastStartMs, lastStopMs } = whole;
    const timeline = {
      counts, fromMs, recent: recent.filter(({ atMs }) => atMs < (nowMinute + 1) * MINUTE_MS), lastStartMs, lastStopMs,
    };
    this.answer = { key, timeline };
    return timeline;
  }

  /**
   * The replays of the archives of the days from `fromMs` on, oldest first: the newest ARCHIVE_MAX_FILES within
   * ARCHIVE_MAX_BYTES decompressed, each read again only once it changed, or the players online before it did.
   */
  private async readArchives(fromMs: number): Promise<Replay[]> {
    const { logDir, archives } = this;
    const oldestDay = new Date(fromMs);
    const firstDay = new Date(oldestDay.getFullYear(), oldestDay.getMonth(), oldestDay.getDate()).getTime();
    const wanted = this.archiveNames().map((name) => {
      const [, year, month, day] = ARCHIVE_NAME.exec(name)!;
      return {
        name,
        day: new Date(Number(year), Number(month) - 1, Number(day)),
        n: Number(/-(\d+)\.log\.gz$/.exec(name)![1]),
      };
    }).filter(({ day }) => day.getTime() >= firstDay)
      .sort((a, b) => b.day.getTime() - a.day.getTime() || b.n - a.n)
      .slice(0, ARCHIVE_MAX_FILES);
    const chosen: Array<{ name: string; day: Date; file: string; signature: string; allowed: number }> = [];
    let budget = ARCHIVE_MAX_BYTES;
    for (const { name, day } of wanted) {
      const file = path.join(logDir, name);
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      const signature = `${stat.size}:${stat.mtimeMs}`;
      const known = archives.get(name);
      const bytes = known?.signature === signature ? known.bytes : gzipSize(file);
      if (bytes === undefined || bytes > budget) break;
      chosen.unshift({ name, day, file, signature, allowed: budget });
      budget -= bytes;
    }
    const replays: Replay[] = [];
    let players: ReadonlySet<string> = new Set();
    for (const { name, day, file, signature, allowed } of chosen) {
      let known = archives.get(name);
      if (known?.signature !== signature || known.replay.startKey !== playersKey(players)) {
        archives.delete(name);
        const bytes = await gunzipFile(file, allowed);
        if (bytes === undefined) continue;
        const replay = newReplay(players);
        await hintedLinesInPieces(bytes, (secondOfDay, meaning) =>
          replayLine(replay, secondOfDay, meaning, this.config.statusPageChat));
        anchorReplay(replay, day, 24 * 3600);
        known = { signature, bytes: bytes.length, replay };
        archives.set(name, known);
        this.changes++;
      }
      replays.push(known.replay);
      players = known.replay.players;
    }
    for (const name of archives.keys()) if (!chosen.some((c) => c.name === name)) archives.delete(name);
    const archivesKey = chosen.map(({ name, signature }) => `${name} ${signature}`).join('\n');
    if (archivesKey !== this.archivesKey) this.changes++;
    this.archivesKey = archivesKey;
    return replays;
  }

  /** The archives' names in the logs folder, listed again when the folder changed. */
  private archiveNames(): string[] {
    const stat = fs.statSync(this.logDir, { throwIfNoEntry: false });
    if (stat === undefined) return [];
    const { listed } = this;
    // a change within the clock tick of the listing would not show in the folder's time: a recent listing is redone
    if (listed?.mtimeMs === stat.mtimeMs && listed.readMs - stat.mtimeMs > 1000) return listed.names;
    const readMs = Date.now();
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.logDir).filter((name) => ARCHIVE_NAME.test(name));
    } catch {
      // no logs folder: nothing archived
    }
    this.listed = { mtimeMs: stat.mtimeMs, readMs, names };
    return names;
  }

  /**
   * The replay of latest.log from `players` online before its first line, reading what was appended since the last
   * call (the whole file once, up to 64 MiB); read again from the top when those players changed.
   */
  private async readLatest(players: ReadonlySet<string>): Promise<Replay> {
    let handle: fs.promises.FileHandle;
    let stat: fs.Stats;
    try {
      ({ handle, stat } = await openRegularFile(latestLogPath(this.config), 'latest.log'));
    } catch {
      if (this.latest !== undefined) this.changes++;
      this.latest = undefined;
      return newReplay(players);
    }
    let { latest } = this;
    try {
      if (latest === undefined || latest.dev !== stat.dev || latest.ino !== stat.ino || stat.size < latest.offset
        || latest.replay.startKey !== playersKey(players)) {
        // a new file (a roll: the old one is an archive now), or one truncated: from the top
        this.latest = latest = {
          dev: stat.dev, ino: stat.ino, offset: Math.max(0, stat.size - HISTORY_LOG_MAX_BYTES),
          // a read that begins inside the file begins inside a line: its rest is skipped
          skipping: stat.size > HISTORY_LOG_MAX_BYTES, replay: newReplay(players),
        };
        this.changes++;
      }
      if (latest.offset >= stat.size) return latest.replay;
      const appended = newReplay(latest.replay.players, latest.replay);
      const replayAppended = (secondOfDay: number, meaning: LineMeaning): void =>
        replayLine(appended, secondOfDay, meaning, this.config.statusPageChat);
      const chunk = Buffer.allocUnsafe(HISTORY_CHUNK_BYTES);
      // a piece at a time on libuv's threads: the first read of a large log holds no other request up
      while (latest.offset < stat.size) {
        const { bytesRead: read } = await handle.read(
          chunk, 0, Math.min(chunk.length, stat.size - latest.offset), latest.offset,
        );
        if (read === 0) break;
        const taken = takeWholeLines(chunk.subarray(0, read), read === chunk.length, latest,
          (end) => hintedLines(chunk, end, replayAppended));
        if (taken === 0) break;
        latest.offset += taken;
      }
      if (appended.known === -1) return latest.replay;
      const modified = stat.mtime;
      anchorReplay(appended, modified, modified.getHours() * 3600 + modified.getMinutes() * 60 + modified.getSeconds());
      appendReplay(latest.replay, appended);
      this.changes++;
      return latest.replay;
    } finally {
      await handle.close();
    }
  }

  /** The counts of the state file, read once: minute → count. */
  private readKept(): Map<number, number> {
    if (this.kept !== undefined || this.stateFile === undefined) return this.kept ?? new Map();
    const kept = new Map<number, number>();
    this.kept = kept;
    try {
      const stored = JSON.parse(readSmallFileSync(this.stateFile).toString('utf8')) as {
        from?: unknown;
        counts?: unknown;
      };
      const first = Math.floor(Date.parse(String(stored.from)) / MINUTE_MS);
      if (Number.isFinite(first) && Array.isArray(stored.counts)) {
        stored.counts.forEach((count, i) => {
          if (Number.isSafeInteger(count) && count >= 0) kept.set(first + i, count);
        });
      }
    } catch {
      // none yet, or unreadable: the logs alone
    }
    return kept;
  }

  /** Writes the counts to the state file, once a minute at most. */
  private save(fromMs: number, counts: ReadonlyArray<number | null>): void {
    const { stateFile } = this;
    if (stateFile === undefined) return;
    const minute = Math.floor(Date.now() / MINUTE_MS);
    if (minute === this.savedMinute) return;
    this.savedMinute = minute;
    try {
      // a new file each time, renamed over the last: a crash mid-write leaves the previous minute's whole
      const temp = `${stateFile}.tmp-${process.pid}`;
      const counted = JSON.stringify({ step_s: 60, from: new Date(fromMs).toISOString(), counts });
      fs.writeFileSync(temp, counted, { mode: 0o600 });
      fs.renameSync(temp, stateFile);
      this.fault(undefined);
    } catch (err) {
      this.fault(describeError(err));
    }
  }
}


const HISTORY_ROUTE: RouteAbout = {
  summary: 'Players online over the last 24 hours',
  description: 'One point a minute, 1,440 in all, oldest first, from the first minute `from`: the most players online '
    + 'at any moment of that minute, by the join and leave lines of latest.log and its archives; null where nothing is '
    + 'known (before the oldest log). With STATE_DIRECTORY the counts are kept there too and survive the logs.',
  answers: {
    200: success('The counts.', 'History', {
      ok: true, step_s: 60, from: '2026-11-24T12:01:00.000Z', counts: [null, null, 0, 0, 1, 2, 2, 1],
    }),
    503: BUSY_ANSWER,
  },
};

// ==== The status page: GET /status ====

const HTML_TYPE = 'text/html; charset=utf-8';
const CHART_HEIGHT = 100; // the chart's viewBox: one unit a minute across, the peak at the top
const AVATAR_SIZE_PX = 24;

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The page's own style and script, inline and allowed by their hashes alone (no 'unsafe-inline'): one request
// draws the page, and nothing reaches it from elsewhere. MOTD colours on a dark plate, as the game's server list shows
// them, lightened where the game's own would be unreadable (dark blue, black).
const STATUS_PAGE_STYLE = `
:root { color-scheme: light dark; --bg: #f7f7f5; --fg: #1c1c1c; --muted: #585858; --card: #fff; --line: #d6d6d2;
  --accent: #1f6f2b; --up: #1f7a33; --down: #b3261e; --starting: #8a5a00; --plate: #1d1d1d; }
@media (prefers-color-scheme: dark) { :root { --bg: #121212; --fg: #ececec; --muted: #b4b4b4; --card: #1c1c1c;
  --line: #3a3a3a; --accent: #7bd88f; --up: #6fd487; --down: #ff8a80; --starting: #ffc266; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, sans-serif; }
.wrap { max-width: 64rem; margin: 0 auto; padding: 0 1rem; }
header { background: var(--plate); color: #fff; padding: 1.25rem 0; }
header .wrap { display: flex; gap: 1rem; align-items: center; }
header img { width: 64px; height: 64px; image-rendering: pixelated; flex: none; }
h1 { margin: 0; font-size: 1.5rem; line-height: 1.3; white-space: pre-line; overflow-wrap: anywhere; }
.motd-more { margin: .25rem 0 0; white-space: pre-line; overflow-wrap: anywhere; }
main { display: grid; gap: 1rem; padding-top: 1rem; padding-bottom: 1rem; }
@media (min-width: 48rem) { main { grid-template-columns: 1fr 1fr; } .wide { grid-column: 1 / -1; } }
section { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; min-width: 0; }
h2 { margin: 0 0 .5rem; font-size: 1.125rem; }
.state { font-size: 1.25rem; font-weight: 600; margin: 0 0 .5rem; display: flex; align-items: center; gap: .5rem; }
.state::before { content: ""; width: .9rem; height: .9rem; border-radius: 50%; background: currentColor; }
.state-up { color: var(--up); }
.state-down { color: var(--down); }
.state-starting, .state-stopping { color: var(--starting); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
ul, ol { margin: 0; padding: 0; list-style: none; }
#players li { display: flex; align-items: center; gap: .5rem; padding: .2rem 0; overflow-wrap: anywhere; }
#players img { width: ${AVATAR_SIZE_PX}px; height: ${AVATAR_SIZE_PX}px; image-rendering: pixelated; }
#recent li { padding: .3rem 0; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
#recent li:first-child { border-top: 0; }
#recent time, .note { color: var(--muted); font-size: .875rem; margin-right: .5rem; }
figure { margin: 0; }
svg { display: block; width: 100%; height: 8rem; background: var(--bg); border-radius: .25rem; }
.chart-line { fill: none; stroke: var(--accent); stroke-width: 2; vector-effect: non-scaling-stroke; }
.axis { display: flex; justify-content: space-between; color: var(--muted); font-size: .875rem; }
footer { color: var(--muted); font-size: .875rem; padding-bottom: 1.5rem; }
a { color: var(--accent); }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
.mc-black { color: #9a9a9a; } .mc-dark_blue { color: #8c8cff; } .mc-dark_green { color: #3cc04c; }
.mc-dark_aqua { color: #2fc4c4; } .mc-dark_red { color: #ff6b6b; } .mc-dark_purple { color: #d77bff; }
.mc-gold { color: #ffaa00; } .mc-gray { color: #aaaaaa; } .mc-dark_gray { color: #9a9a9a; } .mc-blue { color: #8c8cff; }
.mc-green { color: #55ff55; }
.mc-aqua { color: #55ffff; }
.mc-red { color: #ff5555; }
.mc-light_purple { color: #ff55ff; }
.mc-yellow { color: #ffff55; } .mc-white { color: #ffffff; }
.mc-b { font-weight: 700; } .mc-i { font-style: italic; } .mc-u { text-decoration: underline; }
.mc-s { text-decoration: line-through; } .mc-u.mc-s { text-decoration: underline line-through; }
`;

// Live updates from GET /api/events: every text is set with textContent, never parsed as HTML
const STATUS_PAGE_SCRIPT = `'use strict';
(() => {
  const VERBS = ${JSON.stringify(ADVANCEMENT_VERBS)};
  const KEPT = ${RECENT_KEPT};
  const $ = (id) => document.getElementById(id);
  const main = document.querySelector('main');
  const chat = main.dataset.chat === 'on';
  const avatar = main.dataset.avatar || '';
  const local = (time) => {
    const at = new Date(time.dateTime);
    const today = at.toDateString() === new Date().toDateString();
    time.textContent = today ? at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
      : at.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });
  };
  document.querySelectorAll('time').forEach(local);
  const players = new Set([...document.querySelectorAll('#players li')].map((li) => li.dataset.name));
  // the server drew each head (a {uuid} is known there alone); a player who joins later gets one from a {name} template
  const heads = new Map([...document.querySelectorAll('#players li')].map((li) => [li.dataset.name, li.dataset.head]));
  const headOf = (name) => heads.get(name)
    ?? (avatar.includes('{name}') && !avatar.includes('{uuid}') ? avatar.replaceAll('{name}', encodeURIComponent(name))
      : undefined);
  const setState = (kind, text) => {
    $('state').className = 'state state-' + kind;
    $('state-text').textContent = text;
    $('announce').textContent = 'The server is now: ' + text;
  };
  const showPlayers = () => {
    const list = $('players');
    list.replaceChildren();
    for (const name of [...players].sort()) {
      const li = document.createElement('li');
      li.dataset.name = name;
      const head = headOf(name);
      if (head !== undefined) {
        const img = document.createElement('img');
        img.src = head;
        img.alt = '';
        img.width = img.height = ${AVATAR_SIZE_PX};
        li.append(img);
      }
      li.append(name);
      list.append(li);
    }
    $('online').textContent = String(players.size);
    $('nobody').hidden = players.size > 0;
  };
  const tell = (event, text) => {
    const li = document.createElement('li');
    const time = document.createElement('time');
    time.dateTime = event.time;
    local(time);
    li.append(time, text);
    $('recent').prepend(li);
    while ($('recent').children.length > KEPT) $('recent').lastElementChild.remove();
    $('quiet').hidden = true;
  };
  let chartAsked = 0;
  const redrawChart = async () => {
    if (Date.now() - chartAsked < 10000) return;
    chartAsked = Date.now();
    try {
      const history = await (await fetch('/api/players/history')).json();
      const peak = Math.max(1, ...history.counts.filter((c) => c !== null));
      let d = '';
      let before = null;
      history.counts.forEach((count, i) => {
        if (count === null) { before = null; return; }
        const y = ${CHART_HEIGHT} - (count / peak) * ${CHART_HEIGHT - 4};
        if (before === null) d += 'M' + i + ' ' + y;
        else if (count !== before) d += 'V' + y;
        d += 'H' + (i + 1);
        before = count;
      });
      $('chart-line').setAttribute('d', d);
      $('chart-peak').textContent = String(peak);
    } catch {
      // the next change tries again
    }
  };
  const onEvent = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    switch (event.type) {
      case 'server.started': players.clear(); showPlayers(); setState('starting', 'Starting'); break;
      case 'server.ready': setState('up', 'Up and ready'); break;
      case 'server.stopping': setState('stopping', 'Stopping'); break;
      case 'server.stopped':
        players.clear();
        showPlayers();
        setState('down', event.crashed ? 'Down (it crashed or was killed)' : 'Down');
        break;
      case 'player.joined':
        players.add(event.player); showPlayers(); tell(event, event.player + ' joined the game');
        void redrawChart(); break;
      case 'player.left':
        players.delete(event.player); showPlayers(); tell(event, event.player + ' left the game');
        void redrawChart(); break;
      case 'player.died': tell(event, event.message); break;
      case 'player.advancement':
        tell(event, event.player + ' ' + VERBS[event.kind] + ' [' + event.advancement + ']');
        break;
      case 'player.chat': if (chat) tell(event, '<' + event.player + '> ' + event.text); break;
    }
  };
  const listen = () => {
    const source = new EventSource('/api/events');
    source.onmessage = onEvent;
    // a closed stream (the daemon restarting, or its streams all taken) is opened again later
    source.onerror = () => { if (source.readyState === EventSource.CLOSED) setTimeout(listen, 30000); };
  };
  listen();
})();
`;

const cspHash = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const STATUS_PAGE_STYLE_HASH = cspHash(STATUS_PAGE_STYLE);
const STATUS_PAGE_SCRIPT_HASH = cspHash(STATUS_PAGE_SCRIPT);

/** The page's policy: its own style and script by hash, events and history from itself, images as data or heads. */
function statusPagePolicy(avatarUrl: string | undefined): string {
  const avatars = avatarUrl === undefined ? '' : ` ${new URL(avatarUrl.replace(/\{(?:name|uuid)\}/g, 'x')).origin}`;
  return [
    "default-src 'none'", `script-src ${STATUS_PAGE_SCRIPT_HASH}`, `style-src ${STATUS_PAGE_STYLE_HASH}`,
    `img-src data:${avatars}`, "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  ].join('; ');
}

/** A step line of the counts: one unit a minute across, the peak at the top; a gap where a count is unknown. */
export function chartPath(counts: ReadonlyArray<number | null>, peak: number): string {
  let d = '';
  let before: number | null = null;
  counts.forEach((count, i) => {
    if (count === null) {
      before = null;
      return;
    }
    const y = CHART_HEIGHT - (count / peak) * (CHART_HEIGHT - 4);
    if (before === null) d += `M${i} ${y}`;
    else if (count !== before) d += `V${y}`;
    d += `H${i + 1}`;
    before = count;
  });
  return d;
}

const motdHtml = (runs: readonly MotdRun[]): string => runs.map(({ text, classes }) =>
  (classes === '' ? escapeHtml(text) : `<span class="${classes}">${escapeHtml(text)}</span>`)).join('');

/** MOTD runs split at its line break: the name line and the rest. */
function splitMotd(runs: readonly MotdRun[]): [MotdRun[], MotdRun[]] {
  const first: MotdRun[] = [];
  const rest: MotdRun[] = [];
  for (const run of runs) {
    const target = rest.length > 0 ? rest : first;
    const at = run.text.indexOf('\n');
    if (at === -1 || target === rest) target.push(run);
    else {
      first.push({ ...run, text: run.text.slice(0, at) });
      rest.push({ ...run, text: run.text.slice(at + 1) });
    }
  }
  return [first, rest];
}

/** `<time>` of an instant: the host's time of day (or date and time when not today); the script shows the visitor's. */
function timeHtml(atMs: number): string {
  const at = new Date(atMs);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const clockText = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  const text = at.toDateString() === new Date().toDateString()
    ? clockText
    : `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${clockText}`;
  return `<time datetime="${at.toISOString()}">${text}</time>`;
}

/** What a recent line says, as the page and its script write it. */
function recentText(meaning: LineMeaning): string {
  switch (meaning.type) {
    case 'player.joined': return `${meaning.player} joined the game`;
    case 'player.left': return `${meaning.player} left the game`;
    case 'player.died': return eventText(meaning.message);
    case 'player.advancement':
      return `${meaning.player} ${ADVANCEMENT_VERBS[meaning.kind]} [${eventText(meaning.advancement)}]`;
    case 'player.chat': return `<${meaning.player}> ${eventText(meaning.text)}`;
    default: return '';
  }
}

interface StatusPage {
  /** GET /status */
  render(): Promise<Reply>;
}

/**
 * GET /status (docs/api.md#get-status): the page for people, drawn on the server with every text escaped, and kept
 * live by its small script from GET /api/events.
 */
function createStatusPage(
  config: Readonly<Config>,
  clock: Clock,
  presence: Presence,
  readiness: Readiness,
  history: History,
  shared: SharedAnswers,
): StatusPage {
  const policy = statusPagePolicy(config.avatarUrl);
  const avatarFor = (player: string): string | undefined => {
    const template = config.avatarUrl;
    if (template === undefined) return undefined;
    const uuid = template.includes('{uuid}') ? localUuid(config, player) : '';
    if (uuid === undefined) return undefined;
    return template.replace(/\{name\}/g, encodeURIComponent(player)).replace(/\{uuid\}/g, uuid);
  };

  const render = async (): Promise<Reply> => {
    const state = await readiness.check();
    const running = state.game;
    let properties: Record<string, string> = {};
    try {
      properties = readServerProperties(config);
    } catch {
      // the game's defaults
    }
    let players: string[] = [];
    let stopping = false;
    if (running !== undefined) {
      try {
        const session = await presence.read(running);
        players = [...session.players].sort();
        stopping = session.stopping;
      } catch {
        players = [];
      }
    }
    const timeline = await history.timeline();
    const runs = state.answer?.motd ?? motdRuns(properties.motd ?? 'A Minecraft Server');
    const [nameLine, more] = splitMotd(runs);
    const name = plainMotd(nameLine).trim() || 'Minecraft server';
    const maxOfProperties = Number(properties['max-players']);
    const max = state.answer?.players.max ?? (Number.isSafeInteger(maxOfProperties) ? maxOfProperties : 20);
    const version = state.answer?.version?.name || readGameVersion(config) || 'unknown';
    const [kind, text] = running === undefined ? ['down', 'Down']
      : stopping ? ['stopping', 'Stopping']
        : state.ready ? ['up', 'Up and ready'] : ['starting', 'Starting'];
    let since: string;
    if (running !== undefined) {
      since = `<dt>Running since</dt><dd>${timeHtml(clock.startedAtMs(running.startTicks))}</dd>`;
    } else if (timeline.lastStopMs !== undefined) {
      since = `<dt>Stopped</dt><dd>${timeHtml(timeline.lastStopMs)}</dd>`;
    } else if (timeline.lastStartMs !== undefined) {
      const written = fs.statSync(latestLogPath(config), { throwIfNoEntry: false })?.mtimeMs ?? timeline.lastStartMs;
      since = '<dt>Stopped</dt><dd>without shutting down (a crash, or killed); '
        + `last log entry ${timeHtml(written)}</dd>`;
    } else since = '';
    const known = timeline.counts.filter((count): count is number => count !== null);
    const peak = Math.max(1, ...known);
    const peakAt = timeline.counts.indexOf(Math.max(...known, 0));
    const favicon = state.answer?.favicon;
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="description" content="${escapeHtml(`Whether ${name} is up, who is playing, and the last 24 hours.`)}">
<title>${escapeHtml(name)}: server status</title>
<link rel="icon" href="${favicon ?? 'data:,'}">
<style>${STATUS_PAGE_STYLE}</style>
</head>
<body>
<header><div class="wrap">${favicon === undefined ? '' : `<img src="${favicon}" alt="" width="64" height="64">`}<div>
<h1>${motdHtml(nameLine) || escapeHtml(name)}</h1>
${more.length === 0 ? '' : `<p class="motd-more">${motdHtml(more)}</p>`}
</div></div></header>
<main class="wrap" data-chat="${config.statusPageChat ? 'on' : 'off'}" data-avatar="${escapeHtml(config.avatarUrl ?? '')}">
<section aria-labelledby="server-heading">
<h2 id="server-heading">Server</h2>
<p id="state" class="state state-${kind}"><span id="state-text">${text}</span></p>
<div id="announce" class="visually-hidden" role="status" aria-live="polite"></div>
<dl>
<dt>Version</dt><dd>${escapeHtml(version)}</dd>
<dt>Players</dt><dd><span id="online">${players.length}</span> of <span id="max">${max}</span></dd>
${since}
</dl>
</section>
<section aria-labelledby="players-heading">
<h2 id="players-heading">Players online</h2>
<ul id="players">${players.map((player) => {
    const head = avatarFor(player);
    return `<li data-name="${escapeHtml(player)}"${head === undefined ? '' : ` data-head="${escapeHtml(head)}"`}>`
      + `${head === undefined ? ''
        : `<img src="${escapeHtml(head)}" alt="" width="${AVATAR_SIZE_PX}" height="${AVATAR_SIZE_PX}">`}`
      + `${escapeHtml(player)}</li>`;
  }).join('')}</ul>
<p id="nobody"${players.length > 0 ? ' hidden' : ''}>Nobody is online.</p>
</section>
<section class="wide" aria-labelledby="chart-heading">
<h2 id="chart-heading">Players over the last 24 hours</h2>
<figure>
<svg viewBox="0 0 ${HISTORY_MINUTES} ${CHART_HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Players online over the last 24 hours, one point a minute</title>
<desc id="chart-desc">${known.length === 0 ? 'Nothing is known of the last 24 hours.'
      : `At most ${Math.max(...known)} players at once${peakAt === -1
        ? ''
        : `, last at ${timeHtml(timeline.fromMs + peakAt * MINUTE_MS).replace(/<[^>]*>/g, '')}`}.`}</desc>
<path id="chart-line" class="chart-line" d="${chartPath(timeline.counts, peak)}"/>
</svg>
<figcaption class="axis"><span>24 hours ago</span><span>most at once: <span id="chart-peak">${peak}</span></span><span>now</span></figcaption>
</figure>
</section>
<section class="wide" aria-labelledby="recent-heading">
<h2 id="recent-heading">Latest activity</h2>
<ol id="recent">${timeline.recent.map(({ atMs, meaning }) =>
    `<li>${timeHtml(atMs)}${escapeHtml(recentText(meaning))}</li>`).join('')}</ol>
<p id="quiet" class="note"${timeline.recent.length > 0 ? ' hidden' : ''}>Nothing happened in the last day.</p>
</section>
</main>
<footer class="wrap"><p>Updates live while this page is open. For programs: <a href="/api/ping">/api/ping</a>, <a href="/api/players/history">/api/players/history</a>.</p></footer>
<script>${STATUS_PAGE_SCRIPT}</script>
</body>
</html>
`;
    return {
      status: 200,
      body: html,
      type: HTML_TYPE,
      headers: { 'Content-Security-Policy': policy, 'Referrer-Policy': 'no-referrer' },
    };
  };

  // docs/api.md#freshness: made at most 20 times a second, like every read route's answer, whoever asks
  return { render: () => shared('status page', render) };
}

const STATUS_PAGE_ROUTE: RouteAbout = {
  summary: 'The status page, for people',
  description: 'HTML drawn on the server (name and MOTD in colour, up, starting or down, version, players with their '
    + 'heads when AVATAR_URL is set, the 24-hour chart, the latest joins, leaves, deaths and advancements, chat with '
    + 'STATUS_PAGE_CHAT=on), updated live from GET /api/events by its own script. Its Content-Security-Policy allows '
    + 'nothing from elsewhere but the AVATAR_URL origin\'s images.',
  answers: {
    200: success('The page.', { type: 'string' }, '<!doctype html>\n<html lang="en">…</html>\n', HTML_TYPE),
    503: BUSY_ANSWER,
  },
};

// ==== Metrics: GET /metrics ====

const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8'; // exactly: Prometheus 3 refuses a scrape without it
/** The Map `outer` holds at `key`, an empty one set there first when it holds none (no closure made per call). */
function innerMap<K, IK, IV>(outer: Map<K, Map<IK, IV>>, key: K): Map<IK, IV> {
  let inner = outer.get(key);
  if (inner === undefined) outer.set(key, (inner = new Map()));
  return inner;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'CONNECT', 'TRACE']);

interface Metrics {
  /** GET /metrics */
  scrape(): Promise<Reply>;
  /** Counts a response by the table's path it was for (`other` when none), method and status. */
  count(path: string | undefined, method: string | undefined, status: number): void;
}

/** `{name="value",…}` with the text format's escapes (backslash, quote, line feed), or '' without labels. */
export function formatLabels(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([name, value]) =>
    `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** One metric family in the text format: its HELP and TYPE lines, then its samples; none without samples. */
type WriteFamily = (
  name: string,
  type: 'gauge' | 'counter',
  help: string,
  samples: Array<[Record<string, string>, number]>,
) => void;

/** What `read` returns, or undefined when it throws: a file that cannot be read leaves its samples out. */
function readIfKnown<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/**
 * GET /metrics (docs/api.md#get-metrics): what the routes show, for a scraper. A value that cannot be known is left
 * out, never 0: with the game stopped the minecraft_process_* samples, with no archive the minecraft_backup_last_*
 * ones. Its cost does not grow with the log (presence parses appends only) or the backup folder (listed again only
 * when the folder changes).
 */
class MetricsExporter implements Metrics {
  private readonly requests = new Map<string, Map<string, Map<number, number>>>(); // route → method → status → count
  private readonly daemonStartSeconds: number;
  private backups: { signature: string; count: number; newest: BackupEntry | undefined } | undefined;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly clock: Clock,
    private readonly game: GameFinder,
    private readonly presence: Presence,
    private readonly events: Pick<Events, 'streamsOpen' | 'webhookDeliveries'>,
    private readonly shared: SharedAnswers,
    private readonly readiness: Pick<Readiness, 'check'>,
  ) {
    this.daemonStartSeconds = clock.startTimeSeconds(
      parseProcStat(process.pid, readProcText('/proc/self/stat', 4096)).startTicks,
    );
  }

  scrape(): Promise<Reply> {
    return this.shared('metrics', async () => ({ status: 200, body: await this.render(), type: METRICS_TYPE }));
  }

  count(route: string | undefined, method: string | undefined, status: number): void {
    // maps of the table's own strings and of numbers: a key string built per request cost 0.6 µs of some 20
    const known = method !== undefined && KNOWN_METHODS.has(method) ? method : 'other';
    const byStatus = innerMap(innerMap(this.requests, route ?? 'other'), known);
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  private async render(): Promise<string> {
    const out: string[] = [];
    const family: WriteFamily = (name, type, help, samples) => {
      if (samples.length === 0) return;
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) out.push(`${name}${formatLabels(labels)} ${value}`);
    };
    await this.renderGame(family);
    this.renderLog(family);
    this.renderFiles(family);
    this.renderDaemon(family);
    return `${out.join('\n')}\n`;
  }

  /** The game's process, its players and its answer to the ping. */
  private async renderGame(family: WriteFamily): Promise<void> {
    const { presence } = this;
    const running = this.game.find();
    const stat = running === undefined ? undefined : readProcStat(running.pid);
    let players: string[] = [];
    if (running !== undefined) {
      try {
        // docs/api.md#get-metrics: a scrape never waits on the log past the bound; what was read is answered, and
        // how far behind it is
        players = [...((await presence.readWithin(running, READ_WAIT_MAX_MS)) ?? presence.known()).players];
      } catch {
        players = []; // an unreadable log: nobody is known to be online
      }
    }
    const maxPlayers = Number(readIfKnown(() => readServerProperties(this.config))?.['max-players']);

    family('minecraft_up', 'gauge', 'Whether the game server\'s Java process runs (1) or not (0).',
      [[{}, running === undefined ? 0 : 1]]);
    if (running !== undefined && stat !== undefined) {
      family('minecraft_process_start_time_seconds', 'gauge',
        'When the game server\'s Java process started, in seconds since the Unix epoch.',
        [[{}, this.clock.startTimeSeconds(running.startTicks)]]);
      family('minecraft_process_resident_memory_bytes', 'gauge',
        'Resident memory of the game server\'s Java process in bytes.', [[{}, running.residentBytes]]);
      family('minecraft_process_cpu_seconds_total', 'counter',
        'CPU time of the game server\'s Java process (user and system) in seconds.',
        [[{}, (stat.utimeTicks + stat.stimeTicks) / CLOCK_TICKS_PER_SECOND]]);
    }
    family('minecraft_players_online', 'gauge', 'Players online, from the join and leave lines of latest.log.',
      [[{}, players.length]]);
    // docs/api.md#get-metrics: the game's own answer to the ping wins (a plugin may change its slots), else the file
    const pinged = running === undefined ? undefined : await this.readiness.check();
    const slots = pinged?.answer?.players.max ?? maxPlayers;
    if (Number.isInteger(slots)) {
      family('minecraft_players_max', 'gauge',
        'Player slots: the game\'s answer to the Server List Ping, else max-players of server.properties.',
        [[{}, slots]]);
    }
    family('minecraft_server_ready', 'gauge',
      'Whether the game answers the Server List Ping, or with enable-status=false logged Done (1) or not (0).',
      [[{}, pinged?.ready === true ? 1 : 0]]);
    if (pinged?.answer !== undefined) {
      family('minecraft_ping_seconds', 'gauge', 'Round trip of the Server List Ping\'s ping packet in seconds.',
        [[{}, Math.round(pinged.answer.latencyMs * 1000) / 1e6]]);
    }
    family('minecraft_player_online', 'gauge', 'One sample of 1 for each player online.',
      players.map((player): [Record<string, string>, number] => [{ player }, 1]));
  }

  /** What latest.log told since the daemon started (docs/api.md#get-metrics), as the game's read left it. */
  private renderLog(family: WriteFamily): void {
    const told = this.presence.counts();
    family('minecraft_chat_messages_total', 'counter', 'Chat lines of players online.', [[{}, told.chat]]);
    family('minecraft_player_deaths_total', 'counter', 'Death messages of players online.', [[{}, told.deaths]]);
    family('minecraft_advancements_total', 'counter', 'Advancements (and achievements) made by players online.',
      [[{}, told.advancements]]);
    family('minecraft_tick_overloads_total', 'counter', 'Can\'t keep up! warnings of the server thread.',
      [[{}, told.overloads]]);
    family('minecraft_ticks_behind_total', 'counter', 'Ticks behind (or skipped), by those warnings.',
      [[{}, told.ticksBehind]]);
    family('gameserver_api_log_unread_bytes', 'gauge',
      'Bytes of latest.log the daemon has not read yet: how far behind the log its answers are.',
      [[{}, this.presence.unreadBytes()]]);
    family('gameserver_api_log_backlog_bytes_total', 'counter',
      'Bytes of latest.log read for presence alone, in backlogs over 16 MiB: their chat and deaths were not counted.',
      [[{}, told.backlogBytes]]);
  }

  /** The game's lists, its version and the backup folder. */
  private renderFiles(family: WriteFamily): void {
    const { config } = this;
    const whitelist = readIfKnown(() => readWhitelist(config));
    const banned = readIfKnown(() => readModerationList(config, 'banned'));
    const ops = readIfKnown(() => readModerationList(config, 'ops'));
    const version = readGameVersion(config);
    const archives = this.backupSummary();
    if (whitelist !== undefined) {
      family('minecraft_whitelist_players', 'gauge', 'Entries of whitelist.json.', [[{}, whitelist.length]]);
    }
    if (banned !== undefined) {
      family('minecraft_banned_players', 'gauge', 'Entries of banned-players.json.', [[{}, banned.length]]);
    }
    if (ops !== undefined) family('minecraft_operators', 'gauge', 'Entries of ops.json.', [[{}, ops.length]]);
    if (version !== undefined) {
      family('minecraft_version_info', 'gauge', 'The game server version of version_history.json.', [[{ version }, 1]]);
    }
    if (archives !== undefined) {
      family('minecraft_backups', 'gauge', '.tar.gz archives in the backup folder.', [[{}, archives.count]]);
      if (archives.newest !== undefined) {
        family('minecraft_backup_last_timestamp_seconds', 'gauge',
          'Modification time of the newest archive, in seconds since the Unix epoch.',
          [[{}, Date.parse(archives.newest.created) / 1000]]);
        family('minecraft_backup_last_size_bytes', 'gauge', 'Size of the newest archive in bytes.',
          [[{}, archives.newest.bytes]]);
      }
    }
  }

  /** The daemon: its build, its requests, its streams and webhook, and its process. */
  private renderDaemon(family: WriteFamily): void {
    family('gameserver_api_build_info', 'gauge', 'The gameserver-api version, as a label.',
      [[{ version: VERSION }, 1]]);
    family('gameserver_api_http_requests_total', 'counter',
      'HTTP responses by route (the table\'s path, or other), method and status.',
      [...this.requests].flatMap(([route, byMethod]) => [...byMethod].flatMap(([method, byStatus]) =>
        [...byStatus].map(([code, value]): [string, Record<string, string>, number] =>
          [`${route} ${method} ${code}`, { route, method, code: String(code) }, value])))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, labels, value]): [Record<string, string>, number] => [labels, value]));
    family('gameserver_api_event_streams', 'gauge', 'Event streams open (GET /api/events), of 64 at most.',
      [[{}, this.events.streamsOpen()]]);
    const deliveries = this.events.webhookDeliveries();
    if (deliveries !== undefined) {
      family('gameserver_api_webhook_deliveries_total', 'counter',
        'Webhook attempts by outcome: delivered (a 2xx status), failed, retried, dropped (given up or crowded out).',
        Object.entries(deliveries).map(([outcome, count]): [Record<string, string>, number] => [{ outcome }, count]));
    }
    const cpu = process.cpuUsage();
    family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.',
      [[{}, (cpu.user + cpu.system) / 1e6]]);
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.',
      [[{}, process.memoryUsage.rss()]]);
    family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.',
      [[{}, this.daemonStartSeconds]]);
    family('process_open_fds', 'gauge', 'Number of open file descriptors.',
      [[{}, fs.readdirSync('/proc/self/fd').length]]);
    const maxFds = Number(readProcText('/proc/self/limits', 4096).match(/^Max open files\s+(\d+)/m)?.[1]);
    if (Number.isInteger(maxFds)) {
      family('process_max_fds', 'gauge', 'Maximum number of open file descriptors.', [[{}, maxFds]]);
    }
  }

  /** The backup folder's count and newest archive, listed again only once the folder changed. */
  private backupSummary(): { count: number; newest: BackupEntry | undefined } | undefined {
    const { config, backups } = this;
    const signature = settledSignature(config.backupDir);
    if (signature === '' || signature !== backups?.signature) {
      let listing: BackupEntry[];
      try {
        listing = listBackups(config.backupDir);
      } catch {
        this.backups = undefined;
        return undefined;
      }
      this.backups = { signature, count: listing.length, newest: listing[0] };
      return this.backups;
    }
    // the folder is as it was, but its newest archive may still be growing
    const newest = backups.newest === undefined
      ? undefined
      : fs.statSync(path.join(config.backupDir, backups.newest.name), { throwIfNoEntry: false });
    if (backups.newest !== undefined && newest?.isFile()) {
      Object.assign(backups.newest, { bytes: newest.size, created: new Date(newest.mtimeMs).toISOString() });
    }
    return backups;
  }
}

const METRICS_ROUTE: RouteAbout = {
  summary: 'Prometheus metrics',
  description: 'The game (up, process, players, whitelist, version, backups) '
    + 'and the daemon (build, requests, event streams, process) in the Prometheus text format. At most 100 ms old.',
  answers: {
    200: success(
      'The metrics.',
      { type: 'string' },
      '# HELP minecraft_up Whether the game server\'s Java process runs (1) or not (0).\n'
        + '# TYPE minecraft_up gauge\nminecraft_up 1\n',
      METRICS_TYPE,
    ),
    503: BUSY_ANSWER,
  },
};

// ==== The API description: GET /api, GET /api/openapi.json ====

// The schemas the routes' answers name (docs/api.md describes each field).
const SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object', required: ['ok', 'error'], additionalProperties: false,
    properties: { ok: { const: false }, error: { type: 'string' } },
  },
  Message: {
    type: 'object', required: ['ok', 'message'], additionalProperties: false,
    properties: { ok: { const: true }, message: { type: 'string' } },
  },
  CommandSent: {
    type: 'object', required: ['ok', 'message'], additionalProperties: false,
    properties: {
      ok: { const: true }, message: { type: 'string' },
      output: { type: 'array', maxItems: OUTPUT_MAX_LINES, items: { type: 'string' } },
    },
  },
  Index: {
    type: 'object', required: ['ok', 'service', 'version', 'endpoints'], additionalProperties: false,
    properties: {
      ok: { const: true }, service: { const: SERVICE_NAME },
      version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
      endpoints: {
        type: 'array',
        items: {
          type: 'object', required: ['method', 'route', 'auth_required'], additionalProperties: false,
          properties: {
            method: { enum: ['GET', 'POST'] }, route: { type: 'string' }, auth_required: { type: 'boolean' },
          },
        },
      },
    },
  },
  Status: {
    oneOf: [
      {
        type: 'object', required: ['ok', 'online'], additionalProperties: false,
        properties: { ok: { const: true }, online: { const: false } },
      },
      {
        type: 'object', required: ['ok', 'online', 'pid', 'uptime', 'memory'], additionalProperties: false,
        properties: {
          ok: { const: true }, online: { const: true }, pid: { type: 'integer', minimum: 1 },
          uptime: { type: 'string', pattern: '^\\d+:[0-5]\\d:[0-5]\\d$' },
          memory: { type: 'string', pattern: '^\\d{1,2}\\.\\d%$' }, version: { type: 'string' },
        },
      },
    ],
  },
  Players: {
    oneOf: [
      {
        type: 'object', required: ['ok', 'online', 'players'], additionalProperties: false,
        properties: { ok: { const: true }, online: { const: false }, players: { type: 'array', maxItems: 0 } },
      },
      {
        type: 'object', required: ['ok', 'online', 'count', 'players'], additionalProperties: false,
        properties: {
          ok: { const: true }, online: { const: true }, count: { type: 'integer', minimum: 0 },
          players: { type: 'array', items: { type: 'string' } },
        },
      },
    ],
  },
  Whitelist: playerListSchema('whitelist'),
  Banned: playerListSchema('banned'),
  Ops: playerListSchema('ops'),
  LogTail: {
    type: 'object', required: ['ok', 'file', 'lines'], additionalProperties: false,
    properties: {
      ok: { const: true }, file: { enum: ['latest.log', '/var/log/gameserver_snapshot.log'] },
      lines: { type: 'array', maxItems: LINES_MAX, items: { type: 'string' } },
    },
  },
  Backup: {
    type: 'object', required: ['name', 'type', 'size', 'bytes', 'created'], additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '\\.tar\\.gz$' },
      type: { enum: ['snapshot', 'full_backup', 'restore_undo', 'archive'] },
      size: { type: 'string', pattern: '^\\d+\\.\\d\\d (B|KB|MB|GB|TB)$' }, bytes: { type: 'integer', minimum: 0 },
      created: { type: 'string', format: 'date-time' },
    },
  },
  Backups: {
    type: 'object', required: ['ok', 'count', 'backups'], additionalProperties: false,
    properties: {
      ok: { const: true }, count: { type: 'integer', minimum: 0 }, backups: { type: 'array', items: 'Backup' },
    },
  },
  Properties: {
    type: 'object', required: ['ok', 'properties'], additionalProperties: false,
    properties: { ok: { const: true }, properties: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  Report: {
    type: 'object', required: ['ok', 'report'], additionalProperties: false,
    properties: { ok: { const: true }, report: { type: 'string' } },
  },
  Ping: {
    type: 'object', required: ['ok', 'online', 'ready'], additionalProperties: false,
    properties: {
      ok: { const: true }, online: { type: 'boolean' }, ready: { type: 'boolean' },
      latency_ms: { type: 'number', minimum: 0 },
      version: {
        type: 'object', required: ['name', 'protocol'], additionalProperties: false,
        properties: { name: { type: 'string', maxLength: VERSION_NAME_MAX_CHARS }, protocol: { type: 'integer' } },
      },
      motd: { type: 'string', maxLength: MOTD_MAX_CHARS },
      players: {
        type: 'object', required: ['online', 'max'], additionalProperties: false,
        properties: { online: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0 } },
      },
      favicon: { type: 'string', pattern: '^data:image/png;base64,', maxLength: FAVICON_MAX_CHARS },
    },
  },
  History: {
    type: 'object', required: ['ok', 'step_s', 'from', 'counts'], additionalProperties: false,
    properties: {
      ok: { const: true }, step_s: { const: 60 }, from: { type: 'string', format: 'date-time' },
      counts: {
        type: 'array', minItems: HISTORY_MINUTES, maxItems: HISTORY_MINUTES,
        items: { type: ['integer', 'null'], minimum: 0 },
      },
    },
  },
  // the JSON of an event's data line (docs/api.md#get-apievents)
  Event: {
    oneOf: [
      ...Object.entries(EVENT_KINDS).map(([type, kind]) => eventSchema(type, kind.fields, kind.optional)),
      eventSchema('stream.reset', {}),
    ],
  },
};

/** The answer of one of the game's player lists: `{ok, count, <field>}`, the entries as stored. */
function playerListSchema(field: 'whitelist' | 'banned' | 'ops'): Schema {
  return {
    type: 'object', required: ['ok', 'count', field], additionalProperties: false,
    properties: {
      ok: { const: true }, count: { type: 'integer', minimum: 0 },
      [field]: { type: 'array', items: { type: 'object' } },
    },
  };
}

/** One event type's schema: `type`, `time`, and its fields. */
function eventSchema(type: string, fields: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema {
  return {
    type: 'object', required: ['type', 'time', ...Object.keys(fields)], additionalProperties: false,
    properties: {
      type: { const: type }, time: { type: 'string', format: 'date-time' },
      ...fields, ...optional,
    },
  };
}

/** The OpenAPI 3.1 document of the route table (docs/api.md#get-apiopenapijson). */
export function openApiDocument(routes: readonly Route[] = routeTable()): object {
  const schemaOf = (schema: Schema): object =>
    (typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : refsIn(schema));
  // a schema names another by a bare string wherever a schema may stand (`items: 'Backup'`)
  const refsIn = (schema: { [keyword: string]: unknown }): object =>
    Object.fromEntries(Object.entries(schema).map(([keyword, value]) => {
      if (keyword === 'items' || keyword === 'additionalProperties') {
        return [keyword, typeof value === 'object' || typeof value === 'string' ? schemaOf(value as Schema) : value];
      }
      if (keyword === 'properties') {
        return [keyword, Object.fromEntries(Object.entries(value as Record<string, Schema>)
          .map(([name, sub]) => [name, schemaOf(sub)]))];
      }
      if (keyword === 'oneOf') return [keyword, (value as Schema[]).map(schemaOf)];
      return [keyword, value];
    }));
  const paths: Record<string, Record<string, object>> = {};
  for (const { method, path: route, auth, about } of routes) {
    const operation: Record<string, unknown> = {
      summary: about.summary,
      description: about.description,
      responses: Object.fromEntries(Object.entries(about.answers).map(([status, answer]) => [status, {
        description: answer.description,
        // the bare media type, as client generators look it up; the daemon adds `charset=utf-8`
        content: {
          [(answer.type ?? JSON_TYPE).split(';')[0]]: { schema: schemaOf(answer.schema), example: answer.example },
        },
      }])),
    };
    if (about.parameters !== undefined) {
      operation.parameters = about.parameters.map((p) => ({
        name: p.name, in: p.in, description: p.description, schema: schemaOf(p.schema),
      }));
    }
    if (about.body !== undefined) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(about.body) } } };
    }
    if (auth) operation.security = [{ apiKey: [] }];
    (paths[route] ??= {})[method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: SERVICE_NAME,
      version: VERSION,
      description: 'An HTTP/JSON API for one Minecraft (Java Edition) server host. GET routes are public; '
        + 'POST routes need X-API-Key.',
    },
    // relative: the daemon that served this document, on whatever address, port and scheme it was reached
    servers: [{ url: '/', description: 'This daemon (http://HOST:6767 by default; https:// when TLS is set).' }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(SCHEMAS).map(([name, schema]) =>
        [name, schemaOf(typeof schema === 'string' ? { $ref: schema } : schema)])),
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
  };
}

interface ApiDescription {
  /** GET /api */
  index(): Reply;
  /** GET /api/openapi.json */
  document(): Reply;
}

/**
 * The index and the document never change: serialised to bytes once
 * (docs/performance.md: GET /api, GET /api/openapi.json).
 */
function createApiDescription(routes: readonly Route[]): ApiDescription {
  const index = asBytes(jsonReply({
    ok: true,
    service: SERVICE_NAME,
    version: VERSION,
    endpoints: routes.map((r) => ({ method: r.method, route: r.path, auth_required: r.auth })),
  }));
  // built at its first request, not at start-up: it is the larger part of a start's own work, and few ask for it
  let document: Reply | undefined;
  return { index: () => index, document: () => (document ??= asBytes(jsonReply(openApiDocument(routes)))) };
}

const INDEX_ROUTE: RouteAbout = {
  summary: 'The index of routes',
  description: 'Every route of the table with whether it needs the key; GET /api/openapi.json describes them in full.',
  answers: {
    200: success('The index.', 'Index', {
      ok: true, service: SERVICE_NAME, version: VERSION,
      endpoints: [{ method: 'GET', route: '/api/status', auth_required: false }],
    }),
    503: BUSY_ANSWER,
  },
};

const OPENAPI_ROUTE: RouteAbout = {
  summary: 'This API as an OpenAPI 3.1 document',
  description: 'Generated from the route table that serves the requests.',
  answers: {
    200: success('The document.', { type: 'object', required: ['openapi', 'info', 'paths'] }, {
      openapi: '3.1.0', info: { title: SERVICE_NAME, version: VERSION }, paths: {},
    }),
    503: BUSY_ANSWER,
  },
};

// ==== The HTTP boundary: dispatch, the one send(), and the bounds on what clients can hold ====

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000; // a whole request: bodies are 16 KiB at most
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const MAX_CONNECTIONS = 512;
const PIPELINED_MAX = 32; // requests read behind the one being answered on a connection: more closes it
const REPLY_BYTES_IN_FLIGHT_MAX = 32 * 1024 * 1024; // replies written but not yet taken by the kernel
const SMALL_REPLY_BYTES = 16 * 1024; // a reply this small is always sent: errors, status, the busy answer itself
const REPLY_DRAIN_TIMEOUT_MS = 10_000;

// Every response's headers, as the flat [name, value, …] list writeHead takes. Measured: a header object built
// with spreads per response doubled the young heap under load; a list costs nothing of the kind.
const COMMON_HEADERS: readonly string[] = [
  'Access-Control-Allow-Origin', '*',
  'Cache-Control', 'no-store',
  'X-Content-Type-Options', 'nosniff',
];

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout'],
};

interface ReplyBudget {
  /** Whether replies already waiting for slow readers use up the budget: new work is refused with 503. */
  isSpent(): boolean;
  /** Counts `bytes` a response could not hand to the kernel at once, until `release` runs. */
  hold(bytes: number): () => void;
}

/**
 * docs/api.md#limits-and-protection: the bytes of replies written but not yet taken by the kernel are bounded
 * (32 MiB), whatever the number of clients that do not read. It is looked at when a request arrives, before a
 * tail is read (the costly work), and before a large reply is written.
 */
function createReplyBudget(): ReplyBudget {
  let heldBytes = 0;
  return {
    isSpent: () => heldBytes >= REPLY_BYTES_IN_FLIGHT_MAX,
    hold(bytes) {
      heldBytes += bytes;
      let released = false;
      return () => {
        if (!released) heldBytes -= bytes;
        released = true;
      };
    },
  };
}

/** The same work for any key: both sides are hashed to equal lengths, then compared in constant time. */
function keyMatches(sent: string, apiKey: string | undefined): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  const same = timingSafeEqual(digest(sent), digest(apiKey ?? ''));
  return apiKey !== undefined && sent !== '' && same;
}

/** The X-API-Key sent, from rawHeaders (Node builds `req.headers` only when it is read); several are joined. */
function sentKey(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let key: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 9 && raw[i].toLowerCase() === 'x-api-key') {
      key = key === undefined ? raw[i + 1] : `${key}, ${raw[i + 1]}`;
    }
  }
  return key;
}

/**
 * The password of `Authorization: Basic`, which is how a URL's `user:key@` reaches us; undefined when none or empty.
 */
function basicAuthPassword(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const credentials = header === undefined ? undefined : /^Basic +([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header)?.[1];
  if (credentials === undefined) return undefined;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 || colon === decoded.length - 1 ? undefined : decoded.slice(colon + 1);
}

/** Whether the request names a Host. */
function hasHostHeader(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') return true;
  return false;
}

/** The request target's path and query string. Absolute-form targets (`http://host/path`) are reduced to their path. */
function splitTarget(target: string): [string, string] {
  // new URL('//api/status', base) would read `api` as a host: the target is split by hand
  const origin = target.startsWith('/') ? null : target.match(/^https?:\/\/[^/?#]*/i);
  const rest = origin === null ? target : target.slice(origin[0].length) || '/';
  const q = rest.indexOf('?');
  return q < 0 ? [rest, ''] : [rest.slice(0, q), rest.slice(q + 1)];
}

function allowHeader(methods: Iterable<string>): string {
  const allowed = new Set<string>([...methods, 'OPTIONS']);
  if (allowed.has('GET')) allowed.add('HEAD');
  return [...allowed].sort().join(', ');
}

function preflight(allow: string): Reply {
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

/** The bytes of a complete response for a socket Node's HTTP layer no longer answers on (parser errors, CONNECT). */
function rawErrorResponse(status: number, message: string, extra: readonly string[] = []): string {
  const body = JSON.stringify({ ok: false, error: message });
  const headers = [
    ...COMMON_HEADERS,
    'Content-Type', JSON_TYPE,
    'Content-Length', String(Buffer.byteLength(body)),
    ...extra,
    'Connection', 'close',
  ];
  let head = '';
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`;
}

/** What dispatch found for a request: the table's path (undefined for an unknown one) and the route of its method. */
interface Match {
  path: string | undefined;
  search: string;
  route: Route | undefined;
}

/** What a connection is doing: an answer under way, the requests pipelined behind it, an event stream that ends it. */
// ---- One request at a time per connection ----

// A connection as node:http holds it: `_paused` is how its server stops reading a connection whose replies back up (the
// parser stops at the end of the bytes it has, and no request is read until the flag is cleared), `parser` what reads
// it, `_httpMessage` the response being written on it (Node 18-26). checkHttpInternals() holds a Node release to them.
type HttpSocket = Socket & {
  _paused?: boolean;
  parser?: { resume(): void } | null;
  _httpMessage?: ServerResponse & { req?: IncomingMessage } | null;
};

/**
 * Whether node:http still keeps the internals above: tried once at start on a socket that never connects, so that a
 * Node release that changes them stops the daemon at start, not silently under load. Undefined when they are there.
 */
export function checkHttpInternals(): string | undefined {
  let seen: { paused: unknown; parser: unknown; message: unknown } | undefined;
  const server = createServer((req, res) => {
    const socket = req.socket as HttpSocket;
    seen = { paused: socket._paused, parser: typeof socket.parser?.resume, message: socket._httpMessage === res };
    res.destroy();
  });
  const socket = new Socket();
  try {
    server.emit('connection', socket);
    socket.emit('data', Buffer.from('GET / HTTP/1.1\r\nHost: check\r\n\r\n'));
  } finally {
    socket.destroy();
  }
  if (seen?.paused === false && seen.parser === 'function' && seen.message === true) return undefined;
  return `node ${process.version}'s http server no longer keeps a connection's _paused, parser and _httpMessage `
    + `as gameserver-api relies on (seen: ${JSON.stringify(seen ?? null)}); run a Node line it names (README.md)`;
}

/**
 * Makes process.nextTick hot before the daemon reads anything. node:http calls it several times a request, and V8
 * optimises it with the feedback it holds when it turns hot: if a full garbage collection has just cleared that
 * feedback (a daemon that reads a large latest.log at start has one), every tick object is built through V8's runtime
 * from then on, 4-6 µs more a request on every route for the daemon's life; a bare node:http server does the same
 * after such a collection. Measured: GET /api/status 17-20 µs a request instead of 22-24
 * (docs/performance.md#where-a-reads-time-goes). The 4,000 calls, and the optimising of Node's tick queue they bring
 * forward, cost about 25 ms of CPU once (40 ms with V8's optimising threads). The collections V8 runs to give memory
 * back when a process goes idle appear to undo it; the unit turns them off, which mends that on Node 20 and 22, not
 * on 18 (docs/performance.md#an-idle-daemon).
 */
function warmTickQueue(): void {
  const nothing = (): void => undefined;
  // each arity node:http uses: the tick object holds no arguments, or an array of them
  for (let i = 0; i < 1_000; i++) {
    process.nextTick(nothing);
    process.nextTick(nothing, 1);
    process.nextTick(nothing, 1, 2);
    process.nextTick(nothing, 1, 2, 3);
  }
}

function pauseReading(socket: HttpSocket): void {
  if (socket._paused) return;
  socket._paused = true;
  socket.pause();
}

function resumeReading(socket: HttpSocket): void {
  if (!socket._paused) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

interface Connection {
  busy: boolean;
  streaming: boolean;
  waiting: Array<() => void>;
}

/**
 * docs/api.md#one-request-at-a-time: a connection's requests are handled one after another, each once the answer
 * before it was handed to the connection whole (its 'close'), so an answer never waits in memory outside the reply
 * budget and its drain deadline. While one is handled the connection is not read further (Node's own pause, which
 * its parser honours); one that pipelines more than 32 requests is closed. After an event stream nothing is answered.
 */
function createConnectionQueue(handle: (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => void): {
  take(req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean): void;
  streamBegins(socket: Socket): void;
} {
  const connections = new WeakMap<Socket, Connection>();
  const begin = (
    socket: HttpSocket,
    connection: Connection,
    req: IncomingMessage,
    res: ServerResponse,
    expectsContinue: boolean,
  ): void => {
    connection.busy = true;
    res.once('close', () => {
      connection.busy = false;
      if (socket.destroyed || connection.streaming) return;
      const next = connection.waiting.shift();
      if (next !== undefined) next();
      else resumeReading(socket);
    });
    handle(req, res, expectsContinue);
  };
  return {
    take(req, res, expectsContinue = false) {
      const socket = req.socket as HttpSocket;
      let connection = connections.get(socket);
      if (connection === undefined) {
        connections.set(socket, (connection = { busy: false, streaming: false, waiting: [] }));
      }
      if (connection.busy || connection.streaming) {
        if (connection.waiting.length >= PIPELINED_MAX) return void socket.destroy();
        // a request sent after an event stream holds a place here, never a turn; the stream's connection is read on,
        // or its end would go unseen (and its slot held) until a keep-alive comment failed
        connection.waiting.push(() => begin(socket, connection!, req, res, expectsContinue));
        if (!connection.streaming) pauseReading(socket);
        return;
      }
      begin(socket, connection, req, res, expectsContinue);
    },
    streamBegins(socket) {
      const connection = connections.get(socket);
      if (connection !== undefined) connection.streaming = true;
      resumeReading(socket as HttpSocket);
    },
  };
}

// ---- TLS (docs/api.md#tls) ----

const TLS_CHECK_MS = 2_000; // how often the files are looked at: a renewed certificate is served within this

interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** The certificate (chain) and key of TLS_CERT_FILE and TLS_KEY_FILE, known to be PEM and to belong together. */
function readTlsCredentials(files: TlsFiles): { cert: Buffer; key: Buffer } {
  const cert = readSmallFileSync(files.certFile);
  const key = readSmallFileSync(files.keyFile);
  createSecureContext({ cert, key }); // throws on what is no PEM, and on a key of another certificate
  return { cert, key };
}

/**
 * A renewal needs no restart: the files are looked at every 2 s through their links (certbot swaps the links of its
 * live/ folder) and, once both are settled (isSettled), served to new connections. Files that cannot be used (a key
 * not yet written beside its certificate, a file removed) leave the previous certificate served, and are logged once.
 */
function reloadTlsOnChange(server: ReturnType<typeof createHttpsServer>, files: TlsFiles): void {
  const fault = createFaultLog('TLS');
  const signature = (): string | undefined => {
    const parts = [files.certFile, files.keyFile].map(settledSignature);
    return parts.includes('') ? undefined : parts.join(' ');
  };
  let served = signature();
  const timer = setInterval(() => {
    const now = signature();
    if (now === served) return;
    if (now === undefined) {
      const missing = [files.certFile, files.keyFile].filter((file) => !fs.existsSync(file));
      if (missing.length > 0) {
        fault(`${missing.join(' and ')} cannot be read; the previous certificate is still served`);
      }
      return; // or still being written
    }
    try {
      server.setSecureContext(readTlsCredentials(files));
      served = now;
      fault(undefined, 'the certificate files can be used again');
      log(`TLS: ${files.certFile} changed; new connections get its certificate`);
    } catch (err) {
      fault(`the certificate files changed and cannot be used (${describeError(err)}); the previous certificate is `
        + 'still served');
    }
  }, TLS_CHECK_MS);
  timer.unref();
  server.on('close', () => clearInterval(timer));
}

/**
 * The node:http server of a daemon: dispatch from the route table, one place that writes every response, and the
 * bounds that keep slow or hostile clients from holding the daemon's memory (docs/api.md#limits-and-protection).
 */
class ApiServer {
  readonly server: Server;
  // path → method → route. A duplicate is a programming error: fail at once, like Go's ServeMux.
  private readonly table = new Map<string, Map<string, Route>>();
  // path → the Allow list of 405 and of the preflight, worked out once; and every method of the API, for CONNECT
  private readonly allowByPath: Map<string, string>;
  private readonly allowAny: string;
  private readonly connections = createConnectionQueue(
    (req, res, expectsContinue) => this.handle(req, res, expectsContinue),
  );

  constructor(
    private readonly config: Readonly<Config>,
    routes: readonly Route[],
    private readonly features: Features,
    private readonly replies: ReplyBudget,
  ) {
    const { table } = this;
    for (const route of routes) {
      const byMethod = table.get(route.path) ?? new Map<string, Route>();
      if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
      table.set(route.path, byMethod.set(route.method, route));
    }
    this.allowByPath = new Map([...table].map(([pathname, byMethod]) => [pathname, allowHeader(byMethod.keys())]));
    this.allowAny = allowHeader(routes.map((r) => r.method));
    this.server = this.buildServer();
  }

  /** Finds the route for a request and runs it; every failure is thrown as an HttpError. */
  private dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    { path: known, search, route }: Match,
    expectsContinue: boolean,
  ): Reply | Promise<Reply> {
    const { config } = this;
    // Node 20 answers a missing Host on its own with a bare 400 (requireHostHeader is off); Node 18 not at all
    if (req.httpVersion === '1.1' && !hasHostHeader(req)) throw new HttpError(400, 'Bad request');
    if (known === undefined) throw new HttpError(404, NOT_FOUND);
    const allow = this.allowByPath.get(known)!;
    if (req.method === 'OPTIONS') return preflight(allow);
    if (route === undefined) throw new HttpError(405, methodNotAllowed(allow), { Allow: allow });
    const key = sentKey(req) ?? (route.basicAuth === true ? basicAuthPassword(req) : undefined);
    const reveal = key !== undefined && keyMatches(key, config.apiKey);
    if (route.auth) {
      // docs/api.md#write-routes: the check order is 503, then 401, then the body
      if (config.apiKey === undefined) {
        throw new HttpError(503, WRITES_DISABLED, expectsContinue ? { Connection: 'close' } : {});
      }
      if (!reveal) throw new HttpError(401, UNAUTHORIZED, expectsContinue ? { Connection: 'close' } : {});
    }
    if (this.replies.isSpent()) throw busy();
    let continued = !expectsContinue;
    const allowBody = (): void => {
      // 100 Continue only once the key is known good: a client without it never gets to send its body
      if (!continued) res.writeContinue();
      continued = true;
    };
    return route.handle(this.features, { req, search, reveal, keySent: key !== undefined && key !== '', allowBody });
  }

  /** The one place a response is written: every reply carries the same headers. `client` is set for writes. */
  private send(
    req: IncomingMessage,
    res: ServerResponse,
    match: Match,
    reply: Reply,
    client: string | undefined,
  ): void {
    const { replies } = this;
    const length = typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.length;
    // a large reply made while others filled the budget is not written after them
    if (length > SMALL_REPLY_BYTES && replies.isSpent()) {
      return this.send(req, res, match, errorReply(503, BUSY, { 'Retry-After': '1' }), client);
    }
    const { status, body, headers } = reply;
    const { route } = match;
    this.features.metrics.count(match.path, req.method, status);
    if (reply.stream !== undefined) return this.openStream(req, res, reply.stream, headers);
    const list = [...COMMON_HEADERS];
    if (status !== 204) list.push('Content-Type', reply.type ?? JSON_TYPE, 'Content-Length', String(length));
    if (headers !== undefined) for (const name in headers) list.push(name, headers[name]);
    // once the daemon stops listening, no connection is kept for a next request
    if (!this.server.listening && headers?.Connection === undefined) list.push('Connection', 'close');
    res.writeHead(status, list);
    res.end(status === 204 ? undefined : body);
    // one line per write: time, client, route, outcome; never the key
    if (client !== undefined) {
      log(`${client} ${route?.method === 'POST' ? `POST ${route.path}` : 'POST (unknown route)'} ${status} `
        + `${JSON.stringify(reply.outcome ?? '')}`);
    }
    // a reply the kernel did not take at once waits in our memory for a reader that may never read: counted
    // against the bound, and given a deadline
    const pending = res.socket?.writableLength ?? 0;
    if (pending > 0) {
      const release = replies.hold(pending);
      const deadline = setTimeout(() => res.destroy(), REPLY_DRAIN_TIMEOUT_MS);
      res.once('close', () => {
        release();
        clearTimeout(deadline);
      });
    }
  }

  /** An event stream: the common headers and the stream's own, no length; the stream writes from then on. */
  private openStream(
    req: IncomingMessage,
    res: ServerResponse,
    stream: (sink: StreamSink) => void,
    headers: Record<string, string> = {},
  ): void {
    const list = [...COMMON_HEADERS];
    for (const name in headers) list.push(name, headers[name]);
    res.writeHead(200, list);
    if (req.method === 'HEAD') return void res.end();
    // the stream is its connection's last answer: nothing sent after it is answered (docs/api.md#get-apievents)
    this.connections.streamBegins(req.socket);
    // a connection closed before its stream began holds no slot: its 'close' has come and gone
    if (req.socket.destroyed) return void res.destroy();
    res.flushHeaders();
    stream({
      write(text) {
        if (res.writableEnded || res.destroyed) return;
        res.write(text);
        // a reader that does not read would have the events pile up here: it is let go instead (it may reconnect)
        if ((res.socket?.writableLength ?? 0) > EVENT_STREAM_MAX_PENDING_BYTES) res.destroy();
      },
      end: () => res.end(),
      onClose: (listener) => void res.once('close', listener),
    });
  }

  /** A failure's answer: an HttpError's own, any other a 500 (and its stack logged). */
  private fail(
    req: IncomingMessage,
    res: ServerResponse,
    match: Match,
    err: unknown,
    client: string | undefined,
  ): void {
    if (err instanceof HttpError) {
      return this.send(req, res, match, errorReply(err.status, err.message, err.headers), client);
    }
    log(`internal error on ${req.method} ${(req.url ?? '').slice(0, 200)}: `
      + `${err instanceof Error ? err.stack : String(err)}`);
    if (res.headersSent) return void res.destroy(); // a status line cannot be written any more
    this.send(req, res, match, errorReply(500, INTERNAL_ERROR), client);
  }

  /** The route of a request, looked up once and carried to the reply, the metrics and the write log. */
  private matchOf(req: IncomingMessage): Match {
    const [pathname, search] = splitTarget(req.url ?? '/');
    const byMethod = this.table.get(pathname);
    // node:http drops the body of a HEAD response itself and keeps GET's headers
    return {
      path: byMethod === undefined ? undefined : pathname,
      search,
      route: byMethod?.get(req.method === 'HEAD' ? 'GET' : req.method ?? ''),
    };
  }

  /** A request's turn on its connection: dispatched, then answered, or its failure answered. */
  private handle(req: IncomingMessage, res: ServerResponse, expectsContinue = false): void {
    // taken now: a request whose body was refused may have lost its socket by the time it is logged
    const client = req.method === 'POST' ? req.socket.remoteAddress ?? '-' : undefined;
    const match = this.matchOf(req);
    let result: Reply | Promise<Reply>;
    try {
      result = this.dispatch(req, res, match, expectsContinue);
    } catch (err) {
      return this.fail(req, res, match, err, client);
    }
    // some routes answer at once: no promise, no extra turn of the event loop
    if (result instanceof Promise) {
      result.then(
        (reply) => this.send(req, res, match, reply, client),
        (err: unknown) => this.fail(req, res, match, err, client),
      );
    } else this.send(req, res, match, result, client);
  }

  /** The node:http (or node:https) server, with its bounds and its answers to what never reaches a route. */
  private buildServer(): Server {
    const { config } = this;
    const take = (req: IncomingMessage, res: ServerResponse): void => this.connections.take(req, res);
    const options = {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      requireHostHeader: false,
      connectionsCheckingInterval: 1_000,
    } as Parameters<typeof createServer>[0];
    let server: Server;
    if (config.tls === undefined) server = createServer(options, take);
    else {
      // a handshake is no request yet: without its own deadline a client could hold a connection 120 s (Node's default)
      const secure = createHttpsServer(
        { ...options, ...readTlsCredentials(config.tls), handshakeTimeout: HEADERS_TIMEOUT_MS },
        take,
      );
      reloadTlsOnChange(secure, config.tls);
      // node:https serves HTTP with node:http's own connection handling, over TLS sockets: the same events and settings
      server = secure as unknown as Server;
    }
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.maxConnections = MAX_CONNECTIONS;
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => this.connections.take(req, res, true));
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
      this.fail(req, res, this.matchOf(req), new HttpError(417, 'Expectation failed', { Connection: 'close' }),
        req.method === 'POST' ? req.socket.remoteAddress ?? '-' : undefined));
    server.on('connect', (req: IncomingMessage, socket: Socket) => this.refuseConnect(req, socket));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.answerClientError(err, socket));
    return server;
  }

  /** CONNECT targets a proxy, which this is not; without a listener Node would close the socket unanswered. */
  private refuseConnect(req: IncomingMessage, socket: Socket): void {
    this.features.metrics.count(undefined, req.method, 405);
    socket.on('error', () => undefined);
    socket.end(rawErrorResponse(405, methodNotAllowed(this.allowAny), ['Allow', this.allowAny]));
  }

  /** Requests Node's parser rejects get the same JSON error and headers as any other, never Node's bare reply. */
  private answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    // a reply already being written on this connection must not be cut into (Node's own rule), and one still being
    // made for an earlier request must not be overtaken: close instead. The request the error is about may be the
    // one still arriving (a body that never completes): that one gets its answer.
    const pending = (socket as HttpSocket)._httpMessage;
    if (
      err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent === true || pending?.req?.complete === true
    ) {
      return void socket.destroy();
    }
    const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad request'];
    this.features.metrics.count(undefined, undefined, status);
    socket.end(rawErrorResponse(status, message));
  }
}

if (!isMainThread && Array.isArray(workerData?.readNetPresence)) {
  const [fd, start, end] = workerData.readNetPresence as [number, number, number];
  parentPort!.postMessage(readNetPresence(fd, start, end));
} else if (require.main === module) main(process.argv.slice(2));
