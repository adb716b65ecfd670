// Black-box tests of gameserver-api: `npm test` (node:test), about 22 s on two cores after the build (every group at once).
//
// Every describe builds throwaway sandboxes with demo/host.ts: a temp folder holding a server directory, a real
// tmux server on its own socket (never the user's) whose pane runs a script named `java` (cwd = the server
// directory) that appends every console line it reads to a record file, a fake `serv` that records its argv and
// whether API_KEY reached it, and a fake report script steered by control files. A node:http stub on 127.0.0.1
// stands in for the Mojang profile lookup. The compiled daemon (dist/server.js) runs as a child process on a free
// port with an environment built from nothing. Pure parsers are imported from './server' and table-tested.
// Fixtures in testdata/: sample latest.log files with the players expected online (testdata/README.md), and
// java/PropertiesDump.java, which the machine's own java (when there is one) runs as the reference for parseProperties().

import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import { createHost, freePort, unitNodeArgs, type Host, type HostOptions } from './demo/host';
import {
  ConfigError, FOLLOWED_TYPES, HISTORY_TYPES, HttpError, backupType, checkHttpInternals, createLagSummary, describeEvent, escapeForDiscord, formatLabels, formatMemory, formatSize, formatUptime, isConsoleReply, isInteractiveShell, isSettled,
  LINE_KINDS, maskAddresses, offlineUuid, openApiDocument, parseLines, parseLogLine, parsePaneList, parseProperties, readLogLine, readTail,
  readConfig, redactProperties, scanPresence, tellrawLine, validateCommand, validatePlayer, validateReason, validateSay,
  formatBanDate, forEachHintedLine, readerOf, readUsualLine, PRESENCE_TYPES, readNetPresence,
} from './server';
import {
  anchorReplay, appendReplay, chartPath, countsOf, motdRuns, newReplay, readLegacyAnswer, replayLine, type Replay,
} from './server';
import type { GameAction } from './demo/game';

const DAEMON = path.join(__dirname, 'server.js');
const TESTDATA = path.join(__dirname, '..', 'testdata');
const PKG = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
const KEY = randomBytes(32).toString('base64url');
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const WARN_LINE = '[WARN] No API_KEY set — write endpoints are disabled until one is configured.';
const MSG = {
  unauthorized: 'Unauthorized — X-API-Key required for write endpoints.',
  disabled: 'Write endpoints are disabled: no API_KEY is configured.',
  notObject: 'Request body must be a JSON object.',
  tooLarge: 'Request body is larger than 16384 bytes.',
  commandRequired: 'command is required and must be a string.',
  commandChars: 'command must not contain ; & | ` $ ( ) { } [ ] < > \\ or control characters.',
  commandLength: 'command must be 1 to 1000 characters long.',
  playerRequired: 'player is required and must be a string.',
  playerPattern: 'player must be 1 to 16 characters from A-Z, a-z, 0-9 and _.',
  lines: 'lines must be an integer from 1 to 2000.',
  notRunning: 'Game server is not running.',
  backupRunning: 'A backup is already running.',
  consolePrefix: 'The game console is not available: ',
  lookupFailed: 'The profile lookup failed; nothing was changed.',
  reasonType: 'reason must be a string when given.',
  reasonLength: 'reason must be 1 to 256 characters long.',
  reasonChars: 'reason must not contain ; & | ` $ ( ) { } [ ] < > \\ or control characters.',
};
const FORBIDDEN = [';', '&', '|', '`', '$', '(', ')', '{', '}', '[', ']', '<', '>', '\\'];
const CONTROL = ['\n', '\r', '\t', '\0', '\x1b', '\x7f', '\u0080', '\u0085', '\u009b', '\u009f'];   // C0, DEL and C1
const P = '[12:00:00] [Server thread/INFO]: ';   // a vanilla latest.log prefix

// ---- Helpers ----

type Defer = (cleanup: () => unknown) => void;
type Exit = { code: number | null; signal: NodeJS.Signals | null };
type Body = string | Buffer | Buffer[] | object;
// afterChange: the request begins 100 ms after the test changed the host, the freshness the read routes
// promise (docs/api.md#freshness): their answers may be up to 100 ms old
interface Options { key?: string; headers?: Record<string, string>; timeoutMs?: number; afterChange?: boolean }
const FRESHNESS_MS = 100;
/** Lets the read routes' freshness window pass: an answer asked for after it shows every change made before it. */
const afterFreshness = () => new Promise((resolve) => setTimeout(resolve, FRESHNESS_MS));
interface Res { status: number; headers: http.IncomingHttpHeaders; text: string; json: any }
interface Daemon {
  port: number;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exit: Promise<Exit>;
  request(method: string, urlPath: string, options?: Options & { body?: Body }): Promise<Res>;
  get(urlPath: string, options?: Options): Promise<Res>;
  post(urlPath: string, body?: Body, options?: Options): Promise<Res>;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** One after() per describe, registered before anything exists; cleanups run newest first, all of them. */
function cleanupStack(): Defer {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    const errors: unknown[] = [];
    while (cleanups.length > 0) await Promise.resolve().then(cleanups.pop()).catch((e: unknown) => errors.push(e));
    if (errors.length > 0) throw errors[0];
  });
  return (cleanup) => void cleanups.push(cleanup);
}

/**
 * A group's shared set-up, built by the first of its tests that runs: a test run alone (--test-name-pattern)
 * builds its own group's host and no other.
 */
function setUp(build: () => unknown): void {
  let built: Promise<unknown> | undefined;
  beforeEach(() => (built ??= Promise.resolve().then(build)));
}

interface GroupOptions {
  host?: HostOptions;
  arrange?: (host: Host) => unknown; // between the host and the game: control files, settings
  game?: boolean; // the game runs before the daemon starts
  daemon?: boolean; // false: the tests start their own
  env?: Record<string, string | null>;
}

/**
 * A group's sandbox: its cleanups, a host (arranged, its game started when asked) and a daemon. Built by the first
 * of the group's tests that runs (setUp); `host` and `d` are filled in then, so the tests hold them from the start.
 */
function group(options: GroupOptions = {}): { defer: Defer; host: Host; d: Daemon } {
  const defer = cleanupStack();
  const host = {} as Host;
  const d = {} as Daemon;
  setUp(async () => {
    Object.assign(host, await makeSandbox(defer, options.host));
    await options.arrange?.(host);
    if (options.game === true) await host.startGame();
    if (options.daemon !== false) Object.assign(d, await startDaemon(host, defer, options.env));
  });
  return { defer, host, d };
}

async function makeSandbox(defer: Defer, options?: HostOptions): Promise<Host> {
  const host = await createHost(options);
  defer(() => host.remove());
  return host;
}

// ---- How slow this machine is now ----
// A busy machine stretches every bound a test waits with instead of failing it: each is what a quiet machine needs,
// scaled by how much slower than on a quiet machine this run's slowest start of a Node process was (a bare one at the
// start of the run, then every daemon's start-up to its listening line).
const QUIET_NODE_START_MS = 60;
const QUIET_DAEMON_START_MS = 300;
let slowness = 1;
/** A bound of `ms` on a quiet machine, as long as this machine needs now. */
const scaled = (ms: number): number => Math.round(ms * slowness);
const noteStart = (tookMs: number, quietMs: number): void => void (slowness = Math.max(slowness, tookMs / quietMs));

/** Polls check until it returns something other than undefined/null/false; never sleeps a fixed time. */
async function waitFor<T>(check: () => T | Promise<T>, { timeoutMs: quietMs = 10_000, intervalMs = 20 } = {}): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = scaled(quietMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
    if (Date.now() > deadline) throw new Error(`waitFor: condition not met within ${timeoutMs} ms (last value ${String(value)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function request(port: number, method: string, urlPath: string, { key, headers = {}, body, timeoutMs = 20_000, afterChange = false }: Options & { body?: Body } = {}): Promise<Res> {
  if (afterChange) await afterFreshness();
  return new Promise((resolve, reject) => {
    const sent: Record<string, string> = { ...headers };
    if (key !== undefined) sent['X-API-Key'] = key;
    const chunks = Array.isArray(body) ? body as Buffer[] : undefined;
    const payload = body === undefined || chunks ? undefined
      : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    if (payload) sent['Content-Length'] = String(payload.length);
    if (body !== undefined && !Object.keys(sent).some((h) => h.toLowerCase() === 'content-type')) sent['Content-Type'] = 'application/json';
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers: sent, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part)).on('error', reject).on('end', () => {
        res.socket.destroy();   // a keep-alive request must not keep the test process alive
        const text = Buffer.concat(parts).toString('utf8');
        let json: any;
        try { json = JSON.parse(text); } catch { json = undefined; }
        const reply = { status: res.statusCode ?? 0, headers: res.headers, text, json };
        try {
          assertDescribed(method, urlPath, reply);   // every response a test receives is held against the OpenAPI document
        } catch (err) {
          return reject(err);
        }
        resolve(reply);
      });
    });
    req.setTimeout(scaled(timeoutMs), () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${scaled(timeoutMs)} ms`)));
    req.on('error', reject);
    for (const chunk of chunks ?? []) req.write(chunk);
    req.end(payload);
  });
}

// ---- The OpenAPI document holds every response (docs/api.md#get-apiopenapijson) ----

type JsonSchema = { [keyword: string]: any };
const API_DOCUMENT = openApiDocument() as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, JsonSchema> } };

/** What is wrong with `value` by `schema`: the keywords the document uses (type, const, enum, properties, required,
 * additionalProperties, items, min/maxItems, pattern, min/maxLength, minimum, format date-time, oneOf, $ref). */
function schemaErrors(value: unknown, schema: JsonSchema, where = '$'): string[] {
  if (schema.$ref !== undefined) return schemaErrors(value, API_DOCUMENT.components.schemas[String(schema.$ref).split('/').pop()!], where);
  if (schema.oneOf !== undefined) {
    const matching = (schema.oneOf as JsonSchema[]).filter((option) => schemaErrors(value, option, where).length === 0).length;
    return matching === 1 ? [] : [`${where} matches ${matching} of the oneOf schemas`];
  }
  const errors: string[] = [];
  if ('const' in schema && value !== schema.const) errors.push(`${where} is ${JSON.stringify(value)}, not ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.includes(value)) errors.push(`${where} ${JSON.stringify(value)} is none of ${JSON.stringify(schema.enum)}`);
  const is = { object: typeof value === 'object' && value !== null && !Array.isArray(value), array: Array.isArray(value), string: typeof value === 'string',
    integer: Number.isInteger(value), number: typeof value === 'number', boolean: typeof value === 'boolean', null: value === null } as Record<string, boolean>;
  if (schema.type !== undefined && ![schema.type].flat().some((type: string) => is[type])) return [...errors, `${where} is not of type ${schema.type}`];
  if (is.object && (schema.type === 'object' || schema.properties !== undefined)) {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) errors.push(`${where}.${name} is missing`);
    for (const [name, field] of Object.entries(object)) {
      const known = schema.properties?.[name];
      if (known !== undefined) errors.push(...schemaErrors(field, known, `${where}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${where}.${name} is not in the schema`);
      else if (typeof schema.additionalProperties === 'object') errors.push(...schemaErrors(field, schema.additionalProperties, `${where}.${name}`));
    }
  }
  if (is.array) {
    const items = value as unknown[];
    if (schema.maxItems !== undefined && items.length > schema.maxItems) errors.push(`${where} has more than ${schema.maxItems} items`);
    if (schema.items !== undefined) items.forEach((item, i) => errors.push(...schemaErrors(item, schema.items, `${where}[${i}]`)));
  }
  if (is.string) {
    const text = value as string;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(text)) errors.push(`${where} ${JSON.stringify(text)} does not match ${schema.pattern}`);
    // JSON Schema counts characters as code points
    if (schema.minLength !== undefined && [...text].length < schema.minLength) errors.push(`${where} is shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && [...text].length > schema.maxLength) errors.push(`${where} is longer than ${schema.maxLength}`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(text))) errors.push(`${where} is no date-time`);
  }
  if (is.number && schema.minimum !== undefined && (value as number) < schema.minimum) errors.push(`${where} is below ${schema.minimum}`);
  return errors;
}

/** The routes of the API description, which the daemon builds from its route table, in its order: GET /api's entries. */
const DESCRIBED_ROUTES = Object.entries(API_DOCUMENT.paths).flatMap(([route, operations]) =>
  Object.entries(operations).map(([method, operation]) => ({ method: method.toUpperCase(), route, auth_required: operation.security !== undefined })));
const WRITE_ROUTES = DESCRIBED_ROUTES.filter((r) => r.auth_required).map((r) => r.route);
// The contract's routes (the spec's tables), which the description must hold among its own
const SPEC_ROUTES = [
  ['GET', '/'], ['GET', '/api'], ['GET', '/api/status'], ['GET', '/api/players/online'], ['GET', '/api/players/whitelist'],
  ['GET', '/api/logs/latest'], ['GET', '/api/logs/snapshot'], ['GET', '/api/backups'], ['GET', '/api/properties'], ['GET', '/api/report'],
  ['POST', '/api/server/start'], ['POST', '/api/server/stop'], ['POST', '/api/server/restart'], ['POST', '/api/command'],
  ['POST', '/api/whitelist/add'], ['POST', '/api/whitelist/remove'], ['POST', '/api/backup'],
] as const;

/** Throws when a response to a route of the table has a status, a content type or a body its OpenAPI operation does not describe. */
function assertDescribed(method: string, urlPath: string, res: { status: number; headers: http.IncomingHttpHeaders; json: unknown }): void {
  const pathname = urlPath.split('?')[0];
  const operation = API_DOCUMENT.paths[pathname]?.[method === 'HEAD' ? 'get' : method.toLowerCase()];
  if (operation === undefined) return;   // an unknown path (404), a method the path has not (405), OPTIONS: no operation's
  const answer = operation.responses[String(res.status)];
  if (answer === undefined) throw new Error(`${method} ${pathname} answered ${res.status}, which its OpenAPI operation does not list`);
  if (method === 'HEAD') return;
  const [mediaType] = Object.keys(answer.content);
  const sent = String(res.headers['content-type'] ?? '').split(';')[0];
  if (sent !== mediaType) throw new Error(`${method} ${pathname} ${res.status} came as ${sent}, described as ${mediaType}`);
  if (mediaType !== 'application/json') return;
  const errors = schemaErrors(res.json, answer.content[mediaType].schema);
  if (errors.length > 0) throw new Error(`${method} ${pathname} ${res.status} does not match its OpenAPI schema: ${errors.join('; ')}`);
}

/** Raw bytes over node:net, for requests node:http would refuse to send. Resolves once the reply is complete.
 * halfClose sends FIN after the data: a request that announced more body than it sent ends there. */
function rawRequest(port: number, data: string | Buffer, { untilClose = false, halfClose = false } = {}) {
  return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const socket = net.connect(port, '127.0.0.1');
    const parse = () => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
      }
      return { status: Number(statusLine.split(' ')[1]), headers, body: received.subarray(end + 4) };
    };
    // longer than the daemon's 10 s header timeout (checked each second): incomplete headers end in its 408
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`raw request: incomplete reply ${JSON.stringify(received.toString('latin1'))}`)); }, scaled(15_000));
    const finish = () => { clearTimeout(timer); socket.destroy(); flush(); const reply = parse(); reply ? resolve(reply) : reject(new Error('raw request: no reply')); };
    // the chunks are joined when a whole reply may be there, not at each one: a large reply comes in many
    let chunks: Buffer[] = [];
    let size = 0;
    let needed = 0; // bytes the reply has at least, once its headers were read
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < needed) return;
      received = Buffer.concat([received, ...chunks]);
      chunks = [];
      const reply = parse();
      if (reply !== undefined) needed = received.length - reply.body.length + Number(reply.headers['content-length'] ?? Infinity);
      if (!untilClose && reply && reply.body.length >= Number(reply.headers['content-length'] ?? Infinity)) finish();
    });
    const flush = () => {
      received = Buffer.concat([received, ...chunks]);
      chunks = [];
    };
    socket.on('error', () => undefined);   // the daemon may close while we still write (431); the reply is what counts
    socket.on('close', finish);
    if (halfClose) socket.end(data);
    else socket.write(data);
  });
}

/** Writes `requests` to one socket in a single write (pipelining); resolves the replies in order once all arrived. */
function sendPipelined(port: number, requests: Array<string | Buffer>) {
  return new Promise<Array<{ status: number; headers: string; json: any }>>((resolve, reject) => {
    let pending: Buffer = Buffer.alloc(0);   // what arrived and is not a whole reply yet
    const replies: Array<{ status: number; headers: string; json: any }> = [];
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`pipelined: ${replies.length} of ${requests.length} replies`)); }, scaled(15_000));
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headers = pending.toString('latin1', 0, end);
        const bodyEnd = end + 4 + Number(/^content-length: *(\d+)$/im.exec(headers)?.[1] ?? 0);
        if (pending.length < bodyEnd) return;
        replies.push({ status: Number(headers.split(' ')[1]), headers, json: JSON.parse(pending.toString('utf8', end + 4, bodyEnd)) });
        pending = pending.subarray(bodyEnd);
        if (replies.length < requests.length) continue;
        clearTimeout(timer);
        socket.destroy();
        return resolve(replies);
      }
    });
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
    socket.write(Buffer.concat(requests.map((request) => Buffer.from(request))));
  });
}

// The black-box groups share nothing but the profile stub (which keeps each sandbox's calls apart) and all run at
// once, each group's tests in order: the run is CPU-bound on two cores, and its length is that of the groups that
// wait for the daemon's own deadlines (the 15 s keep-alive, the 10 s ones), which begin with it. GROUPS_AT_ONCE=1 runs
// them one after another; every test passes alone and under any number at once.
// Where the time goes (process accounting of one run of 1.2.0, two cores): about 27 s of CPU; 1.3.0's 1,578 tests take
// about 45 s of CPU over 29 s, the longest groups those of the game's verdicts and the random hostile requests. Some 100 Node processes start
// (a daemon per group and per configuration tried, a fake game per game started), and a Node process costs 0.1 s of
// CPU before it runs a line; the daemons take about 12 s, this process about 10 s (the harness tracks every promise),
// the fake games 3 s. `tsc` takes another 5 s before the first test.
const GROUPS_AT_ONCE = process.env.GROUPS_AT_ONCE === undefined ? true : Number(process.env.GROUPS_AT_ONCE);

// The Node that runs the daemon: TEST_DAEMON_NODE=/path/to/node checks dist/server.js on another Node
// version (18, the newest LTS) while the simulated host keeps the Node that runs the tests.
const DAEMON_NODE = process.env.TEST_DAEMON_NODE || process.execPath;

// wrap: a program that execs the daemon (prlimit ... --); nodeArgs: options for node before dist/server.js
interface SpawnOptions { wrap?: string[]; cwd?: string; nodeArgs?: string[] }


// This process drives every group (it sends the requests, starts the processes, reads what they wrote) and is the
// run's bottleneck: its one thread is busy all through it. The daemons, which with what they start take half of the
// run's CPU, and the other programs the tests run yield the CPU to it when both could run (a higher nice value, which
// their children inherit); a program behaves the same, only later in a busy moment. Runs side by side on the same
// busy machine, the daemons' alone: 34.5 and 34.7 s without, 31.6 to 33.0 s with.
const CHILD_NICENESS = 5;

function yieldToTests(child: ChildProcess): void {
  try {
    os.setPriority(child.pid!, Math.min(19, os.getPriority() + CHILD_NICENESS));
  } catch {
    // not started, or gone already: what the caller looks at
  }
}

/** Spawns dist/server.js; collects its output. */
function spawnDaemon(env: Record<string, string>, args: string[] = [], { wrap = [], cwd, nodeArgs = [] }: SpawnOptions = {}) {
  const argv = [...wrap, DAEMON_NODE, ...nodeArgs, DAEMON, ...args];
  const child = spawn(argv[0], argv.slice(1), { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  yieldToTests(child);
  let out = '';
  let err = '';
  let exited: Exit | undefined;
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  // resolves once the output is read to its end too (what the daemon wrote last may still be in the pipes), or a
  // second after the exit when a process it started holds them
  const exit = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => {
    const done = (exited = { code, signal });
    const ended = [child.stdout!, child.stderr!].map((pipe) => (pipe.readableEnded ? undefined : new Promise((r) => pipe.once('end', r))));
    const grace = setTimeout(() => resolve(done), 1_000);
    void Promise.all(ended).then(() => { clearTimeout(grace); resolve(done); });
  }));
  return { child, exit, out: () => out, err: () => err, exited: () => exited };
}

/** Runs the daemon to its end. No detached children exist here, so waiting for 'close' (all output read) is safe. */
async function runToExit(env: Record<string, string>, args: string[] = []) {
  const proc = spawnDaemon(env, args);
  const killer = setTimeout(() => proc.child.kill('SIGKILL'), scaled(10_000));
  await new Promise((resolve) => proc.child.once('close', resolve));
  clearTimeout(killer);
  return { ...(await proc.exit), stdout: proc.out(), stderr: proc.err() };
}

/** Runs a tool (promtool, java, systemd-analyze) without a shell and without holding the event loop: the other
 * groups go on meanwhile. `error` is set when it could not be started (not installed). */
function runTool(file: string, args: string[], { input, cwd, env }: { input?: string; cwd?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }>((resolve) => {
    const child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    yieldToTests(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', (error) => resolve({ status: null, stdout, stderr, error }));
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.on('error', () => undefined).end(input);
  });
}

/** A self-signed certificate for 127.0.0.1 and its key, as openssl writes them; and the certificate's SHA-256. */
function makeCertificate(dir: string, name: string): { cert: string; key: string; fingerprint: string } {
  const cert = path.join(dir, `${name}-cert.pem`);
  const key = path.join(dir, `${name}-key.pem`);
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  return { cert, key, fingerprint: new crypto.X509Certificate(fs.readFileSync(cert)).fingerprint256 };
}

/** The SHA-256 fingerprint of the certificate a TLS server on the port presents to a client that trusts `ca`. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: fs.readFileSync(ca), servername: undefined, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

let stubUrl = '';
// each sandbox asks under its own first path segment, so that groups running side by side count only their own lookups
const stubCalls = new Map<string, string[]>();
const lookupUrl = (host: Host) => `${stubUrl}${path.basename(host.root)}/`;
function callsTagged(tag: string): string[] {
  if (!stubCalls.has(tag)) stubCalls.set(tag, []);
  return stubCalls.get(tag)!;
}
const lookupsOf = (host: Host) => callsTagged(path.basename(host.root));

/** Starts the daemon with the test key (null removes a variable) and waits for its start-up line. */
async function startDaemon(host: Host, defer: Defer, extra: Record<string, string | null> = {}, options: SpawnOptions = {}): Promise<Daemon> {
  const stop = async (started: ReturnType<typeof spawnDaemon>, signal: NodeJS.Signals = 'SIGTERM') => {
    if (!started.exited()) started.child.kill(signal);
    const killer = setTimeout(() => started.child.kill('SIGKILL'), scaled(8_000));
    const result = await started.exit;
    clearTimeout(killer);
    return result;
  };
  const { port, proc } = await (async () => {
    // a port another process took meanwhile is tried again with another
    for (let attempt = 1; ; attempt++) {
      const free = await freePort();
      const strings = Object.fromEntries(Object.entries(extra).filter((e): e is [string, string] => e[1] !== null));
      const env = host.daemonEnv({ HOST: '127.0.0.1', PORT: String(free), API_KEY: KEY, PROFILE_LOOKUP_URL: lookupUrl(host), ...strings });
      for (const [name, value] of Object.entries(extra)) if (value === null) delete env[name];
      const startedAtMs = Date.now();
      const started = spawnDaemon(env, [], options);
      defer(() => stop(started));
      // the daemon's own line, however long a busy machine takes: the bound is many starts of this run's slowest
      const listening = await waitFor(() => {
        if (started.exited()) return 'exited';
        return started.out().includes(`gameserver-api ${PKG.version} listening on `) && 'listening';
      }, { timeoutMs: 30_000 });
      if (listening === 'listening') {
        noteStart(Date.now() - startedAtMs, QUIET_DAEMON_START_MS);
        return { port: free, proc: started };
      }
      await started.exit;   // its last words may still be in the pipe when it has exited
      if (attempt === 3 || !started.err().includes('is already in use')) {
        throw new Error(`daemon exited early: ${JSON.stringify(started.exited())} ${started.err()}`);
      }
    }
  })();
  const call = (method: string, urlPath: string, options: Options & { body?: Body } = {}) => request(port, method, urlPath, options);
  return {
    port, child: proc.child, stdout: proc.out, stderr: proc.err, exit: proc.exit, stop: (signal) => stop(proc, signal), request: call,
    get: (urlPath, options) => call('GET', urlPath, options),
    post: (urlPath, body, options) => call('POST', urlPath, { ...options, body }),
  };
}

/** A response's status, the headers every response carries (JSON's content type unless said), and its whole body. */
function assertReply(res: Res, status: number, body: unknown, contentType = JSON_TYPE): void {
  assert.equal(res.status, status, `status ${res.status}: ${res.text.slice(0, 300)}`);
  assertCommonHeaders(res.headers, contentType);
  assert.deepEqual(contentType === JSON_TYPE ? res.json : res.text, body);
}

function assertCommonHeaders(headers: Record<string, string | string[] | undefined>, contentType: string | null = JSON_TYPE): void {
  assert.equal(headers['access-control-allow-origin'], '*');
  assert.equal(headers['cache-control'], 'no-store');
  assert.equal(headers['x-content-type-options'], 'nosniff');
  if (contentType !== null) assert.equal(headers['content-type'], contentType);
}

const readOr = (file: string, fallback = Buffer.alloc(0)) => (fs.existsSync(file) ? fs.readFileSync(file) : fallback);
const fileLines = (file: string) => readOr(file).toString('utf8').split('\n').filter((line) => line !== '');
const servCalls = (host: Host) => fileLines(host.servRecord).map((line) => JSON.parse(line) as { pid: number; argv: string[]; apiKeyInEnv: boolean });
const consoleBytes = (host: Host) => readOr(host.consoleRecord);
const sorted = (names: Iterable<string>) => [...names].sort();

/** mulberry32: a seeded PRNG in [0, 1), so that a failing random input is replayed from the seed in the test name. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Every entry under the folders (path → mode and content hash, or link target): compare before and after. */
function hashFiles(...dirs: string[]): Record<string, string> {
  const seen: Record<string, string> = {};
  const visit = (file: string) => {
    const st = fs.lstatSync(file);
    if (st.isSymbolicLink()) seen[file] = `link ${fs.readlinkSync(file)}`;
    else if (st.isDirectory()) { seen[file] = `dir ${st.mode.toString(8)}`; fs.readdirSync(file).forEach((e) => visit(path.join(file, e))); }
    else seen[file] = `${st.mode.toString(8)} ${createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`;
  };
  dirs.forEach(visit);
  return seen;
}

/**
 * The bytes this process's JavaScript holds after a full collection (V8's gc, exposed for it): its heap, and what lives
 * outside it (Node decodes a buffer of more than about 1 MB into a string held there).
 */
function memoryAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  /x/.exec('x');   // V8 keeps the subject of the last match for RegExp.$1: this one's is no text a test let go of
  const collect = vm.runInNewContext('gc') as () => void;
  collect();
  collect();   // the second lets go of what the first left outside the heap (a string Node decoded there)
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const vmRssBytes = (pid: number) => 1024 * Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Live processes whose environment or command line names `root` (a host's folder): what a run left behind. */
function processesOf(root: string): number[] {
  return fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      return pid !== process.pid && isAlive(pid)
        && (fs.readFileSync(`/proc/${pid}/environ`).includes(root) || fs.readFileSync(`/proc/${pid}/cmdline`).includes(root));
    } catch {
      return false;   // exited meanwhile
    }
  });
}

/** A process that exists and is not a zombie. */
function isAlive(pid: number): boolean {
  try {
    return procStat(pid).state !== 'Z';
  } catch {
    return false;
  }
}

/** /proc/PID/stat fields after the command name, which may contain spaces and ')'. */
function procStat(pid: number) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: f[0], pgrp: Number(f[2]), ttyNr: Number(f[4]), tpgid: Number(f[5]) };
}

/** Game server processes of a folder, found like the daemon must: comm `java`, cwd = the folder. */
function findGamePids(serverDir: string): number[] {
  const dir = fs.realpathSync(serverDir);
  return fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, 'utf8') === 'java\n' && fs.readlinkSync(`/proc/${pid}/cwd`) === dir && isAlive(pid);
    } catch {
      return false;
    }
  });
}

/** The pid of the sandbox's game, started when none runs: a test arranges what it needs, whatever ran before it. */
async function runningGame(host: Host): Promise<number> {
  const [pid] = findGamePids(host.serverDir);
  if (pid !== undefined) return pid;
  await host.stopGame();   // a session whose game has gone
  return host.startGame();
}

/** Waits until the console record has grown past `mark` by at least `expected`, then returns what arrived. */
async function consoleSince(host: Host, mark: number, expected: string): Promise<string> {
  const got = await waitFor(() => {
    const bytes = consoleBytes(host).subarray(mark);
    return bytes.length >= Buffer.byteLength(expected) ? bytes : undefined;
  }, { timeoutMs: 5_000 });
  return got.toString('utf8');
}

let sentinels = 0;
/** Sends a harmless command and proves that it, and nothing before it, reached the console since `mark`. */
async function assertNothingSentSince(d: Daemon, host: Host, mark: number): Promise<void> {
  const sentinel = `say sentinel ${++sentinels}`;
  const res = await d.post('/api/command', { command: sentinel }, { key: KEY });
  assert.equal(res.status, 200);
  assert.equal(await consoleSince(host, mark, `${sentinel}\n`), `${sentinel}\n`);
}

let actionFiles = 0;
/** Makes the fake game's players do things (demo/game.ts), written to latest.log as the real server writes them. */
function act(host: Host, ...actions: GameAction[]): void {
  const file = path.join(host.controlDir, `act-${++actionFiles}.json`);
  fs.writeFileSync(`${file}.part`, JSON.stringify(actions));
  fs.renameSync(`${file}.part`, file);   // the game never reads half a list
}

/** A player online while a test runs: a tellraw then reaches someone, and the game logs nothing for it. */
async function someoneOnline(host: Host, d: Daemon, t: { after(fn: () => unknown): void }): Promise<void> {
  act(host, { do: 'join', player: 'Quiet_Reader' });
  await waitFor(async () => ((await d.get('/api/players/online')).json.players as string[]).includes('Quiet_Reader'));
  t.after(() => act(host, { do: 'leave', player: 'Quiet_Reader' }));
}

/** Sets (or with null, removes) one of the fake game's control files: game-era, game-flavour. */
function control(host: Host, name: string, value: string | null): void {
  if (value === null) fs.rmSync(path.join(host.controlDir, name), { force: true });
  else fs.writeFileSync(path.join(host.controlDir, name), `${value}\n`);
}

/**
 * Holds the game's console, as on a lagging server: lines typed meanwhile are recorded, and run in order once the
 * returned function releases it (or the group ends).
 */
function holdConsole(host: Host, defer: Defer): () => void {
  const hold = path.join(host.controlDir, 'console-hold');
  fs.writeFileSync(hold, '');
  defer(() => fs.rmSync(hold, { force: true }));
  return () => fs.rmSync(hold, { force: true });
}

/** A host of its own whose serv holds for 120 s, and its daemon. */
async function makeHoldingHost(defer: Defer): Promise<{ own: Host; daemon: Daemon }> {
  const own = await makeSandbox(defer);
  fs.writeFileSync(path.join(own.controlDir, 'serv-hold-seconds'), '120\n');
  return { own, daemon: await startDaemon(own, defer) };
}

/** Types a line into the pane's shell directly (not through the daemon). */
async function typeIntoPane(host: Host, text: string): Promise<void> {
  await host.tmux('send-keys', '-t', `=${host.tmuxSession}:`, '-l', '--', text);
  await host.tmux('send-keys', '-t', `=${host.tmuxSession}:`, 'Enter');
}

const gson = (entries: object[]) => JSON.stringify(entries, null, 2);
const serverFile = (host: Host, name: string) => path.join(host.serverDir, name);

// The profile stub (PROFILE_LOOKUP_URL): known names answer 200 with the canonical case, unknown ones 404.
const PROFILES: Record<string, { id: string; name: string }> = {
  technoblade: { id: 'b876ec32e396476ba1158438d83c67d4', name: 'Technoblade' },
  jeb_: { id: '853c80ef3c3749fdaa49938b674adae6', name: 'jeb_' },
};
const rootDefer = cleanupStack();
before(async () => {
  const startedAtMs = Date.now();
  await new Promise((resolve) => spawn(DAEMON_NODE, ['-e', '0'], { stdio: 'ignore' }).once('close', resolve));
  noteStart(Date.now() - startedAtMs, QUIET_NODE_START_MS);
  const stub = http.createServer((req, res) => {
    const [, tag = '', rest = ''] = /^\/([^/]*)(\/.*)?$/.exec(req.url ?? '/') ?? [];
    callsTagged(tag).push(rest);
    const name = decodeURIComponent(rest.slice(1));
    if (name === 'No_Content') return void res.writeHead(204).end();
    if (name === 'Server_Error') return void res.writeHead(500, { 'Content-Type': 'application/json' }).end('{}');
    if (name === 'Bad_Json') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>');
    if (name === 'Drop_Conn') return void req.socket.destroy();
    // a valid profile after 100 KiB of white space: more than an answer may be (64 KiB), whatever it holds
    if (name === 'Huge_Answer') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(`${' '.repeat(100 * 1024)}{"id":"4566e69fc90748ee8d71d7ba5aa00d20","name":"Huge_Answer"}`);
    if (name === 'Slow_Drip') {   // headers at once, then a byte every 200 ms for ever: only an overall deadline ends it
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 200);
      return void res.on('close', () => clearInterval(drip));
    }
    const profile = PROFILES[name.toLowerCase()];
    if (profile) return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(profile));
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ path: req.url, errorMessage: `Couldn't find any profile with name ${name}` }));
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  rootDefer(() => new Promise((resolve) => { stub.closeAllConnections(); stub.close(resolve); }));
  stubUrl = `http://127.0.0.1:${(stub.address() as net.AddressInfo).port}/`;
});

// ---- Pure functions (table tests, one test per row) ----

const PRESENCE = new Set(['session.started', 'server.stopping', 'player.joined', 'player.left'] as const);
/** A raw line's meaning for presence, or null. */
const readPresence = (line: string) => readLogLine(line, PRESENCE) ?? null;
const throwsHttp = (status: number, message: string) => (err: unknown) =>
  err instanceof HttpError && err.status === status && err.message === message;

describe('readConfig()', () => {
  // a folder of its own: the game folder and the files the _FILE settings name
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-config-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'key-file'), `${KEY}\n`);
  fs.writeFileSync(path.join(dir, 'tab-key-file'), 'abcdefgh\tijklmnopqrs\n');
  const served = makeCertificate(dir, 'tls');
  makeCertificate(dir, 'other');
  const settings = (env: Record<string, string | null>) => Object.fromEntries(Object.entries({ SERVER_DIR: dir, API_KEY: KEY, ...env })
    .filter((e): e is [string, string] => e[1] !== null).map(([name, value]) => [name, name.endsWith('_FILE') ? path.join(dir, value) : value]));
  for (const [label, env, pattern] of [
    ['both API_KEY and API_KEY_FILE set', { API_KEY: KEY, API_KEY_FILE: 'key-file' }, /^API_KEY and API_KEY_FILE are both set; set only one of them\.$/m],
    ['API_KEY_FILE naming a missing file', { API_KEY: null, API_KEY_FILE: 'no-such-key-file' }, /^API_KEY_FILE must name a readable regular file; got ".*no-such-key-file" \(no-such-key-file not found\)\.$/m],
    ['API_KEY_FILE naming a folder', { API_KEY: null, API_KEY_FILE: '.' }, /^API_KEY_FILE must name a readable regular file; got /m],
    ['a key of 15 characters', { API_KEY: 'k'.repeat(15) }, /^API_KEY must hold a key of 16 or more printable ASCII characters without spaces; got 15 characters\.$/m],
    ['a key with a space inside', { API_KEY: 'abcdefgh ijklmnopqrs' }, /^API_KEY must hold .*; got 20 characters, not all of them printable ASCII\.$/m],
    ['a key with a control character', { API_KEY: 'abcdefgh\u0001ijklmnopqrs' }, /^API_KEY must hold .*not all of them printable ASCII\.$/m],
    ['a key with a non-ASCII character', { API_KEY: 'abcdefghé-ijklmnopqrs' }, /^API_KEY must hold .*not all of them printable ASCII\.$/m],
    ['a key file holding a tab', { API_KEY: null, API_KEY_FILE: 'tab-key-file' }, /^API_KEY_FILE must hold .*not all of them printable ASCII\.$/m],
    ['CONSOLE_SHELL_PANE=maybe', { CONSOLE_SHELL_PANE: 'maybe' }, /^CONSOLE_SHELL_PANE must be refuse or allow; got "maybe"\.$/m],
    ['SERVER_DIR naming no folder', { SERVER_DIR: '/no/such/server-folder' }, /^SERVER_DIR must be an existing directory; got "\/no\/such\/server-folder"\.$/m],
    // every value is parsed as the daemon will use it: nothing fails later, at the first event or lookup
    ['EVENT_WEBHOOK_URL with two ports', { EVENT_WEBHOOK_URL: 'http://a:b:c/' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got "http:\/\/a:b:c\/…"\.$/m],
    ['EVENT_WEBHOOK_URL with a port over 65535', { EVENT_WEBHOOK_URL: 'https://discord.example:70000/api/webhooks/1/t0k3n-secret' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got "https:\/\/discord\.example:70000\/…"\.$/m],
    ['EVENT_WEBHOOK_URL with % in its host', { EVENT_WEBHOOK_URL: 'http://ex%ample.com/hook' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got "http:\/\/ex%ample\.com\/…"\.$/m],
    ['EVENT_WEBHOOK_URL with an unclosed [', { EVENT_WEBHOOK_URL: 'http://[::1/hook' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got /m],
    ['PROFILE_LOOKUP_URL with an unclosed [', { PROFILE_LOOKUP_URL: 'http://[x/' }, /^PROFILE_LOOKUP_URL must be an http:\/\/ or https:\/\/ URL with a path, to which a name is appended; got "http:\/\/\[x\/"\.$/m],
    ['both EVENT_WEBHOOK_URL and EVENT_WEBHOOK_URL_FILE set', { EVENT_WEBHOOK_URL: 'http://127.0.0.1:9/', EVENT_WEBHOOK_URL_FILE: 'key-file' }, /^EVENT_WEBHOOK_URL and EVENT_WEBHOOK_URL_FILE are both set; set only one of them\.$/m],
    ['both EVENT_WEBHOOK_SECRET and EVENT_WEBHOOK_SECRET_FILE set', { EVENT_WEBHOOK_SECRET: 's3cret-value', EVENT_WEBHOOK_SECRET_FILE: 'key-file' }, /^EVENT_WEBHOOK_SECRET and EVENT_WEBHOOK_SECRET_FILE are both set; set only one of them\.$/m],
    ['EVENT_WEBHOOK_SECRET_FILE naming a missing file', { EVENT_WEBHOOK_SECRET_FILE: 'no-such-secret-file' }, /^EVENT_WEBHOOK_SECRET_FILE must name a readable regular file; got ".*no-such-secret-file" \(no-such-secret-file not found\)\.$/m],
    ['EVENT_WEBHOOK_URL_FILE holding no URL', { EVENT_WEBHOOK_URL_FILE: 'key-file' }, /^EVENT_WEBHOOK_URL_FILE must be an http:\/\/ or https:\/\/ URL; got "[^"]{0,9}…"\.$/m],
    ['a URL that is not http(s)', { EVENT_WEBHOOK_URL: 'ftp://example.com/hook' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got "ftp:\/\/example\.com\/…"\.$/m],
    ['a format other than json or discord', { EVENT_WEBHOOK_URL: 'http://127.0.0.1:9/', EVENT_WEBHOOK_FORMAT: 'slack' }, /^EVENT_WEBHOOK_FORMAT must be json or discord; got "slack"\.$/m],
    ['PORT=0', { PORT: '0' }, /^PORT must be an integer from 1 to 65535; got "0"\.$/m],
    ['PORT=70000', { PORT: '70000' }, /^PORT must be an integer from 1 to 65535; got "70000"\.$/m],
    ['PORT=abc', { PORT: 'abc' }, /^PORT must be an integer from 1 to 65535; got "abc"\.$/m],
    ['PORT=-1', { PORT: '-1' }, /^PORT must be an integer from 1 to 65535; got "-1"\.$/m],
    ['PORT=1e3', { PORT: '1e3' }, /^PORT must be an integer from 1 to 65535; got "1e3"\.$/m],
    ['PORT=65536', { PORT: '65536' }, /^PORT must be an integer from 1 to 65535; got "65536"\.$/m],
    ['PORT= 80', { PORT: ' 80' }, /^PORT must be an integer from 1 to 65535; got " 80"\.$/m],
    ['PORT=0x50', { PORT: '0x50' }, /^PORT must be an integer from 1 to 65535; got "0x50"\.$/m],
    ['TLS_CERT_FILE without TLS_KEY_FILE', { TLS_CERT_FILE: 'tls-cert.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must be set together \(HTTPS\) or not at all \(HTTP\); only TLS_CERT_FILE is set\.$/m],
    ['TLS_KEY_FILE without TLS_CERT_FILE', { TLS_KEY_FILE: 'tls-key.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must be set together \(HTTPS\) or not at all \(HTTP\); only TLS_KEY_FILE is set\.$/m],
    ['TLS_CERT_FILE naming a missing file', { TLS_CERT_FILE: 'no-such-cert.pem', TLS_KEY_FILE: 'tls-key.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must name a readable PEM certificate and its private key: .*no-such-cert\.pem/m],
    ['TLS_KEY_FILE naming a folder', { TLS_CERT_FILE: 'tls-cert.pem', TLS_KEY_FILE: '.' }, /^TLS_CERT_FILE and TLS_KEY_FILE must name a readable PEM certificate and its private key: /m],
    ['TLS_CERT_FILE holding no PEM', { TLS_CERT_FILE: 'key-file', TLS_KEY_FILE: 'tls-key.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must name a readable PEM certificate and its private key: /m],
    ['TLS_KEY_FILE holding the key of another certificate', { TLS_CERT_FILE: 'tls-cert.pem', TLS_KEY_FILE: 'other-key.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must name a readable PEM certificate and its private key: .*key values mismatch/m],
  ] as const) {
    test(`readConfig() refuses ${label} with a message naming the variable, never a secret`, () => {
      assert.throws(() => readConfig(settings(env), dir), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, pattern);
        assert.ok(!err.message.includes(KEY) && !err.message.includes('t0k3n'), err.message);
        return true;
      });
    });
  }
  test('readConfig() reads the _FILE settings, one trailing newline removed, and keeps every secret out of the children\'s environment', () => {
    fs.writeFileSync(path.join(dir, 'hook-url'), 'https://discord.example/api/webhooks/1/t0k3n\n');
    fs.writeFileSync(path.join(dir, 'hook-secret'), 's3cret-value\n');
    const config = readConfig(settings({ API_KEY: null, API_KEY_FILE: 'key-file', EVENT_WEBHOOK_URL_FILE: 'hook-url', EVENT_WEBHOOK_SECRET_FILE: 'hook-secret', PATH: '/usr/bin' }), dir);
    assert.deepEqual([config.apiKey, config.webhookUrl?.href, config.webhookSecret], [KEY, 'https://discord.example/api/webhooks/1/t0k3n', 's3cret-value']);
    assert.deepEqual(Object.keys(config.childEnv).sort(), ['PATH', 'SERVER_DIR']);
  });
  test('readConfig() takes TLS_CERT_FILE and TLS_KEY_FILE together, as paths; without them the daemon speaks plain HTTP', () => {
    assert.deepEqual(readConfig(settings({ TLS_CERT_FILE: 'tls-cert.pem', TLS_KEY_FILE: 'tls-key.pem' }), dir).tls, { certFile: served.cert, keyFile: served.key });
    assert.equal(readConfig(settings({}), dir).tls, undefined);
  });
});

describe('checkHttpInternals()', () => {
  test('checkHttpInternals() finds the node:http internals the connection queue relies on, on this Node', () => {
    assert.equal(checkHttpInternals(), undefined);
  });
});

describe('offlineUuid()', () => {
  for (const [name, uuid] of [
    ['Notch', 'b50ad385-829d-3141-a216-7e7d7539ba7f'],
    ['McStorm_MlyK11qF', '0b58c22d-56f5-3296-87b8-c0155a071d4d'],
    ['dpsi', '54bdf40b-c19a-3003-808a-c1a3c94d7bbb'],
    ['notch', '42653081-a90e-3475-b3d6-3550cdb43f8e'],   // case-sensitive
  ]) {
    test(`offlineUuid() derives ${uuid} from ${name}`, () => assert.equal(offlineUuid(name), uuid));
  }
});

describe('formatSize()', () => {
  for (const [bytes, shown] of [
    [0, '0.00 B'], [1, '1.00 B'], [512, '512.00 B'], [1023, '1023.00 B'], [1024, '1.00 KB'], [1536, '1.50 KB'],
    [1024 ** 2, '1.00 MB'], [5.5 * 1024 ** 2, '5.50 MB'], [2512555868, '2.34 GB'], [1024 ** 4, '1.00 TB'], [3 * 1024 ** 5, '3072.00 TB'],
  ] as const) {
    test(`formatSize() shows ${bytes} bytes as ${shown}`, () => assert.equal(formatSize(bytes), shown));
  }
});

describe('formatUptime()', () => {
  for (const [seconds, shown] of [
    [0, '0:00:00'], [5, '0:00:05'], [59, '0:00:59'], [60, '0:01:00'], [3599, '0:59:59'], [3600, '1:00:00'],
    [49 * 3600 + 3 * 60 + 7, '49:03:07'], [100 * 3600, '100:00:00'],
  ] as const) {
    test(`formatUptime() shows ${seconds} s as ${shown}`, () => assert.equal(formatUptime(seconds), shown));
  }
});

describe('formatMemory()', () => {
  const GiB = 1024 ** 3;
  for (const [rss, total, shown] of [
    [0, 16 * GiB, '0.0%'], [512 * 1024 ** 2, 16 * GiB, '3.1%'], [1, 1000, '0.1%'], [99, 100_000, '0.0%'],
    [1999, 100_000, '1.9%'],   // truncated like ps, not rounded to 2.0
    [999, 10_000, '9.9%'], [5, 10, '50.0%'], [9995, 10_000, '99.9%'],
    [10_000, 10_000, '99.9%'], [3 * 1024 ** 3, 2 * 1024 ** 3, '99.9%'],   // capped, as ps caps it
  ] as const) {
    test(`formatMemory() shows ${rss} of ${total} bytes as ${shown}`, () => assert.equal(formatMemory(rss, total), shown));
  }
});

describe('backupType()', () => {
  for (const [name, type] of [
    ['snapshot_2025-03-01_12-00-00.tar.gz', 'snapshot'], ['gameserver_backup_2025-03-01.tar.gz', 'full_backup'],
    ['restore_undo_2025-03-01.tar.gz', 'restore_undo'], ['restore_undo.tar.gz', 'restore_undo'], ['restore_undo-1.tar.gz', 'restore_undo'],
    ['world.tar.gz', 'archive'], ['snapshot.tar.gz', 'archive'], ['gameserver_backup.tar.gz', 'archive'], ['old_snapshot_1.tar.gz', 'archive'],
  ] as const) {
    test(`backupType() classifies ${name} as ${type}`, () => assert.equal(backupType(name), type));
  }
});

describe('parseLines()', () => {
  for (const [raw, lines] of [
    [null, 200], ['1', 1], ['200', 200], ['2000', 2000], ['2001', 2000], ['5000', 2000], ['007', 7], ['99999999999999999999', 2000],
  ] as const) {
    test(`parseLines() reads ${JSON.stringify(raw)} as ${lines}`, () => assert.equal(parseLines(raw), lines));
  }
  for (const raw of ['0', '-1', '1.5', 'abc', '', '+5', ' 5', '5 ', '0x10', '1e3', 'Infinity', 'NaN']) {
    test(`parseLines() refuses ${JSON.stringify(raw)} with 400`, () => assert.throws(() => parseLines(raw), throwsHttp(400, MSG.lines)));
  }
});

describe('validateCommand()', () => {
  for (const [value, command] of [
    ['say hi', 'say hi'], ['  say trimmed  ', 'say trimmed'], ['x'.repeat(1000), 'x'.repeat(1000)], [` ${'y'.repeat(1000)} `, 'y'.repeat(1000)],
    ['say 50% #1 "quoted" \'single\' ~user *? !', 'say 50% #1 "quoted" \'single\' ~user *? !'], ['say héllo ✓', 'say héllo ✓'],
  ] as const) {
    test(`validateCommand() accepts ${JSON.stringify(value.slice(0, 40))} as ${JSON.stringify(command.slice(0, 40))}`, () => assert.equal(validateCommand(value), command));
  }
  for (const ch of [...FORBIDDEN, ...CONTROL]) {
    test(`validateCommand() refuses ${JSON.stringify(ch)}`, () => assert.throws(() => validateCommand(`say a${ch}b`), throwsHttp(400, MSG.commandChars)));
  }
  for (const value of ['', '   ', 'z'.repeat(1001)]) {
    test(`validateCommand() refuses ${value.length} characters (${JSON.stringify(value.slice(0, 5))}...)`, () => assert.throws(() => validateCommand(value), throwsHttp(400, MSG.commandLength)));
  }
  for (const value of [undefined, null, 42, ['say hi'], { command: 'say hi' }]) {
    test(`validateCommand() refuses ${JSON.stringify(value) ?? 'undefined'} as not a string`, () => assert.throws(() => validateCommand(value), throwsHttp(400, MSG.commandRequired)));
  }
});

describe('README: commands with selectors or NBT', () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('**Selectors and NBT'), readme.indexOf('**The chat bridge.**'));
  const functionLines = (/```mcfunction\n([\s\S]*?)```/.exec(section)?.[1] ?? '').split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  const sent = [...section.matchAll(/-d '(\{[^']*\})'/g)].map((m) => (JSON.parse(m[1]) as { command: string }).command);

  test('README: every command of the datapack example\'s function holds a character POST /api/command refuses', () => {
    assert.equal(functionLines.length, 3);
    for (const line of functionLines) assert.throws(() => validateCommand(line), throwsHttp(400, MSG.commandChars), line);
  });

  test('README: the commands that load and call the datapack function pass validateCommand() as written', () => {
    assert.deepEqual(sent, ['reload', 'tag Alex add winner', 'function relay:prize']);
    for (const command of sent) assert.equal(validateCommand(command), command);
  });
});

describe('the request bodies of the API description', () => {
  const schemaOf = (route: string, field: string) => API_DOCUMENT.paths[route].post.requestBody.content['application/json'].schema.properties[field];
  const accepts = (validate: (value: unknown) => unknown, value: unknown) => {
    try { validate(value); return true; } catch { return false; }
  };
  // the description is what client generators check bodies against: it refuses what the daemon refuses, and no more
  for (const value of ['list', 'say héllo ✓', ' list ', '', '   ', 'x'.repeat(1000), ` ${'x'.repeat(1000)} `, 'x'.repeat(1001),
    ...FORBIDDEN.map((c) => `say a${c}b`), ...CONTROL.map((c) => `say a${c}b`), 'say \ud800', 'say 😀', 'say \uffff', '😀'.repeat(1000), '😀'.repeat(1001)]) {
    test(`validateCommand() accepts ${JSON.stringify(value.slice(0, 30))} exactly when the description's command schema does (trimmed)`, () => {
      assert.equal(accepts(validateCommand, value), schemaErrors(value.replace(/^ +| +$/g, ''), schemaOf('/api/command', 'command')).length === 0);
    });
  }
  const shown = (value: string) => value.replace(/[\x00-\x1f\x7f-\x9f]/g, ' ').trim();
  for (const [field, max] of [['text', 256], ['from', 32]] as const) {
    for (const value of ['hi', '  hi  ', '', ' \n\t ', '\u0085', 'Server', ' SERVER ', 'Servers', 'The Server', 'Alex] [Server', '[x', 'x]', 'x'.repeat(max), ` ${'x'.repeat(max)}\n`, 'x'.repeat(max + 1), '😀'.repeat(max), '😀'.repeat(max + 1), 'a\u0000b', '\ud800', 'hi \udc00', 'שלום\u200f']) {
      test(`validateSay() accepts ${field} ${JSON.stringify(value.slice(0, 20))} (${value.length} units) exactly when the description's ${field} schema does (control characters as spaces, trimmed)`, () => {
        assert.equal(accepts(() => validateSay({ text: 'hi', [field]: value }), value), schemaErrors(shown(value), schemaOf('/api/say', field)).length === 0);
      });
    }
  }
  for (const route of ['/api/whitelist/add', '/api/whitelist/remove']) {
    for (const value of ['Alex', 'a', 'A'.repeat(16), 'A'.repeat(17), '', 'Al ex', 'Alex!', '.Bramble', 'Ålex', 'Alex\n']) {
      test(`validatePlayer() accepts ${JSON.stringify(value)} exactly when the description's player schema of ${route} does`, () => {
        assert.equal(accepts(validatePlayer, value), schemaErrors(value, schemaOf(route, 'player')).length === 0);
      });
    }
  }
});

describe('validatePlayer()', () => {
  for (const name of ['Notch', 'a', 'A_1', 'x'.repeat(16), '200322']) {
    test(`validatePlayer() accepts ${name}`, () => assert.equal(validatePlayer(name), name));
  }
  for (const name of ['', 'x'.repeat(17), 'bad name', 'é', '.Bramble', 'a-b', 'a;b', 'Notch\n']) {
    test(`validatePlayer() refuses ${JSON.stringify(name)}`, () => assert.throws(() => validatePlayer(name), throwsHttp(400, MSG.playerPattern)));
  }
  for (const value of [undefined, null, 7, ['Notch']]) {
    test(`validatePlayer() refuses ${JSON.stringify(value) ?? 'undefined'} as not a string`, () => assert.throws(() => validatePlayer(value), throwsHttp(400, MSG.playerRequired)));
  }
});

describe('validateReason() (docs/api.md#post-apiplayerskick-ban-pardon-op-deop)', () => {
  const reasonSchema = API_DOCUMENT.paths['/api/players/ban'].post.requestBody.content['application/json'].schema.properties.reason;
  const accepts = (value: unknown) => { try { validateReason(value); return true; } catch { return false; } };
  for (const value of ['Griefing', 'x', 'x'.repeat(256), '😀'.repeat(256), 'x'.repeat(257), '', 'spam é ✓', ...FORBIDDEN.map((c) => `a${c}b`), ...CONTROL.map((c) => `a${c}b`), 'a\ud800',
    ' ', '   ', ' a ', '@e', 'hi @a', 'mail@example.org', '@x', '§cred', 'a\u202eb', 'a\u200bb', 'a\u2028b']) {
    test(`validateReason() accepts ${JSON.stringify(value.slice(0, 20))} exactly when the description's reason schema does`, () => {
      assert.equal(accepts(value), schemaErrors(value, reasonSchema).length === 0);
    });
  }
  // the game reads a reason as a message: a selector is resolved to the names it matches, `§` formats the kick screen
  const notText = 'reason must be text: no target selector (@a, @e, @p, @r, @s), no § and no invisible format characters.';
  for (const [value, error] of [['', MSG.reasonLength], ['  ', MSG.reasonLength], ['x'.repeat(257), MSG.reasonLength], ['a;b', MSG.reasonChars], ['a\nb', MSG.reasonChars], ['a\u0085b', MSG.reasonChars], [7, MSG.reasonType], [null, MSG.reasonType],
    ['@e', notText], ['spam @a now', notText], ['§kobfuscated', notText], ['a\u202eb', notText], ['a\u200bb', notText]] as const) {
    test(`validateReason() refuses ${JSON.stringify(value)} with 400 "${error}"`, () => assert.throws(() => validateReason(value), throwsHttp(400, error)));
  }
  test('validateReason() takes no reason as none', () => assert.equal(validateReason(undefined), undefined));
});

describe('formatBanDate()', () => {
  test('formatBanDate() writes yyyy-MM-dd HH:mm:ss Z in local time, as the game writes a ban\'s created', () => {
    const when = new Date(2026, 10, 27, 9, 5, 3);
    const offset = -when.getTimezoneOffset();
    const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}${String(Math.abs(offset) % 60).padStart(2, '0')}`;
    assert.equal(formatBanDate(when), `2026-11-27 09:05:03 ${zone}`);
  });
});

describe('parseProperties()', () => {
  const rows: Array<[string, string | Buffer, Record<string, string>]> = [
    ['skips # and ! comments and blank lines', '#Minecraft server properties\n#Sat Mar 08 14:22:51 UTC 2025\n\n! bang\n   # indented\nmotd=A Minecraft Server\n', { motd: 'A Minecraft Server' }],
    ['keeps # later in a line', 'pvp=true # note\n', { pvp: 'true # note' }],
    ['unescapes \\: and \\!', 'level-type=minecraft\\:normal\nmotd=Welcome\\!\n', { 'level-type': 'minecraft:normal', motd: 'Welcome!' }],
    ['consumes one separator only', 'a==b\n', { a: '=b' }],
    ['accepts =, :, blanks and form feed as separators', 'k1:v1\nk2 v2\nk3 = v3\nk4\t:\tv4\nk5 \f v5\n', { k1: 'v1', k2: 'v2', k3: 'v3', k4: 'v4', k5: 'v5' }],
    ['gives "" for a bare key and for key=', 'bare\nempty=\n', { bare: '', empty: '' }],
    ['ignores leading blanks and keeps trailing blanks', '   key=value  \n', { key: 'value  ' }],
    ['continues a line ending in an odd number of backslashes', 'motd=first \\\n    second\n', { motd: 'first second' }],
    ['does not continue after an even number of backslashes', 'path=C:\\\\\nnext=1\n', { path: 'C:\\', next: '1' }],
    ['never continues a comment line', '# comment \\\nk=v\n', { k: 'v' }],
    ['decodes \\t \\n \\r \\f and \\x as x', 'k=a\\tb\\nc\\rd\\fe\\qf\n', { k: 'a\tb\nc\rd\fe' + 'qf' }],
    ['decodes \\uXXXX in either case', 'motd=\\u00A76\\u00a7lName \\u00bb\n', { motd: '§6§lName »' }],
    ['decodes escapes in keys', 'a\\=b=c\na\\ b=d\n', { 'a=b': 'c', 'a b': 'd' }],
    ['keeps an escaped leading space of a value', 'motd=\\ hi\n', { motd: ' hi' }],
    ['lets the last duplicate win', 'k=1\nk=2\n', { k: '2' }],
    ['keeps keys case-sensitive', 'K=1\nk=2\n', { K: '1', k: '2' }],
    ['reads raw UTF-8', Buffer.from('motd=héllo ✓\n', 'utf8'), { motd: 'héllo ✓' }],
    ['re-reads the whole file as ISO-8859-1 on a malformed byte', Buffer.concat([Buffer.from('a=é\n', 'utf8'), Buffer.from([0x62, 0x3d, 0xe9, 0x0a])]), { a: 'Ã©', b: 'é' }],
    ['treats a BOM as part of the first key', Buffer.from('\uFEFF#Minecraft server properties\nk=v\n', 'utf8'), { '\uFEFF#Minecraft': 'server properties', k: 'v' }],
    ['accepts CRLF, CR and a last line without a newline', 'a=1\r\nb=2\rc=3', { a: '1', b: '2', c: '3' }],
    ['continues lines across CRLF', 'k=a\\\r\n  b\r\n', { k: 'ab' }],
    // docs/formats.md#serverproperties, each row checked against java.util.Properties by the last test below
    ['decodes \\\\ to one backslash', 'path=C:\\\\Users\\\\mc\n', { path: 'C:\\Users\\mc' }],
    ['skips ! and # comments indented by tabs and form feeds', '\t! indented bang\n  \f# indented hash\nk=v\n', { k: 'v' }],
    ['continues after three trailing backslashes, keeping one', 'odd=b\\\\\\\nc\n', { odd: 'b\\c' }],
    ['keeps two backslashes of four and does not continue', 'k=a\\\\\\\\\nnext=1\n', { k: 'a\\\\', next: '1' }],
    ['drops the leading spaces, tabs and form feeds of each continuation line', 'multi=one\\\n  two\\\n\t\fthree\n', { multi: 'onetwothree' }],
    ['reads # or ! at the start of a continuation line as text', 'key=a\\\n#not a comment\n', { key: 'a#not a comment' }],
    ['reads a comment after a line of only a backslash (the logical line is still empty)', '\\\n#x=1\ny=2\n', { y: '2' }],
    ['ends a continuation at a blank line', 'key=a\\\n\nafter=1\n', { key: 'a', after: '1' }],
    ['drops a backslash at the end of the file', 'end=dangling\\', { end: 'dangling' }],
    ['continues across a continuation line of only a backslash', 'k=a\\\r\n\\\r\n  b\n', { k: 'ab' }],
    ['continues lines across a lone CR', 'k=a\\\r  b\rc=1', { k: 'ab', c: '1' }],
    ['skips lines of blanks and reads a form feed as a separator', '  \t\f\nk\f=\fv\n', { k: 'v' }],
    ['reads a\\ b=c\\  as the key "a b" and keeps the escaped trailing space', 'a\\ b=c\\ \n', { 'a b': 'c ' }],
    ['consumes only the first of :: and keeps = after :', 'c::d\nk:v=w\n', { c: ':d', k: 'v=w' }],
    ['keeps trailing blanks, blanks inside a value and a second separator', 'e = f \nk  v w\nm = =n\n', { e: 'f ', k: 'v w', m: '=n' }],
    ['gives "" for key= with blanks only and for key:', 'k=   \nkey:\n', { k: '', key: '' }],
    ['keeps escaped #, = and : in values and keys', 'k=\\#not-a-comment\\=x\\:y\n\\#k=v\n', { k: '#not-a-comment=x:y', '#k': 'v' }],
    ['reads \\\\ and \\t in keys', 'k\\\\=v\na\\tb=c\n', { 'k\\': 'v', 'a\tb': 'c' }],
    ['decodes \\uXXXX in keys, so two spellings are one duplicate key', '\\u006Bey=v\na\\u0062=1\nab=2\n', { key: 'v', ab: '2' }],
    ['decodes a surrogate pair of \\u escapes', 'smile=\\uD83D\\uDE00\n', { smile: '\u{1F600}' }],
    ['reads an escaped leading space of a key', '\\ lead=1\n', { ' lead': '1' }],
    ['treats a BOM before a key as part of the key', Buffer.from('\uFEFFk=v\n', 'utf8'), { '\uFEFFk': 'v' }],
    ['reads a whole file as ISO-8859-1 when only a comment has a malformed byte', Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\nk=é\n', 'utf8')]), { k: 'Ã©' }],
    ['reads blank CRLF lines and blanks around the separator', 'x=1\r\n\r\n  y : 2\r\n', { x: '1', y: '2' }],
  ];
  const bytesOf = (input: string | Buffer) => (Buffer.isBuffer(input) ? input : Buffer.from(input, 'utf8'));
  for (const [rule, input, expected] of rows) {
    test(`parseProperties() ${rule}`, () => assert.deepEqual(parseProperties(bytesOf(input)), expected));
  }

  test('parseProperties() reads every row above as java.util.Properties.load does (testdata/java/PropertiesDump.java)', async (t) => {
    const env = { PATH: process.env.PATH ?? '' };   // the test process's own java, never a sandbox's fake
    if ((await runTool('java', ['-version'], { env })).status !== 0) return t.skip('no java on PATH');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-properties-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const files = rows.map(([, input], i) => {
      const file = path.join(dir, `row-${i}.properties`);
      fs.writeFileSync(file, bytesOf(input));
      return file;
    });
    // single-file source launch: decodes strict UTF-8 else ISO-8859-1, Properties.load, prints a JSON array
    const java = await runTool('java', [path.join(TESTDATA, 'java', 'PropertiesDump.java'), ...files], { env });
    assert.equal(java.status, 0, java.stderr);
    const loaded = JSON.parse(java.stdout) as unknown[];
    assert.deepEqual(rows.map(([rule, input]) => [rule, parseProperties(bytesOf(input))]), rows.map(([rule], i) => [rule, loaded[i]]));
  });
});

describe('redactProperties()', () => {
  const stored = {
    'rcon.password': 'hunter2', 'management-server-secret': 'm-s', 'db-password': 'pw', 'api.secret': 'sec', password: 'p',
    passwordless: 'true', 'secret-level': '1', 'rcon.port': '25575', motd: 'hi',
  };
  test('redactProperties() hides rcon.password, management-server-secret and keys ending in password or secret', () => {
    assert.deepEqual(redactProperties({ ...stored }, false), {
      ...stored, 'rcon.password': '<redacted>', 'management-server-secret': '<redacted>', 'db-password': '<redacted>',
      'api.secret': '<redacted>', password: '<redacted>',
    });
  });
  test('redactProperties() reveals every value as stored', () => assert.deepEqual(redactProperties({ ...stored }, true), stored));
  test('redactProperties() hides text-filtering-config and level-seed, empty ones too', () => {
    assert.deepEqual(redactProperties({ 'text-filtering-config': '{"apiKey":"k"}', 'level-seed': '', motd: 'hi' }, false),
      { 'text-filtering-config': '<redacted>', 'level-seed': '<redacted>', motd: 'hi' });
  });
  test('parseProperties() and redactProperties() keep __proto__, constructor and toString as ordinary keys', () => {
    const parsed = parseProperties(Buffer.from('__proto__=x\nconstructor=y\ntoString=z\n'));
    assert.deepEqual(Object.entries(redactProperties(parsed, false)), [['__proto__', 'x'], ['constructor', 'y'], ['toString', 'z']]);
    assert.equal(JSON.stringify(redactProperties(parsed, false)), '{"__proto__":"x","constructor":"y","toString":"z"}');
  });
});

describe('maskAddresses()', () => {
  for (const [line, masked] of [
    ['Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)', 'Alex[/<ip>:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)'],
    ['Disconnecting Eve (/1.2.3.4:5678): You are not white-listed on this server!', 'Disconnecting Eve (/<ip>:5678): You are not white-listed on this server!'],
    ['a 10.0.0.1 b 192.168.1.255', 'a <ip> b <ip>'],
    ['Alex[/[2001:db8:0:0:0:0:0:7]:50122] logged in', 'Alex[/[<ip>]:50122] logged in'],
    ['from 2001:db8::7 port 1', 'from <ip> port 1'],
    ['loopback ::1 here', 'loopback <ip> here'],
    // every layout real logs hold an address in (docs/api.md#addresses)
    ['Bob[/2001:db8:0:0:0:0:0:7:50122] logged in', 'Bob[/<ip>:50122] logged in'],   // Java 13 and older: IPv6 and port unbracketed
    ['§e10.1.2.3 joined', '§e<ip> joined'],
    ['§a2001:db8::7§r', '§a<ip>§r'],
    ['\x1b[33m10.1.2.3\x1b[0m', '\x1b[33m<ip>\x1b[0m'],
    ['\x1b[0;32;1m2001:db8::7\x1b[m', '\x1b[0;32;1m<ip>\x1b[m'],
    ['[10.1.2.3]', '[<ip>]'],
    ['[2001:db8::7]:25565', '[<ip>]:25565'],
    ['/::ffff:10.1.2.3:5000', '/<ip>:5000'],
    ['from ::ffff:10.1.2.3 now', 'from <ip> now'],
    ['[::ffff:10.1.2.3]:1', '[<ip>]:1'],
    ['::ffff:a01:203', '<ip>'],
    ['from 10.1.2.3.', 'from <ip>.'],
    // an address right after a word and a colon, as plugins write them (docs/api.md#addresses)
    ['IP:1.2.3.4', 'IP:<ip>'],
    ['IP:1.2.3.4:25565', 'IP:<ip>:25565'],
    ['client_ip:203.0.113.5', 'client_ip:<ip>'],
    ['ip:2001:db8::7', 'ip:<ip>'],
    ['ip:fe80::1%eth0', 'ip:<ip>'],
    ['from /[fe80::1%eth0]:5000', 'from /[<ip>]:5000'],
    ['cafe:10.1.2.3 seen', 'cafe:<ip> seen'],
  ]) {
    test(`maskAddresses() masks ${JSON.stringify(line)}`, () => assert.equal(maskAddresses(line), masked));
  }
  for (const line of [
    `${P}Done (3.112s)! For help, type "help"`, 'Starting minecraft server version 1.21.4', 'git-Paper-497 (MC: 1.20.4)',
    'This server is running Paper version 1.21.4-211-main@3b35a45 (2025-02-23T21:43:55Z)', '[04Mar2025 12:00:00.123] [Server thread/INFO] [x/]: y',
    '[12:34:56 INFO]: x', 'UUID of player Alex is 069a79f4-44e9-4726-a5be-fca90e38aaf5', 'Alex[local:E:1a2b3c4d] logged in',
    'at net.minecraft.Foo::bar', 'library v1.2.3.4 loaded', 'five parts 10.1.2.3.4', 'MAC 00:1a:2b:3c:4d:5e',
  ]) {
    test(`maskAddresses() keeps ${JSON.stringify(line)}`, () => assert.equal(maskAddresses(line), line));
  }
});

describe('maskAddresses() and readLogLine() on hostile lines', () => {
  // a 512 KiB line built to make a backtracking pattern quadratic: `[` and times without a `]`, then an event text
  const hostile = `[${'00:00:00 '.repeat(58_000)}Alex joined the game`;
  test('readLogLine() takes no meaning from a line over 4 KiB, and returns', () => assert.equal(readLogLine(hostile), undefined));
  test('maskAddresses() returns a 512 KiB line of times and digits unchanged', () => assert.equal(maskAddresses(hostile), hostile));
  test('maskAddresses() masks an address after 100,000 colour codes', () => assert.equal(maskAddresses(`${'§a'.repeat(100_000)}1.2.3.4`), `${'§a'.repeat(100_000)}<ip>`));
});

describe('isInteractiveShell()', () => {
  for (const [argv, interactive] of [
    [['bash'], true], [['-bash'], true], [['/bin/sh'], true], [['bash', '--norc', '--noprofile'], true], [['bash', '-i', 'x.sh'], true],
    [['zsh', '-l'], true], [['bash', '--rcfile', 'x'], true], [['fish'], true],
    [['sh', '-c', 'java -jar server.jar nogui'], false], [['bash', '-lc', 'java'], false], [['/bin/bash', 'start.sh'], false],
    [['bash', '--', 'start.sh'], false], [['fish', '--command', 'java'], false], [['java', '-jar', 'server.jar'], false], [['tmux'], false], [[], false],
  ] as const) {
    test(`isInteractiveShell() reads ${JSON.stringify(argv)} as ${interactive ? 'an interactive shell' : 'no interactive shell'}`, () => assert.equal(isInteractiveShell(argv), interactive));
  }
});

describe('parsePaneList()', () => {
  test('parsePaneList() reads id, tty, mode, synchronize-panes, dead and pid of each pane', () => {
    const listing = '%0|/dev/pts/3|0||0|0|4242\n%7|/dev/pts/9|1|copy-mode|1|1|4300\n';
    assert.deepEqual(parsePaneList(listing), [
      { id: '%0', tty: '/dev/pts/3', inMode: false, mode: '', synchronized: false, dead: false, pid: 4242 },
      { id: '%7', tty: '/dev/pts/9', inMode: true, mode: 'copy-mode', synchronized: true, dead: true, pid: 4300 },
    ]);
  });
});

describe('isSettled() (docs/api.md#freshness: a stat taken in the same timestamp tick as a write proves nothing)', () => {
  const now = 1_800_000_000_500;
  for (const [mtimeMs, readAtMs, settled, why] of [
    [now - 20, now, false, 'a fine mtime 20 ms before the read: a write in the same tick would not change it'],
    [now - 51, now, true, 'a fine mtime more than 50 ms before the read'],
    [1_800_000_000_000, now, false, 'a whole-second mtime 500 ms before the read (a filesystem that keeps seconds)'],
    [1_800_000_000_000, 1_800_000_001_001, true, 'a whole-second mtime more than a second before the read'],
  ] as const) {
    test(`isSettled() is ${settled} for ${why}`, () => assert.equal(isSettled(mtimeMs, readAtMs), settled));
  }
});

describe('parseLogLine()', () => {
  for (const [line, parsed] of [
    [`${P}There are 1 of a max of 20 players online: Alex`, { time: '12:00:00', thread: 'Server thread', level: 'INFO', message: 'There are 1 of a max of 20 players online: Alex' }],
    ['[04Mar2025 12:00:00.123] [Server thread/INFO] [net.minecraft.server.MinecraftServer/]: Added Alex to the whitelist',
      { time: '04Mar2025 12:00:00.123', thread: 'Server thread', level: 'INFO', message: 'Added Alex to the whitelist' }],
    [`${P}§aAdded §lAlex§r to the whitelist\r`, { time: '12:00:00', thread: 'Server thread', level: 'INFO', message: 'Added Alex to the whitelist' }],
    ['\x1b[0;32;1m[12:00:00 INFO]: Done\x1b[m', { time: '12:00:00', thread: undefined, level: 'INFO', message: 'Done' }],
    ['2013-05-14 19:02:11 [INFO] Starting minecraft server version 1.5.2', { time: '2013-05-14 19:02:11', thread: undefined, level: 'INFO', message: 'Starting minecraft server version 1.5.2' }],
    ['[12:00:00] [Async Chat Thread - #2/INFO]: <Mallory> hi', { time: '12:00:00', thread: 'Async Chat Thread - #2', level: 'INFO', message: '<Mallory> hi' }],
    ['Alex, Steve', null],   // a line without the log's prefix is no line of the game's
    ['[Staff] [Server thread/INFO]: Added Alex to the whitelist', null],   // the first brackets hold no time
    ['\tat net.minecraft.server.MinecraftServer.run(MinecraftServer.java:1)', null],
  ] as const) {
    test(`parseLogLine() reads ${JSON.stringify(line)} as ${JSON.stringify(parsed)}`, () => assert.deepEqual(parseLogLine(line), parsed));
  }
});

describe('isConsoleReply()', () => {
  for (const [line, reply] of [
    [`${P}There are 1 of a max of 20 players online: Alex`, true],
    [`${P}[Server] hello`, true],   // the console's own /say
    [`${P}Stopping the server`, true],
    [`${P}<Mallory> @everyone free nitro`, false],
    [`${P}[Not Secure] <Mallory> hi`, false],
    [`${P}* Mallory waves`, false],
    [`${P}[Mallory] hi`, false],   // a player's /say
    [`${P}<Mallory> @everyone free nitro https://discord.gg/scam \u2028`, false],   // `.` misses U+2028 without the s flag
    [`${P}<Mallory> a\u2029b`, false],
    [`${P}Mallory issued server command: /tell Alex @everyone free nitro`, false],   // Paper and Spigot, server thread
    [`${P}Alex[/198.51.100.7:53120] logged in with entity id 7 at (0.5, 64.0, 0.5)`, false],
    [`${P}Alex joined the game`, false],
    [`${P}Alex lost connection: Disconnected`, false],
    [`${P}Alex left the game`, false],
    ['[12:00:00] [Async Chat Thread - #2/INFO]: Added Nobody to the whitelist', false],
    ['[12:00:00] [User Authenticator #1/INFO]: UUID of player Alex is 069a79f4-44e9-4726-a5be-fca90e38aaf5', false],
  ] as const) {
    test(`isConsoleReply() is ${reply} for ${JSON.stringify(line)}`, () => assert.equal(isConsoleReply(parseLogLine(line)!), reply));
  }
});

describe('LINE_KINDS: the log grammar', () => {
  for (const kind of LINE_KINDS) {
    test(`readLogLine() reads the example of the ${kind.type} row as ${kind.type}, and its hint is in it`, () => {
      assert.equal(readLogLine(`[12:00:00] [Server thread/${kind.level ?? 'INFO'}]: ${kind.example}`)?.type, kind.type);
      assert.ok([kind.hint].flat().some((hint) => kind.example.includes(hint)), 'the fast path looks for the hint before anything is decoded');
    });
    // vanilla's chat takes U+2028 and U+2029, which `.` does not match without the `s` flag; U+0085 is a line end to
    // some readers: a line that falls through its row would be read as the game's own
    test(`the ${kind.type} row (${kind.example}) matches U+2028, U+2029 and U+0085 wherever a player's text goes`, () => {
      assert.ok(kind.pattern.flags.includes('s'), 'every pattern matches any character with `.`');
      for (const typed of ['\u2028', '\u2029', '\u0085', 'a\u2028b\u2029c\u0085d', '\u2028@everyone discord.gg/x\u2029']) {
        const message = (kind.typed ?? kind.example).replaceAll('%s', typed);
        assert.equal(readLogLine(`[12:00:00] [Server thread/${kind.level ?? 'INFO'}]: ${message}`)?.type, kind.type, JSON.stringify(message));
      }
    });
  }
  test('a chat line holding U+2028 is told whole, and a death or advancement holding one is the player\'s', () => {
    assert.deepEqual(readLogLine(`${P}<Mallory> @everyone free nitro https://discord.gg/scam \u2028`), { type: 'player.chat', player: 'Mallory', text: '@everyone free nitro https://discord.gg/scam \u2028' });
    assert.deepEqual(readLogLine(`${P}Alex was slain by Bob\u2029the Zombie`), { type: 'player.died', player: 'Alex', message: 'Alex was slain by Bob\u2029the Zombie' });
    assert.deepEqual(readLogLine(`${P}Alex has made the advancement [Stone\u2028Age]`), { type: 'player.advancement', player: 'Alex', advancement: 'Stone\u2028Age', kind: 'task' });
  });
  for (const [line, meaning] of [
    [`${P}Added Kai_2 to the whitelist`, { type: 'whitelist.added', player: 'Kai_2' }],
    [`${P}added kai_2 to the whitelist`, { type: 'whitelist.added', player: 'kai_2' }],
    [`${P}Removed Kai_2 from the whitelist`, { type: 'whitelist.removed', player: 'Kai_2' }],
    [`${P}Could not add Kai_2 to the whitelist`, { type: 'whitelist.not-added', player: 'Kai_2' }],
    [`${P}Could not remove Kai_2 from the whitelist`, { type: 'whitelist.not-removed', player: 'Kai_2' }],
    [`${P}That player does not exist`, { type: 'player.unknown' }],
    [`${P}Player is already whitelisted`, { type: 'whitelist.already-listed' }],
    [`${P}Player is not whitelisted`, { type: 'whitelist.not-listed' }],
    // moderation replies, 1.13+ then 1.8-1.12 (docs/formats.md#moderation-replies)
    [`${P}Kicked Alex: Griefing: again`, { type: 'kick.done', player: 'Alex' }],
    [`${P}Kicked Alex from the game`, { type: 'kick.done', player: 'Alex' }],
    [`${P}Kicked Alex from the game: 'Griefing'`, { type: 'kick.done', player: 'Alex' }],
    [`${P}That player cannot be found`, { type: 'kick.no-player' }],
    [`${P}Player 'Alex' cannot be found`, { type: 'kick.not-found', player: 'Alex' }],
    [`${P}Banned player: Banned by an operator.`, { type: 'ban.added', player: 'player' }],
    [`${P}Banned player Alex`, { type: 'ban.added', player: 'Alex' }],
    [`${P}Unbanned player`, { type: 'ban.removed', player: 'player' }],
    [`${P}Unbanned player Alex`, { type: 'ban.removed', player: 'Alex' }],
    [`${P}Made Alex no longer a server operator`, { type: 'op.removed', player: 'Alex' }],
    [`${P}Made [Staff] Alex a server operator`, undefined],
    ['[12:00:00] [Async Chat Thread - #2/INFO]: Banned Alex: x', undefined],
    [`${P}<Mallory> Banned Alex: x`, { type: 'player.chat', player: 'Mallory', text: 'Banned Alex: x' }],
    [`${P}[Mallory: Banned Alex: x]`, undefined],
    // a verdict is the server thread's alone: never a chat thread's, a plugin's raw text or a chat message
    ['[12:00:00] [Async Chat Thread - #2/INFO]: Added Nobody789 to the whitelist', undefined],
    ['Added Nobody789 to the whitelist', undefined],
    [`${P}<Mallory> Added Nobody789 to the whitelist`, { type: 'player.chat', player: 'Mallory', text: 'Added Nobody789 to the whitelist' }],
  ] as const) {
    test(`readLogLine() reads ${JSON.stringify(line)} as ${JSON.stringify(meaning)}`, () => assert.deepEqual(readLogLine(line), meaning));
  }
});

// The readers of the log try a line first against the rows of the hint found in it: exact only while no line they read
// is of two of the kinds they follow
describe('the readers of the log: no line is of two kinds a reader follows', () => {
  for (const [reader, types] of [['follower', FOLLOWED_TYPES], ['history', HISTORY_TYPES]] as const) {
    for (const kind of LINE_KINDS.filter((row) => types.has(row.type))) {
      test(`a line of the ${kind.type} row ("${kind.example}") is of no other kind the ${reader} reads`, () => {
        const messages = [kind.example, ...kind.typed === undefined ? [] : ['Bob', 'Bob joined the game', '<Bob> hi', 'x] y'].map((text) => kind.typed!.replaceAll('%s', text))];
        for (const message of messages) {
          const line = `[12:00:00] [Server thread/${kind.level ?? 'INFO'}]: ${message}`;
          assert.equal(readLogLine(line, types)?.type, kind.type, line);
          for (const other of types) {
            if (other !== kind.type) assert.equal(readLogLine(line, new Set([other])), undefined, `${other}: ${line}`);
          }
        }
      });
    }
  }
});

// The readers find lines by their hints in raw bytes and read the usual prefixes and presence lines in place: what they
// name must be what the grammar names line by line, whatever the bytes (docs/performance.md#the-backlog)
describe('the readers of the log read a chunk as the grammar reads its lines', () => {
  const random = (() => {
    let seed = 0x2545f491;
    return (below: number): number => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (((t ^ (t >>> 14)) >>> 0) % below);
    };
  })();
  const pick = <T>(items: readonly T[]): T => items[random(items.length)]!;
  const prefixes = [
    '[12:00:00] [Server thread/INFO]: ', '[23:59:59] [Server thread/WARN]: ', '[12:00:00] [Async Chat Thread - #3/INFO]: ',
    '[12:00:00] [Server thread/INFO] [minecraft/DedicatedServer]: ', '[12:00:00] [Server/thread/INFO]: ', '[12:00:00 INFO]: ',
    '2013-05-14 19:02:11 [INFO] ', '[12:00:00] [Server thread/info]: ', '[12:00:00] [Server thread/ABCDEFGHIJK]: ',
    `[12:00:00] [${'T'.repeat(128)}/INFO]: `, `[12:00:00] [${'T'.repeat(129)}/INFO]: `, '[12:00:00] [/INFO]: ',
    '[12:00:00] [Server thread/]: ', '[12:00:00] [Server thread/INFO]:', '[12:00:00] [Server thread/INFO] : ',
    '[12:00:0] [Server thread/INFO]: ', '[12:00:00][Server thread/INFO]: ', '[04Mar2025 12:00:00.123] [Server thread/INFO]: ',
    '[12:00:00] [Server thread/INFO] [x]]: ', `[12:00:00] [Server thread/INFO] [${'l'.repeat(257)}]: `, '[Staff] [Server thread/INFO]: ',
    '[12:00:00] [Sérver thread/INFO]: ', '\x1b[32m[12:00:00] [Server thread/INFO]: ', '[12:00:00] [Server thread/INFO]: \x1b[0m', '',
  ];
  const names = ['Alex', 'Steve_2', '.Bedrock', 'A'.repeat(16), 'A'.repeat(17), 'Al ex', 'Al-ex', 'Al§aex', '[Staff] Alex', 'Äl', ''];
  const messages = [
    '%n joined the game', '%n left the game', '%n lost connection: Disconnected', '%n lost connection: Kicked: %n left the game\x1b[0m', '%n lost connection: <Bob> hi',
    '%n[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)', '%n[local] logged in with entity id -1 at ()',
    '%n[/[::1]:5] logged in with entity id 7 at (1, 2, 3)', '%n[/1.2.3.4:5] logged in with entity id 7 at (1, 2, 3) x',
    '%n[x§]] logged in with entity id 7 at (1)', '%n[x§] logged in with entity id 7 at (1)', '%n[/ip] logged in with entity id 7 at (é)', '%n[/ip] logged in with entity id 7 at (1§)', '%n (formerly known as Old) joined the game',
    '<%n> hello %n joined the game', '[Not Secure] <%n> hi', '<%n> héllo §ax\u2028y', '<<%n>> hi', '<%n>  ', '<[Staff] %n> hi', '<%n>', '%n was slain by Zombie', '%n has made the advancement [Stone Age]', 'Starting minecraft server version 1.21.4',
    'Stopping the server', 'Stopping server', 'Done (3,112s)! For help, type "help"', 'Can\'t keep up! Is the server overloaded? Running 2034ms or 40 ticks behind',
    '%n joined the game\u2028', 'Saving the game (this may take a moment!)', '* %n waves', `%n lost connection: ${'x'.repeat(4100)}`,
  ];
  const endings = ['', '', '', '\r', '\r\r', ' ', '\u2028', '\x1b[m'];
  const hostile = [']', '[', '/', ':', ' ', '\r', '\x1b', '§', 'é', '\u2028', '0', 'a', '(', ')', 'Ā', '😀'];
  const mutate = (line: string): string => {
    const at = random(line.length + 1);
    const cut = random(3);
    return line.slice(0, at) + (random(2) === 0 ? pick(hostile) : '') + line.slice(at + cut);
  };
  const makeLine = (): string => {
    // the usual shapes half of the time: the reader's fast paths are for them
    const usual = random(2) === 0;
    const line = (usual ? prefixes[0] : pick(prefixes)) + pick(messages).replaceAll('%n', usual ? pick(names.slice(0, 4)) : pick(names))
      + pick(endings);
    return random(3) === 0 ? mutate(line) : line;
  };
  // the grammar, a line at a time: lines over 4 KiB (in bytes) mean nothing
  const byGrammar = (lines: readonly string[], types: ReadonlySet<string>) => lines.flatMap((line) => {
    const meaning = Buffer.byteLength(line) > 4096 ? undefined : readLogLine(line, types as never);
    return meaning === undefined ? [] : [meaning];
  });
  for (const [reader, types] of [
    ['presence', PRESENCE_TYPES], ['follower', FOLLOWED_TYPES], ['history', HISTORY_TYPES], ['chat alone', new Set(['player.chat'] as const)],
  ] as const) {
    test(`the ${reader}'s reader names what the grammar names, line by line, in 600 chunks of generated and mutated lines`, () => {
      const lineReader = readerOf(types);
      for (let round = 0; round < 600; round++) {
        // a chunk with an escape anywhere is read the slow way, and a chunk of ASCII alone the fast way: both kinds
        const lines = Array.from({ length: 40 }, makeLine)
          .filter((line) => round % 3 === 2 || !line.includes('\x1b') && (round % 3 === 1 || !/[^\x00-\x7f]/.test(line)));
        const data = Buffer.from(lines.join('\n') + '\n');
        const read: unknown[] = [];
        // as the follower hands it (the last line end left out) and as the history does (whole pieces)
        const end = round % 2 === 0 ? data.length - 1 : data.length;
        forEachHintedLine(data, end, lineReader, (meaning) => read.push(meaning));
        assert.deepEqual(read, byGrammar(lines, types), JSON.stringify(lines));
      }
    });
  }
  test('readUsualLine() reads what parseLogLine() reads, or leaves the line to it', () => {
    let read = 0;
    for (let round = 0; round < 20_000; round++) {
      const line = makeLine();
      const data = Buffer.from(`${line}\n`);
      const text = data.toString('latin1');
      const usual = readUsualLine(text, 0, data.length - 1, /[^\x00-\x7f]/.test(text) ? data : undefined);
      if (usual === undefined || line.includes('\x1b')) continue;
      read++;
      assert.deepEqual(usual, parseLogLine(line), JSON.stringify(line));
    }
    assert.ok(read > 2_000, `the usual prefix was read in place in ${read} lines`);
  });
  test('readerOf() makes chat\'s hint a group of its search, filled by a chat line\'s hint and by no other, and a reader without chat searches without a group', () => {
    const chatHinted = (types: ReadonlySet<string>, message: string): boolean => {
      const lineReader = readerOf(types as never);
      lineReader.hints.lastIndex = 0;
      const found = lineReader.hints.exec(`${P}${message}`);
      assert.ok(found !== null, message);
      return lineReader.chatGroup > 0 && found[lineReader.chatGroup] !== undefined;
    };
    const groupsOf = (search: RegExp): number => new RegExp(`${search.source}|`).exec('')!.length - 1;
    for (const types of [FOLLOWED_TYPES, HISTORY_TYPES, new Set(['player.chat'])]) {
      assert.equal(chatHinted(types, '<Alex> hello Bob joined the game'), true);
      assert.equal(chatHinted(types, '[Not Secure] <Alex> hi'), true);
      assert.equal(groupsOf(readerOf(types as never).hints), 1);
    }
    for (const message of ['Alex joined the game', 'Alex left the game', 'Alex lost connection: Disconnected',
      'Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)', 'Alex was slain by Zombie']) {
      assert.equal(chatHinted(FOLLOWED_TYPES, message), false, message);
    }
    // a reader without chat searches as before: no group to fill at each of a busy log's joins and leaves
    assert.deepEqual([readerOf(PRESENCE_TYPES).chatGroup, groupsOf(readerOf(PRESENCE_TYPES).hints)], [0, 0]);
  });
});

// A large backlog is read on two threads: the far half's presence comes back as its net meanings
describe('readNetPresence() (docs/performance.md#the-backlog)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-api-net-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const names = ['Alex', 'Steve_2', 'Kai', '.Bedrock', 'Mira'];
  const lineOf = (meaning: { type: string; player?: string }): string => ({
    'session.started': 'Starting minecraft server version 1.21.4', 'server.ready': 'Done (1.0s)! For help, type "help"',
    'server.stopping': 'Stopping the server', 'player.joined': `${meaning.player} joined the game`, 'player.left': `${meaning.player} left the game`,
  } as Record<string, string>)[meaning.type]!;
  test('the net meanings of a stretch give the players the whole stretch gives, from any players before it', () => {
    let seed = 7;
    const next = (below: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    for (let round = 0; round < 300; round++) {
      const lines = Array.from({ length: 30 }, () => {
        const name = names[next(names.length)];
        return [`${name}[/203.0.113.9:5] logged in with entity id 1 at (0.5, 64.0, 0.5)`, `${name} joined the game`, `${name} lost connection: Disconnected`,
          `${name} left the game`, `<${name}> ${name} left the game`, 'Starting minecraft server version 1.21.4', 'Stopping the server',
          'Saving the game (this may take a moment!)'][next(round % 10 === 0 ? 8 : 5)]!;
      });
      const file = path.join(dir, `${round}.log`);
      fs.writeFileSync(file, lines.map((line) => `${P}${line}\n`).join('') + `${P}Partial_One joined`);
      const fd = fs.openSync(file, 'r');
      try {
        const size = fs.fstatSync(fd).size;
        const net = readNetPresence(fd, 0, size);
        assert.equal(net.end, size - `${P}Partial_One joined`.length, 'it ends where the last whole line ends');
        const before = names.filter(() => next(2) === 0);
        const whole = lines.map((line) => `${P}${line}`).join('\n');
        const netText = net.meanings.map((meaning) => `${P}${lineOf(meaning)}`).join('\n');
        assert.deepEqual([...scanPresence(netText, new Set(before))].sort(), [...scanPresence(whole, new Set(before))].sort(), whole);
      } finally {
        fs.closeSync(fd);
      }
    }
  });
  test('readNetPresence() keeps nothing of the chunks it read: 16 players who joined 1 MiB apart leave their names, not 16 MiB', () => {
    const file = path.join(dir, 'apart.log');
    const filler = `${'a'.repeat(1023)}\n`.repeat(1024);
    fs.writeFileSync(file, Array.from({ length: 16 }, (_, i) => `${P}Long_Named_${String(i).padStart(5, '0')} joined the game\n${filler}`).join(''));
    const fd = fs.openSync(file, 'r');
    try {
      const before = memoryAfterGc();
      const net = readNetPresence(fd, 0, fs.fstatSync(fd).size);
      const kept = memoryAfterGc() - before;
      assert.equal(net.meanings.length, 16);
      assert.ok(kept < 4 * 1024 * 1024, `${(kept / 1024 / 1024).toFixed(1)} MiB kept`);
    } finally {
      fs.closeSync(fd);
    }
  });
});

describe('death messages (testdata/deaths.json: every death.* text of the English language files, 1.8 to 26.1)', () => {
  const deaths = JSON.parse(fs.readFileSync(path.join(TESTDATA, 'deaths.json'), 'utf8')) as Array<{ key: string; text: string; versions: [string, string] }>;
  // the killer is any name (a name tag's text included), the item always in brackets
  const fill = (text: string) => text.replace('%1$s', 'Alex').replace('%2$s', 'Zombie Pigman using magic').replace('%3$s', '[Sword of a [Hero]]');
  for (const { key, text, versions } of deaths) {
    // the `.link` texts are parts of another message; message_too_long is sent to the dying player, never logged
    if (key.endsWith('.link') || key === 'death.attack.message_too_long') continue;
    test(`readLogLine() reads ${key} of ${versions.join('-')} (${JSON.stringify(text)}) as a death of Alex`, () => {
      assert.deepEqual(readLogLine(`${P}${fill(text)}`), { type: 'player.died', player: 'Alex', message: fill(text) });
    });
  }
  for (const [line, why] of [
    [`${P}Alex fell from a high place and laughed`, 'more than the text'],
    [`${P}Alex`, 'a name alone'],
    [`${P}[Alex] fell from a high place`, 'a player\'s /say'],
    [`${P}* Alex fell from a high place`, 'a /me'],
    ['[12:00:00] [Async Chat Thread - #0/INFO]: Alex fell from a high place', 'a chat thread\'s line'],
    ['[12:00:00] [Server thread/WARN]: Alex fell from a high place', 'a warning'],
    [`${P}Alex moved too quickly! 10.5,0.0,3.2`, 'another text that begins with a name'],
    [`${P}Alex issued server command: /kill Alex`, 'a command'],
  ] as const) {
    test(`readLogLine() does not read ${JSON.stringify(line)} as a death (${why})`, () => assert.notEqual(readLogLine(line)?.type, 'player.died'));
  }
  test('readLogLine() reads a chat line that reads like a death as the chat it is', () => {
    assert.deepEqual(readLogLine(`${P}<Mallory> Alex fell from a high place`), { type: 'player.chat', player: 'Mallory', text: 'Alex fell from a high place' });
  });
});

describe('advancement and lag lines', () => {
  for (const [line, meaning] of [
    [`${P}Alex has made the advancement [Stone Age]`, { type: 'player.advancement', player: 'Alex', advancement: 'Stone Age', kind: 'task' }],
    [`${P}Alex has reached the goal [Sky's the Limit]`, { type: 'player.advancement', player: 'Alex', advancement: "Sky's the Limit", kind: 'goal' }],
    [`${P}.Bramble_Crest has completed the challenge [Adventuring Time]`, { type: 'player.advancement', player: '.Bramble_Crest', advancement: 'Adventuring Time', kind: 'challenge' }],
    [`${P}Alex has just earned the achievement [Taking Inventory]`, { type: 'player.advancement', player: 'Alex', advancement: 'Taking Inventory', kind: 'achievement' }],
    // a datapack's title is any text, brackets included
    [`${P}Alex has made the advancement [A [nested] title]`, { type: 'player.advancement', player: 'Alex', advancement: 'A [nested] title', kind: 'task' }],
    ['[14:08:57] [Server thread/WARN]: Can\'t keep up! Is the server overloaded? Running 2917ms or 58 ticks behind', { type: 'server.lagging', behind_ms: '2917', ticks: '58' }],
    ['[00:37:41] [Server thread/WARN] [net.minecraft.server.MinecraftServer]: Can\'t keep up! Did the system time change, or is the server overloaded? Running 2897ms behind, skipping 57 tick(s)', { type: 'server.lagging', behind_ms: '2897', ticks: '57' }],
    // the lines the game writes at INFO, and a player's text, mean nothing here
    [`${P}Can't keep up! Is the server overloaded? Running 2917ms or 58 ticks behind`, undefined],
    ['[12:00:00] [Async Chat Thread - #0/INFO]: Alex has made the advancement [Stone Age]', undefined],
    [`${P}Alex has lost the achievement [Taking Inventory]`, undefined],
  ] as const) {
    test(`readLogLine() reads ${JSON.stringify(line)} as ${JSON.stringify(meaning)}`, () => assert.deepEqual(readLogLine(line), meaning));
  }
});

describe('tellrawLine() (docs/api.md#post-apisay)', () => {
  /** A reader of SNBT as 1.21.5+ reads a text component: compounds, lists, quoted strings and their escapes. */
  function readSnbt(source: string): unknown {
    let at = 0;
    const hex = (digits: number) => {
      const text = source.slice(at, at + digits);
      assert.match(text, new RegExp(`^[0-9a-fA-F]{${digits}}$`), `a ${digits}-digit hex escape at ${at}`);
      at += digits;
      return String.fromCodePoint(parseInt(text, 16));
    };
    const quoted = (): string => {
      const quote = source[at++];
      let text = '';
      for (;;) {
        assert.ok(at < source.length, 'an unterminated string');
        const c = source[at++];
        if (c === quote) return text;
        if (c !== '\\') { text += c; continue; }
        const escape = source[at++];
        const simple: Record<string, string> = { b: '\b', s: ' ', t: '\t', n: '\n', f: '\f', r: '\r', '\\': '\\', "'": "'", '"': '"' };
        if (escape in simple) text += simple[escape];
        else if (escape === 'x') text += hex(2);
        else if (escape === 'u') text += hex(4);
        else if (escape === 'U') text += hex(8);
        else assert.fail(`SNBT has no escape \\${escape}`);
      }
    };
    const value = (): unknown => {
      if (source[at] === '"' || source[at] === "'") return quoted();
      if (source[at] === '{') {
        at++;
        const compound: Record<string, unknown> = {};
        while (source[at] !== '}') {
          const key = quoted();
          assert.equal(source[at++], ':');
          compound[key] = value();
          if (source[at] === ',') at++;
        }
        at++;
        return compound;
      }
      return assert.fail(`no SNBT value at ${at}`);
    };
    const read = value();
    assert.equal(at, source.length, 'the whole component is read');
    return read;
  }
  /** What every version reads from the typed line: the same component as JSON (Gson) and as SNBT. */
  const component = (line: string) => {
    assert.ok(line.startsWith('tellraw @a '));
    const text = line.slice('tellraw @a '.length);
    const json = JSON.parse(text) as unknown;
    assert.deepEqual(readSnbt(text), json, 'JSON and SNBT read the same component');
    return json;
  };

  for (const [from, text, typed, shown] of [
    ['Alex', 'hello', 'tellraw @a {"text":"[Alex] hello"}', '[Alex] hello'],
    [undefined, 'restart in 5 minutes', 'tellraw @a {"text":"[Server] restart in 5 minutes"}', '[Server] restart in 5 minutes'],
    ['Alex', 'say "hi" \\ @a {x} [y] ; & | $ (z) <b>', 'tellraw @a {"text":"[Alex] say \\u0022hi\\u0022 \\u005C @a {x} [y] \\u003B \\u0026 \\u007C \\u0024 \\u0028z\\u0029 \\u003Cb\\u003E"}', '[Alex] say "hi" \\ @a {x} [y] ; & | $ (z) <b>'],
    ['Alex', '😀', 'tellraw @a {"text":"[Alex] \\uD83D\\uDE00"}', '[Alex] 😀'],
    ['Alex', 'שלום\u200f', 'tellraw @a {"text":"[Alex] \\u05E9\\u05DC\\u05D5\\u05DD\\u200F"}', '[Alex] שלום\u200f'],
    ['Alex', '§cred', 'tellraw @a {"text":"[Alex] \\u2E39cred"}', '[Alex] ⸹cred'],
    ['Alex', '${jndi:ldap://x}', 'tellraw @a {"text":"[Alex] \\u0024\\u200B{jndi:ldap://x}"}', '[Alex] $\u200b{jndi:ldap://x}'],
    ['"}, {"selector":"@a', '@e[type=creeper]', 'tellraw @a {"text":"[\\u0022}, {\\u0022selector\\u0022:\\u0022@a] @e[type=creeper]"}', '["}, {"selector":"@a] @e[type=creeper]'],
    ['Alex', '%s %1$s \\n \\u0041 \\x41', 'tellraw @a {"text":"[Alex] %s %1\\u0024s \\u005Cn \\u005Cu0041 \\u005Cx41"}', '[Alex] %s %1$s \\n \\u0041 \\x41'],
  ] as const) {
    test(`tellrawLine() types ${JSON.stringify(text)} from ${JSON.stringify(from)} as ${typed}, which every version reads as that text`, () => {
      const line = tellrawLine(from, text);
      assert.equal(line, typed);
      assert.deepEqual(component(line), { text: shown });
    });
  }

  test('tellrawLine() types only printable ASCII without ; & | ` $ ( ) < >, and every version reads the text back, for any text', () => {
    const random = seededRandom(21);
    const alphabet = [...'aZ09 "\\\'{}[]:,@;&|`$()<>%§/', '\u00e9', '\u200f', '\u2028', '\ufeff', '😀', '\u0000', '\u001b', '\u007f', '\u0085', '\uffff', '𝕏'];
    for (let run = 0; run < 500; run++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const line = tellrawLine('Relay', text);
      assert.match(line, /^[\x20-\x7e]+$/);
      assert.doesNotMatch(line, /[;&|`$()<>]/);
      const expected = `[Relay] ${text}`.replace(/§/g, '\u2e39').replace(/\$\{/g, '$\u200b{');
      assert.deepEqual(component(line), { text: expected }, JSON.stringify(text));
    }
  });
});

describe('validateSay()', () => {
  for (const [body, said] of [
    [{ text: 'hi' }, { text: 'hi', from: undefined }],
    [{ text: '  hi  ', from: ' Alex ' }, { text: 'hi', from: 'Alex' }],
    [{ text: 'hi', from: null }, { text: 'hi', from: undefined }],
    [{ text: 'line one\nline two\r\n\tend' }, { text: 'line one line two   end', from: undefined }],
    [{ text: 'x'.repeat(256) }, { text: 'x'.repeat(256), from: undefined }],
    [{ text: '😀'.repeat(256), from: '😀'.repeat(32) }, { text: '😀'.repeat(256), from: '😀'.repeat(32) }],
  ] as const) {
    test(`validateSay() takes ${JSON.stringify(body).slice(0, 60)}`, () => assert.deepEqual(validateSay(body), said));
  }
  for (const [body, error] of [
    [{}, 'text is required and must be a string.'],
    [{ text: 7 }, 'text is required and must be a string.'],
    [{ text: '' }, 'text must be 1 to 256 characters long.'],
    [{ text: ' \n\t ' }, 'text must be 1 to 256 characters long.'],
    [{ text: 'x'.repeat(257) }, 'text must be 1 to 256 characters long.'],
    [{ text: 'hi', from: 7 }, 'from must be a string when given.'],
    [{ text: 'hi', from: '' }, 'from must be 1 to 32 characters long.'],
    [{ text: 'hi', from: 'x'.repeat(33) }, 'from must be 1 to 32 characters long.'],
    [{ text: 'hi \ud800' }, 'text and from must be valid Unicode text.'],
    [{ text: 'hi', from: '\udc00' }, 'text and from must be valid Unicode text.'],
    // and what reads as Server: invisible characters, compatibility forms, lookalike letters of other scripts
    ...['Server', 'server', 'SERVER', ' sErVeR\n', 'Server\u200b', 'Serv\u00ader', 'S e r v e r', '\uff33\uff25\uff32\uff36\uff25\uff32', '\u0405erver', 'S\u0435rv\u0435r', 'Se\u0301rver']
      .map((from) => [{ text: 'hi', from }, 'from must not be Server: players read [Server] as the console itself.'] as const),
    ...['Alex] [Server', '[Admin]', 'a]b', 'x['].map((from) => [{ text: 'hi', from }, 'from must not contain [ or ]: players would read two speakers.'] as const),
  ] as const) {
    test(`validateSay() refuses ${JSON.stringify(body).slice(0, 60)}: ${error}`, () => assert.throws(() => validateSay(body), throwsHttp(400, error)));
  }
});

describe('createLagSummary()', () => {
  test('createLagSummary() publishes the first warning of a quiet minute at once, the sums of the rest when the minute ends, and nothing for a quiet one', async () => {
    const published: Array<[string, unknown]> = [];
    const lag = createLagSummary((type, fields) => published.push([type, fields]), 200);
    lag.add(2000, 40);
    assert.deepEqual(published, [['server.lagging', { behind_ms: 2000, ticks: 40, overloads: 1 }]]);
    lag.add(3000, 60);
    lag.add(2500, 50);
    assert.equal(published.length, 1);
    await waitFor(() => published.length === 2, { timeoutMs: 2_000 });
    assert.deepEqual(published[1], ['server.lagging', { behind_ms: 5500, ticks: 110, overloads: 2 }]);
    await new Promise((resolve) => setTimeout(resolve, 450));   // a quiet minute after the sums
    assert.equal(published.length, 2);
    lag.add(2100, 42);
    assert.deepEqual(published[2], ['server.lagging', { behind_ms: 2100, ticks: 42, overloads: 1 }]);
    lag.close();
  });
});

// ---- The relay's n8n workflows (docs/n8n/, README: n8n) ----

const N8N_DIR = path.join(__dirname, '..', 'docs', 'n8n');
const N8N_API_BASE = 'http://game1.example:6767';   // the one address a workflow file holds: the user sets theirs
const N8N_KEY_PLACEHOLDER = 'REPLACE_WITH_THE_API_KEY';
const N8N_CREDENTIALS: Record<string, string[]> = {
  httpHeaderAuth: ['X-API-Key', 'gameserver-api relay bot', 'Discord bot token'],
  discordWebhookApi: ['Discord channel webhook'],
};
/** Discord's API as the workflows' Settings name it, and the calls they make of it once the settings are filled in. */
const DISCORD_API = 'https://discord.com/api/v10';
const DISCORD_SETTINGS = { discordApi: DISCORD_API, applicationId: '1111', guildId: '2222' };
const DISCORD_CALLS: ReadonlyArray<{ method: string; path: string; credential?: string }> = [
  // the interaction's token authorises the edit of its reply: no bot token
  { method: 'PATCH', path: '/webhooks/1111/interaction-token/messages/@original' },
  { method: 'PUT', path: '/applications/1111/guilds/2222/commands', credential: 'Discord bot token' },
];
interface N8nNode { id: string; name: string; type: string; typeVersion: number; parameters: Record<string, any>; credentials?: Record<string, { id: string; name: string }>; webhookId?: string }
interface N8nWorkflow { id: string; name: string; nodes: N8nNode[]; connections: Record<string, { main: Array<Array<{ node: string; type: string; index: number }>> }>; settings: { executionOrder: string } }
const n8nWorkflows = () => fs.readdirSync(N8N_DIR).filter((file) => file.endsWith('.json')).sort()
  .map((file) => ({ file, text: fs.readFileSync(path.join(N8N_DIR, file), 'utf8') }));
const n8nNodes = (workflow: N8nWorkflow, type: string) => workflow.nodes.filter((node) => node.type === `n8n-nodes-base.${type}`);
/** Every string in a parsed JSON value. */
const stringsIn = (value: unknown): string[] => typeof value === 'string' ? [value]
  : typeof value === 'object' && value !== null ? Object.values(value).flatMap(stringsIn) : [];

/**
 * A parameter as n8n reads it: one that starts with `=` has each `{{ … }}` replaced by the value of the JavaScript in
 * it, given `$json` (the node's input item) and `$('Node')` (another node's item).
 */
function n8nEvaluate(parameter: string, $json: unknown, items: Record<string, unknown> = {}, context: Record<string, unknown> = {}): string {
  if (!parameter.startsWith('=')) return parameter;
  const $ = (node: string) => ({ item: { json: items[node] }, first: () => ({ json: items[node] }) });
  return parameter.slice(1).replace(/\{\{([\s\S]*?)\}\}/g, (_, code: string) => {
    const value = new Function('$json', '$', ...Object.keys(context), `return (${code});`)($json, $, ...Object.values(context)) as unknown;
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/**
 * Texts a player can put before a Discord channel (chat, a name tag in a death message, a sign or a book in a command's
 * output), each as escapeForDiscord() writes it: read as written, nothing rendered. The daemon's Discord format and
 * every workflow that posts to Discord are held to this one list.
 */
const DISCORD_ESCAPE_CASES: ReadonlyArray<readonly [string, string]> = [
  ['hello, world', 'hello, world'],
  ['**bold** __u__ ~~s~~ ||spoiler|| `code` # head -# small > quote', '\\*\\*bold\\*\\* \\_\\_u\\_\\_ \\~\\~s\\~\\~ \\|\\|spoiler\\|\\| \\`code\\` \\# head \\-\\# small \\> quote'],
  ['```js\nalert(1)\n```', '\\`\\`\\`js\nalert\\(1\\)\n\\`\\`\\`'],
  ['[free nitro](https://evil.example/x)', '\\[free nitro\\]\\(https:/\u200b/evil.example/x\\)'],
  ['@everyone @here <@123> <@!123> <@&456> <#789>', '@\u200beveryone @\u200bhere \\<@\u200b123\\> \\<@\u200b!123\\> \\<@\u200b&456\\> \\<\\#789\\>'],
  ['<t:1700000000:R> <:kek:123> <a:dance:456> </give:789>', '\\<t:1700000000:R\\> \\<:kek:123\\> \\<a:dance:456\\> \\</give:789\\>'],
  ['https://evil.example HTTP://EVIL.EXAMPLE http:///x <https://no.embed>', 'https:/\u200b/evil.example HTTP:/\u200b/EVIL.EXAMPLE http:/\u200b/\u200b/x \\<https:/\u200b/no.embed\\>'],
  ['discord.gg/abc DISCORD.GG/abc Discord.Gg/abc', 'discord\u200b.gg/abc DISCORD\u200b.GG/abc Discord\u200b.Gg/abc'],
  ['discord.com/invite/abc DISCORD.COM/INVITE/abc discordapp.com/invite/abc DiscordApp.Com/invite/abc', 'discord\u200b.com/invite/abc DISCORD\u200b.COM/INVITE/abc discordapp\u200b.com/invite/abc DiscordApp\u200b.Com/invite/abc'],
  ['discord.gift/abc DISCORD.GIFT/abc discord.new/abc Discord.New/abc', 'discord\u200b.gift/abc DISCORD\u200b.GIFT/abc discord\u200b.new/abc Discord\u200b.New/abc'],
  ['dsc.gg/abc DSC.GG/abc Dsc.Gg/abc discord.me/abc discord.io/abc discord.li/abc', 'dsc\u200b.gg/abc DSC\u200b.GG/abc Dsc\u200b.Gg/abc discord\u200b.me/abc discord\u200b.io/abc discord\u200b.li/abc'],
  ['https://discord.gg/abc mydiscord.gg/abc', 'https:/\u200b/discord\u200b.gg/abc mydiscord\u200b.gg/abc'],
  ['gg 😀 :skull: ümlauts ✨ שלום', 'gg 😀 :skull: ümlauts ✨ שלום'],
  ['He said "hi", it\'s C:\\path \\* {{ $json }}', 'He said "hi", it\'s C:\\\\path \\\\\\* {{ $json }}'],
  // command output: the game's own lines, and a player's text inside them
  ['There are 1 of a max of 20 players online: Kai_2', 'There are 1 of a max of 20 players online: Kai\\_2'],
  ['There are 1 ban(s):\n<ip> was banned by Server: Griefing', 'There are 1 ban\\(s\\):\n\\<ip\\> was banned by Server: Griefing'],
  ['Alex was slain by @everyone join DISCORD.GG/abc', 'Alex was slain by @\u200beveryone join DISCORD\u200b.GG/abc'],
  ['Alex was killed by [Intentional Game Design]', 'Alex was killed by \\[Intentional Game Design\\]'],
];
/** escapeForDiscord()'s replacements as server.ts writes them: the text every workflow holds after what it posts. */
const DISCORD_ESCAPE = escapeForDiscord.toString().match(/\.replace\(.*\)/g)!.join('');

describe('docs/n8n: the relay\'s workflows as files', () => {
  test('docs/n8n holds one workflow file per recipe: the chat command, events to Discord, the chat bridge, the whitelist request, the slash commands and their registration, the scheduled restart', () => {
    assert.deepEqual(n8nWorkflows().map((w) => w.file), [
      'chat-bridge.json', 'chat-command.json', 'discord-commands.json', 'events-to-discord.json', 'register-commands.json', 'scheduled-restart.json', 'whitelist-request.json',
    ]);
  });
  for (const { file, text } of n8nWorkflows()) {
    const workflow = JSON.parse(text) as N8nWorkflow;
    test(`${file} is an n8n 2.x workflow export: an id, a name, nodes with unique names, connections between nodes that exist`, () => {
      assert.match(workflow.id, /^[A-Za-z0-9]{1,36}$/);   // n8n's import needs an id
      assert.ok(workflow.name.startsWith('gameserver-api: '));
      assert.equal(workflow.settings.executionOrder, 'v1');
      const names = workflow.nodes.map((node) => node.name);
      assert.equal(new Set(names).size, names.length);
      for (const node of workflow.nodes) assert.ok(node.type.startsWith('n8n-nodes-base.') && Number.isFinite(node.typeVersion), node.name);
      for (const [source, { main }] of Object.entries(workflow.connections)) {
        assert.ok(names.includes(source), source);
        for (const target of main.flat()) assert.ok(names.includes(target.node), target.node);
      }
    });

    test(`${file}: every HTTP Request node names a route of the table (or a Discord call) with its method, sends the key exactly where the route needs it, and passes every answer on`, () => {
      for (const node of n8nNodes(workflow, 'httpRequest')) {
        if (node.parameters.url.startsWith("={{ $('Settings').item.json.discordApi }}/")) {
          const url = n8nEvaluate(node.parameters.url, {}, { Settings: DISCORD_SETTINGS, Interaction: { body: { token: 'interaction-token' } } });
          const call = DISCORD_CALLS.find((c) => `${DISCORD_API}${c.path}` === url && c.method === node.parameters.method);
          assert.ok(call !== undefined, `${node.name}: ${node.parameters.method} ${url}`);
          assert.equal(node.credentials?.httpHeaderAuth.name, call.credential, node.name);
          assert.deepEqual(node.parameters.options.response.response, { fullResponse: true, neverError: true });
          continue;
        }
        const route = /^=\{\{ \$\('Settings'\)\.item\.json\.apiBase \}\}(\/[a-z/]*)$/.exec(node.parameters.url)?.[1];
        const described = DESCRIBED_ROUTES.find((r) => r.route === route && r.method === node.parameters.method);
        assert.ok(described !== undefined, `${node.name}: ${node.parameters.method} ${node.parameters.url}`);
        if (described.auth_required) {
          assert.equal(node.parameters.authentication, 'genericCredentialType');
          assert.equal(node.parameters.genericAuthType, 'httpHeaderAuth');
          assert.equal(node.credentials?.httpHeaderAuth.name, 'X-API-Key');
        } else {
          assert.equal(node.credentials, undefined, `${node.name} sends no key to a public route`);
        }
        // the daemon's 400, 409 and 503 reach the chat: never an n8n error in their place
        assert.deepEqual(node.parameters.options.response.response, { fullResponse: true, neverError: true });
      }
    });

    test(`${file}: every body is built with JSON.stringify, never a JSON text with {{ }} pasted into it`, () => {
      for (const node of workflow.nodes) {
        for (const name of ['jsonBody', 'responseBody']) {
          const body = node.parameters[name] as string | undefined;
          if (body === undefined) continue;
          assert.match(body, /^=\{\{ JSON\.stringify\((?:\{[\s\S]*\}|\$json\.[a-z]+)\) \}\}$/, `${node.name}.${name}`);
          assert.equal(body.match(/\{\{/g)?.length, 1, `${node.name}.${name} is one expression`);
        }
      }
    });

    test(`${file} holds no key, webhook URL or address but the placeholders, and names its credentials`, () => {
      const strings = stringsIn(workflow);
      for (const value of strings) {
        // node ids and webhook ids are UUIDs; anything else this long and random would be a secret
        for (const token of value.match(/[A-Za-z0-9_-]{32,}/g) ?? []) assert.match(token, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, `${token} in ${file}`);
        assert.doesNotMatch(value, /discord(app)?\.com\/api\/webhooks/);
        for (const url of value.match(/https?:\/\/[^\s"'`)]+/g) ?? []) {
          if (url === DISCORD_API) continue;
          const { host, password } = new URL(url.replace(/\{\{.*$/, ''));
          assert.equal(host, new URL(N8N_API_BASE).host, `${url} in ${file}`);
          assert.ok(password === '' || password === N8N_KEY_PLACEHOLDER, `${url} in ${file}`);
        }
      }
      for (const node of workflow.nodes) {
        for (const [type, { name }] of Object.entries(node.credentials ?? {})) assert.ok(N8N_CREDENTIALS[type]?.includes(name), `${node.name}: ${type} ${name}`);
      }
      const settings = workflow.nodes.find((node) => node.name === 'Settings');
      if (n8nNodes(workflow, 'httpRequest').some((node) => node.parameters.url.startsWith("={{ $('Settings').item.json.apiBase }}/"))) {
        assert.equal(settings?.parameters.assignments.assignments.find((a: { name: string }) => a.name === 'apiBase')?.value, N8N_API_BASE);
      }
    });

    test(`${file}: the SSE trigger reads GET /api/events with the key as its URL's password, and every webhook answers what it got once, behind a credential or Discord's signature`, () => {
      for (const node of n8nNodes(workflow, 'sseTrigger')) {
        const url = new URL(node.parameters.url);
        assert.deepEqual([url.origin, url.pathname, url.username, url.password], [N8N_API_BASE, '/api/events', 'relay', N8N_KEY_PLACEHOLDER]);
      }
      for (const node of n8nNodes(workflow, 'webhook')) {
        if (file === 'discord-commands.json') {
          // Discord sends no header of ours: its signature over the raw body is the credential, checked first
          assert.deepEqual([node.parameters.authentication, node.parameters.options], ['none', { rawBody: true }]);
          assert.deepEqual(workflow.connections[node.name].main, [[{ node: 'Settings', type: 'main', index: 0 }]]);
          assert.deepEqual(workflow.connections.Settings.main, [[{ node: 'Verify signature', type: 'main', index: 0 }]]);
        } else {
          assert.equal(node.parameters.authentication, 'headerAuth', 'no open door to the console');
          assert.equal(node.credentials?.httpHeaderAuth.name, 'gameserver-api relay bot');
        }
        assert.equal(node.parameters.responseMode, 'responseNode');
        assert.match(node.webhookId ?? '', /^[0-9a-f-]{36}$/);
        // every path from the webhook meets one answer to it (a deferred reply goes on after its answer)
        const answers = (name: string, answered: string[]): void => {
          const here = workflow.nodes.find((n) => n.name === name)?.type === 'n8n-nodes-base.respondToWebhook' ? [...answered, name] : answered;
          const next = (workflow.connections[name]?.main ?? []).flat().map((target) => target.node);
          if (next.length === 0) assert.equal(here.length, 1, `${node.name} → ${name}: ${here.join(', ')}`);
          for (const target of next) answers(target, here);
        };
        answers(node.name, []);
      }
    });
  }

  test('events-to-discord.json makes one readable line of every event type the daemon publishes but stream.reset, players\' text escaped', () => {
    const workflow = JSON.parse(fs.readFileSync(path.join(N8N_DIR, 'events-to-discord.json'), 'utf8')) as N8nWorkflow;
    const [byType] = n8nNodes(workflow, 'switch');
    const routed = byType.parameters.rules.values.map((rule: any) => rule.conditions.conditions[0].rightValue as string);
    const published = API_DOCUMENT.components.schemas.Event.oneOf.flatMap((option: JsonSchema) => option.properties.type.const ?? option.properties.type.enum);
    assert.deepEqual([...routed].sort(), published.filter((type: string) => type !== 'stream.reset').sort());
    const escape = workflow.nodes.find((node) => node.name === 'Escape for Discord')!.parameters.assignments.assignments[0].value as string;
    const lineOf = (event: Record<string, unknown>) => {
      const output = routed.indexOf(event.type as string);
      const setNode = workflow.nodes.find((node) => node.name === workflow.connections['By type'].main[output][0].node)!;
      return n8nEvaluate(escape, { line: n8nEvaluate(setNode.parameters.assignments.assignments[0].value, event) });
    };
    assert.equal(lineOf({ type: 'player.chat', player: 'Kai_2', text: '@everyone **free** https://evil.example' }), '\\<Kai\\_2\\> @\u200beveryone \\*\\*free\\*\\* https:/\u200b/evil.example');
    assert.equal(lineOf({ type: 'player.died', player: 'Alex', message: 'Alex was slain by Zombie' }), 'Alex was slain by Zombie');
    assert.equal(lineOf({ type: 'player.advancement', player: 'Alex', advancement: 'Stone Age', kind: 'task' }), 'Alex has made the advancement \\[Stone Age\\]');
    assert.equal(lineOf({ type: 'server.lagging', behind_ms: 2034, ticks: 40, overloads: 3 }), 'The server is lagging: 2.0 s behind \\(3 warnings in the last minute\\)');
    assert.equal(lineOf({ type: 'server.stopped', pid: 7, crashed: true, reason: 'Exception in server tick loop' }), 'The server crashed: Exception in server tick loop');
    assert.equal(lineOf({ type: 'backup.finished', backup: { name: 'snapshot_1.tar.gz', size: '1.50 KB' } }), 'Backup finished: snapshot\\_1.tar.gz \\(1.50 KB\\)');
    assert.equal(lineOf({ type: 'whitelist.changed', added: ['Kai_2'], removed: ['Bob', 'Zoe'] }), 'Whitelist: added Kai\\_2; removed Bob, Zoe');
    assert.equal(lineOf({ type: 'bans.changed', added: ['Mallory_X'], removed: [] }), 'Bans: added Mallory\\_X');
    assert.equal(lineOf({ type: 'ops.changed', added: [], removed: ['Kai_2'] }), 'Operators: removed Kai\\_2');
  });
});

describe('docs/n8n: one escape for Discord, the daemon\'s', () => {
  /**
   * Where each workflow hands text to Discord: a Discord node's content (made by the Set node before it), or a reply
   * for the chat bot to post; each with the item that carries a text there, and the text it must then post.
   */
  const postingPoints: Array<{ file: string; node: string; given: string; parameter: (node: N8nNode) => string; item: (text: string) => unknown; items?: (text: string) => Record<string, unknown>; posted: (value: string) => string; escaped: (text: string) => string }> = [];
  const setValue = (node: N8nNode) => node.parameters.assignments.assignments[0].value as string;
  const replyOf = (node: N8nNode) => node.parameters.responseBody as string;
  const reply = (value: string) => (JSON.parse(value) as { reply: string }).reply;
  for (const [file, node] of [['chat-bridge.json', 'Answer'], ['chat-command.json', 'Reply'], ['chat-command.json', 'Moderation reply'], ['whitelist-request.json', 'Reply']]) {
    postingPoints.push(
      { file, node, given: 'the daemon\'s error', parameter: replyOf, item: (text) => ({ statusCode: 400, body: { ok: false, error: text } }), posted: reply, escaped: escapeForDiscord },
      { file, node, given: 'the daemon\'s answer', parameter: replyOf, item: (text) => ({ statusCode: 200, body: { ok: true, message: text, output: text.split('\n') } }), posted: reply, escaped: escapeForDiscord },
    );
  }
  // discord-commands.json answers Discord itself: the content of an interaction's reply, or of the edit of a deferred one
  const content = (value: string) => {
    const posted = JSON.parse(value) as { type?: number; data?: { content: string; allowed_mentions: unknown }; content?: string; allowed_mentions?: unknown };
    assert.deepEqual((posted.data ?? posted).allowed_mentions, { parse: [] });
    return (posted.data ?? posted).content!;
  };
  const jsonBody = (node: N8nNode) => node.parameters.jsonBody as string;
  const daemonStatus = { body: { ok: true, online: true, pid: 42, uptime: '1:02:03', memory: '3.5%' } };
  const aCommand = (text: string) => ({ Interaction: { body: { type: 2, data: { name: text } } } });
  postingPoints.push(
    { file: 'discord-commands.json', node: 'Edit the reply', given: 'the daemon\'s error', parameter: jsonBody, item: (text) => ({ statusCode: 400, body: { ok: false, error: text } }), posted: content, escaped: escapeForDiscord },
    { file: 'discord-commands.json', node: 'Edit the reply', given: 'the game\'s reply', parameter: jsonBody, item: (text) => ({ statusCode: 200, body: { ok: true, message: 'Command sent: x', output: text.split('\n') } }), posted: content, escaped: escapeForDiscord },
    { file: 'discord-commands.json', node: 'Edit the reply', given: 'the daemon\'s verdict', parameter: jsonBody, item: (text) => ({ statusCode: 202, body: { ok: true, message: text } }), posted: content, escaped: escapeForDiscord },
    { file: 'discord-commands.json', node: 'Players reply', given: 'a player\'s name', parameter: replyOf, item: (text) => ({ statusCode: 200, body: { ok: true, online: true, count: 1, players: [text] } }), posted: content, escaped: (text) => escapeForDiscord(`1 player online: ${text}`) },
    { file: 'discord-commands.json', node: 'Players reply', given: 'the daemon\'s error', parameter: replyOf, item: (text) => ({ statusCode: 500, body: { ok: false, error: text } }), posted: content, escaped: escapeForDiscord },
    { file: 'discord-commands.json', node: 'Status reply', given: 'the game\'s MOTD', parameter: replyOf, item: (text) => ({ statusCode: 200, body: { ok: true, online: true, ready: true, version: { name: '1.21.4', protocol: 769 }, motd: text, players: { online: 2, max: 20 } } }), items: () => ({ 'GET /api/status': daemonStatus }), posted: content, escaped: (text) => escapeForDiscord(`The server is up: 1.21.4, 2 of 20 players online, up 1:02:03, memory 3.5%.\n${text}`) },
    { file: 'discord-commands.json', node: 'Status reply', given: 'the daemon\'s error', parameter: replyOf, item: () => ({}), items: (text) => ({ 'GET /api/status': { statusCode: 503, body: { ok: false, error: text } } }), posted: content, escaped: escapeForDiscord },
    { file: 'discord-commands.json', node: 'Not allowed', given: 'a command\'s name', parameter: replyOf, item: () => ({}), items: aCommand, posted: content, escaped: (text) => escapeForDiscord(`/${text} needs a role this server has not given you.`) },
    { file: 'discord-commands.json', node: 'Unknown command', given: 'a command\'s name', parameter: replyOf, item: () => ({}), items: aCommand, posted: content, escaped: (text) => escapeForDiscord(`/${text} is not a command of this workflow: register the commands again.`) },
    { file: 'scheduled-restart.json', node: 'Escape for Discord', given: 'an outcome\'s line', parameter: setValue, item: (text) => ({ line: text }), posted: (value) => value, escaped: escapeForDiscord },
    { file: 'events-to-discord.json', node: 'Escape for Discord', given: 'an event\'s line', parameter: setValue, item: (text) => ({ line: text }), posted: (value) => value, escaped: escapeForDiscord },
    { file: 'chat-bridge.json', node: 'Chat line', given: 'a player.chat event', parameter: setValue, item: (text) => ({ type: 'player.chat', player: 'Alex', text }), posted: (value) => value, escaped: (text) => escapeForDiscord(`<Alex> ${text}`) },
  );

  for (const { file, text } of n8nWorkflows()) {
    const workflow = JSON.parse(text) as N8nWorkflow;
    test(`${file}: every text it posts to Discord (a Discord node's content, a reply for the chat bot) ends in escapeForDiscord()'s four replacements, written as in server.ts`, () => {
      const escaping: string[] = [];
      for (const node of n8nNodes(workflow, 'discord')) {
        assert.equal(node.parameters.content, '={{ $json.content }}', node.name);
        const before = Object.entries(workflow.connections).filter(([, { main }]) => main.flat().some((target) => target.node === node.name)).map(([source]) => source);
        assert.ok(before.length > 0, node.name);
        for (const name of before) {
          const setNode = workflow.nodes.find((n) => n.name === name)!;
          assert.deepEqual(setNode.parameters.assignments.assignments.map((a: { name: string }) => a.name), ['content'], `${name} makes the content alone`);
          assert.ok(setValue(setNode).endsWith(`${DISCORD_ESCAPE} }}`), `${name}: ${setValue(setNode)}`);
          escaping.push(name);
        }
      }
      for (const node of n8nNodes(workflow, 'respondToWebhook')) {
        if (node.parameters.respondWith === 'noData') continue;
        assert.equal(node.parameters.respondWith, 'json', node.name);
        // Discord's PONG and deferral carry no text
        if (!/\b(?:reply|content): /.test(replyOf(node))) continue;
        assert.ok(replyOf(node).endsWith(`${DISCORD_ESCAPE} }) }}`) || replyOf(node).endsWith(`${DISCORD_ESCAPE}, allowed_mentions: { parse: [] } } }) }}`), `${node.name}: ${replyOf(node)}`);
        escaping.push(node.name);
      }
      for (const node of n8nNodes(workflow, 'httpRequest').filter((n) => /\bcontent: /.test(n.parameters.jsonBody ?? ''))) {
        assert.ok(jsonBody(node).endsWith(`${DISCORD_ESCAPE}, allowed_mentions: { parse: [] } }) }}`), `${node.name}: ${jsonBody(node)}`);
        escaping.push(node.name);
      }
      // the table below runs each of them over the cases
      assert.deepEqual(escaping.sort(), postingPoints.filter((point) => point.file === file).map((point) => point.node).filter((name, i, all) => all.indexOf(name) === i).sort());
    });
  }

  for (const { file, node: name, given, parameter, item, items, posted, escaped } of postingPoints) {
    test(`${file}, node ${name}: posts ${given}, whatever text it holds, as escapeForDiscord() writes it`, () => {
      const node = (JSON.parse(fs.readFileSync(path.join(N8N_DIR, file), 'utf8')) as N8nWorkflow).nodes.find((n) => n.name === name)!;
      for (const [text] of DISCORD_ESCAPE_CASES) assert.equal(posted(n8nEvaluate(parameter(node), item(text), items?.(text))), escaped(text), JSON.stringify(text));
    });
  }

  test('events-to-discord.json posts a chat line and a death message, whatever they hold, as the daemon\'s Discord format escapes them', () => {
    const workflow = JSON.parse(fs.readFileSync(path.join(N8N_DIR, 'events-to-discord.json'), 'utf8')) as N8nWorkflow;
    const lineOf = (line: string, event: object) => {
      const setNode = workflow.nodes.find((node) => node.name === line)!;
      const escape = workflow.nodes.find((node) => node.name === workflow.connections[line].main[0][0].node)!;
      return n8nEvaluate(setValue(escape), { line: n8nEvaluate(setValue(setNode), event) });
    };
    for (const [text] of DISCORD_ESCAPE_CASES) {
      assert.equal(lineOf('Line: chat', { type: 'player.chat', player: 'Alex', text }), describeEvent({ type: 'player.chat', player: 'Alex', text }));
      assert.equal(lineOf('Line: died', { type: 'player.died', player: 'Alex', message: text }), describeEvent({ type: 'player.died', player: 'Alex', message: text }));
    }
  });
});

/**
 * The name chat-bridge.json sends as `from` for a Discord author (its sticky note says the same): the display name,
 * else the username, each with `[` and `]` removed, control characters as spaces, trimmed; a name then empty, over 32
 * characters, or `Server` in any letter case once spaces and invisible characters are left out is skipped, and with
 * neither usable the name is `Discord`. The daemon refuses `Server` and brackets in `from` (no one speaks as the
 * console, or as two speakers); the bridge cleans rather than fails, so a message is never lost for its sender's name,
 * and the first fallback is still who wrote it.
 */
const BRIDGE_SENDERS: ReadonlyArray<readonly [Record<string, unknown> | undefined, string]> = [
  [{ username: 'kim', global_name: 'Kim ✨' }, 'Kim ✨'],
  [{ username: 'kim', global_name: null }, 'kim'],
  [{ username: 'kim', global_name: 'Kim [Admin]' }, 'Kim Admin'],
  [{ username: 'kim', global_name: 'Alex] [Server' }, 'Alex Server'],
  [{ username: 'kim', global_name: 'Kim\nthe\tGreat' }, 'Kim the Great'],
  [{ username: 'kim', global_name: '😀'.repeat(32) }, '😀'.repeat(32)],
  [{ username: 'kim', global_name: 'Server' }, 'kim'],
  [{ username: 'kim', global_name: ' sERVER ' }, 'kim'],
  [{ username: 'kim', global_name: '[Server]' }, 'kim'],
  [{ username: 'kim', global_name: 'Ser\u200bver' }, 'kim'],
  [{ username: 'kim', global_name: 'S e r v e r' }, 'kim'],
  [{ username: 'kim', global_name: '[]' }, 'kim'],
  [{ username: 'kim', global_name: '\u200b\u2060' }, 'kim'],
  [{ username: 'kim', global_name: 'x'.repeat(33) }, 'kim'],
  [{ username: 'server', global_name: '[Server]' }, 'Discord'],
  [{ username: '[ ]' }, 'Discord'],
  [undefined, 'Discord'],
];

describe('docs/n8n: the name the bridge sends for a Discord author', () => {
  const workflow = JSON.parse(fs.readFileSync(path.join(N8N_DIR, 'chat-bridge.json'), 'utf8')) as N8nWorkflow;
  const [call] = n8nNodes(workflow, 'httpRequest');
  for (const [author, from] of BRIDGE_SENDERS) {
    const shown = JSON.stringify(author)?.replace(/[\u200b\u2060]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
    test(`chat-bridge.json sends the author ${shown} as from ${JSON.stringify(from)}`, () => {
      const body = JSON.parse(n8nEvaluate(call.parameters.jsonBody, {}, { 'Channel message': { body: { content: 'hi', author } } }));
      assert.deepEqual(body, { text: 'hi', from });
      assert.doesNotThrow(() => validateSay(body));
    });
  }
});

// ---- Discord slash commands without a bot, and the scheduled restart (docs/n8n/discord-commands.json, …) ----

const n8nWorkflow = (file: string) => JSON.parse(fs.readFileSync(path.join(N8N_DIR, file), 'utf8')) as N8nWorkflow;
const n8nNode = (workflow: N8nWorkflow, name: string) => workflow.nodes.find((node) => node.name === name)!;
/** The node an output of `name` leads to. */
const n8nNext = (workflow: N8nWorkflow, name: string, output = 0) => workflow.connections[name].main[output][0].node;

/** One condition of an If or Switch node, with the operators the workflows use, as n8n reads it. */
function n8nCondition(condition: any, $json: unknown, items: Record<string, unknown>, context: Record<string, unknown>): boolean {
  const left = n8nEvaluate(condition.leftValue, $json, items, context);
  switch (`${condition.operator.type}:${condition.operator.operation}`) {
    case 'boolean:true': return left === 'true';
    case 'string:equals': return left === condition.rightValue;
    case 'string:regex': return new RegExp(condition.rightValue).test(left);
    case 'number:equals': return Number(left) === condition.rightValue;
    default: throw new Error(`operator ${JSON.stringify(condition.operator)}`);
  }
}

/** The output an If node (0 true, 1 false) or a Switch node (its first rule that holds, else the fallback) takes. */
function n8nRoute(node: N8nNode, $json: unknown, items: Record<string, unknown> = {}, context: Record<string, unknown> = {}): number {
  const holds = (c: { conditions: unknown[]; combinator: string }) => {
    assert.equal(c.combinator, 'and');
    return c.conditions.every((condition) => n8nCondition(condition, $json, items, context));
  };
  if (node.type === 'n8n-nodes-base.if') return holds(node.parameters.conditions) ? 0 : 1;
  const rules = node.parameters.rules.values as Array<{ conditions: { conditions: unknown[]; combinator: string } }>;
  const output = rules.findIndex((rule) => holds(rule.conditions));
  if (output >= 0) return output;
  assert.equal(node.parameters.options.fallbackOutput, 'extra', `${node.name}: nothing matched`);
  return rules.length;
}

/** A Code node's JavaScript run as n8n's task runner runs it: one function, the globals given, `require` of only `builtins`. */
function n8nRunCode(node: N8nNode, globals: Record<string, unknown>, builtins: Record<string, unknown> = {}): Array<{ json: any; pairedItem?: unknown }> {
  const sandbox = vm.createContext({
    ...globals, Buffer,
    require: (name: string) => {
      if (!(name in builtins)) throw new Error(`Module '${name}' is disallowed`);
      return builtins[name];
    },
  });
  return JSON.parse(JSON.stringify(vm.runInContext(`(() => {\n${node.parameters.jsCode}\n})()`, sandbox)));
}

const DISCORD_KEYS = crypto.generateKeyPairSync('ed25519');
/** The application's public key as the Developer Portal shows it: the 32 bytes in hex. */
const DISCORD_PUBLIC_KEY = DISCORD_KEYS.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A request as Discord sends it: Ed25519 over the X-Signature-Timestamp header followed by the raw body. */
function discordSigned(raw: string, { timestamp = nowSeconds(), privateKey = DISCORD_KEYS.privateKey } = {}) {
  const signature = crypto.sign(null, Buffer.concat([Buffer.from(String(timestamp)), Buffer.from(raw)]), privateKey).toString('hex');
  return { raw, headers: { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': String(timestamp) } as Record<string, string> };
}

/**
 * discord-commands.json's Verify signature node over a request, as n8n 2.41 gives it (Webhook with rawBody: the raw
 * bytes in base64 in binary.data.data), with crypto allowed (NODE_FUNCTION_ALLOW_BUILTIN=crypto) unless told.
 */
function verifyInteraction(request: { raw: string; headers: Record<string, string> }, { staticData = {} as Record<string, any>, publicKey = DISCORD_PUBLIC_KEY, builtins = { crypto } as Record<string, unknown> } = {}): string {
  const items: Record<string, unknown> = {
    Interaction: { json: { headers: request.headers, params: {}, query: {}, body: JSON.parse(request.raw) }, binary: { data: { data: Buffer.from(request.raw).toString('base64'), mimeType: 'application/json' } } },
    Settings: { json: { publicKey } },
  };
  const out = n8nRunCode(n8nNode(n8nWorkflow('discord-commands.json'), 'Verify signature'), {
    $: (name: string) => ({ first: () => items[name] }),
    $getWorkflowStaticData: (type: string) => {
      assert.equal(type, 'global');
      return staticData;
    },
  }, builtins);
  assert.equal(out.length, 1);
  assert.deepEqual(out[0].pairedItem, { item: 0 });
  return out[0].json.verdict as string;
}

/** The commands register-commands.json registers: its Command definitions node, run. */
const registeredCommands = () => n8nRunCode(n8nNode(n8nWorkflow('register-commands.json'), 'Command definitions'), {})[0].json.commands as Array<{ name: string; description: string; type: number; contexts: number[]; default_member_permissions: string | null; options: Array<{ name: string; description: string; type: number; required: boolean; max_length: number }> }>;

describe('docs/n8n: discord-commands.json checks Discord\'s signature before anything else', () => {
  const workflow = n8nWorkflow('discord-commands.json');
  const ping = '{"type": 1, "id": "1180000000000000001", "application_id": "1111", "token": "t", "version": 1}';

  test('a request Discord signed is taken, checked over the raw bytes as sent (their spacing and key order kept)', () => {
    assert.notEqual(ping, JSON.stringify(JSON.parse(ping)));
    assert.equal(verifyInteraction(discordSigned(ping)), 'valid');
  });

  test('a missing signature or timestamp, a signature by another key, and a body changed after signing are refused', () => {
    const signed = discordSigned(ping);
    const without = (header: string) => ({ raw: ping, headers: Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== header)) });
    assert.equal(verifyInteraction(without('x-signature-ed25519')), 'unsigned');
    assert.equal(verifyInteraction(without('x-signature-timestamp')), 'unsigned');
    assert.equal(verifyInteraction({ raw: ping, headers: { ...signed.headers, 'x-signature-ed25519': 'zz'.repeat(64) } }), 'unsigned');
    assert.equal(verifyInteraction(discordSigned(ping, { privateKey: crypto.generateKeyPairSync('ed25519').privateKey })), 'bad signature');
    assert.equal(verifyInteraction({ raw: ping.replace('"type": 1', '"type": 2'), headers: signed.headers }), 'bad signature');
    assert.equal(verifyInteraction({ raw: ping, headers: { ...signed.headers, 'x-signature-timestamp': String(Number(signed.headers['x-signature-timestamp']) + 1) } }), 'bad signature');
  });

  test('a timestamp more than five minutes from now, either way, is refused though signed', () => {
    assert.equal(verifyInteraction(discordSigned(ping, { timestamp: nowSeconds() - 310 })), 'stale');
    assert.equal(verifyInteraction(discordSigned(ping, { timestamp: nowSeconds() + 310 })), 'stale');
    assert.equal(verifyInteraction(discordSigned(ping, { timestamp: nowSeconds() - 290 })), 'valid');
    assert.equal(verifyInteraction(discordSigned(ping, { timestamp: nowSeconds() + 290 })), 'valid');
  });

  test('a request seen before (a replay) is refused; the workflow\'s static data keeps the signatures of the last five minutes, 5,000 at most', () => {
    const staticData: Record<string, any> = {};
    const request = discordSigned(ping);
    assert.equal(verifyInteraction(request, { staticData }), 'valid');
    assert.equal(verifyInteraction(request, { staticData }), 'replayed');
    assert.equal(verifyInteraction(discordSigned(ping.replace('0001', '0002')), { staticData }), 'valid');
    assert.equal(Object.keys(staticData.signedAt).length, 2);
    const now = nowSeconds();
    staticData.signedAt = Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`${i}`.padStart(128, 'a'), i < 100 ? now - 400 : now]));
    assert.equal(verifyInteraction(discordSigned(ping.replace('0001', '0003')), { staticData }), 'valid');
    const kept = Object.keys(staticData.signedAt);
    assert.equal(kept.length, 5000);
    assert.ok(kept.every((signature, i) => i === kept.length - 1 || Number(signature.replace(/^a+/, '')) >= 1001), 'the oldest go first');
  });

  test('every verdict but valid answers 401 with nothing else run; a valid PING answers PONG, a command goes on to the role check', () => {
    const signed = n8nNode(workflow, n8nNext(workflow, 'Verify signature'));
    for (const verdict of ['unsigned', 'bad signature', 'stale', 'replayed']) {
      const refusal = n8nNode(workflow, n8nNext(workflow, signed.name, n8nRoute(signed, { verdict })));
      assert.deepEqual([refusal.type, refusal.parameters], ['n8n-nodes-base.respondToWebhook', { respondWith: 'noData', options: { responseCode: 401 } }], verdict);
      assert.equal(workflow.connections[refusal.name], undefined);
    }
    const byType = n8nNode(workflow, n8nNext(workflow, signed.name, n8nRoute(signed, { verdict: 'valid' })));
    const pong = n8nNode(workflow, n8nNext(workflow, byType.name, n8nRoute(byType, {}, { Interaction: { body: { type: 1 } } })));
    assert.deepEqual(JSON.parse(n8nEvaluate(pong.parameters.responseBody, {})), { type: 1 });
    assert.equal(n8nNext(workflow, byType.name, n8nRoute(byType, {}, { Interaction: { body: { type: 2 } } })), 'May use the command');
    assert.equal(n8nNode(workflow, n8nNext(workflow, byType.name, n8nRoute(byType, {}, { Interaction: { body: { type: 3 } } }))).parameters.options.responseCode, 400);
  });

  test('without NODE_FUNCTION_ALLOW_BUILTIN=crypto (n8n\'s default) the check fails with the sentence naming that setting; it asks for crypto as n8n lists it, not node:crypto', () => {
    assert.throws(() => verifyInteraction(discordSigned(ping), { builtins: {} }), { message: /^The signature check needs the n8n setting NODE_FUNCTION_ALLOW_BUILTIN=crypto in n8n's environment, so that the Code node may load crypto \(Module 'crypto' is disallowed\)\.$/ });
    assert.match(n8nNode(workflow, 'Verify signature').parameters.jsCode, /require\('crypto'\)/);
    assert.doesNotMatch(n8nNode(workflow, 'Verify signature').parameters.jsCode, /node:crypto/);
  });

  test('a public key in Settings that is not 64 hexadecimal characters fails with a sentence saying what it must be', () => {
    for (const publicKey of ['REPLACE_WITH_THE_PUBLIC_KEY', '', DISCORD_PUBLIC_KEY.slice(2)]) {
      assert.throws(() => verifyInteraction(discordSigned(ping), { publicKey }), { message: /^Settings → publicKey must be the application's public key: the 64 hexadecimal characters/ });
    }
  });
});

describe('docs/n8n: the slash commands, one list in register-commands.json', () => {
  const workflow = n8nWorkflow('discord-commands.json');
  const settings = (adminRoleIds: string, memberRoleIds: string) => ({ adminRoleIds, memberRoleIds });
  const mayUse = (name: string, member: unknown, roles = settings('10, 11', '20')) =>
    n8nRoute(n8nNode(workflow, 'May use the command'), {}, { Interaction: { body: { type: 2, data: { name }, member } }, Settings: roles }) === 0;

  test('register-commands.json registers /status, /players, /whitelist, /say, /mc, /kick, /ban, /pardon as guild-only slash commands with string options Discord bounds as the daemon does', () => {
    const commands = registeredCommands();
    assert.deepEqual(commands.map((c) => [c.name, c.options.map((o) => `${o.name}${o.required ? '' : '?'}:${o.max_length}`)]), [
      ['status', []], ['players', []], ['whitelist', ['player:16']], ['say', ['text:256']], ['mc', ['command:1000']],
      ['kick', ['player:16', 'reason?:256']], ['ban', ['player:16', 'reason?:256']], ['pardon', ['player:16']],
    ]);
    for (const command of commands) {
      assert.deepEqual([command.type, command.contexts], [1, [0]], command.name);
      for (const text of [command.description, ...command.options.map((o) => o.description)]) assert.ok(text.length >= 1 && text.length <= 100, text);
      for (const option of command.options) assert.equal(option.type, 3);
    }
  });

  test('only members with the permission see /mc (Manage Server), /kick (Kick Members), /ban and /pardon (Ban Members); everyone sees the others', () => {
    assert.deepEqual(Object.fromEntries(registeredCommands().map((c) => [c.name, c.default_member_permissions])), {
      status: null, players: null, whitelist: null, say: null, mc: '32', kick: '2', ban: '4', pardon: '4',
    });
  });

  test('discord-commands.json answers exactly the registered commands, reading exactly their options', () => {
    const command = n8nNode(workflow, 'Command');
    const slow = n8nNode(workflow, 'Slow command');
    const answered = (name: string) => {
      const output = n8nRoute(command, {}, { Interaction: { body: { data: { name } } } });
      if (output < 2) return n8nNext(workflow, command.name, output);
      if (output === 3) return undefined;
      assert.equal(n8nNext(workflow, command.name, output), 'Defer');
      return n8nNext(workflow, slow.name, n8nRoute(slow, {}, { Interaction: { body: { data: { name } } } }));
    };
    const commands = registeredCommands();
    assert.deepEqual(Object.fromEntries(commands.map((c) => [c.name, answered(c.name)])), {
      status: 'GET /api/status', players: 'GET /api/players/online', whitelist: 'POST /api/whitelist/add', say: 'POST /api/say',
      mc: 'POST /api/command', kick: 'POST /api/players/kick', ban: 'POST /api/players/ban', pardon: 'POST /api/players/pardon',
    });
    assert.equal(answered('op'), undefined);
    assert.equal(slow.parameters.rules.values.length, commands.length - 2);
    const read = new Set(stringsIn(workflow).flatMap((value) => [...value.matchAll(/option\.name === '(\w+)'/g)].map((m) => m[1])));
    assert.deepEqual([...read].sort(), [...new Set(commands.flatMap((c) => c.options.map((o) => o.name)))].sort());
  });

  test('everyone may use /status and /players; a member role /whitelist and /say; an admin role every command (role ids from Settings, comma-separated)', () => {
    const all = registeredCommands().map((c) => c.name);
    const allowed = (member: unknown, roles?: { adminRoleIds: string; memberRoleIds: string }) => all.filter((name) => mayUse(name, member, roles));
    const member = (...roles: string[]) => ({ roles, nick: null, user: { id: '5', username: 'kim' } });
    assert.deepEqual(allowed(member()), ['status', 'players']);
    assert.deepEqual(allowed(member('20')), ['status', 'players', 'whitelist', 'say']);
    assert.deepEqual(allowed(member('11')), all);
    assert.deepEqual(allowed(member('10', '20')), all);
    assert.deepEqual(allowed(member('1', '110', '2')), ['status', 'players'], 'a role id is matched whole');
    assert.deepEqual(allowed(undefined), ['status', 'players'], 'no member: a direct message');
    assert.deepEqual(allowed(member('20', '11', ''), settings('', '')), ['status', 'players'], 'no role set: nobody');
  });

  test('the slow commands answer "thinking" at once (type 5), to the member alone for /mc; refusals go to the member alone', () => {
    const defer = n8nNode(workflow, 'Defer');
    for (const { name } of registeredCommands()) {
      if (name === 'status' || name === 'players') continue;
      assert.deepEqual(JSON.parse(n8nEvaluate(defer.parameters.responseBody, {}, { Interaction: { body: { data: { name } } } })), { type: 5, data: name === 'mc' ? { flags: 64 } : {} });
    }
    for (const name of ['Not allowed', 'Unknown command']) {
      const reply = JSON.parse(n8nEvaluate(n8nNode(workflow, name).parameters.responseBody, {}, { Interaction: { body: { data: { name: 'mc' } } } }));
      assert.deepEqual([reply.type, reply.data.flags, reply.data.allowed_mentions], [4, 64, { parse: [] }]);
    }
  });

  test('a reply longer than Discord takes is cut to 999 characters and …, so that escaped it stays within 2,000', () => {
    const edit = n8nNode(workflow, 'Edit the reply');
    for (const text of ['*'.repeat(5000), '😀'.repeat(1500), `${'a'.repeat(998)}😀😀😀`]) {
      const { content } = JSON.parse(n8nEvaluate(edit.parameters.jsonBody, { statusCode: 200, body: { ok: true, message: 'x', output: [text] } }));
      assert.ok(content.length <= 2000, `${content.length}`);
      assert.equal(content, escapeForDiscord(`${Array.from(text).slice(0, 999).join('')}…`));
    }
    const fits = '_'.repeat(1000);
    assert.equal(JSON.parse(n8nEvaluate(edit.parameters.jsonBody, { statusCode: 200, body: { ok: true, message: fits } })).content, escapeForDiscord(fits));
  });

  for (const [author, from] of BRIDGE_SENDERS) {
    const shown = JSON.stringify(author)?.replace(/[\u200b\u2060]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
    test(`discord-commands.json's /say sends the member ${shown} as from ${JSON.stringify(from)}, as the chat bridge does`, () => {
      const body = JSON.parse(n8nEvaluate(n8nNode(workflow, 'POST /api/say').parameters.jsonBody, {}, { Interaction: { body: { data: { name: 'say', options: [{ name: 'text', type: 3, value: 'hi' }] }, member: author === undefined ? undefined : { nick: null, user: author } } } }));
      assert.deepEqual(body, { text: 'hi', from });
      assert.doesNotThrow(() => validateSay(body));
    });
  }

  test('discord-commands.json\'s /say names the member by their server nickname first, cleaned as any name', () => {
    const fromOf = (member: unknown) => JSON.parse(n8nEvaluate(n8nNode(workflow, 'POST /api/say').parameters.jsonBody, {}, { Interaction: { body: { data: { name: 'say', options: [{ name: 'text', value: 'hi' }] }, member } } })).from;
    assert.equal(fromOf({ nick: 'Kimmy [Mod]', user: { username: 'kim', global_name: 'Kim' } }), 'Kimmy Mod');
    assert.equal(fromOf({ nick: 'SERVER', user: { username: 'kim', global_name: 'Kim' } }), 'Kim');
    assert.equal(fromOf({ nick: null, user: { username: 'kim', global_name: 'Kim' } }), 'Kim');
  });
});

describe('docs/n8n: scheduled-restart.json', () => {
  const workflow = n8nWorkflow('scheduled-restart.json');
  const settings = { apiBase: N8N_API_BASE, readyTimeoutMinutes: 10 };

  test('it runs on the schedule of its trigger (daily at 05:00 until changed)', () => {
    assert.deepEqual(n8nNodes(workflow, 'scheduleTrigger').map((n) => [n.name, n.parameters.rule]), [['Schedule', { interval: [{ field: 'cronExpression', expression: '0 5 * * *' }] }]]);
  });

  test('a server not running is left alone; nobody online restarts at once; players online, or an answer it cannot read, are warned first', () => {
    const who = n8nNode(workflow, 'Who is online');
    const next = ($json: unknown) => n8nNext(workflow, who.name, n8nRoute(who, $json));
    assert.equal(next({ statusCode: 200, body: { ok: true, online: false, players: [] } }), 'Line: skipped');
    assert.equal(next({ statusCode: 200, body: { ok: true, online: true, count: 0, players: [] } }), 'GET /api/status (before)');
    assert.equal(next({ statusCode: 200, body: { ok: true, online: true, count: 2, players: ['Alex', 'Kai_2'] } }), 'Say: in 5 minutes');
    assert.equal(next({ statusCode: 503, body: { ok: false, error: 'busy' } }), 'Say: in 5 minutes');
    assert.equal(next({ error: { message: 'The service refused the connection' } }), 'Say: in 5 minutes');
  });

  test('players read "The server restarts in" 5 minutes, 1 minute and 10 seconds before the restart is issued', () => {
    const seconds = { seconds: 1, minutes: 60 } as Record<string, number>;
    const said: Array<[string, number]> = [];
    let name = 'Say: in 5 minutes';
    let waited = 0;
    while (name !== 'POST /api/server/restart') {
      const node = n8nNode(workflow, name);
      if (node.type === 'n8n-nodes-base.wait') waited += node.parameters.amount * seconds[node.parameters.unit];
      if (name.startsWith('Say: ')) said.push([JSON.parse(n8nEvaluate(node.parameters.jsonBody, {})).text, waited]);
      name = n8nNext(workflow, name);
    }
    assert.deepEqual(said.map(([text, at]) => [text, waited - at]), [
      ['The server restarts in 5 minutes.', 300], ['The server restarts in 1 minute.', 60], ['The server restarts in 10 seconds.', 10],
    ]);
  });

  test('after the restart it asks every 10 s until a new game process answers its ping, for readyTimeoutMinutes at most', () => {
    const back = n8nNode(workflow, 'Back and ready');
    const before = { 'GET /api/status (before)': { body: { ok: true, online: true, pid: 41 } } };
    const isBack = (status: object, ping: object) => n8nRoute(back, { body: ping }, { ...before, 'GET /api/status': { body: status } }) === 0;
    assert.equal(isBack({ ok: true, online: true, pid: 42 }, { ok: true, online: true, ready: true }), true);
    assert.equal(isBack({ ok: true, online: true, pid: 41 }, { ok: true, online: true, ready: true }), false, 'the old process, not stopped yet');
    assert.equal(isBack({ ok: true, online: true, pid: 42 }, { ok: true, online: true, ready: false }), false);
    assert.equal(isBack({ ok: true, online: false }, { ok: true, online: false, ready: false }), false);
    assert.deepEqual(n8nNode(workflow, 'Wait for the restart').parameters, { amount: 10, unit: 'seconds' });
    const keepWaiting = n8nNode(workflow, 'Keep waiting');
    const polls = Array.from({ length: 100 }, (_, $runIndex) => n8nRoute(keepWaiting, {}, { Settings: settings }, { $runIndex })).indexOf(1) + 1;
    assert.equal(polls * 10, 10 * 60);
    assert.equal(n8nNext(workflow, keepWaiting.name, 0), 'Wait for the restart');
  });

  test('the outcome says whether the server came back, and what the log says of a crash when it did not', () => {
    const line = (name: string, $json: unknown, status?: object) => n8nEvaluate(n8nNode(workflow, name).parameters.assignments.assignments[0].value, $json, {
      Settings: settings, 'GET /api/status (before)': { body: { ok: true, online: true, pid: 41 } }, 'GET /api/status': { body: status },
    });
    assert.equal(line('Line: back', { body: { ok: true, online: true, ready: true, version: { name: '1.21.4', protocol: 769 }, players: { online: 0, max: 20 } } }), 'The scheduled restart is done: the server is ready again (1.21.4), 0 of 20 players online.');
    assert.equal(line('Line: back', { body: { ok: true, online: true, ready: true } }), 'The scheduled restart is done: the server is ready again.');
    assert.equal(line('Line: restart refused', { statusCode: 500, body: { ok: false, error: 'Internal server error' } }), 'The scheduled restart failed: Internal server error');
    assert.equal(line('Line: restart refused', { error: {} }), 'The scheduled restart failed: The game server API did not answer.');
    const tickLoop = [`${P}Done (3.2s)!`, '[12:00:09] [Server thread/ERROR]: Encountered an unexpected exception', 'java.lang.IllegalStateException: simulated', '\tat x.y(Z.java:1)', '[12:00:09] [Server thread/ERROR]: This crash report has been saved to: /srv/mc/./crash-reports/crash-1.txt', `${P}Stopping server`];
    const watchdog = ['[12:01:00] [Server Watchdog/ERROR]: A single server tick took 60.00 seconds (should be max 0.05)', '[12:01:00] [Server Watchdog/ERROR]: Considering it to be crashed, server will forcibly shutdown.'];
    const notBack = 'The scheduled restart did not bring the server back within 10 minutes: ';
    assert.equal(line('Line: not back', { body: { ok: true, lines: tickLoop } }, { ok: true, online: false }), `${notBack}the game is not running. It crashed: java.lang.IllegalStateException: simulated`);
    assert.equal(line('Line: not back', { body: { ok: true, lines: watchdog } }, { ok: true, online: false }), `${notBack}the game is not running. It crashed: A single server tick took 60.00 seconds (should be max 0.05)`);
    assert.equal(line('Line: not back', { body: { ok: true, lines: [`${P}Stopping server`] } }, { ok: true, online: false }), `${notBack}the game is not running.`);
    assert.equal(line('Line: not back', { body: { ok: true, lines: [] } }, { ok: true, online: true, pid: 43 }), `${notBack}the game runs but does not answer its ping.`);
    assert.equal(line('Line: not back', { body: { ok: false, error: 'latest.log not found' } }, { ok: true, online: true, pid: 41 }), `${notBack}the game did not stop.`);
  });
});

describe('escapeForDiscord()', () => {
  for (const [text, escaped] of DISCORD_ESCAPE_CASES) {
    test(`escapeForDiscord() writes ${JSON.stringify(text)} so that it reads as written and nothing in it pings, links, invites or formats`, () => {
      assert.equal(escapeForDiscord(text), escaped);
    });
  }
  test('describeEvent() escapes what a player wrote with escapeForDiscord()', () => {
    for (const [text, escaped] of DISCORD_ESCAPE_CASES) {
      assert.equal(describeEvent({ type: 'player.chat', player: 'Alex', text }), `\\<Alex\\> ${escaped}`);
      assert.equal(describeEvent({ type: 'player.died', player: 'Alex', message: text }), escaped);
    }
  });
});

describe('describeEvent()', () => {
  for (const [event, line] of [
    [{ type: 'server.started', pid: 42 }, 'The Minecraft server started (pid 42).'],
    [{ type: 'server.stopping' }, 'The Minecraft server is stopping.'],
    [{ type: 'server.stopped', pid: 42, crashed: false }, 'The Minecraft server stopped (pid 42).'],
    [{ type: 'server.stopped', pid: 42, crashed: true }, 'The Minecraft server stopped without shutting down: it crashed or was killed (pid 42).'],
    [{ type: 'player.joined', player: 'Kai_2' }, 'Kai\\_2 joined the game.'],
    [{ type: 'player.left', player: '.Bramble_Crest' }, '.Bramble\\_Crest left the game.'],
    [{ type: 'whitelist.changed', added: ['Alex', 'Kai_2'], removed: [] }, 'Whitelist: added Alex, Kai\\_2.'],
    [{ type: 'whitelist.changed', added: [], removed: ['@everyone'] }, 'Whitelist: removed @\u200beveryone.'],
    [{ type: 'bans.changed', added: ['Mallory_X'], removed: ['Alex'] }, 'Bans: added Mallory\\_X; removed Alex.'],
    [{ type: 'ops.changed', added: [], removed: ['Kai_2'] }, 'Operators: removed Kai\\_2.'],
    [{ type: 'backup.finished', backup: { name: 'snapshot_1.tar.gz', size: '1.50 KB' } }, 'Backup finished: snapshot\\_1.tar.gz (1.50 KB).'],
    [{ type: 'player.chat', player: 'Alex', text: 'hi' }, '\\<Alex\\> hi'],
    [{ type: 'player.died', player: 'Alex', message: 'Alex was slain by Zombie' }, 'Alex was slain by Zombie'],
    [{ type: 'player.advancement', player: 'Alex', advancement: 'Stone Age', kind: 'task' }, 'Alex has made the advancement \\[Stone Age\\]'],
    [{ type: 'player.advancement', player: 'Alex', advancement: 'The End?', kind: 'goal' }, 'Alex has reached the goal \\[The End?\\]'],
    [{ type: 'player.advancement', player: 'Alex', advancement: 'Return to Sender', kind: 'challenge' }, 'Alex has completed the challenge \\[Return to Sender\\]'],
    [{ type: 'player.advancement', player: 'Alex', advancement: 'Taking Inventory', kind: 'achievement' }, 'Alex has just earned the achievement \\[Taking Inventory\\]'],
    [{ type: 'server.lagging', behind_ms: 2034, ticks: 40, overloads: 3 }, 'The server is lagging: 2.0 s behind (3 warnings in the last minute).'],
    [{ type: 'server.lagging', behind_ms: 5025, ticks: 100, overloads: 1 }, 'The server is lagging: 5.0 s behind (1 warning in the last minute).'],
    [{ type: 'server.stopped', pid: 42, crashed: true, reason: 'Exception in server tick loop' }, 'The Minecraft server crashed: Exception in server tick loop (pid 42).'],
    // what a player wrote reaches the channel as the text it was, and nothing Discord would render or ping
    [{ type: 'player.chat', player: 'Alex', text: '@everyone @here <@123> <@&456> <#789> <t:1700000000> <:kek:123>' }, '\\<Alex\\> @\u200beveryone @\u200bhere \\<@\u200b123\\> \\<@\u200b&456\\> \\<\\#789\\> \\<t:1700000000\\> \\<:kek:123\\>'],
    [{ type: 'player.chat', player: 'Alex', text: '**bold** __u__ ~~s~~ ||spoiler|| `code` # head -# small > quote [link](https://evil.example/x)' }, '\\<Alex\\> \\*\\*bold\\*\\* \\_\\_u\\_\\_ \\~\\~s\\~\\~ \\|\\|spoiler\\|\\| \\`code\\` \\# head \\-\\# small \\> quote \\[link\\]\\(https:/\u200b/evil.example/x\\)'],
    [{ type: 'player.chat', player: 'Alex', text: 'join discord.gg/abc or https://discord.com/invite/abc' }, '\\<Alex\\> join discord\u200b.gg/abc or https:/\u200b/discord\u200b.com/invite/abc'],
    [{ type: 'player.died', player: 'Alex', message: 'Alex was slain by @everyone' }, 'Alex was slain by @\u200beveryone'],
  ] as const) {
    test(`describeEvent() writes ${JSON.stringify(event)} as one readable line`, () => assert.equal(describeEvent(event), line));
  }
  test('describeEvent() keeps a line within Discord\'s 2000 characters', () => {
    assert.equal(describeEvent({ type: 'whitelist.changed', added: Array.from({ length: 300 }, (_, i) => `Player${i}`), removed: [] }).length, 2000);
  });
});

describe('formatLabels()', () => {
  for (const [labels, text] of [
    [{}, ''],
    [{ player: 'Alex' }, '{player="Alex"}'],
    [{ version: 'git-Foldenor-"b5dc1ae" (MC: 1.20.4)' }, '{version="git-Foldenor-\\"b5dc1ae\\" (MC: 1.20.4)"}'],
    [{ route: 'a\\b\nc' }, '{route="a\\\\b\\nc"}'],
  ] as const) {
    test(`formatLabels() writes ${JSON.stringify(labels)} as ${text}`, () => assert.equal(formatLabels(labels), text));
  }
});

describe('readLogLine() for presence', () => {
  const rows: Array<[string, ReturnType<typeof readPresence>]> = [
    [`${P}Alex joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`${P}Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)`, { type: 'player.joined', player: 'Alex' }],
    [`${P}Alex[/198.51.100.7:53120] logged in with entity id 9 at ([world]-12.5, 68.0, 4.5)`, { type: 'player.joined', player: 'Alex' }],
    [`${P}Alex (formerly known as OldAlex) joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`${P}.Bramble_Crest[/198.51.100.240:0] logged in with entity id 7 at ([world]1.5, 64.0, 2.5)`, { type: 'player.joined', player: '.Bramble_Crest' }],
    [`${P}Alex left the game`, { type: 'player.left', player: 'Alex' }],
    [`${P}Alex lost connection: Disconnected`, { type: 'player.left', player: 'Alex' }],
    [`${P}Mallory lost connection: Alex left the game`, { type: 'player.left', player: 'Mallory' }],
    [`${P}Alex lost connection: TextComponent{text='Disconnected', siblings=[]}`, { type: 'player.left', player: 'Alex' }],
    [`${P}Starting minecraft server version 1.21.4`, { type: 'session.started' }],
    [`${P}Alex joined the game\r`, { type: 'player.joined', player: 'Alex' }],
    [`${P}§r§e§eLemADEC§r§e joined the game§r`, { type: 'player.joined', player: 'LemADEC' }],
    [`[12:00:00] [Region Scheduler Thread #3/INFO]: Alex joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`[12:00:00] [Server thread/INFO] [net.minecraft.server.dedicated.DedicatedServer]: Alex joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`[04Mar2025 12:00:00.123] [Server thread/INFO] [net.minecraft.server.MinecraftServer/]: Alex joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`[12:00:00 INFO]: Alex joined the game`, { type: 'player.joined', player: 'Alex' }],
    [`${P}<Mallory> Alex joined the game`, null],
    [`${P}[Not Secure] <Mallory> Alex joined the game`, null],
    [`${P}<Mallory> [12:00:00] [Server thread/INFO]: Alex joined the game`, null],
    [`${P}[Server] Alex joined the game`, null],
    [`${P}* Mallory joined the game`, null],
    [`${P}[Staff] Alex joined the game`, null],
    [`[12:00:00] [Async Chat Thread - #0/INFO]: Alex joined the game`, null],
    [`${P}Mallory issued server command: /say Alex joined the game`, null],
    [`${P}Disconnecting Eve (/1.2.3.4:5678): You are not white-listed on this server!`, null],
    [`${P}Eve (/1.2.3.4:5678) lost connection: You are not white-listed on this server!`, null],
    [`${P}com.mojang.authlib.GameProfile@5e1d8a2c[id=<null>,name=Eve,properties={},legacy=false] (/1.2.3.4:5678) lost connection: Banned`, null],
    [`[12:00:00] [User Authenticator #1/INFO]: UUID of player Alex is 069a79f4-44e9-4726-a5be-fca90e38aaf5`, null],
    ['Alex joined the game', null],
    ['Alex left the game', null],
  ];
  for (const [line, event] of rows) {
    test(`readLogLine() reads ${JSON.stringify(line)} as ${JSON.stringify(event)} for presence`, () => assert.deepEqual(readPresence(line), event));
  }
  test('readLogLine() takes no line over 4 KiB for an event: a "lost connection" with a 5,000-character reason', () => {
    assert.equal(readPresence(`${P}Alex lost connection: ${'x'.repeat(5_000)}`), null);
  });
});

describe('scanPresence()', () => {
  const log = (...messages: string[]) => messages.map((m) => (m.startsWith('[') || m.startsWith(' ') ? m : P + m)).join('\n') + '\n';
  const rows: Array<[string, string, string[], string[]?]> = [
    ['follows vanilla joins and leaves', log('Alex[/1.2.3.4:1] logged in with entity id 1 at (0.5, 64.0, 0.5)', 'Alex joined the game',
      'Bob[/1.2.3.4:2] logged in with entity id 2 at (0.5, 64.0, 0.5)', 'Bob joined the game', 'Alex lost connection: Disconnected', 'Alex left the game'), ['Bob']],
    ['follows the Bukkit order (join before login)', log('Alex joined the game', 'Alex[/1.2.3.4:1] logged in with entity id 1 at ([world]0.5, 64.0, 0.5)',
      'Bob joined the game', 'Bob[/1.2.3.4:2] logged in with entity id 2 at ([world]0.5, 64.0, 0.5)', 'Bob lost connection: Disconnected', 'Bob left the game'), ['Alex']],
    ['ignores spoofing by chat', log('Mallory joined the game', '<Mallory> Alex joined the game', '[Not Secure] <Mallory> Bob joined the game',
      '[12:00:00] [Async Chat Thread - #1/INFO]: Carl joined the game', '<Mallory> [12:00:00] [Server thread/INFO]: Dave joined the game'), ['Mallory']],
    ['takes a leave from the start of a kick line, not its reason', log('Alex joined the game', 'Bob joined the game', 'Mallory lost connection: Alex left the game'), ['Alex', 'Bob']],
    ['ignores refused logins', log('Disconnecting Eve (/1.2.3.4:5678): You are not white-listed on this server!',
      'Eve (/1.2.3.4:5678) lost connection: You are not white-listed on this server!', '[12:00:00] [User Authenticator #1/INFO]: UUID of player Eve is 069a79f4-44e9-4726-a5be-fca90e38aaf5'), []],
    ['reads formerly-known-as joins', log('Alex (formerly known as OldAlex) joined the game'), ['Alex']],
    ['keeps Bedrock names with a leading dot', log('.Bramble_Crest[/198.51.100.240:0] logged in with entity id 7 at ([world]1.5, 64.0, 2.5)', '.Bramble_Crest joined the game'), ['.Bramble_Crest']],
    ['resets at Starting minecraft server', log('Alex joined the game', 'Starting minecraft server version 1.21.4', 'Bob joined the game'), ['Bob']],
    ['ignores prefix-less continuation lines of a kick reason', log('Alex joined the game', 'Bob joined the game', 'Bob lost connection: Kicked', ' Carl joined the game') + 'Dave joined the game\n', ['Alex']],
    ['reads CRLF lines', log('Alex joined the game', 'Bob joined the game', 'Bob left the game').replace(/\n/g, '\r\n'), ['Alex']],
    ['applies a last unterminated line that matches in full (log4j writes a line at once)', `${P}Alex joined the game\n${P}Bob joined the game`, ['Alex', 'Bob']],
    ['ignores a half-written last line', `${P}Alex joined the game\n${P}Bob joined the ga`, ['Alex']],
    ['continues from a given set', log('Bob joined the game', 'Carl left the game'), ['Alex', 'Bob'], ['Alex', 'Carl']],
  ];
  for (const [rule, text, players, initial] of rows) {
    test(`scanPresence() ${rule}`, () => assert.deepEqual([...scanPresence(text, initial ? new Set(initial) : undefined)].sort(), players));
  }
  test('scanPresence() keeps each player online as a name of its own: the 16 MiB of log text it was read from are freed', () => {
    // V8 makes a piece of a string of 13 characters or more a view of the whole string, which it keeps alive
    const before = memoryAfterGc();
    let text: string | undefined = `${P}Long_Named_00001 joined the game\n${`${'a'.repeat(1023)}\n`.repeat(16 * 1024)}`;
    const players = scanPresence(text);
    text = undefined;
    const kept = memoryAfterGc() - before;
    assert.deepEqual([...players], ['Long_Named_00001']);
    assert.ok(kept < 4 * 1024 * 1024, `${(kept / 1024 / 1024).toFixed(1)} MiB kept`);
  });
});

// testdata/logs: one sample latest.log per server flavour, and expected.json (testdata/README.md)
const SAMPLE_LOGS = path.join(TESTDATA, 'logs');
const SAMPLE_PLAYERS = JSON.parse(fs.readFileSync(path.join(SAMPLE_LOGS, 'expected.json'), 'utf8')) as Record<string, string[]>;
const SAMPLE_FILES = fs.readdirSync(SAMPLE_LOGS).filter((name) => name.endsWith('.log')).sort();

describe('scanPresence() on testdata/logs', () => {
  test('testdata/logs/expected.json has an entry for every sample log and no other', () => {
    assert.deepEqual(Object.keys(SAMPLE_PLAYERS).sort(), SAMPLE_FILES);
  });

  for (const file of SAMPLE_FILES) {
    test(`scanPresence() ends testdata/logs/${file} with the players of expected.json`, () => {
      const text = fs.readFileSync(path.join(SAMPLE_LOGS, file)).toString('utf8');   // UTF-8 with replacement
      assert.deepEqual(sorted(scanPresence(text)), sorted(SAMPLE_PLAYERS[file] ?? []));
    });
  }
});

describe('readTail()', () => {
  const defer = cleanupStack();
  let dir = '';
  setUp(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-tail-'));
    defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  });
  const long = 'é✓x'.repeat(40_000);   // 240 000 bytes: 64 KiB blocks split its characters
  const edge = 'x'.repeat(65_535);      // with its newline, exactly one 64 KiB block
  const rows: Array<[string, string | Buffer, number, string[]]> = [
    ['returns the last N lines, oldest first', 'a\nb\nc\n', 2, ['b', 'c']],
    ['returns every line when N is larger', 'a\nb\n', 10, ['a', 'b']],
    ['keeps a last line without a newline', 'a\nb', 5, ['a', 'b']],
    ['strips the CR of CRLF', 'a\r\nb\r\n', 5, ['a', 'b']],
    ['keeps blank lines', 'a\n\nb\n', 5, ['a', '', 'b']],
    ['returns nothing for an empty file', '', 5, []],
    ['reads lines longer than a 64 KiB block', `first\n${long}\nlast\n`, 3, ['first', long, 'last']],
    ['stops at N lines with a long line before them', `first\n${long}\nlast\n`, 2, [long, 'last']],
    ['reads a line that fills exactly one block', `head\n${edge}\n`, 2, ['head', edge]],
    ['decodes invalid UTF-8 leniently', Buffer.concat([Buffer.from('ok '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' end\nnext\n')]), 5,
      Buffer.concat([Buffer.from('ok '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' end')]).toString('utf8').split('\n').concat('next')],
  ];
  rows.forEach(([rule, content, count, expected], i) => {
    test(`readTail() ${rule}`, async () => {
      const file = path.join(dir, `tail-${i}.log`);
      fs.writeFileSync(file, content);
      assert.deepEqual(await readTail(file, count), expected);
    });
  });
});

// ---- The compiled daemon, black box: groups share nothing and run side by side, each group's tests in order ----


// ---- Issue 28: readiness, history, the status page ----

describe('motdRuns() (docs/formats.md#server-list-ping: § codes and JSON text components)', () => {
  for (const [description, runs] of [
    ['§6Gameserver§r survival — be nice!', [{ text: 'Gameserver', classes: 'mc-gold' }, { text: ' survival — be nice!', classes: '' }]],
    ['§l§cBold? no: a colour ends the styles §cred §lbold', [{ text: 'Bold? no: a colour ends the styles red ', classes: 'mc-red' }, { text: 'bold', classes: 'mc-red mc-b' }]],
    [{ text: 'A ', color: 'aqua', extra: [{ text: 'B', bold: true }, '§eC'] }, [{ text: 'A ', classes: 'mc-aqua' }, { text: 'B', classes: 'mc-aqua mc-b' }, { text: 'C', classes: 'mc-yellow' }]],
    [{ text: 'hex', color: '#FFAA10' }, [{ text: 'hex', classes: 'mc-gold' }]],
    ['§x§f§f§5§5§5§5Spigot hex', [{ text: 'Spigot hex', classes: 'mc-red' }]],
    ['<script>alert(1)</script>', [{ text: '<script>alert(1)</script>', classes: '' }]],
    [42, []],
  ] as const) {
    test(`motdRuns(${JSON.stringify(description)}) gives ${JSON.stringify(runs)}`, () => assert.deepEqual(motdRuns(description), runs));
  }
  test('motdRuns() bounds what a hostile server sends: 1,024 characters, nesting 16 deep', () => {
    assert.equal(motdRuns('x'.repeat(100_000)).map((r) => r.text).join('').length, 1024);
    let deep: object = { text: 'deep' };
    for (let i = 0; i < 10_000; i++) deep = { text: '', extra: [deep] };
    assert.deepEqual(motdRuns(deep), []);
  });
});

describe('readLegacyAnswer() (the ping of 1.4-1.6, and the answer of servers before 1.4)', () => {
  test('readLegacyAnswer() reads §1\\0protocol\\0version\\0motd\\0online\\0max', () => {
    assert.deepEqual(readLegacyAnswer('§1\u000078\u00001.6.4\u0000§aOld times\u00003\u000010', 5), {
      latencyMs: 5, version: { name: '1.6.4', protocol: 78 }, motd: [{ text: 'Old times', classes: 'mc-green' }], players: { online: 3, max: 10 },
    });
  });
  test('readLegacyAnswer() reads a pre-1.4 motd§online§max, and refuses what is neither', () => {
    assert.deepEqual(readLegacyAnswer('A Minecraft Server§0§20', 1), { latencyMs: 1, motd: [{ text: 'A Minecraft Server', classes: '' }], players: { online: 0, max: 20 } });
    assert.equal(readLegacyAnswer('garbage', 1), undefined);
  });
});

// The algorithm the replay took over, written plainly: every line kept, dated back from the end, sorted, counted
type Meaning = Parameters<typeof replayLine>[2];
interface DayLine { secondOfDay: number; meaning: Meaning }
interface TimedLine { atMs: number; meaning: Meaning }
interface DatedSource { lines: DayLine[]; lastDay: Date; lastSecondOfDay: number }

function historyKeptWhole(sources: DatedSource[], fromMs: number, minutes: number, running: boolean, withChat: boolean) {
  const lines: TimedLine[] = sources.flatMap(({ lines: written, lastDay, lastSecondOfDay }) => {
    const dated: TimedLine[] = [];
    let day = new Date(lastDay.getFullYear(), lastDay.getMonth(), lastDay.getDate());
    let after = lastSecondOfDay;
    for (let i = written.length - 1; i >= 0; i--) {
      const { secondOfDay, meaning } = written[i];
      if (secondOfDay > after + 120) day = new Date(day.getFullYear(), day.getMonth(), day.getDate() - 1);
      after = secondOfDay;
      dated[i] = { atMs: new Date(day.getFullYear(), day.getMonth(), day.getDate(), 0, 0, secondOfDay).getTime(), meaning };
    }
    return dated;
  }).sort((a, b) => a.atMs - b.atMs);
  const counts: Array<number | null> = new Array(minutes).fill(null);
  const first = Math.floor(fromMs / 60_000);
  const online = new Set<string>();
  const recent: TimedLine[] = [];
  let lastStartMs: number | undefined;
  let lastStopMs: number | undefined;
  let known = -1;
  const fill = (until: number, count: number) => {
    for (let m = Math.max(known + 1, first); m < Math.min(until, first + minutes); m++) counts[m - first] = count;
  };
  const atLeast = (minute: number, count: number) => {
    if (minute >= first && minute < first + minutes) counts[minute - first] = Math.max(counts[minute - first] ?? 0, count);
  };
  for (const line of lines) {
    const { meaning } = line;
    const minute = Math.floor(line.atMs / 60_000);
    if (known !== -1) fill(minute, online.size);
    atLeast(minute, online.size);
    const player = 'player' in meaning ? meaning.player : '';
    const repeated = meaning.type === 'player.joined' ? online.has(player) : meaning.type === 'player.left' && !online.has(player);
    if (meaning.type === 'session.started') {
      online.clear();
      lastStartMs = line.atMs;
      lastStopMs = undefined;
    } else if (meaning.type === 'server.stopping') lastStopMs ??= line.atMs;
    if (meaning.type === 'player.joined') online.add(player);
    if (meaning.type === 'player.left') online.delete(player);
    atLeast(minute, online.size);
    known = Math.max(known, minute);
    const news = ['player.joined', 'player.left', 'player.died', 'player.advancement'].includes(meaning.type)
      || (meaning.type === 'player.chat' && withChat);
    if (news && !repeated) recent.unshift(line);
  }
  if (known !== -1) fill(first + minutes, running ? online.size : 0);
  return { counts, recent: recent.slice(0, 20), lastStartMs, lastStopMs };
}

const replayOf = (lines: readonly DayLine[], players: Iterable<string>, withChat: boolean, after?: Replay) => {
  const replay = newReplay(players, after);
  for (const { secondOfDay, meaning } of lines) replayLine(replay, secondOfDay, meaning, withChat);
  return replay;
};
const secondOfDay = (when: Date) => when.getHours() * 3600 + when.getMinutes() * 60 + when.getSeconds();
const join = (player: string) => ({ type: 'player.joined', player }) as const;
const leave = (player: string) => ({ type: 'player.left', player }) as const;

describe('the players history\'s replay (docs/api.md#get-apiplayershistory, docs/performance.md#the-players-history)', () => {
  test('a replay dates its last line by its day (the day before when later than the file\'s time), and a time earlier than the line before as the next day', () => {
    const replay = replayOf([{ secondOfDay: 23 * 3600, meaning: join('Alex') }, { secondOfDay: 60, meaning: leave('Alex') }], [], false);
    anchorReplay(replay, new Date(2026, 10, 27, 12, 0, 0), 12 * 3600);
    assert.deepEqual(replay.recent.map((l) => l.atMs), [new Date(2026, 10, 27, 0, 1, 0).getTime(), new Date(2026, 10, 26, 23, 0, 0).getTime()]);
    const late = replayOf([{ secondOfDay: 23 * 3600, meaning: join('Alex') }], [], false);
    anchorReplay(late, new Date(2026, 10, 27, 0, 30, 0), 30 * 60);
    assert.deepEqual(late.recent.map((l) => l.atMs), [new Date(2026, 10, 26, 23, 0, 0).getTime()]);
  });

  test('lines appended to a dated replay follow on from its last line, and a file written days later is dated by its time', () => {
    const replay = replayOf([{ secondOfDay: 10 * 3600, meaning: join('Alex') }], [], false);
    anchorReplay(replay, new Date(2026, 10, 27, 10, 0, 1), 10 * 3600 + 1);
    const afterMidnight = replayOf([{ secondOfDay: 9 * 3600, meaning: leave('Alex') }], replay.players, false, replay);
    anchorReplay(afterMidnight, new Date(2026, 10, 28, 9, 0, 1), 9 * 3600 + 1);
    appendReplay(replay, afterMidnight);
    const daysLater = replayOf([{ secondOfDay: 11 * 3600, meaning: join('Steve') }], replay.players, false, replay);
    anchorReplay(daysLater, new Date(2026, 11, 1, 11, 0, 1), 11 * 3600 + 1);
    appendReplay(replay, daysLater);
    assert.deepEqual(replay.recent.map((l) => new Date(l.atMs).toString()), [new Date(2026, 11, 1, 11), new Date(2026, 10, 28, 9), new Date(2026, 10, 27, 10)].map(String));
  });

  test('countsOf() gives each minute the most players online in it, null before the first line, 0 after the game stopped', () => {
    const t0 = new Date(2026, 10, 27, 12, 0, 0).getTime();
    const at = (seconds: number, meaning: Meaning) => ({ secondOfDay: 12 * 3600 + seconds, meaning });
    const lines = [
      at(60, { type: 'session.started' }),
      at(125, join('Alex')),
      at(126, join('Alex')),   // the login line and the broadcast: one player
      at(127, join('Steve')),
      at(129, leave('Steve')),
      at(240, leave('Alex')),
    ];
    const dated = (some: DayLine[]) => {
      const replay = replayOf(some, [], false);
      anchorReplay(replay, new Date(t0), 24 * 3600);
      return replay;
    };
    assert.deepEqual(countsOf(dated(lines), t0, 6, true), [null, 0, 2, 1, 1, 0]);
    assert.deepEqual(countsOf(dated(lines.slice(0, 3)), t0, 6, false), [null, 0, 1, 0, 0, 0]);
  });

  test('the replay of random logs (archives, then latest.log read in random pieces, across midnights) tells what every line kept, dated back from the end and sorted, tells', () => {
    const names = ['Alex', 'Steve', 'Kai', 'Noor', 'Zuri', '.Bramble_Crest'];
    for (let seed = 1; seed <= 40; seed++) {
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
      const count = 50 + Math.floor(random() * (seed % 4 === 0 ? 8000 : 1500));
      let atMs = new Date(2027, 0, 10, Math.floor(random() * 24), 0, 0).getTime();
      const written: Array<{ atMs: number; line: DayLine }> = [];
      for (let i = 0; i < count; i++) {
        const roll = random();
        // steps forward: mostly seconds, some minutes or hours, a few most of a day (never a whole day: a time of day cannot tell it)
        atMs += 1000 * Math.floor(roll < 0.85 ? random() * 40 : roll < 0.97 ? random() * 1200 : roll < 0.995 ? random() * 10_800 : random() * 72_000);
        const kind = random();
        const meaning: Meaning = kind < 0.3 ? join(pick(names)) : kind < 0.55 ? leave(pick(names))
          : kind < 0.8 ? { type: 'player.chat', player: pick(names), text: `hi ${i}` }
            : kind < 0.88 ? { type: 'player.died', player: pick(names), message: `${i} fell` }
              : kind < 0.93 ? { type: 'player.advancement', player: pick(names), advancement: `A${i}`, kind: 'task' }
                : kind < 0.965 ? { type: 'server.stopping' } : { type: 'session.started' };
        written.push({ atMs, line: { secondOfDay: secondOfDay(new Date(atMs)), meaning } });
      }
      // cut into archives (dated by their last line's day, as the game names them), then latest.log
      const cuts = [...new Set(Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * count)))].sort((a, b) => a - b);
      const pieces = [...cuts, count].map((end, i, all) => written.slice(i === 0 ? 0 : all[i - 1], end)).filter((p) => p.length > 0);
      const latest = pieces.pop()!;
      const modifiedAfter = (piece: typeof written) => new Date(piece[piece.length - 1].atMs + Math.floor(random() * 90) * 1000);
      const latestModified = modifiedAfter(latest);
      const sources: DatedSource[] = [
        ...pieces.map((piece) => ({ lines: piece.map((w) => w.line), lastDay: new Date(piece[piece.length - 1].atMs), lastSecondOfDay: 24 * 3600 })),
        { lines: latest.map((w) => w.line), lastDay: latestModified, lastSecondOfDay: secondOfDay(latestModified) },
      ];
      const nowMinute = Math.floor(latestModified.getTime() / 60_000) + Math.floor(random() * 180);
      const fromMs = (nowMinute - 1439) * 60_000;
      const running = random() < 0.5;
      const withChat = random() < 0.5;
      const expected = historyKeptWhole(sources, fromMs, 1440, running, withChat);
      // the daemon's way: each archive from the players the one before left, latest.log appended in pieces
      const whole = newReplay([]);
      let players: ReadonlySet<string> = new Set();
      for (const { lines, lastDay } of sources.slice(0, -1)) {
        const archive = replayOf(lines, players, withChat);
        anchorReplay(archive, lastDay, 24 * 3600);
        appendReplay(whole, archive);
        players = archive.players;
      }
      const latestReplay = newReplay(players);
      for (let start = 0; start < latest.length;) {
        const end = random() < 0.3 ? latest.length : Math.min(latest.length, start + 1 + Math.floor(random() * latest.length / 3));
        const piece = latest.slice(start, end);
        const appended = replayOf(piece.map((w) => w.line), latestReplay.players, withChat, latestReplay);
        const modified = end === latest.length ? latestModified : new Date(Math.min(modifiedAfter(piece).getTime(), latest[end].atMs));
        anchorReplay(appended, modified, secondOfDay(modified));
        appendReplay(latestReplay, appended);
        start = end;
      }
      appendReplay(whole, latestReplay);
      const { recent, lastStartMs, lastStopMs } = whole;
      assert.deepEqual(countsOf(whole, fromMs, 1440, running), expected.counts, `seed ${seed}`);
      assert.deepEqual({ recent, lastStartMs, lastStopMs }, { recent: expected.recent, lastStartMs: expected.lastStartMs, lastStopMs: expected.lastStopMs }, `seed ${seed}`);
    }
  });

  test('chartPath() draws one step a minute with a gap where nothing is known', () => {
    assert.equal(chartPath([null, 0, 2, 2, null, 1], 2), 'M1 100H2V4H3H4M5 52H6');
  });
});

describe('the compiled daemon', { concurrency: GROUPS_AT_ONCE }, () => {
  // ---- The long waits first: live events over time (docs/api.md#get-apievents), slow readers
  // (docs/api.md#limits-and-protection) and the webhook (docs/api.md#webhook) wait for the daemon's own deadlines
  // (the 15 s keep-alive, the 10 s linger and drain, the retry backoff); they begin with the run, the rest beside them ----

  describe('GET /api/events over time: watching, keep-alive, the cap on streams', { concurrency: true }, () => {
    const { defer, host } = group({ daemon: false });   // each test has a daemon of its own

    test('GET /api/events watches only while someone listens, and for 10 s after the last stream closed', async () => {
      const quiet = await startDaemon(host, defer);   // a daemon nobody has listened to yet
      // the watches the daemon holds: lines of its inotify descriptor's fdinfo (libuv keeps the descriptor itself)
      const inotifyOf = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).reduce((watches, fd) => {
        try {
          if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') return watches;
          return watches + fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((line) => line.startsWith('inotify wd:')).length;
        } catch {
          return watches;
        }
      }, 0);
      assert.equal(inotifyOf(quiet.child.pid!), 0);
      const s = openEventStream(quiet.port);
      defer(() => s.close());
      await s.opened;
      await waitFor(() => inotifyOf(quiet.child.pid!) > 0);
      s.close();
      const closedAt = Date.now();
      await waitFor(() => inotifyOf(quiet.child.pid!) === 0, { timeoutMs: 15_000 });
      assert.ok(Date.now() - closedAt >= 9_000, 'watching lingers for 10 s after the last stream');
    });

    test('GET /api/events sends a keep-alive comment within 15 s of quiet', async () => {
      const s = openEventStream((await startDaemon(host, defer)).port);
      defer(() => s.close());
      await s.opened;
      await waitFor(() => s.comments() >= 1, { timeoutMs: 17_000 });
      s.close();
    });

    test('GET /api/events: while latest.log is a FIFO the watcher logs the fault once, not at every look, tells the other changes, and logs once when it ends', async () => {
      const own = await makeSandbox(defer);
      await own.startGame();
      const d = await startDaemon(own, defer);
      const s = openEventStream(d.port);
      defer(() => s.close());
      await s.opened;
      await waitFor(() => s.retryMs() !== undefined);
      const latest = serverFile(own, 'logs/latest.log');
      fs.renameSync(latest, `${latest}.aside`);
      spawnSync('mkfifo', [latest]);
      const faults = () => d.stdout().split('\n').filter((line) => line.includes('watching for events: latest.log is not a regular file.')).length;
      await waitFor(() => faults() >= 1);
      // each whitelist change is seen by a look of its own while the log stays a FIFO: the fault is not logged again
      for (const name of ['Look_1', 'Look_2', 'Look_3']) {
        fs.writeFileSync(serverFile(own, 'whitelist.json'), gson([{ uuid: offlineUuid(name), name }]));
        await waitFor(() => s.parsed().some((e) => e.type === 'whitelist.changed' && (e.added as string[]).includes(name)));
      }
      assert.equal(faults(), 1);
      fs.rmSync(latest);
      fs.renameSync(`${latest}.aside`, latest);
      await waitFor(() => d.stdout().includes('watching for events: no longer: latest.log is not a regular file.'));
      assert.equal(faults(), 1);
      s.close();
    });

    /** Opens `count` streams, keyed or not, and waits until each has its answer. */
    const openStreams = async (port: number, count: number, options: Parameters<typeof openEventStream>[1] = {}) => {
      const streams = Array.from({ length: count }, () => openEventStream(port, options));
      defer(() => streams.forEach((s) => s.close()));
      await Promise.all(streams.map((s) => s.opened));
      return streams;
    };
    const streamsOpen = async (d: Daemon) => Number(/^gameserver_api_event_streams (\d+)$/m.exec((await d.get('/metrics')).text)?.[1]);

    test('GET /api/events keeps 8 of its 64 streams for the key: a 57th anonymous stream gets 503 JSON, the key as X-API-Key or Basic auth password gets in, a 65th does not', async () => {
      const own = await startDaemon(host, defer);
      const anonymous = await openStreams(own.port, 56);
      assert.ok(anonymous.every((s) => s.events.length === 0));
      // a stream that is let in sends nothing after its retry line for 15 s: a wrong answer fails here, not hangs the run
      const refused = await own.get('/api/events', { timeoutMs: 5_000 });
      assertReply(refused, 503, { ok: false, error: 'Too many event streams are open; try again later.' });
      const keyed = [...await openStreams(own.port, 4, { headers: { 'X-API-Key': KEY } }), ...await openStreams(own.port, 4, { auth: `relay:${KEY}` })];
      for (const s of keyed) assert.equal((await s.opened).statusCode, 200);
      assert.equal(await streamsOpen(own), 64);
      const full = await own.get('/api/events', { key: KEY, timeoutMs: 5_000 });
      assertReply(full, 503, { ok: false, error: 'Too many event streams are open; try again later.' });
      [...anonymous, ...keyed].forEach((s) => s.close());
    });

    const answered = async (d: Daemon, route: string) => Number(new RegExp(`^gameserver_api_http_requests_total\\{route="${route}",method="GET",code="200"\\} (\\d+)$`, 'm').exec((await d.get('/metrics')).text)?.[1] ?? 0);

    for (const [label, requests, closeAfterMs, answeredFirst] of [
      ['64 streams pipelined in one write, closed after 300 ms', Array.from({ length: 64 }, () => 'GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n'), 300, '/api/events'],
      ['GET / then GET /api/events pipelined, closed at once', ['GET / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n'], 0, '/'],
    ] as const) {
      test(`GET /api/events: ${label}, leave every slot free once the connection closed`, async () => {
        const own = await makeSandbox(defer);
        fs.writeFileSync(path.join(own.controlDir, 'report-mode'), 'slow\n');   // GET / answers after 1 s
        const d = await startDaemon(own, defer);
        const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(requests.join(''));
        if (closeAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, closeAfterMs));
        socket.destroy();
        // once the first request had its answer, whatever followed it on that connection has begun, or never will
        await waitFor(async () => (await answered(d, answeredFirst)) >= 1);
        await waitFor(async () => (await streamsOpen(d)) === 0, { timeoutMs: 1_000 });
        const all = [...await openStreams(d.port, 56), ...await openStreams(d.port, 8, { headers: { 'X-API-Key': KEY } })];
        for (const s of all) assert.equal((await s.opened).statusCode, 200);
        all.forEach((s) => s.close());
      });
    }
  });

  describe('slow readers', { concurrency: 1 }, () => {
    const defer = cleanupStack();

    test('400 clients that never read their large tails keep the daemon, run as the unit runs it, under 256 MiB: replies the kernel does not take fill the reply budget, the rest are refused with 503; it still answers, and closes what is not drained within 10 s', async (t) => {
      const host = await makeSandbox(defer);
      // lines of 8 KiB of control characters, which JSON writes six bytes each: a tail (1 MiB at most) becomes a
      // 6 MiB reply, more than the kernel takes from a socket nobody reads (3-4 MiB on loopback), so the rest waits
      // in the daemon. Every client asks for another N, so no two replies are shared.
      fs.writeFileSync(serverFile(host, 'logs/latest.log'), Array.from({ length: 200 }, (_, i) => `${P}${String(i).padStart(5, '0')} ${'\x01'.repeat(8_153)}\n`).join(''));
      const d = await startDaemon(host, defer, {}, { nodeArgs: unitNodeArgs() });
      assert.deepEqual(unitNodeArgs(), ['--max-semi-space-size=16', '--no-memory-reducer']);
      const daemonSockets = () => fs.readdirSync(`/proc/${d.child.pid}/fd`).filter((fd) => {
        try { return fs.readlinkSync(`/proc/${d.child.pid}/fd/${fd}`).startsWith('socket:'); } catch { return false; }
      }).length;
      const idle = daemonSockets();   // the listening socket, and stdout and stderr (socket pairs)
      const sockets: net.Socket[] = [];
      t.after(() => sockets.forEach((socket) => socket.destroy()));
      for (let i = 0; i < 400; i++) {
        const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
        socket.pause();   // never reads: what the daemon writes waits in the kernel, then in the daemon
        socket.write(`GET /api/logs/latest?lines=${1_600 + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
        sockets.push(socket);
      }
      const status = () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${d.child.pid}/status`, 'utf8'))?.[1]) * 1024;
      // another client is answered meanwhile: at once, or told the daemon is busy
      const other = await d.get('/api/status', { timeoutMs: 5_000 });
      assert.ok(other.status === 200 || (other.status === 503 && other.headers['retry-after'] === '1'), `status ${other.status}`);
      // the daemon closes every one: a reply not drained within 10 s, a connection idle after its answer within 5 s.
      // A client that does not read never sees that FIN (it waits behind the unsent bytes): the daemon's descriptors show it.
      // looked at four times a second: each look reads hundreds of descriptor links. Each reply has its 10 s from
      // the moment it was written, and on a busy machine the last is written late.
      await waitFor(() => daemonSockets() >= idle + 300, { intervalMs: 250 });
      await waitFor(() => daemonSockets() <= idle, { timeoutMs: 60_000, intervalMs: 250 });
      const peak = status();
      const metrics = (await d.get('/metrics')).text;
      const answered = (code: number) => Number(new RegExp(`^gameserver_api_http_requests_total\\{route="/api/logs/latest",method="GET",code="${code}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
      t.diagnostic(`VmHWM ${(peak / 2 ** 20).toFixed(1)} MiB; tails answered ${answered(200)}, refused ${answered(503)}`);
      assert.ok(peak < 256 * 2 ** 20, `VmHWM ${(peak / 2 ** 20).toFixed(1)} MiB`);
      assert.equal(answered(200) + answered(503), 400);
      assert.ok(answered(503) > 0, 'the reply budget was never spent');
      const after = await d.get('/api/logs/latest?lines=3', { afterChange: true, timeoutMs: 5_000 });
      assert.equal(after.status, 200);
      assert.equal(after.json.lines.length, 3);
    });
  });

  describe('requests pipelined on one connection', { concurrency: 1 }, () => {
    const defer = cleanupStack();
    /** A host whose latest.log makes a 2,000-line tail about 400 KB, and a daemon of its own run as the unit runs it. */
    const bigLogDaemon = async () => {
      const host = await makeSandbox(defer);
      fs.writeFileSync(serverFile(host, 'logs/latest.log'), Array.from({ length: 3_000 }, (_, i) => `${P}line ${String(i).padStart(5, '0')} ${'x'.repeat(170)}\n`).join(''));
      return { host, d: await startDaemon(host, defer, {}, { nodeArgs: unitNodeArgs() }) };
    };
    const peakBytes = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
    const socketsOf = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:'); } catch { return false; }
    }).length;
    const tails = (count: number) => Array.from({ length: count }, (_, i) => `GET /api/logs/latest?lines=${2_000 - i} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');

    for (const [label, head, count] of [
      ['600 tails pipelined in one 32 KB write', '', 600],
      ['300 tails pipelined behind GET /api/events', 'GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n', 300],
    ] as const) {
      test(`GET /api/logs/latest: ${label} by a client that never reads keep the daemon, run as the unit runs it, under 256 MiB, and others are answered`, async (t) => {
        const { d } = await bigLogDaemon();
        const idle = socketsOf(d.child.pid!);
        const data = head + tails(count);
        assert.ok(Buffer.byteLength(data) <= 32 * 1024);
        const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
        t.after(() => socket.destroy());
        socket.pause();   // never reads: what the daemon writes waits in the kernel, then in the daemon
        socket.write(data);
        const other = await d.get('/api/logs/latest?lines=3', { timeoutMs: 5_000 });
        assert.deepEqual([other.status, other.json.lines.length], [200, 3]);
        // the daemon is done with the connection once it answered its first request (the other client's tail is
        // counted too) and closed it
        const [first, answers] = head === '' ? ['/api/logs/latest', 2] : ['/api/events', 1];
        await waitFor(async () => Number(new RegExp(`^gameserver_api_http_requests_total\\{route="${first}",method="GET",code="200"\\} (\\d+)$`, 'm').exec((await d.get('/metrics')).text)?.[1] ?? 0) >= answers);
        await waitFor(() => socketsOf(d.child.pid!) <= idle, { timeoutMs: 30_000, intervalMs: 100 });
        const peak = peakBytes(d.child.pid!);
        t.diagnostic(`VmHWM ${(peak / 2 ** 20).toFixed(1)} MiB`);
        assert.ok(peak < 256 * 2 ** 20, `VmHWM ${(peak / 2 ** 20).toFixed(1)} MiB`);
        assert.equal((await d.get('/api/status')).status, 200);
      });
    }

    test('a malformed request pipelined behind one still being answered closes the connection: no answer overtakes another', async (t) => {
      const host = await makeSandbox(defer);
      fs.writeFileSync(path.join(host.controlDir, 'report-mode'), 'slow\n');   // GET / answers after 1 s
      const d = await startDaemon(host, defer);
      const raw = await rawRequest(d.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP AT ALL\r\n\r\n', { untilClose: true }).catch((err: Error) => err);
      t.diagnostic(raw instanceof Error ? raw.message : `status ${raw.status}`);
      assert.ok(raw instanceof Error || raw.status === 200, 'the 400 of the second request never comes before the answer to the first');
      assert.equal((await d.get('/api/status')).status, 200);
    });

    test('20 requests pipelined in one write are answered in order, each whole', async () => {
      const { d } = await bigLogDaemon();
      const counts = Array.from({ length: 19 }, (_, i) => 2_000 - i * 100);
      const replies = await sendPipelined(d.port, ['GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n', ...counts.map((n) => `GET /api/logs/latest?lines=${n} HTTP/1.1\r\nHost: x\r\n\r\n`)]);
      assert.deepEqual(replies[0].json, { ok: true, online: false });
      assert.deepEqual(replies.slice(1).map((r) => [r.status, r.json.lines.length, r.json.lines.at(-1)]), counts.map((n) => [200, n, `${P}line 02999 ${'x'.repeat(170)}`]));
    });

    test('GET /api/events answers nothing pipelined behind it: the stream goes on, a GET /api/status after it is never answered', async (t) => {
      const host = await makeSandbox(defer);
      const d = await startDaemon(host, defer);
      const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
      t.after(() => socket.destroy());
      let received = '';
      socket.setEncoding('utf8').on('data', (text: string) => (received += text));
      socket.write('GET /api/events HTTP/1.1\r\nHost: x\r\n\r\nGET /api/status HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(() => received.includes('retry: 3000'));
      fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid('After_1'), name: 'After_1' }]));
      await waitFor(() => received.includes('"whitelist.changed"'));
      assert.equal(received.match(/HTTP\/1\.1 /g)?.length, 1);
      assert.match(received, /^HTTP\/1\.1 200 OK\r\n/);
      assert.doesNotMatch(received, /"online"/);
    });
  });

  describe('requests that take too long', { concurrency: true }, () => {
    const { host, d } = group();

    test('a client whose headers are not complete within 10 s gets 408 JSON, and its connection is closed', async () => {
      const raw = await rawRequest(d.port, 'GET /api/status HTTP/1.1\r\nHost: localhost\r\nX-Never-Ends: 1\r\n', { untilClose: true });
      assert.equal(raw.status, 408);
      assertCommonHeaders(raw.headers);
      assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error: 'Request timeout' });
    });

    test('a keep-alive connection left idle after its answer is closed by the daemon after 5 s', { timeout: 15_000 }, async () => {
      const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
      let received = '';
      socket.setEncoding('latin1').on('data', (text: string) => (received += text));
      socket.write('GET /api HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise((resolve) => socket.once('close', resolve));   // the daemon's FIN; the test's timeout if it never comes
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.match(received, /\r\nKeep-Alive: timeout=5\r\n/i);
    });

    test('a POST whose body is not complete within 10 s gets 408 JSON, its connection is closed, and nothing reaches the console', async () => {
      await host.startGame();
      const mark = consoleBytes(host).length;
      const raw = await rawRequest(d.port, `POST /api/command HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\n`
        + 'Content-Length: 100\r\n\r\n{"command":"say never complete"', { untilClose: true });
      assert.equal(raw.status, 408);
      assertCommonHeaders(raw.headers);
      assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error: 'Request timeout' });
      await assertNothingSentSince(d, host, mark);
    });
  });

  describe('EVENT_WEBHOOK_URL', { concurrency: true }, () => {   // each test runs a host, a daemon and a receiver of its own
    const defer = cleanupStack();
    const SECRET = 'webhook-secret-9a8b7c6d';

    /** A receiver that records each POST, and answers as `plan` says for each in turn (status, or a delay first). */
    async function receiver(plan: Array<number | { delayMs: number; status: number }> = []) {
      const received: Array<{ body: string; headers: http.IncomingHttpHeaders; signed: boolean; status: number }> = [];
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
          const body = Buffer.concat(chunks);
          const expected = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
          const step = plan.shift() ?? 204;
          const status = typeof step === 'number' ? step : step.status;
          received.push({ body: body.toString('utf8'), headers: req.headers, signed: req.headers['x-signature-256'] === expected, status });
          setTimeout(() => res.writeHead(status).end(), typeof step === 'number' ? 0 : step.delayMs);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
      return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook?token=t0k3n`, received };
    }
    const setWhitelist = (host: Host, ...names: string[]) => fs.writeFileSync(serverFile(host, 'whitelist.json'), gson(names.map((name) => ({ uuid: offlineUuid(name), name }))));

    test('EVENT_WEBHOOK_URL receives every event as its JSON, signed, in order, retried after failures and a slow answer', async () => {
      const hook = await receiver([500, 503, { delayMs: 1_500, status: 200 }]);
      const host = await makeSandbox(defer);
      const d = await startDaemon(host, defer, { EVENT_WEBHOOK_URL: hook.url, EVENT_WEBHOOK_SECRET: SECRET });
      assert.ok(!d.stdout().includes(SECRET) && !d.stdout().includes('t0k3n'), 'the start-up line shows neither the secret nor the URL\'s token');
      // with a webhook the daemon watches from the start, and listens once it has taken the starting state
      setWhitelist(host, 'First_One');
      await waitFor(() => hook.received.length >= 1);   // told apart from the next change
      setWhitelist(host, 'Second_One');
      // the first event fails twice (retried after 1 s, then 2 s), then is answered slowly; the second waits behind it
      await waitFor(() => hook.received.filter((r) => r.status === 200 || r.status === 204).length >= 2, { timeoutMs: 15_000 });
      const delivered = hook.received.map((r) => JSON.parse(r.body) as { type: string; added: string[]; removed: string[] });
      assert.deepEqual(delivered.map((e) => e.added), [['First_One'], ['First_One'], ['First_One'], ['Second_One']]);
      assert.ok(hook.received.every((r) => r.signed && r.headers['content-type'] === 'application/json'));
      assert.deepEqual(Object.keys(delivered[0]), ['type', 'time', 'added', 'removed']);
      // the outage is told twice, when it begins and when it ends, and counted
      await waitFor(() => d.stdout().includes('webhook: delivering again'));
      assert.deepEqual(d.stdout().split('\n').filter((line) => line.includes('webhook:')).map((line) => line.replace(/^\S+ /, '')), [
        'webhook: deliveries are failing (status 500); each event is retried for up to 10 minutes',
        'webhook: delivering again, after 2 failed attempts and 0 dropped events',
      ]);
      const { samples } = parseExposition((await d.get('/metrics', { afterChange: true })).text);
      assert.deepEqual(['delivered', 'failed', 'retried', 'dropped'].map((outcome) => samples.get(`gameserver_api_webhook_deliveries_total{outcome="${outcome}"}`)), [2, 2, 2, 0]);
    });

    test('EVENT_WEBHOOK_URL delivers each event once when the receiver answers 200 and trickles its body, and later events do not wait behind it', async () => {
      const received: string[] = [];
      const trickles: NodeJS.Timeout[] = [];
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
          received.push(Buffer.concat(chunks).toString('utf8'));
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          trickles.push(setInterval(() => res.write('.'), 200));   // a body that never ends
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => { trickles.forEach(clearInterval); server.closeAllConnections(); server.close(resolve); }));
      const host = await makeSandbox(defer);
      const d = await startDaemon(host, defer, { EVENT_WEBHOOK_URL: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook` });
      setWhitelist(host, 'First_One');
      await waitFor(() => received.length >= 1);
      setWhitelist(host, 'Second_One');
      await waitFor(() => received.length >= 2);
      setWhitelist(host, 'Third_One');
      await waitFor(() => received.length >= 3);
      assert.deepEqual(received.map((body) => JSON.parse(body).added), [['First_One'], ['Second_One'], ['Third_One']]);
      const outcomes = async () => {
        const { samples } = parseExposition((await d.get('/metrics', { afterChange: true })).text);
        return ['delivered', 'failed', 'retried', 'dropped'].map((outcome) => samples.get(`gameserver_api_webhook_deliveries_total{outcome="${outcome}"}`));
      };
      await waitFor(async () => (await outcomes())[0] === 3);   // the receiver has the body before the daemon has the status
      assert.deepEqual(await outcomes(), [3, 0, 0, 0]);
      assert.ok(!d.stdout().includes('webhook:'), d.stdout());
    });

    test('EVENT_WEBHOOK_URL_FILE and EVENT_WEBHOOK_SECRET_FILE: events go to the URL in the one, signed with the secret in the other', async () => {
      const hook = await receiver();
      const host = await makeSandbox(defer);
      fs.writeFileSync(path.join(host.root, 'hook-url'), `${hook.url}\n`, { mode: 0o600 });
      fs.writeFileSync(path.join(host.root, 'hook-secret'), `${SECRET}\n`, { mode: 0o600 });
      const d = await startDaemon(host, defer, { EVENT_WEBHOOK_URL_FILE: path.join(host.root, 'hook-url'), EVENT_WEBHOOK_SECRET_FILE: path.join(host.root, 'hook-secret') });
      assert.match(d.stdout(), /EVENT_WEBHOOK_URL=http:\/\/127\.0\.0\.1:\d+\/…, EVENT_WEBHOOK_FORMAT=json, EVENT_WEBHOOK_SECRET=\(set\)/);
      setWhitelist(host, 'From_File');
      await waitFor(() => hook.received.length >= 1);
      assert.deepEqual(JSON.parse(hook.received[0].body).added, ['From_File']);
      assert.ok(hook.received[0].signed);
    });

    test('EVENT_WEBHOOK_FORMAT=discord posts {content} with one readable line, markdown escaped', async () => {
      const hook = await receiver();
      const host = await makeSandbox(defer);
      await startDaemon(host, defer, { EVENT_WEBHOOK_URL: hook.url, EVENT_WEBHOOK_FORMAT: 'discord' });
      setWhitelist(host, 'Kai_2');
      await waitFor(() => hook.received.length >= 1);
      assert.deepEqual(JSON.parse(hook.received[0].body), { content: 'Whitelist: added Kai\\_2; removed Alex, Steve.', allowed_mentions: { parse: [] } });
      assert.equal(hook.received[0].headers['x-signature-256'], undefined);   // no secret set: no signature
    });

    test('EVENT_WEBHOOK_FORMAT=discord posts a player\'s chat as `<name> text`, and nothing in it pings, links or formats', async () => {
      const hook = await receiver();
      const host = await makeSandbox(defer);
      await host.startGame();
      await startDaemon(host, defer, { EVENT_WEBHOOK_URL: hook.url, EVENT_WEBHOOK_FORMAT: 'discord' });
      act(host, { do: 'join', player: 'Kai_2' }, { do: 'chat', player: 'Kai_2', text: '@everyone **free** nitro https://evil.example <@123>' });
      await waitFor(() => hook.received.some((r) => r.body.includes('nitro')));
      assert.deepEqual(hook.received.map((r) => JSON.parse(r.body)), [
        { content: 'Kai\\_2 joined the game.', allowed_mentions: { parse: [] } },
        { content: '\\<Kai\\_2\\> @\u200beveryone \\*\\*free\\*\\* nitro https:/\u200b/evil.example \\<@\u200b123\\>', allowed_mentions: { parse: [] } },
      ]);
    });

  });

  // ---- Configuration (docs/api.md#configuration) ----

  describe('configuration', { concurrency: true }, () => {   // each test runs a daemon of its own
    const { defer, host } = group({ daemon: false });

    test('node dist/server.js --generate-key prints a fresh 43-character base64url key and exits 0 without reading the configuration', async () => {
      const first = await runToExit(host.daemonEnv({ PORT: 'abc' }), ['--generate-key']);
      const second = await runToExit(host.daemonEnv({ PORT: 'abc' }), ['--generate-key']);
      assert.deepEqual({ code: first.code, stderr: first.stderr }, { code: 0, stderr: '' });
      assert.match(first.stdout, /^[A-Za-z0-9_-]{43}\n$/);
      assert.match(second.stdout, /^[A-Za-z0-9_-]{43}\n$/);
      assert.notEqual(first.stdout, second.stdout);
    });

    for (const flag of ['--version', '-v']) {
      test(`node dist/server.js ${flag} prints the package version`, async () => {
        const run = await runToExit(host.daemonEnv(), [flag]);
        assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${PKG.version}\n` });
      });
    }

    test('node dist/server.js -h prints what --help prints', async () => {
      const [short, long] = await Promise.all([runToExit(host.daemonEnv(), ['-h']), runToExit(host.daemonEnv(), ['--help'])]);
      assert.deepEqual({ code: short.code, stdout: short.stdout }, { code: 0, stdout: long.stdout });
      assert.match(short.stdout, /-h, --help .*\n.*-v, --version /);
    });

    test('node dist/server.js with PORT=70000 exits 78 with a message naming PORT, the range and the value, and does not listen', async () => {
      const run = await runToExit(host.daemonEnv({ PORT: '70000', HOST: '127.0.0.1', API_KEY: KEY, PROFILE_LOOKUP_URL: lookupUrl(host) }));
      assert.equal(run.code, 78);
      assert.equal(run.stderr, 'PORT must be an integer from 1 to 65535; got "70000".\n');
      assert.ok(!run.stdout.includes('listening on'));
    });

    test('node dist/server.js prints a start-up line naming version, host and port, and never prints the key', async () => {
      const d = await startDaemon(host, defer);
      assert.ok(d.stdout().startsWith(`gameserver-api ${PKG.version} listening on 127.0.0.1:${d.port} (`), d.stdout());
      assert.equal(d.stdout().split('\n')[0].endsWith(')'), true);
      assert.equal((await d.post('/api/command', { command: 'say x' }, { key: 'wrong' })).status, 401);
      assert.equal((await d.get('/api/properties', { key: KEY })).status, 200);
      assert.deepEqual(await d.stop(), { code: 0, signal: null });
      assert.ok(!d.stdout().includes(KEY) && !d.stderr().includes(KEY));
      assert.ok(!d.stderr().split('\n').includes(WARN_LINE));
    });

    for (const [label, apiKey] of [['unset', null], ['empty', '']] as const) {
      test(`node dist/server.js with API_KEY ${label} prints the exact [WARN] line on stderr`, async () => {
        const d = await startDaemon(host, defer, { API_KEY: apiKey });
        assert.ok(d.stderr().split('\n').includes(WARN_LINE), d.stderr());
      });
    }

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      test(`node dist/server.js exits 0 on ${signal}`, async () => {
        const d = await startDaemon(host, defer);
        assert.equal((await d.get('/api')).status, 200);
        assert.deepEqual(await d.stop(signal), { code: 0, signal: null });
      });
    }

    test('node dist/server.js reads the key from API_KEY_FILE, one trailing newline removed', async () => {
      const file = path.join(host.root, 'api-key-file');
      fs.writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
      const d = await startDaemon(host, defer, { API_KEY: null, API_KEY_FILE: file });
      assert.deepEqual((await d.post('/api/command', '[not json', { key: KEY })).json, { ok: false, error: MSG.notObject });   // past the key check
      assert.equal((await d.post('/api/command', '[not json', { key: `${KEY}x` })).status, 401);
      assert.ok(!d.stdout().includes(KEY) && !d.stderr().includes(KEY));
    });

    // every rule of readConfig() is a unit test; these prove how the daemon reports one (docs/api.md#configuration)
    for (const [label, env, pattern] of [
      ['a key with a space inside', { API_KEY: 'abcdefgh ijklmnopqrs' }, /^API_KEY must hold .*; got 20 characters, not all of them printable ASCII\.$/m],
      ['SERVER_DIR naming no folder', { SERVER_DIR: '/no/such/server-folder' }, /^SERVER_DIR must be an existing directory; got "\/no\/such\/server-folder"\.$/m],
      ['EVENT_WEBHOOK_URL with a port over 65535', { EVENT_WEBHOOK_URL: 'https://discord.example:70000/api/webhooks/1/t0k3n-secret' }, /^EVENT_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL; got "https:\/\/discord\.example:70000\/…"\.$/m],
    ] as const) {
      test(`node dist/server.js with ${label} exits 78 with a message naming the variable, never the key`, async () => {
        fs.writeFileSync(path.join(host.root, 'key-file'), `${KEY}\n`);
        fs.writeFileSync(path.join(host.root, 'tab-key-file'), 'abcdefgh\tijklmnopqrs\n');
        const extra: Record<string, string> = {};
        for (const [name, value] of Object.entries(env)) if (value !== null) extra[name] = name.endsWith('_FILE') ? path.join(host.root, value) : value;
        const base = host.daemonEnv({ PORT: String(await freePort()), HOST: '127.0.0.1', ...extra });
        const run = await runToExit(base);
        assert.equal(run.code, 78, run.stderr);
        assert.match(run.stderr, pattern);
        for (const value of Object.values(extra)) if (!value.startsWith(host.root) && !value.startsWith('/no/') && value.length >= 15) assert.ok(!run.stderr.includes(value) && !run.stdout.includes(value), 'no secret is printed');
        assert.ok(!run.stderr.includes(KEY) && !run.stderr.includes('t0k3n'), 'no secret is printed');
        assert.ok(!run.stdout.includes('listening on'));
      });
    }

    test('node dist/server.js: an exception outside any request is logged and the daemon exits 1, for systemd to restart it', async () => {
      const env = host.daemonEnv({ PORT: String(await freePort()), HOST: '127.0.0.1', API_KEY: KEY });
      const child = spawn(DAEMON_NODE, ['-e', `require(${JSON.stringify(DAEMON)}).main([]); setTimeout(() => { throw new Error('boom from a timer'); }, 300);`],
        { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
      defer(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
      // 'close', not 'exit': the last of its output may still be in the pipe when it has exited
      const code = await new Promise((resolve) => child.once('close', resolve));
      assert.equal(code, 1);
      assert.match(out, /Z uncaught exception: Error: boom from a timer\n/);
    });

    test('node dist/server.js --help prints the usage and exits 0 without reading the configuration', async () => {
      const run = await runToExit(host.daemonEnv({ PORT: 'abc' }), ['--help']);
      assert.deepEqual({ code: run.code, stderr: run.stderr }, { code: 0, stderr: '' });
      assert.match(run.stdout, /^Usage: node server\.js /);
      for (const word of ['--generate-key', '--help', '--version']) assert.ok(run.stdout.includes(word), `usage names ${word}`);
      // every variable of the README's configuration table, and no other
      const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
      const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
      const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]).sort();
      assert.deepEqual([...run.stdout.matchAll(/^ {2}([A-Z][A-Z_]+) /gm)].map((m) => m[1]).sort(), documented);
      assert.ok(documented.includes('EVENT_WEBHOOK_SECRET_FILE'));
    });

    test('node dist/server.js with an unknown argument exits 2 naming it, and does not listen', async () => {
      const run = await runToExit(host.daemonEnv({ HOST: '127.0.0.1', PORT: String(await freePort()), API_KEY: KEY }), ['--bogus']);
      assert.equal(run.code, 2);
      assert.ok(run.stderr.includes('--bogus'), run.stderr);
      assert.equal(run.stdout, '');
    });

    test('node dist/server.js warns on stderr, naming the folder, when SERVER_DIR holds no server.properties', async () => {
      const empty = fs.mkdtempSync(path.join(host.root, 'no-properties-'));
      const d = await startDaemon(host, defer, { SERVER_DIR: empty });
      const warning = await waitFor(() => d.stderr().split('\n').find((line) => line.startsWith('[WARN] ') && line.includes('server.properties')));
      assert.ok(warning.includes(empty), warning);
      assert.equal((await d.get('/api/status')).status, 200);
    });

    test('node dist/server.js warns on stderr, naming the setting and its routes, when serv or the report script cannot be found or run, and not when they can', async () => {
      const notExecutable = path.join(host.root, 'servreport-not-executable.sh');
      fs.writeFileSync(notExecutable, '#!/bin/sh\necho report\n', { mode: 0o644 });
      const d = await startDaemon(host, defer, { SERV_BIN: 'no-such-serv', REPORT_SCRIPT: notExecutable });
      const warnings = await waitFor(() => {
        const lines = d.stderr().split('\n').filter((line) => line.startsWith('[WARN] ') && /SERV_BIN|REPORT_SCRIPT/.test(line));
        return lines.length === 2 ? lines : undefined;
      });
      assert.match(warnings[0], /^\[WARN\] SERV_BIN no-such-serv cannot be found or run: POST \/api\/server\/start, stop, restart and POST \/api\/backup answer 500/);
      assert.ok(warnings[1].startsWith(`[WARN] REPORT_SCRIPT ${notExecutable} cannot be found or run: GET / and GET /api/report answer 500`), warnings[1]);
      const fine = await startDaemon(host, defer);   // the sandbox's own serv and report script, found through PATH
      assert.equal((await fine.get('/api/status')).status, 200);
      assert.doesNotMatch(fine.stderr(), /SERV_BIN|REPORT_SCRIPT/);
    });

    test('node dist/server.js exits non-zero with a message naming PORT when the port is taken', async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => taken.close(resolve)));
      const port = String((taken.address() as net.AddressInfo).port);
      const run = await runToExit(host.daemonEnv({ HOST: '127.0.0.1', PORT: port, API_KEY: KEY }));
      assert.notEqual(run.code, 0);
      assert.equal(run.signal, null);
      assert.match(run.stderr, /PORT/);
      assert.ok(run.stderr.includes(port), run.stderr);
      assert.ok(!run.stdout.includes('listening on'));
    });

    test('node dist/server.js keeps serving, and sleeps, when the reader of its stdout goes away', async () => {
      const d = await startDaemon(host, defer);   // its stop() is registered before anything else happens
      d.child.stdout!.destroy();   // the journal or terminal is gone: each log line now meets EPIPE
      const res = await d.post('/api/command', { command: 'say x' }, { key: 'wrong' });   // a write: logs one line
      assert.equal(res.status, 401);
      assert.equal((await d.get('/api/status')).status, 200);
      // a daemon that loops on EPIPE stays runnable ('R'); an idle one sleeps in epoll ('S')
      await waitFor(() => procStat(d.child.pid!).state === 'S');
      assert.equal((await d.post('/api/command', { command: 'say x' }, { key: 'wrong' })).status, 401);
      assert.equal((await d.get('/api/status')).status, 200);
    });
  });

  // ---- GET / and GET /api/report (docs/api.md#get-) ----

  // its 10 s of waiting overlap the other groups
  // ---- TLS (docs/api.md#tls) ----

  describe('TLS_CERT_FILE and TLS_KEY_FILE', { concurrency: true }, () => {   // each test runs a daemon of its own
    const { defer, host } = group({ daemon: false });
    /** A request over HTTPS by node's client, trusting only `ca`; the body as text. */
    const secureRequest = (port: number, ca: string, method: string, target: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
        const req = https.request({ host: '127.0.0.1', port, method, path: target, ca: fs.readFileSync(ca), headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
        });
        req.once('error', reject);
        req.end(body);
      });
    const secureDaemon = async (name: string) => {
      const made = makeCertificate(host.root, name);
      const d = await startDaemon(host, defer, { TLS_CERT_FILE: made.cert, TLS_KEY_FILE: made.key });
      return { d, ...made };
    };

    test('with TLS_CERT_FILE and TLS_KEY_FILE the daemon speaks HTTPS: curl and node\'s client that trust the certificate get the routes, the key works, and the start-up line says so', async (t) => {
      const { d, cert } = await secureDaemon('speaks');
      assert.match(d.stdout(), /listening on 127\.0\.0\.1:\d+ \(.*HTTPS with TLS_CERT_FILE=.*speaks-cert\.pem, TLS_KEY_FILE=.*speaks-key\.pem/);
      const status = await secureRequest(d.port, cert, 'GET', '/api/status');
      assert.equal(status.status, 200);
      assertCommonHeaders(status.headers);
      assert.equal(JSON.parse(status.text).ok, true);
      const say = await secureRequest(d.port, cert, 'POST', '/api/say', { 'X-API-Key': KEY, 'Content-Type': 'application/json' }, '{"text":"hi"}');
      assert.deepEqual([say.status, JSON.parse(say.text)], [409, { ok: false, error: MSG.notRunning }]);   // the key was taken: no 401
      const events = await new Promise<string>((resolve, reject) => {
        https.get({ host: '127.0.0.1', port: d.port, path: '/api/events', ca: fs.readFileSync(cert) }, (res) => {
          res.setEncoding('utf8').once('data', (chunk: string) => { resolve(chunk); res.destroy(); });
        }).once('error', reject);
      });
      assert.equal(events, 'retry: 3000\n\n');
      const curl = await runTool('curl', ['-sS', '--cacert', cert, `https://127.0.0.1:${d.port}/api/players/online`]);
      if (curl.error) return t.skip('curl is not installed (.ci/run installs it)');
      assert.equal(curl.status, 0, curl.stderr);
      assert.equal(JSON.parse(curl.stdout).ok, true);
    });

    test('with TLS the daemon answers no plain HTTP, and a client that does not trust the certificate gets nothing', async () => {
      const { d, cert } = await secureDaemon('only');
      await assert.rejects(request(d.port, 'GET', '/api/status'));   // a TLS server reads HTTP as a broken handshake and closes
      const other = makeCertificate(host.root, 'stranger');
      await assert.rejects(secureRequest(d.port, other.cert, 'GET', '/api/status'), /self[- ]signed|unable to verify|certificate/i);
      assert.equal((await secureRequest(d.port, cert, 'GET', '/api/status')).status, 200);
    });

    test('a renewed certificate is served to new connections without a restart; files that cannot be used leave the previous one served, logged once', async () => {
      const { d, cert, key, fingerprint } = await secureDaemon('renewed');
      assert.equal(await servedFingerprint(d.port, cert), fingerprint);
      const renewal = makeCertificate(host.root, 'renewal');
      // as certbot's deploy step does: the new files beside, then renamed over the old ones
      fs.copyFileSync(renewal.key, `${key}.new`);
      fs.copyFileSync(renewal.cert, `${cert}.new`);
      fs.renameSync(`${key}.new`, key);
      fs.renameSync(`${cert}.new`, cert);
      await waitFor(async () => (await servedFingerprint(d.port, cert)) === renewal.fingerprint, { timeoutMs: 20_000 });
      await waitFor(() => d.stdout().includes('TLS: ') && d.stdout().includes('changed; new connections get its certificate'));
      // a key of another certificate: refused, and the renewal still served
      fs.copyFileSync(makeCertificate(host.root, 'mismatch').key, key);
      await waitFor(() => d.stdout().includes('TLS: the certificate files changed and cannot be used'), { timeoutMs: 20_000 });
      assert.equal(await servedFingerprint(d.port, cert), renewal.fingerprint);
      assert.equal((await secureRequest(d.port, cert, 'GET', '/api/status')).status, 200);
      assert.equal(d.stdout().split('TLS: the certificate files changed and cannot be used').length - 1, 1, 'logged once');
      assert.equal(d.child.exitCode, null);
    });

    test('node dist/server.js with only TLS_CERT_FILE set, or a certificate it cannot read, exits 78 naming both variables, and does not listen', async () => {
      const made = makeCertificate(host.root, 'half');
      for (const extra of [{ TLS_CERT_FILE: made.cert }, { TLS_CERT_FILE: path.join(host.root, 'no-such.pem'), TLS_KEY_FILE: made.key }] as Array<Record<string, string>>) {
        const run = await runToExit(host.daemonEnv({ HOST: '127.0.0.1', PORT: String(await freePort()), API_KEY: KEY, ...extra }));
        assert.equal(run.code, 78);
        assert.match(run.stderr, /^TLS_CERT_FILE and TLS_KEY_FILE must /);
        assert.ok(!run.stdout.includes('listening on'));
      }
    });
  });

  describe('GET /api/report of a script that never ends', { concurrency: 1 }, () => {
    const defer = cleanupStack();

    test('GET /api/report answers 500 after 10 s and kills the script with everything it started', async () => {
      const host = await makeSandbox(defer);
      fs.writeFileSync(path.join(host.controlDir, 'report-mode'), 'hang\n');
      const d = await startDaemon(host, defer);
      const before = fileLines(host.reportRecord).length;
      const res = await d.get('/api/report', { timeoutMs: 30_000 });
      assertReply(res, 500, { ok: false, error: 'The report script timed out after 10 s.' });
      const scriptPid = Number(fileLines(host.reportRecord)[before]);
      const childPid = Number(fileLines(path.join(host.controlDir, 'report-children')).at(-1));
      assert.ok(scriptPid > 0 && childPid > 0);
      await waitFor(() => !isAlive(scriptPid) && !isAlive(childPid));
    });
  });

  describe('GET /api/report when the daemon stops', { concurrency: 1 }, () => {
    const { defer, host } = group({ daemon: false });
    const setMode = (mode: string) => fs.writeFileSync(path.join(host.controlDir, 'report-mode'), `${mode}\n`);
    const runs = () => fileLines(host.reportRecord);

    test('GET /api/report: a script still running when the daemon stops on SIGTERM is ended with everything it started', async () => {
      setMode('hang');
      const d = await startDaemon(host, defer);
      const before = runs().length;
      const pending = d.get('/api/report', { timeoutMs: 30_000 }).catch(() => null);
      await waitFor(() => runs().length > before && fileLines(path.join(host.controlDir, 'report-children')).length > 0);
      const scriptPid = Number(runs()[before]);
      const childPid = Number(fileLines(path.join(host.controlDir, 'report-children')).at(-1));
      assert.deepEqual(await d.stop('SIGTERM'), { code: 0, signal: null });
      await waitFor(() => !isAlive(scriptPid) && !isAlive(childPid));
      await pending;
    });

    test('GET /api/report in flight when SIGTERM arrives still finishes, then the daemon exits 0', async () => {
      setMode('slow');
      const d = await startDaemon(host, defer);
      const before = runs().length;
      const pending = d.get('/api/report');
      await waitFor(() => runs().length > before);   // the request reached the daemon and the script runs
      d.child.kill('SIGTERM');
      const res = await pending;
      assert.equal(res.status, 200);
      assert.match(res.json.report, /^Gameserver host report — /);
      assert.deepEqual(await d.exit, { code: 0, signal: null });
    });
  });

  describe('GET / and GET /api/report', { concurrency: 1 }, () => {
    const { defer, host } = group({ daemon: false });
    const setMode = (mode: string) => fs.writeFileSync(path.join(host.controlDir, 'report-mode'), `${mode}\n`);
    const runs = () => fileLines(host.reportRecord);

    test('GET / answers the report as text/plain and GET /api/report wraps the same text, exit status ignored', async () => {
      setMode('fail');   // prints a fixed line, then exits 3: it printed something, so it counts
      const d = await startDaemon(host, defer);
      const expected = `servreport: cannot read ${host.serverDir}/logs: permission denied\n`;
      const text = await d.get('/');
      assert.equal(text.status, 200);
      assertCommonHeaders(text.headers, TEXT_TYPE);
      assert.equal(text.text, expected);
      const wrapped = await d.get('/api/report');
      assertReply(wrapped, 200, { ok: true, report: expected });
    });

    test('GET /api/report keeps the newlines of a normal report', async () => {
      setMode('normal');
      const d = await startDaemon(host, defer);
      const res = await d.get('/api/report');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.json), ['ok', 'report']);
      assert.equal(res.json.ok, true);
      assert.match(res.json.report, /^Gameserver host report — .+\nHost: +.+\nUptime: +.+\nServer dir: +.+\nLast backup: +.*\n$/);
    });

    test('GET /api/report starts exactly one report script for 100 concurrent requests', async () => {
      setMode('slow');
      const d = await startDaemon(host, defer);
      const before = runs().length;
      const replies = await Promise.all(Array.from({ length: 100 }, () => d.get('/api/report')));
      assert.deepEqual(replies.map((r) => r.status), Array(100).fill(200));
      assert.equal(new Set(replies.map((r) => r.text)).size, 1);
      assert.equal(runs().length - before, 1);
    });

    test('GET / and GET /api/report asked together share one run and answer its report alike, request after request', async () => {
      setMode('slow');
      const d = await startDaemon(host, defer);
      const before = runs().length;
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => d.get(i % 2 === 0 ? '/' : '/api/report')));
      assert.deepEqual(replies.map((r) => r.status), Array(20).fill(200));
      const texts = replies.filter((_, i) => i % 2 === 0).map((r) => r.text);
      const reports = replies.filter((_, i) => i % 2 === 1).map((r) => r.json.report);
      assert.equal(new Set(texts).size, 1);
      assert.deepEqual(reports, Array(10).fill(texts[0]));
      assert.match(texts[0], /^Gameserver host report — /);
      for (const r of replies.filter((_, i) => i % 2 === 0)) assertCommonHeaders(r.headers, TEXT_TYPE);
      assert.equal(runs().length - before, 1);
    });

    test('GET /api/report reuses a finished run for the next request', async () => {
      setMode('normal');
      const d = await startDaemon(host, defer);
      const before = runs().length;
      const first = await d.get('/api/report');
      const second = await d.get('/api/report');
      assert.deepEqual([first.status, second.text], [200, first.text]);
      assert.equal(runs().length - before, 1);
    });

    test('GET / answers at most 1 MiB of what the script prints', async () => {
      setMode('large');   // 2 MiB of "a"
      const d = await startDaemon(host, defer);
      const text = await d.get('/');
      assert.equal(text.status, 200);
      assert.ok(text.text.length > 0 && text.text.length <= 1024 * 1024 && /^a+$/.test(text.text), `${text.text.length} bytes`);
    });

    test('GET /api/report answers 500 when the script prints nothing, and GET / as text/plain', async () => {
      setMode('empty');
      const d = await startDaemon(host, defer);
      const res = await d.get('/api/report');
      assertReply(res, 500, { ok: false, error: 'The report script printed nothing.' });
      const text = await d.get('/');
      assert.equal(text.status, 500);
      assertCommonHeaders(text.headers, TEXT_TYPE);
      assert.ok(text.text.includes('The report script printed nothing.'), text.text);
    });

    test('GET /api/report answers 500 when the script cannot be started', async () => {
      const d = await startDaemon(host, defer, { REPORT_SCRIPT: path.join(host.root, 'no-such-report.sh') });
      const res = await d.get('/api/report');
      assertReply(res, 500, { ok: false, error: 'The report script could not be started.' });
    });

    test('GET /api/report answers the printed text when a child of the script leaves its process group holding stdout, and answers again', async () => {
      const own = await makeSandbox(defer);
      fs.writeFileSync(path.join(own.controlDir, 'report-mode'), 'escape\n');
      const daemon = await startDaemon(own, defer);
      const res = await daemon.get('/api/report');
      assert.equal(res.status, 200);   // neither the 10 s timeout's 500 nor a reply held until the child ends
      assertCommonHeaders(res.headers);
      assert.deepEqual(Object.keys(res.json), ['ok', 'report']);
      assert.match(res.json.report, /^Gameserver host report — .+\nHost: +.+\nUptime: +.+\nServer dir: +.+\nLast backup: +.*\n$/);
      const scriptPid = Number(fileLines(own.reportRecord)[0]);
      const escaped = Number(fileLines(path.join(own.controlDir, 'report-children'))[0]);
      assert.equal(readOr(`/proc/${escaped}/comm`).toString(), 'sleep\n');
      assert.ok(isAlive(escaped), 'the escaped sleep outlives the report: a kill of the script\'s group does not reach it');
      assert.notEqual(procStat(escaped).pgrp, scriptPid);
      const again = await daemon.get('/api/report');
      assert.equal(again.status, 200);
      assert.match(again.json.report, /^Gameserver host report — /);
      await own.remove();   // the sleep carries the host's marker in its environment
      assert.equal(isAlive(escaped), false);
    });

    test('GET /api/report runs the script without API_KEY, API_KEY_FILE or EVENT_WEBHOOK_SECRET in its environment', async () => {
      setMode('normal');
      const keyFile = path.join(host.root, 'report-key');
      fs.writeFileSync(keyFile, `${KEY}\n`);
      for (const extra of [{}, { API_KEY: null, API_KEY_FILE: keyFile, EVENT_WEBHOOK_SECRET: 'webhook-secret-1234' }] as Array<Record<string, string | null>>) {
        const d = await startDaemon(host, defer, extra);
        const record = () => readOr(path.join(host.root, 'report-secrets.txt')).toString().split('\n').slice(0, -1);   // a line per run
        const before = record().length;
        assert.equal((await d.get('/api/report')).status, 200);
        assert.deepEqual(record().slice(before), ['']);   // one run, and no secret's name in it
        await d.stop();
      }
    });

  });

  // ---- GET /api (docs/api.md#get-api) ----

  describe('GET /api', { concurrency: 1 }, () => {
    const { d } = group();

    test('GET /api lists exactly the spec\'s 17 routes in spec order and the 3 beyond it, auth_required for POST, with package.json\'s version', async () => {
      const res = await d.get('/api');
      assertReply(res, 200, { ok: true, service: 'gameserver-api', version: PKG.version, endpoints: DESCRIBED_ROUTES });
      // the contract's seventeen, among them
      for (const [method, route] of SPEC_ROUTES) assert.ok(res.json.endpoints.some((e: { method: string; route: string }) => e.method === method && e.route === route), `${method} ${route}`);
    });
  });

  // ---- GET /api/status (docs/api.md#get-apistatus, docs/api.md#finding-the-game-server) ----

  describe('GET /api/status', { concurrency: 1 }, () => {
    const { defer, host, d } = group();
    const versionFile = () => serverFile(host, 'version_history.json');
    const paperVersionFile = () => serverFile(host, '.paper/version_history.json');
    const status = async () => {
      const res = await d.get('/api/status', { afterChange: true });
      assert.equal(res.status, 200);
      assertCommonHeaders(res.headers);
      const { uptime, memory, ...rest } = res.json;
      assert.match(uptime, /^\d+:[0-5]\d:[0-5]\d$/);
      assert.match(memory, /^\d{1,3}\.\d%$/);
      return rest;
    };

    test('GET /api/status reports online:false and nothing else when no game server runs', async () => {
      await host.stopGame();
      const res = await d.get('/api/status');
      assertReply(res, 200, { ok: true, online: false });
    });

    test('GET /api/status reports the game server pid, uptime, memory and version_history.json\'s currentVersion', async () => {
      fs.writeFileSync(versionFile(), '{"currentVersion":"git-Paper-49 (MC: 1.20.1)"}');
      const pid = await runningGame(host);
      assert.deepEqual(findGamePids(host.serverDir), [pid]);
      assert.deepEqual(await status(), { ok: true, online: true, pid, version: 'git-Paper-49 (MC: 1.20.1)' });
    });

    test('GET /api/status shows a change of version_history.json to the first request 100 ms after it', async () => {
      const pid = await runningGame(host);
      fs.writeFileSync(versionFile(), '{"oldVersion":"git-Paper-49 (MC: 1.20.1)","currentVersion":"git-Paper-50 (MC: 1.20.1)"}');
      assert.deepEqual(await status(), { ok: true, online: true, pid, version: 'git-Paper-50 (MC: 1.20.1)' });
      fs.writeFileSync(versionFile(), '{"currentVersion":"git-Foldenor-\\"b5dc1ae\\" (MC: 1.20.4)"}');
      assert.deepEqual(await status(), { ok: true, online: true, pid, version: 'git-Foldenor-"b5dc1ae" (MC: 1.20.4)' });
    });

    test('GET /api/status reads .paper/version_history.json when the root copy is gone', async () => {
      const pid = await runningGame(host);
      fs.rmSync(versionFile(), { force: true });
      fs.mkdirSync(path.dirname(paperVersionFile()), { recursive: true });
      fs.writeFileSync(paperVersionFile(), '{"currentVersion":"26.2.1-7-57d665e (MC: 26.2.1)"}');
      assert.deepEqual(await status(), { ok: true, online: true, pid, version: '26.2.1-7-57d665e (MC: 26.2.1)' });
    });

    test('GET /api/status leaves version out when version_history.json is missing or not valid JSON', async () => {
      const pid = await runningGame(host);
      fs.rmSync(paperVersionFile(), { force: true });
      fs.rmSync(versionFile(), { force: true });
      assert.deepEqual(await status(), { ok: true, online: true, pid });
      fs.writeFileSync(versionFile(), '{"currentVersion":');
      assert.deepEqual(await status(), { ok: true, online: true, pid });
    });

    test('GET /api/status counts uptime by the boot clock of /proc/uptime, the clock process start times count in', async () => {
      const gamePid = await runningGame(host);
      const stat = fs.readFileSync(`/proc/${gamePid}/stat`, 'utf8');
      const startedAt = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / 100;   // seconds after boot
      const bootClock = () => parseFloat(fs.readFileSync('/proc/uptime', 'utf8'));
      await afterFreshness();
      // the answer was made between these two readings, however long the machine kept it waiting
      const before = bootClock() - startedAt;
      const res = await d.get('/api/status');
      const after = bootClock() - startedAt;
      const [h, m, sec] = String(res.json.uptime).split(':').map(Number);
      const seconds = h * 3600 + m * 60 + sec;
      assert.ok(seconds >= Math.floor(before) - 1 && seconds <= after + 1, `${res.json.uptime} outside ${before.toFixed(1)}-${after.toFixed(1)} s`);
    });

    test('GET /api/status finds the game through a symlinked SERVER_DIR', async () => {
      const pid = await runningGame(host);
      const link = path.join(host.root, 'server-link');
      fs.rmSync(link, { force: true });
      fs.symlinkSync(host.serverDir, link);
      const viaLink = await startDaemon(host, defer, { SERVER_DIR: link });
      const res = await viaLink.get('/api/status');
      assert.equal(res.status, 200);
      assert.equal(res.json.online, true);
      assert.equal(res.json.pid, pid);
    });

    test('GET /api/status ignores a java process whose working directory is another folder', async () => {
      await runningGame(host);
      const other = path.join(host.root, 'other-server');
      fs.mkdirSync(other, { recursive: true });
      const elsewhere = await startDaemon(host, defer, { SERVER_DIR: other });
      assert.deepEqual((await elsewhere.get('/api/status')).json, { ok: true, online: false });
    });

    test('GET /api/status takes only a process named exactly java: javaw, jav and java-server-1.21 in SERVER_DIR are no game', async () => {
      await host.stopGame();
      const names = path.join(host.root, 'names');
      fs.mkdirSync(names, { recursive: true });
      const sleepBin = fs.realpathSync('/bin/sleep');
      const children: ChildProcess[] = [];
      // the kernel names a process after the file it was started from: a link's own name (cut at 15 characters)
      const started = (name: string) => {
        fs.symlinkSync(sleepBin, path.join(names, name));
        const child = spawn(path.join(names, name), ['60'], { cwd: host.serverDir, stdio: 'ignore' });
        children.push(child);
        return child;
      };
      try {
        const others = ['javaw', 'jav', 'java-server-1.21'].map(started);
        await waitFor(() => others.every((child) => isAlive(child.pid!)));
        assert.deepEqual(others.map((child) => fs.readFileSync(`/proc/${child.pid}/comm`, 'utf8')), ['javaw\n', 'jav\n', 'java-server-1.2\n']);
        assert.deepEqual((await d.get('/api/status', { afterChange: true })).json, { ok: true, online: false });
        const named = started('java');   // the same program under the game's name is found: the names above were the difference
        await waitFor(() => isAlive(named.pid!) && fs.readFileSync(`/proc/${named.pid}/comm`, 'utf8') === 'java\n');
        const res = await d.get('/api/status', { afterChange: true });
        assert.equal(res.json.online, true);
        assert.equal(res.json.pid, named.pid);
      } finally {
        children.forEach((child) => child.kill('SIGKILL'));
        await waitFor(() => !children.some((child) => isAlive(child.pid!)));
      }
    });

    test('GET /api/status reports online:false once the game server is gone', async () => {
      await runningGame(host);
      await host.stopGame();
      assert.deepEqual((await d.get('/api/status', { afterChange: true })).json, { ok: true, online: false });
    });
  });

  // ---- GET /api/players/online (docs/api.md#get-apiplayersonline, docs/formats.md#midnight-roll) ----

  describe('GET /api/players/online', { concurrency: 1 }, () => {
    const { defer, host, d } = group();
    const latest = () => serverFile(host, 'logs/latest.log');
    const append = (...messages: string[]) => fs.appendFileSync(latest(), messages.map((m) => `${P}${m}\n`).join(''));
    let rolled = '';   // what log4j rolled away while the same game process ran (docs/formats.md#midnight-roll)
    /** The daemon's answer equals a full parse of the game session's log (rolled text, then latest.log), whatever it kept. */
    const assertFullParse = async (daemon = d) => {
      const expected = [...scanPresence(rolled + readOr(latest()).toString('utf8'))].sort();
      const res = await daemon.get('/api/players/online');
      assert.equal(res.status, 200);
      assertCommonHeaders(res.headers);
      assert.deepEqual({ ...res.json, players: [...res.json.players].sort() }, { ok: true, online: true, count: expected.length, players: expected });
      return expected;
    };
    /** A new game session: the game restarted, its own latest.log, nothing rolled yet. */
    const newSession = async () => {
      await host.stopGame();
      rolled = '';
      await host.startGame();
    };
    let archives = 0;
    const archivePath = (suffix: string) => serverFile(host, `logs/2099-01-01-${++archives}.log${suffix}`);

    test('GET /api/players/online answers online:false and no players while the game is not running, whatever the log says', async () => {
      await host.stopGame();
      fs.mkdirSync(path.dirname(latest()), { recursive: true });
      append('Alex joined the game');
      const res = await d.get('/api/players/online');
      assertReply(res, 200, { ok: true, online: false, players: [] });
    });

    test('GET /api/players/online answers 503 with Retry-After, never an old list, while the log is read past 2 s; GET /metrics answers what was read and how many bytes are left', async () => {
      await newSession();
      append('Alex joined the game', 'Bob joined the game');
      assert.deepEqual((await d.get('/api/players/online', { afterChange: true })).json.players, ['Alex', 'Bob']);
      append('Bob left the game');
      // then 64 GiB of zeros, a hole that takes no disk: no machine reads that within 2 s
      const before = fs.statSync(latest()).size;
      fs.truncateSync(latest(), before + 64 * 2 ** 30);
      const res = await d.get('/api/players/online');
      assertReply(res, 503, { ok: false, error: 'latest.log is still being read; players online are not known yet. Try again shortly.' });
      assert.equal(res.headers['retry-after'], '2');
      const metrics = await d.get('/metrics');
      assert.equal(metrics.status, 200);
      const { samples } = parseExposition(metrics.text);
      assert.ok(samples.get('gameserver_api_log_unread_bytes')! > 32 * 2 ** 30, String(samples.get('gameserver_api_log_unread_bytes')));
      assert.equal(samples.get('minecraft_players_online'), 1);   // Alex: Bob's leaving was read before the hole
      fs.truncateSync(latest(), before);   // the hole goes: the daemon reads the log again from its start
      assert.deepEqual(await assertFullParse(), ['Alex']);
      assert.equal(parseExposition((await d.get('/metrics', { afterChange: true })).text).samples.get('gameserver_api_log_unread_bytes'), 0);
    });

    test('GET /api/players/online answers what a full parse does after a backlog of 256 MiB and more, which it reads on two threads', async () => {
      await newSession();
      append('Alex joined the game', 'Bob joined the game');
      assert.deepEqual(await assertFullParse(), ['Alex', 'Bob']);
      const before = fs.statSync(latest()).size;
      // 270 MiB of chat with joins and leaves all through it, and a session start in its second half; the daemon is
      // stopped meanwhile, so that it meets the backlog whole
      const chat = `${P}<Alex> ${'x'.repeat(60)}\n`.repeat(28_000);
      d.child.kill('SIGSTOP');
      try {
        for (let i = 0; i < 100; i++) {
          fs.appendFileSync(latest(), `${chat}${P}Player_${i % 7} joined the game\n${P}Player_${(i + 3) % 7} left the game\n`
            + (i === 70 ? `${P}Starting minecraft server version 1.21.4\n${P}Bob joined the game\n` : '') + (i === 20 ? `${P}Alex left the game\n` : ''));
        }
      } finally {
        d.child.kill('SIGCONT');
      }
      try {
        assert.ok(fs.statSync(latest()).size - before > 256 * 2 ** 20);
        // a slow machine may take longer than the 2 s bound: the 503 says so, and the answer comes. After the start in
        // piece 70: Bob, and of Player_0 to Player_6 those whose last line (pieces 71 to 99) is a join, in the order
        // of their last joins, as a reading line by line lists them
        const res = await waitFor(async () => {
          const answer = await d.get('/api/players/online');
          return answer.status === 200 && answer;
        });
        assert.deepEqual(res.json, { ok: true, online: true, count: 5, players: ['Bob', 'Player_5', 'Player_6', 'Player_0', 'Player_1'] });
      } finally {
        fs.truncateSync(latest(), before);   // the next game's start would archive it
      }
    });

    test('GET /api/players/online takes no line over 4 KiB for an event: a "lost connection" with a 5,000-character reason leaves the player online', async () => {
      await newSession();
      append('Alex joined the game', `Alex lost connection: ${'x'.repeat(5_000)}`);
      const res = await d.get('/api/players/online', { afterChange: true });
      assert.deepEqual(res.json, { ok: true, online: true, count: 1, players: ['Alex'] });
    });

    test('GET /api/players/online equals a full parse after appends, including a half-written line', async () => {
      await newSession();
      append('Alex[/198.51.100.7:53120] logged in with entity id 1 at (0.5, 64.0, 0.5)', 'Alex joined the game', 'Bob joined the game');
      assert.deepEqual(await assertFullParse(), ['Alex', 'Bob']);
      append('<Mallory> Carl joined the game', 'Bob lost connection: Disconnected', 'Bob left the game', `x${'y'.repeat(70_000)}`);
      fs.appendFileSync(latest(), `${P}Partial_Pl`);
      assert.deepEqual(await assertFullParse(), ['Alex']);
      fs.appendFileSync(latest(), 'ayer joined the game\n');
      assert.deepEqual(await assertFullParse(), ['Alex', 'Partial_Player']);
    });

    test('GET /api/players/online equals a full parse of the session after the log rolls to a new inode while the game runs', async () => {
      await newSession();
      append('Alex joined the game', 'Bob joined the game');
      assert.deepEqual(await assertFullParse(), ['Alex', 'Bob']);
      const old = fs.readFileSync(latest());
      fs.writeFileSync(archivePath('.gz'), gzipSync(old));
      fs.rmSync(latest());
      rolled += old.toString('utf8');
      const filler = Array.from({ length: 3000 }, (_, i) => `${P}Filler line ${i} to make the new file larger than the old one\n`).join('');
      fs.writeFileSync(`${latest()}.new`, `${P}Dave joined the game\n${P}Alex left the game\n${filler}`);
      fs.renameSync(`${latest()}.new`, latest());
      assert.deepEqual(await assertFullParse(), ['Bob', 'Dave']);
      append('Erin joined the game');
      assert.deepEqual(await assertFullParse(), ['Bob', 'Dave', 'Erin']);
    });

    test('GET /api/players/online of a daemon started after the roll reads the session start back from the archive', async () => {
      await newSession();
      append('Alex joined the game', 'Bob joined the game');
      const old = fs.readFileSync(latest());
      fs.writeFileSync(archivePath('.gz'), gzipSync(old));
      rolled += old.toString('utf8');
      fs.writeFileSync(latest(), `${P}Dave joined the game\n${P}Alex left the game\n`);
      const fresh = await startDaemon(host, defer);
      assert.deepEqual(await assertFullParse(fresh), ['Bob', 'Dave']);
    });

    test('GET /api/players/online counts the lines appended to latest.log after the last request when the log rolls before the next one', async () => {
      await newSession();
      append('Dave joined the game', 'Erin joined the game');
      assert.deepEqual(await assertFullParse(), ['Dave', 'Erin']);   // read to its end
      append('Dave left the game', 'Hank joined the game');
      rolled += readOr(latest()).toString('utf8');
      fs.renameSync(latest(), archivePath(''));   // log4j renames, then compresses
      fs.writeFileSync(latest(), `${P}Ivy joined the game\n`);
      assert.deepEqual(await assertFullParse(), ['Erin', 'Hank', 'Ivy']);
      append('Hank left the game', 'Ivy left the game', 'Dave joined the game');
      assert.deepEqual(await assertFullParse(), ['Dave', 'Erin']);
    });

    test('GET /api/players/online equals a full parse of the session after the log is truncated in place', async () => {
      await newSession();
      append('Dave joined the game', 'Erin joined the game');
      assert.deepEqual(await assertFullParse(), ['Dave', 'Erin']);   // read to its end
      rolled += readOr(latest()).toString('utf8');
      fs.truncateSync(latest(), 0);
      append('Frank joined the game', 'Erin left the game');
      assert.deepEqual(await assertFullParse(), ['Dave', 'Frank']);
    });

    test('GET /api/players/online equals a full parse of the session after a copy-and-truncate written again past the old size', async () => {
      await newSession();
      append('Dave joined the game', 'Frank joined the game');
      assert.deepEqual(await assertFullParse(), ['Dave', 'Frank']);   // read to its end
      const oldSize = fs.statSync(latest()).size;
      rolled += readOr(latest()).toString('utf8');
      fs.truncateSync(latest(), 0);
      append('Frank left the game', 'Jill joined the game', ...Array.from({ length: 20 }, (_, i) => `Filler line ${i} after the truncation`));
      assert.ok(fs.statSync(latest()).size > oldSize);
      assert.deepEqual(await assertFullParse(), ['Dave', 'Jill']);
    });

    /** A stream open on the group's daemon for one test, that has taken the starting state; what it told of players. */
    const streamOfPlayers = async (t: { after(cleanup: () => void): void }) => {
      const s = openEventStream(d.port);
      t.after(() => s.close());
      await waitFor(() => s.retryMs() !== undefined);
      const told = () => s.parsed().filter((e) => e.type === 'player.joined' || e.type === 'player.chat')
        .map((e) => (e.type === 'player.chat' ? `${e.player}: ${e.text}` : `${e.player} joined`));
      return { told, until: (last: string) => waitFor(() => told().includes(last)), events: () => s.parsed() };
    };

    test('GET /api/events tells each line once and in order while the log rolls under an open stream: the old file\'s last lines, then the new file\'s', async (t) => {
      await newSession();
      const stream = await streamOfPlayers(t);
      append('Alex joined the game', '<Alex> before the roll');
      await stream.until('Alex: before the roll');
      append('<Alex> the old file\'s last line');
      rolled += readOr(latest()).toString('utf8');
      fs.renameSync(latest(), archivePath(''));   // log4j renames, then compresses
      fs.writeFileSync(latest(), `${P}<Alex> the new file's first line\n${P}Bob joined the game\n`);
      append('<Bob> appended to the new file');
      await stream.until('Bob: appended to the new file');
      assert.deepEqual(stream.told(), [
        'Alex joined', 'Alex: before the roll', 'Alex: the old file\'s last line', 'Alex: the new file\'s first line',
        'Bob joined', 'Bob: appended to the new file',
      ]);
      assert.deepEqual(await assertFullParse(), ['Alex', 'Bob']);
    });

    test('GET /api/events tells the lines of a copy-and-truncate written again past the old size under an open stream, once each, and nothing of the old file again', async (t) => {
      await newSession();
      const stream = await streamOfPlayers(t);
      append('Alex joined the game', '<Alex> before the truncation');
      await stream.until('Alex: before the truncation');
      const oldSize = fs.statSync(latest()).size;
      rolled += readOr(latest()).toString('utf8');
      fs.truncateSync(latest(), 0);
      append('<Alex> after the truncation', ...Array.from({ length: Math.ceil(oldSize / 40) }, (_, i) => `Filler line ${i}`), 'Jill joined the game');
      assert.ok(fs.statSync(latest()).size > oldSize);
      await stream.until('Jill joined');
      assert.deepEqual(stream.told(), ['Alex joined', 'Alex: before the truncation', 'Alex: after the truncation', 'Jill joined']);
      assert.deepEqual(await assertFullParse(), ['Alex', 'Jill']);
    });

    test('GET /api/events tells every line of an append larger than the few read at once, once each and in order', async (t) => {
      await newSession();
      const stream = await streamOfPlayers(t);
      append('Alex joined the game');
      await stream.until('Alex joined');
      const burst = Array.from({ length: 1_500 }, (_, i) => `<Alex> line ${i} of a burst of chat larger than 64 KiB`);
      append(...burst);   // one write: 104 KiB
      await stream.until(`Alex: line 1499 of a burst of chat larger than 64 KiB`);
      assert.deepEqual(stream.told(), ['Alex joined', ...burst.map((line) => line.replace(/^<Alex> /, 'Alex: '))]);
    });

    test('GET /api/players/online after a restart under an open event stream counts the new run\'s players: the log the new run rolled in is never read as the ended run\'s', async (t) => {
      await newSession();
      const stream = await streamOfPlayers(t);
      append('Alex joined the game');
      await stream.until('Alex joined');
      // the daemon stopped meanwhile: its watcher meets the ended run and the new one, whose start rolled the log, at once
      d.child.kill('SIGSTOP');
      try {
        await newSession();
        append('Fay joined the game');
      } finally {
        d.child.kill('SIGCONT');
      }
      await stream.until('Fay joined');
      assert.deepEqual(await assertFullParse(), ['Fay']);
      // the ended run's players leave with it, and Fay joins the new run, once (not under the ended run's name); a
      // watch that outlived an earlier test's stream may tell the restart of newSession() above first
      const told = stream.events().map((e) => ('player' in e ? `${e.type} ${e.player}` : e.type))
        .filter((e) => /^(player\.|server\.st)/.test(e));
      assert.deepEqual(told.slice(told.indexOf('player.joined Alex')), [
        'player.joined Alex', 'server.stopping', 'player.left Alex', 'server.stopped', 'server.started', 'player.joined Fay',
      ]);
    });

    test('GET /api/players/online equals a full parse of the new latest.log once the game server restarts', async () => {
      await newSession();
      append('Fay joined the game');
      assert.deepEqual(await assertFullParse(), ['Fay']);
      await newSession();
      assert.deepEqual(await assertFullParse(), []);
      append('Gina joined the game');
      assert.deepEqual(await assertFullParse(), ['Gina']);
    });

    test('GET /api/players/online answers count 0 when the log is missing while the game runs', async () => {
      await runningGame(host);
      fs.rmSync(latest(), { force: true });
      const res = await d.get('/api/players/online');
      assertReply(res, 200, { ok: true, online: true, count: 0, players: [] });
    });

    test('GET /api/players/online counts nobody from a latest.log last written before the game started, until the game writes to it', async () => {
      await newSession();
      // an earlier run's log, not yet rolled: a player who never left, then the shutdown
      fs.writeFileSync(latest(), `${P}Starting minecraft server version 1.21.4\n${P}Kim joined the game\n${P}Stopping server\n`);
      fs.utimesSync(latest(), new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
      const res = await d.get('/api/players/online');
      assertReply(res, 200, { ok: true, online: true, count: 0, players: [] });
      append('Starting minecraft server version 1.21.4', 'Lou joined the game');   // a log config that appends
      assert.deepEqual(await assertFullParse(), ['Lou']);
    });
  });

  const SAMPLE_SEED = 20_261_122;

  describe('GET /api/players/online while latest.log grows in pieces', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });   // latest.log holds the game's own lines, its Starting line included
    const latest = () => serverFile(host, 'logs/latest.log');
    const online = async () => {
      const res = await d.get('/api/players/online');
      assert.equal(res.status, 200);
      return sorted(res.json.players);
    };

    test('GET /api/players/online counts a last line without its newline when it is all the text appended, and keeps it once the newline arrives', async () => {
      fs.appendFileSync(latest(), `${P}Starting minecraft server version 1.21.4\n${P}Alex joined the game\n`);
      assert.deepEqual(await online(), ['Alex']);
      fs.appendFileSync(latest(), `${P}Bob joined the game`);   // log4j writes a line at once: one that matches in full counts
      assert.deepEqual(await online(), ['Alex', 'Bob']);
      fs.appendFileSync(latest(), '\n');
      assert.deepEqual(await online(), ['Alex', 'Bob']);
    });

    SAMPLE_FILES.forEach((file, i) => {
      const seed = SAMPLE_SEED + i;
      test(`GET /api/players/online equals a full parse after each random piece of ${file} appended to latest.log, and ends at expected.json (seed ${seed})`, async () => {
        // a restart under a log config that appends (docs/formats.md#midnight-roll): nobody online, whatever the previous sample left
        // (the empty line first ends any line a failed test before this one left unterminated)
        fs.appendFileSync(latest(), `\n${P}Starting minecraft server version 1.21.4\n`);
        const random = seededRandom(seed);
        const sample = fs.readFileSync(path.join(SAMPLE_LOGS, file));
        let players: string[] = [];
        for (let at = 0; at < sample.length;) {
          const size = 1 + Math.floor(random() * 300);   // pieces split lines, CRLF pairs and UTF-8 sequences
          fs.appendFileSync(latest(), sample.subarray(at, at + size));
          at += size;
          // a final unterminated line counts when it matches in full (log4j writes a line at once), as in scanPresence
          const expected = sorted(scanPresence(fs.readFileSync(latest()).toString('utf8')));
          const res = await d.get('/api/players/online');
          assert.equal(res.status, 200);
          players = sorted(res.json.players);
          assert.deepEqual({ ...res.json, players }, { ok: true, online: true, count: expected.length, players: expected }, `after ${Math.min(at, sample.length)} bytes`);
        }
        assert.deepEqual(players, sorted(SAMPLE_PLAYERS[file] ?? []));
      });
    });

    test('GET /api/players/online counts a join that follows two consecutive lines longer than 1 MiB', async () => {
      fs.appendFileSync(latest(), `\n${P}Starting minecraft server version 1.21.4\n${P}Bob joined the game\n${P}Bob left the game\n`);
      assert.deepEqual(await online(), []);   // read to its end
      const longLine = (fill: string) => `${P}<Alex> ${fill.repeat(1.5 * 1024 * 1024)}\n`;
      fs.appendFileSync(latest(), `${longLine('a')}${longLine('b')}${P}Bob joined the game\n`);
      assert.deepEqual(await online(), ['Bob']);
    });
  });

  // ---- GET /api/players/whitelist (docs/api.md#get-apiplayerswhitelist) ----

  describe('GET /api/players/whitelist', { concurrency: 1 }, () => {
    const { host, d } = group();
    const whitelist = () => serverFile(host, 'whitelist.json');

    test('GET /api/players/whitelist answers the entries exactly as stored', async () => {
      const entries = [
        { uuid: offlineUuid('Alex'), name: 'Alex' },
        { uuid: '069a79f444e94726a5befca90e38aaf5', name: 'Hand_Edited' },
        { uuid: offlineUuid('Kai_2'), name: 'Kai_2', note: 'extra field' },
      ];
      fs.writeFileSync(whitelist(), JSON.stringify(entries, null, 4) + '\n');
      const res = await d.get('/api/players/whitelist', { afterChange: true });
      assertReply(res, 200, { ok: true, count: 3, whitelist: entries });
    });

    test('GET /api/players/whitelist shows a change of whitelist.json to the first request 100 ms after it', async () => {
      fs.writeFileSync(whitelist(), gson([{ uuid: offlineUuid('Abcd'), name: 'Abcd' }]));
      assert.deepEqual((await d.get('/api/players/whitelist', { afterChange: true })).json, { ok: true, count: 1, whitelist: [{ uuid: offlineUuid('Abcd'), name: 'Abcd' }] });
      fs.writeFileSync(whitelist(), gson([{ uuid: offlineUuid('Wxyz'), name: 'Wxyz' }]));   // same size
      assert.deepEqual((await d.get('/api/players/whitelist', { afterChange: true })).json, { ok: true, count: 1, whitelist: [{ uuid: offlineUuid('Wxyz'), name: 'Wxyz' }] });
      fs.writeFileSync(whitelist(), '[]');
      assert.deepEqual((await d.get('/api/players/whitelist', { afterChange: true })).json, { ok: true, count: 0, whitelist: [] });
    });

    for (const [label, prepare, status, error] of [
      ['is missing', () => fs.rmSync(whitelist(), { force: true }), 404, 'whitelist.json not found'],
      ['is not valid JSON', () => fs.writeFileSync(whitelist(), '[{"uuid":'), 500, 'whitelist.json is not valid JSON.'],
      ['is not an array', () => fs.writeFileSync(whitelist(), '{"uuid":"x","name":"y"}'), 500, 'whitelist.json is not a JSON array of entries.'],
      ['is a folder, not a regular file', () => { fs.rmSync(whitelist(), { force: true }); fs.mkdirSync(whitelist()); }, 500, 'whitelist.json is not a regular file.'],
    ] as const) {
      test(`GET /api/players/whitelist answers ${status} when whitelist.json ${label}`, async () => {
        fs.rmSync(whitelist(), { recursive: true, force: true });
        prepare();
        const res = await d.get('/api/players/whitelist', { afterChange: true });
        assertReply(res, status, { ok: false, error });
      });
    }
  });

  // ---- GET /api/logs/latest and /api/logs/snapshot (docs/api.md#get-apilogslatest-and-get-apilogssnapshot) ----

  describe('GET /api/logs/latest and GET /api/logs/snapshot', { concurrency: 1 }, () => {
    const { host, d } = group();
    const latest = () => serverFile(host, 'logs/latest.log');
    const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
    const tail = async (route: string, query = '', options: Options = {}) => {
      const res = await d.get(`${route}${query}`, { afterChange: true, ...options });
      assertCommonHeaders(res.headers);
      return res;
    };

    for (const [route, file, fileOf] of [
      ['/api/logs/latest', 'latest.log', () => latest()],
      ['/api/logs/snapshot', '/var/log/gameserver_snapshot.log', () => host.snapshotLog],
    ] as const) {
      test(`GET ${route} answers the last 200 lines by default, oldest first, with file ${file}`, async () => {
        fs.mkdirSync(path.dirname(fileOf()), { recursive: true });
        fs.writeFileSync(fileOf(), numbered(300).join('\n') + '\n');
        const res = await tail(route);
        assertReply(res, 200, { ok: true, file, lines: numbered(300).slice(100) });
      });

      test(`GET ${route}?lines=5 answers the last 5 lines and lines=5000 the last 2000`, async () => {
        fs.writeFileSync(fileOf(), numbered(2500).join('\n') + '\n');
        assert.deepEqual((await tail(route, '?lines=5')).json, { ok: true, file, lines: numbered(2500).slice(-5) });
        const clamped = await tail(route, '?lines=5000');
        assertReply(clamped, 200, { ok: true, file, lines: numbered(2500).slice(-2000) });
      });

      for (const query of ['?lines=0', '?lines=-1', '?lines=1.5', '?lines=abc', '?lines=', '?lines', '?lines=5&lines=6']) {
        test(`GET ${route}${query} answers 400`, async () => {
          const res = await tail(route, query);
          assertReply(res, 400, { ok: false, error: MSG.lines });
        });
      }

      test(`GET ${route} masks IPv4 and IPv6 addresses unless the valid key is sent`, async () => {
        const stored = [`${P}Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)`, `${P}Bob[/[2001:db8:0:0:0:0:0:7]:50122] logged in with entity id 213 at (1.5, 64.0, 2.5)`];
        fs.writeFileSync(fileOf(), stored.join('\n') + '\n');
        const masked = [`${P}Alex[/<ip>:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)`, `${P}Bob[/[<ip>]:50122] logged in with entity id 213 at (1.5, 64.0, 2.5)`];
        assert.deepEqual((await tail(route)).json, { ok: true, file, lines: masked });
        assert.deepEqual((await tail(route, '', { key: 'wrong' })).json, { ok: true, file, lines: masked });
        assert.deepEqual((await tail(route, '', { key: KEY })).json, { ok: true, file, lines: stored });
      });
    }

    test('GET /api/logs/latest never hands the valid key\'s unmasked lines to a request without it, asked at the same moment in either order', async () => {
      const stored = `${P}Alex[/198.51.100.7:53120] logged in with entity id 212 at (12.5, 71.0, -40.5)`;
      fs.writeFileSync(latest(), `${stored}\n`);
      await afterFreshness();
      for (const order of [[undefined, KEY], [KEY, undefined], [undefined, KEY], [KEY, undefined]]) {
        const answers = await Promise.all(order.map((key) => d.get('/api/logs/latest?lines=5', key === undefined ? {} : { key })));
        order.forEach((key, i) => assert.deepEqual(answers[i].json.lines, [key === undefined ? stored.replace('198.51.100.7', '<ip>') : stored]));
      }
    });

    test('GET /api/logs/latest reads at most 1 MiB from the end, whole lines only: a 2 MiB line before the last one is left out with all before it', async () => {
      fs.writeFileSync(latest(), `first\n${'y'.repeat(2 * 1024 * 1024)}\nlast\n`);
      const res = await tail('/api/logs/latest', '?lines=3');
      assertReply(res, 200, { ok: true, file: 'latest.log', lines: ['last'] });
    });

    test('GET /api/logs/latest masks addresses in every layout the servers write, unless the valid key is sent', async () => {
      const stored = [
        `${P}Bob[/2001:db8:0:0:0:0:0:7:50122] logged in with entity id 9 at (0.5, 64.0, 0.5)`,
        `${P}§e10.1.2.3 and \x1b[33m2001:db8::7\x1b[0m in colour`,
        `${P}Disconnecting Eve ([::ffff:10.1.2.3]:5000): Banned`,
        `${P}from /::ffff:10.1.2.3:5000 and [10.9.8.7]`,
      ];
      fs.writeFileSync(latest(), stored.join('\n') + '\n');
      assert.deepEqual((await tail('/api/logs/latest')).json.lines, [
        `${P}Bob[/<ip>:50122] logged in with entity id 9 at (0.5, 64.0, 0.5)`,
        `${P}§e<ip> and \x1b[33m<ip>\x1b[0m in colour`,
        `${P}Disconnecting Eve ([<ip>]:5000): Banned`,
        `${P}from /<ip>:5000 and [<ip>]`,
      ]);
      assert.deepEqual((await tail('/api/logs/latest', '', { key: KEY })).json.lines, stored);
    });

    const long = `${P}${'é✓<>x'.repeat(30_000)}`;   // 270 000 bytes
    for (const [rule, content, expected] of [
      ['lines longer than a 64 KiB block', `first\n${long}\nlast\n`, ['first', long, 'last']],
      ['a last line without a newline', 'a\nb\nc', ['a', 'b', 'c']],
      ['CRLF line ends', 'a\r\nb\r\nc\r\n', ['a', 'b', 'c']],
      ['invalid UTF-8, decoded leniently', Buffer.from([0x61, 0x0a, 0x62, 0xff, 0xc3, 0x28, 0x0a]), ['a', Buffer.from([0x62, 0xff, 0xc3, 0x28]).toString('utf8')]],
    ] as const) {
      test(`GET /api/logs/latest reads ${rule}`, async () => {
        fs.writeFileSync(latest(), content);
        const res = await tail('/api/logs/latest');
        assertReply(res, 200, { ok: true, file: 'latest.log', lines: expected });
      });
    }

    test('GET /api/logs/latest follows a file that grows or is replaced between requests', async () => {
      fs.writeFileSync(latest(), 'one\ntwo\n');
      assert.deepEqual((await tail('/api/logs/latest', '?lines=2')).json.lines, ['one', 'two']);
      fs.appendFileSync(latest(), 'three\n');
      assert.deepEqual((await tail('/api/logs/latest', '?lines=2')).json.lines, ['two', 'three']);
      fs.writeFileSync(`${latest()}.new`, 'fresh\n');
      fs.renameSync(`${latest()}.new`, latest());
      assert.deepEqual((await tail('/api/logs/latest', '?lines=2')).json.lines, ['fresh']);
      fs.writeFileSync(latest(), 'ab\n');   // same inode, shorter
      assert.deepEqual((await tail('/api/logs/latest', '?lines=2')).json.lines, ['ab']);
    });

    for (const [route, fileOf, error] of [
      ['/api/logs/latest', () => latest(), 'latest.log not found'],
      ['/api/logs/snapshot', () => host.snapshotLog, 'gameserver_snapshot.log not found'],
    ] as const) {
      test(`GET ${route} answers 404 when the file is missing and 500 when it is not a regular file`, async () => {
        fs.rmSync(fileOf(), { recursive: true, force: true });
        const missing = await tail(route);
        assertReply(missing, 404, { ok: false, error });
        fs.mkdirSync(fileOf());
        const unreadable = await tail(route);
        assertReply(unreadable, 500, { ok: false, error: `${path.basename(fileOf())} is not a regular file.` });
        fs.rmSync(fileOf(), { recursive: true, force: true });
      });
    }
  });

  // ---- GET /api/backups (docs/api.md#get-apibackups) ----

  describe('GET /api/backups', { concurrency: 1 }, () => {
    const { host, d } = group();
    const put = (name: string, bytes: number, iso: string) => {
      fs.writeFileSync(path.join(host.backupDir, name), Buffer.alloc(bytes, 1));
      fs.utimesSync(path.join(host.backupDir, name), new Date(iso), new Date(iso));
    };

    /** The backup folder holding these archives and nothing else. */
    const putOnly = (...archives: Array<[string, number, string]>) => {
      for (const name of fs.readdirSync(host.backupDir)) fs.rmSync(path.join(host.backupDir, name), { recursive: true });
      for (const archive of archives) put(...archive);
    };

    test('GET /api/backups lists .tar.gz files only, newest first, with type, size, bytes and created', async () => {
      putOnly();
      put('gameserver_backup_2025-02-01.tar.gz', 1536, '2025-02-01T03:00:00Z');
      put('snapshot_2025-03-01_12-00-00.tar.gz', 512, '2025-03-01T12:00:00Z');
      put('restore_undo_2025-01-15.tar.gz', 5 * 1024 ** 2 + 512 * 1024, '2025-01-15T08:30:00Z');
      put('world-old.tar.gz', 0, '2024-12-24T18:00:00Z');
      put('notes.txt', 10, '2025-04-01T00:00:00Z');
      put('snapshot_2025-04-01.tar.gz.part', 10, '2025-04-01T00:00:00Z');
      put('snapshot_2025-04-02.zip', 10, '2025-04-02T00:00:00Z');
      const res = await d.get('/api/backups', { afterChange: true });
      assertReply(res, 200, {
        ok: true, count: 4, backups: [
          { name: 'snapshot_2025-03-01_12-00-00.tar.gz', type: 'snapshot', size: '512.00 B', bytes: 512, created: '2025-03-01T12:00:00.000Z' },
          { name: 'gameserver_backup_2025-02-01.tar.gz', type: 'full_backup', size: '1.50 KB', bytes: 1536, created: '2025-02-01T03:00:00.000Z' },
          { name: 'restore_undo_2025-01-15.tar.gz', type: 'restore_undo', size: '5.50 MB', bytes: 5 * 1024 ** 2 + 512 * 1024, created: '2025-01-15T08:30:00.000Z' },
          { name: 'world-old.tar.gz', type: 'archive', size: '0.00 B', bytes: 0, created: '2024-12-24T18:00:00.000Z' },
        ],
      });
    });

    test('GET /api/backups shows a new or removed archive to the first request 100 ms after it', async () => {
      putOnly(['gameserver_backup_2025-02-01.tar.gz', 1536, '2025-02-01T03:00:00Z'], ['snapshot_2025-03-01_12-00-00.tar.gz', 512, '2025-03-01T12:00:00Z'],
        ['restore_undo_2025-01-15.tar.gz', 1024, '2025-01-15T08:30:00Z'], ['world-old.tar.gz', 0, '2024-12-24T18:00:00Z']);
      assert.equal((await d.get('/api/backups', { afterChange: true })).json.count, 4);
      put('snapshot_2025-05-01.tar.gz', 2048, '2025-05-01T00:00:00Z');
      const added = await d.get('/api/backups', { afterChange: true });
      assert.equal(added.json.count, 5);
      assert.deepEqual(added.json.backups[0], { name: 'snapshot_2025-05-01.tar.gz', type: 'snapshot', size: '2.00 KB', bytes: 2048, created: '2025-05-01T00:00:00.000Z' });
      fs.rmSync(path.join(host.backupDir, 'snapshot_2025-05-01.tar.gz'));
      fs.rmSync(path.join(host.backupDir, 'world-old.tar.gz'));
      const removed = await d.get('/api/backups', { afterChange: true });
      assert.deepEqual(removed.json.backups.map((b: { name: string }) => b.name),
        ['snapshot_2025-03-01_12-00-00.tar.gz', 'gameserver_backup_2025-02-01.tar.gz', 'restore_undo_2025-01-15.tar.gz']);
      assert.equal(removed.json.count, 3);
    });

    test('GET /api/backups shows an old archive overwritten in place with its new size and time within a few seconds', async () => {
      const name = 'gameserver_backup_2025-02-01.tar.gz';
      putOnly([name, 1536, '2025-02-01T03:00:00Z']);
      const file = path.join(host.backupDir, name);
      const listed = await d.get('/api/backups', { afterChange: true });
      assert.equal(listed.json.backups.find((b: { name: string }) => b.name === name)?.bytes, 1536);
      const folder = () => { const st = fs.statSync(host.backupDir); return [st.ino, st.size, st.mtimeMs, st.ctimeMs]; };
      const folderBefore = folder();
      // same name, so the folder's entries and its stat stay as they were; the time of its source, as cp -p keeps it
      fs.writeFileSync(file, Buffer.alloc(4096, 2));
      fs.utimesSync(file, new Date('2025-07-01T00:00:00Z'), new Date('2025-07-01T00:00:00Z'));
      assert.deepEqual(folder(), folderBefore);
      const entry = await waitFor(async () => (await d.get('/api/backups', { afterChange: true })).json.backups.find((b: { name: string; bytes: number }) => b.name === name && b.bytes === 4096));
      assert.deepEqual(entry, { name, type: 'full_backup', size: '4.00 KB', bytes: 4096, created: '2025-07-01T00:00:00.000Z' });
    });

    test('GET /api/backups answers an empty list for an empty folder and 404 naming the folder when it is missing', async () => {
      for (const name of fs.readdirSync(host.backupDir)) fs.rmSync(path.join(host.backupDir, name), { recursive: true });
      assert.deepEqual((await d.get('/api/backups', { afterChange: true })).json, { ok: true, count: 0, backups: [] });
      fs.rmSync(host.backupDir, { recursive: true });
      const res = await d.get('/api/backups', { afterChange: true });
      assertReply(res, 404, { ok: false, error: `${path.basename(host.backupDir)} not found` });
      fs.mkdirSync(host.backupDir);
    });

    test('GET /api/backups leaves out a x.tar.gz that vanishes between listing and stat (a dangling symlink)', async () => {
      for (const name of fs.readdirSync(host.backupDir)) fs.rmSync(path.join(host.backupDir, name), { recursive: true });
      put('snapshot_2025-06-01.tar.gz', 100, '2025-06-01T00:00:00Z');
      fs.symlinkSync(path.join(host.root, 'no-such-archive'), path.join(host.backupDir, 'x.tar.gz'));
      const res = await d.get('/api/backups', { afterChange: true });
      assertReply(res, 200, {
        ok: true, count: 1, backups: [{ name: 'snapshot_2025-06-01.tar.gz', type: 'snapshot', size: '100.00 B', bytes: 100, created: '2025-06-01T00:00:00.000Z' }],
      });
    });

    test('GET /api/backups answers 500 naming the folder when BACKUP_DIR is a file, and the daemon keeps serving', async () => {
      fs.rmSync(host.backupDir, { recursive: true });
      fs.writeFileSync(host.backupDir, 'not a folder\n');
      const res = await d.get('/api/backups', { afterChange: true });
      assertReply(res, 500, { ok: false, error: `${path.basename(host.backupDir)} could not be read.` });
      assert.equal((await d.get('/api/status')).status, 200);
      fs.rmSync(host.backupDir);
      fs.mkdirSync(host.backupDir);
    });
  });

  // ---- GET /api/properties (docs/api.md#get-apiproperties) ----

  describe('GET /api/properties', { concurrency: 1 }, () => {
    const { host, d } = group();
    const properties = () => serverFile(host, 'server.properties');
    const stored = '#Minecraft server properties\n#Sat Mar 08 14:22:51 UTC 2025\nlevel-type=minecraft\\:normal\nmotd=\\u00A76Welcome\\!\n' +
      'rcon.password=hunter2\nmanagement-server-secret=m-secret\ndb-password=pw\nsome.secret=s\npasswordless=true\nonline-mode=false\n';
    const values = {
      'level-type': 'minecraft:normal', motd: '§6Welcome!', 'rcon.password': 'hunter2', 'management-server-secret': 'm-secret',
      'db-password': 'pw', 'some.secret': 's', passwordless: 'true', 'online-mode': 'false',
    };
    const redacted = { ...values, 'rcon.password': '<redacted>', 'management-server-secret': '<redacted>', 'db-password': '<redacted>', 'some.secret': '<redacted>' };

    test('GET /api/properties answers the parsed map with secrets redacted, also for a wrong key', async () => {
      fs.writeFileSync(properties(), stored);
      for (const key of [undefined, 'wrong']) {
        const res = await d.get('/api/properties', key === undefined ? { afterChange: true } : { key, afterChange: true });
        assertReply(res, 200, { ok: true, properties: redacted });
      }
    });

    test('GET /api/properties redacts text-filtering-config and level-seed, empty ones too, and keeps __proto__ and constructor as keys', async () => {
      fs.writeFileSync(properties(), 'text-filtering-config={"apiKey"\\:"k-123"}\nlevel-seed=\n__proto__=x\nconstructor=y\nmotd=hi\n');
      const res = await d.get('/api/properties', { afterChange: true });
      assert.equal(res.text, '{"ok":true,"properties":{"text-filtering-config":"<redacted>","level-seed":"<redacted>","__proto__":"x","constructor":"y","motd":"hi"}}');
      const revealed = await d.get('/api/properties', { key: KEY, afterChange: true });
      assert.equal(revealed.text, '{"ok":true,"properties":{"text-filtering-config":"{\\"apiKey\\":\\"k-123\\"}","level-seed":"","__proto__":"x","constructor":"y","motd":"hi"}}');
      fs.writeFileSync(properties(), stored);
    });

    test('GET /api/properties reveals the stored values to the valid key', async () => {
      fs.writeFileSync(properties(), stored);
      const res = await d.get('/api/properties', { key: KEY, afterChange: true });
      assertReply(res, 200, { ok: true, properties: values });
    });

    test('GET /api/properties never hands the valid key\'s answer to a request without it, asked at the same moment in either order', async () => {
      fs.writeFileSync(properties(), stored);
      await afterFreshness();
      for (const order of [[undefined, KEY], [KEY, undefined], [undefined, KEY], [KEY, undefined]]) {
        const answers = await Promise.all(order.map((key) => d.get('/api/properties', key === undefined ? {} : { key })));
        order.forEach((key, i) => assert.deepEqual(answers[i].json, { ok: true, properties: key === undefined ? redacted : values }));
      }
    });

    test('GET /api/properties shows a change of server.properties to the first request 100 ms after it', async () => {
      fs.writeFileSync(properties(), 'motd=AAAA\n');
      assert.deepEqual((await d.get('/api/properties', { afterChange: true })).json, { ok: true, properties: { motd: 'AAAA' } });
      fs.writeFileSync(properties(), 'motd=BBBB\n');
      assert.deepEqual((await d.get('/api/properties', { afterChange: true })).json, { ok: true, properties: { motd: 'BBBB' } });
    });

    test('GET /api/properties answers 404 when server.properties is missing and 500 when it is not a regular file', async () => {
      fs.rmSync(properties());
      const missing = await d.get('/api/properties', { afterChange: true });
      assertReply(missing, 404, { ok: false, error: 'server.properties not found' });
      fs.mkdirSync(properties());
      const unreadable = await d.get('/api/properties', { afterChange: true });
      assertReply(unreadable, 500, { ok: false, error: 'server.properties is not a regular file.' });
      fs.rmSync(properties(), { recursive: true });
    });
  });

  // ---- Authentication (docs/api.md#write-routes: the order of checks 503 → 401 → 400) ----


  describe('authentication of write routes', { concurrency: 1 }, () => {
    const defer = cleanupStack();
    let host: Host;
    let keyed: Daemon;
    let unset: Daemon;
    let empty: Daemon;
    setUp(async () => {
      host = await makeSandbox(defer);
      [keyed, unset, empty] = await Promise.all([startDaemon(host, defer), startDaemon(host, defer, { API_KEY: null }), startDaemon(host, defer, { API_KEY: '' })]);
    });

    for (const route of WRITE_ROUTES) {
      test(`POST ${route} answers 503 before 401 and 400 when API_KEY is unset`, async () => {
        for (const key of [undefined, KEY, '']) {
          const res = await unset.post(route, '[not json', key === undefined ? {} : { key });
          assertReply(res, 503, { ok: false, error: MSG.disabled });
        }
      });

      test(`POST ${route} answers 401 before 400 without the key or with a wrong one`, async () => {
        for (const key of [undefined, '', 'wrong', KEY.toUpperCase(), KEY.toLowerCase(), `${KEY}x`, KEY.slice(0, -1)]) {
          if (key === KEY) continue;
          const res = await keyed.post(route, '[not json', key === undefined ? {} : { key });
          assert.equal(res.status, 401, `key ${JSON.stringify(key)}`);
          assertCommonHeaders(res.headers);
          assert.deepEqual(res.json, { ok: false, error: MSG.unauthorized });
        }
      });
    }

    test('POST /api/command answers 503 when API_KEY is empty, an empty X-API-Key header included', async () => {
      for (const key of [undefined, '', KEY]) {
        const res = await empty.post('/api/command', { command: 'say hi' }, key === undefined ? {} : { key });
        assertReply(res, 503, { ok: false, error: MSG.disabled });
      }
    });

    test('POST /api/command with the valid key reaches the body check (400)', async () => {
      const res = await keyed.post('/api/command', '[not json', { key: KEY });
      assertReply(res, 400, { ok: false, error: MSG.notObject });
    });

    test('POST /api/server/start refused with 401 or 503 runs no serv', async () => {
      assert.deepEqual(servCalls(host), []);
    });

    test('GET /api/status needs no key, also when writes are disabled', async () => {
      for (const d of [keyed, unset, empty]) assert.deepEqual((await d.get('/api/status')).json, { ok: true, online: false });
    });
  });

  // ---- Start, stop, restart, backup (docs/api.md#post-apiserverstart-stop-restart, docs/api.md#post-apibackup) ----

  describe('POST /api/server/* and POST /api/backup', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ arrange: (host) => fs.writeFileSync(path.join(host.controlDir, 'serv-hold-seconds'), '120\n') });
    const holdingHost = () => makeHoldingHost(defer);

    for (const [route, argv, message] of [
      ['/api/server/start', ['start'], 'Server start command issued.'],
      ['/api/server/stop', ['stop'], 'Server stop command issued.'],
      ['/api/server/restart', ['restart'], 'Server restart command issued.'],
      ['/api/backup', ['backup', '-s'], 'Backup triggered. Check /api/backups shortly.'],
    ] as const) {
      test(`POST ${route} issues serv ${argv.join(' ')} without API_KEY and answers while serv still runs`, async () => {
        const before = servCalls(host).length;
        const res = await d.post(route, undefined, { key: KEY });
        assertReply(res, 200, { ok: true, message });
        const call = (await waitFor(() => servCalls(host)[before]));
        assert.deepEqual({ argv: call.argv, apiKeyInEnv: call.apiKeyInEnv }, { argv: [...argv], apiKeyInEnv: false });
        assert.equal(servCalls(host).length, before + 1);
        assert.ok(isAlive(call.pid), `serv ${call.pid} still runs (it holds for 120 s)`);
        assert.notEqual(procStat(call.pid).pgrp, procStat(d.child.pid!).pgrp, 'serv runs in its own process group');
        // once serv holds (exec sleep: same pid), no redirection of its own (`2>/dev/null`) is in effect any more
        await waitFor(() => readOr(`/proc/${call.pid}/comm`).toString() === 'sleep\n');
        for (const fd of [1, 2]) {   // serv writes to the daemon's own stdout/stderr, not to a pipe the daemon reads
          assert.equal(fs.readlinkSync(`/proc/${call.pid}/fd/${fd}`), fs.readlinkSync(`/proc/${d.child.pid}/fd/${fd}`));
        }
        if (route === '/api/server/start') {
          const [gamePid] = await waitFor(() => { const pids = findGamePids(host.serverDir); return pids.length === 1 && pids; });
          const environ = fs.readFileSync(`/proc/${gamePid}/environ`, 'utf8').split('\0');
          assert.ok(!environ.some((v) => v.startsWith('API_KEY=')), 'the game server started by serv has no API_KEY');
        }
      });
    }

    const SECRET_VARIABLES = ['API_KEY', 'API_KEY_FILE', 'EVENT_WEBHOOK_URL', 'EVENT_WEBHOOK_URL_FILE', 'EVENT_WEBHOOK_SECRET', 'EVENT_WEBHOOK_SECRET_FILE'];
    for (const fromFiles of [false, true]) {
      test(`POST /api/server/start: neither serv nor the game it starts (nor its plugins) gets the key, the webhook URL or its secret${fromFiles ? ', read from _FILE settings' : ''}`, async () => {
        const own = await makeSandbox(defer);
        const secretFile = (name: string, value: string) => {
          const file = path.join(own.root, name);
          fs.writeFileSync(file, `${value}\n`);
          return file;
        };
        const receiver = http.createServer((_req, res) => res.end()).listen(0, '127.0.0.1');
        defer(() => new Promise((resolve) => receiver.close(resolve)));
        await new Promise((resolve) => receiver.once('listening', resolve));
        const hookUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook/t0k3n`;
        const daemon = await startDaemon(own, defer, fromFiles
          ? { API_KEY: null, API_KEY_FILE: secretFile('api-key', KEY), EVENT_WEBHOOK_URL_FILE: secretFile('hook-url', hookUrl), EVENT_WEBHOOK_SECRET_FILE: secretFile('hook-secret', 'webhook-secret-1234') }
          : { EVENT_WEBHOOK_URL: hookUrl, EVENT_WEBHOOK_SECRET: 'webhook-secret-1234' });
        assert.equal((await daemon.post('/api/server/start', undefined, { key: KEY })).status, 200);
        const call = await waitFor(() => servCalls(own)[0]);
        assert.deepEqual((call as unknown as { secretsInEnv: string[] }).secretsInEnv, []);
        const [gamePid] = await waitFor(() => { const pids = findGamePids(own.serverDir); return pids.length === 1 && pids; });
        const environ = fs.readFileSync(`/proc/${gamePid}/environ`, 'utf8');
        assert.deepEqual(environ.split('\0').map((v) => v.split('=')[0]).filter((name) => SECRET_VARIABLES.includes(name)), []);
        assert.ok(!environ.includes('t0k3n') && !environ.includes(KEY) && !environ.includes('webhook-secret-1234'));
      });
    }

    test('POST /api/server/start|stop|restart each print one log line: time, client address, method, path, status, outcome', async () => {
      const { daemon } = await holdingHost();
      const routes = WRITE_ROUTES.filter((route) => route.startsWith('/api/server/'));
      for (const route of routes) assert.equal((await daemon.post(route, undefined, { key: KEY })).status, 200);
      const linesOf = (route: string) => {
        const pattern = new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z \\S+ POST ${route.replace(/\//g, '\\/')} 200 \\S.*$`);
        return daemon.stdout().split('\n').filter((line) => pattern.test(line)).length;
      };
      // a line is printed once its reply was sent, and reaches the test through a pipe a moment later
      await waitFor(() => routes.every((route) => linesOf(route) > 0));
      for (const route of routes) assert.equal(linesOf(route), 1, `${route} in ${daemon.stdout()}`);
    });

    test('POST /api/server/* and POST /api/backup leave every serv they started running when the daemon exits 0 on SIGTERM', async () => {
      const { own, daemon } = await holdingHost();
      for (const route of [...WRITE_ROUTES.filter((r) => r.startsWith('/api/server/')), '/api/backup']) {
        assert.equal((await daemon.post(route, undefined, { key: KEY })).status, 200);
      }
      const calls = await waitFor(() => servCalls(own).length === 4 && servCalls(own));
      assert.deepEqual(await daemon.stop('SIGTERM'), { code: 0, signal: null });
      for (const call of calls) assert.ok(isAlive(call.pid), `serv ${call.argv.join(' ')} (${call.pid}) outlives the daemon`);
      assert.ok(!daemon.stdout().includes(KEY) && !daemon.stderr().includes(KEY));
    });

    test('POST /api/server/start answers 500 when SERV_BIN cannot be started, and the daemon keeps serving', async () => {
      const broken = await startDaemon(host, defer, { SERV_BIN: path.join(host.root, 'no-such-serv') });
      const res = await broken.post('/api/server/start', undefined, { key: KEY });
      assertReply(res, 500, { ok: false, error: 'Internal server error' });
      assert.equal((await broken.get('/api')).status, 200);
      assert.match(broken.stdout() + broken.stderr(), /ENOENT/);
    });

    test('POST /api/server/start answers 500 when SERV_BIN is not executable (mode 644), and the daemon keeps serving', async () => {
      const copy = path.join(host.root, 'serv-not-executable');
      fs.copyFileSync(path.join(host.binDir, 'serv'), copy);
      fs.chmodSync(copy, 0o644);   // root too needs an x bit to exec
      const calls = servCalls(host).length;
      const broken = await startDaemon(host, defer, { SERV_BIN: copy });
      const res = await broken.post('/api/server/start', undefined, { key: KEY });
      assertReply(res, 500, { ok: false, error: 'Internal server error' });
      assert.equal((await broken.get('/api/status')).status, 200);
      assert.match(broken.stdout() + broken.stderr(), /EACCES/);
      assert.equal(servCalls(host).length, calls);
    });
  });

  describe('POST /api/backup, one at a time', { concurrency: 1 }, () => {
    const defer = cleanupStack();
    const holdingHost = () => makeHoldingHost(defer);

    test('POST /api/backup answers 409 while the backup it launched runs, and 200 once it ended', async () => {
      const { own, daemon } = await holdingHost();
      const samples = fs.readdirSync(own.backupDir);
      assert.equal((await daemon.post('/api/backup', undefined, { key: KEY })).status, 200);
      const backup = await waitFor(() => servCalls(own)[0]);
      const res = await daemon.post('/api/backup', undefined, { key: KEY });
      assertReply(res, 409, { ok: false, error: MSG.backupRunning });
      assert.equal(servCalls(own).length, 1);
      const archive = await waitFor(() => fs.readdirSync(own.backupDir).find((n) => /^snapshot_.*\.tar\.gz$/.test(n) && !samples.includes(n)));
      const listed = await daemon.get('/api/backups');
      assert.equal(listed.json.backups.find((b: { name: string }) => b.name === archive)?.type, 'snapshot');
      process.kill(backup.pid, 'SIGKILL');
      await waitFor(() => !isAlive(backup.pid));
      const again = await waitFor(async () => {
        const r = await daemon.post('/api/backup', undefined, { key: KEY });
        return r.status === 409 ? undefined : r;
      });
      assert.equal(again.status, 200);
      assert.deepEqual((await waitFor(() => servCalls(own)[1])).argv, ['backup', '-s']);
    });

    test('POST /api/backup answers 200, 409, 409 to three requests pipelined in one write, and runs serv backup -s once', async () => {
      const own = await makeSandbox(defer);   // a host where no backup runs yet, not even one of another daemon
      fs.writeFileSync(path.join(own.controlDir, 'serv-hold-seconds'), '120\n');
      const fresh = await startDaemon(own, defer);
      const before = servCalls(own).length;
      const post = `POST /api/backup HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nContent-Length: 0\r\n\r\n`;
      const replies = await sendPipelined(fresh.port, [post, post, post]);
      assert.deepEqual(replies.map((r) => [r.status, r.json]), [
        [200, { ok: true, message: 'Backup triggered. Check /api/backups shortly.' }],
        [409, { ok: false, error: MSG.backupRunning }],
        [409, { ok: false, error: MSG.backupRunning }],
      ]);
      const call = await waitFor(() => servCalls(own)[before]);
      // once it holds (serv-hold-seconds), any other serv started with it has long recorded its call
      await waitFor(() => readOr(`/proc/${call.pid}/comm`).toString() === 'sleep\n');
      assert.deepEqual(servCalls(own).slice(before).map((c) => c.argv), [['backup', '-s']]);
    });

    test('POST /api/backup answers 409 while a backup that an earlier run of the daemon started still runs, and starts no other', async () => {
      const own = await makeSandbox(defer);
      fs.writeFileSync(path.join(own.controlDir, 'serv-hold-seconds'), '120\n');
      const first = await startDaemon(own, defer);
      assert.equal((await first.post('/api/backup', undefined, { key: KEY })).status, 200);
      const call = await waitFor(() => servCalls(own)[0]);
      assert.deepEqual(await first.stop(), { code: 0, signal: null });
      assert.ok(isAlive(call.pid), 'the backup outlives the daemon that started it');
      const second = await startDaemon(own, defer);
      const res = await second.post('/api/backup', undefined, { key: KEY });
      assertReply(res, 409, { ok: false, error: MSG.backupRunning });
      assert.equal(servCalls(own).length, 1);
    });
  });

  // ---- POST /api/command (docs/api.md#post-apicommand) ----

  describe('POST /api/command', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });
    const mark = () => consoleBytes(host).length;

    for (const command of ['say hello world', 'C-c', 'Enter', '-t x', 'say 50% #1 "quoted" \'single\' ~user *? !', 'say héllo ✓',
      `say ${'0123456789'.repeat(99)}012345`]) {
      test(`POST /api/command delivers ${JSON.stringify(command.slice(0, 50))} (${command.length} characters) byte for byte, then Enter`, async () => {
        const start = mark();
        const res = await d.post('/api/command', { command }, { key: KEY });
        assertReply(res, 200, { ok: true, message: `Command sent: ${command}` });
        assert.equal(await consoleSince(host, start, `${command}\n`), `${command}\n`);
      });
    }

    test('POST /api/command trims outer spaces and sends, checks and echoes what remains', async () => {
      const start = mark();
      const res = await d.post('/api/command', { command: '   say trimmed  ' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Command sent: say trimmed' });
      assert.equal(await consoleSince(host, start, 'say trimmed\n'), 'say trimmed\n');
    });

    const refusals: Array<[string, unknown, string]> = [
      ...[...FORBIDDEN, ...CONTROL].map((ch): [string, unknown, string] => [`refuses ${JSON.stringify(ch)}`, `say a${ch}b`, MSG.commandChars]),
      ['refuses #{pane_id} (braces)', 'say #{pane_id}', MSG.commandChars],
      ['refuses a newline that would start a second command', 'say hi\ntouch /tmp/x', MSG.commandChars],
      ['refuses 1001 characters', `say ${'x'.repeat(997)}`, MSG.commandLength],
      ['refuses an empty command', '', MSG.commandLength],
      ['refuses a command of spaces only', '    ', MSG.commandLength],
      ['refuses a missing command', undefined, MSG.commandRequired],
      ['refuses a number', 42, MSG.commandRequired],
      ['refuses null', null, MSG.commandRequired],
    ];
    for (const [rule, command, error] of refusals) {
      test(`POST /api/command ${rule} with 400 and sends nothing`, async () => {
        const start = mark();
        const res = await d.post('/api/command', command === undefined ? { other: 'x' } : { command }, { key: KEY });
        assertReply(res, 400, { ok: false, error });
        await assertNothingSentSince(d, host, start);
      });
    }

    for (const [label, body] of [['not JSON', 'say hi'], ['an array', '["say hi"]'], ['null', 'null'], ['a number', '42'], ['a string', '"say hi"'], ['empty', '']] as const) {
      test(`POST /api/command answers 400 for a body that is ${label}`, async () => {
        const start = mark();
        const res = await d.post('/api/command', body, { key: KEY });
        assertReply(res, 400, { ok: false, error: MSG.notObject });
        await assertNothingSentSince(d, host, start);
      });
    }

    for (const escape of ['\\ud800', '\\udfff', '\\udc00\\ud800']) {
      test(`POST /api/command refuses a lone surrogate (${escape}) with 400 and sends nothing`, async () => {
        // valid UTF-8 on the wire, but no text: typed into the console it would become U+FFFD, like an invalid byte
        const start = mark();
        const res = await d.post('/api/command', `{"command":"say ${escape} alone"}`, { key: KEY });
        assert.equal(res.status, 400);
        assertCommonHeaders(res.headers);
        assert.deepEqual(Object.keys(res.json), ['ok', 'error']);
        assert.equal(res.json.ok, false);
        await assertNothingSentSince(d, host, start);
      });
    }

    test('POST /api/command reads the body as JSON whatever its Content-Type, and ignores unknown fields', async () => {
      const start = mark();
      const form = await d.post('/api/command', '{"command":"say form","extra":[1]}', { key: KEY, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      assertReply(form, 200, { ok: true, message: 'Command sent: say form' });
      assert.equal(await consoleSince(host, start, 'say form\n'), 'say form\n');
    });

    const bodyOf = (bytes: number, command: string) => {
      const head = `{"command":"${command}","pad":"`;
      return Buffer.from(head + 'p'.repeat(bytes - head.length - 2) + '"}');
    };

    test('POST /api/command accepts a body of exactly 16384 bytes', async () => {
      const start = mark();
      const res = await d.post('/api/command', bodyOf(16_384, 'say at the limit'), { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Command sent: say at the limit' });
      assert.equal(await consoleSince(host, start, 'say at the limit\n'), 'say at the limit\n');
    });

    test('POST /api/command answers 413 with Connection: close for a Content-Length over 16 KiB', async () => {
      const start = mark();
      // keep-alive asked for: only the daemon's own Connection: close ends the connection
      const res = await d.post('/api/command', bodyOf(16_385, 'say too large'), { key: KEY, headers: { Connection: 'keep-alive' } });
      assert.equal(res.status, 413);
      assertCommonHeaders(res.headers);
      assert.equal(res.headers.connection, 'close');
      assert.deepEqual(res.json, { ok: false, error: MSG.tooLarge });
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/command answers 413 for a chunked body over 16 KiB', async () => {
      const start = mark();
      const body = bodyOf(20_000, 'say chunked');
      const chunks = [body.subarray(0, 8000), body.subarray(8000, 16_000), body.subarray(16_000)];
      const res = await d.post('/api/command', chunks, { key: KEY, headers: { Connection: 'keep-alive' } });
      assert.equal(res.status, 413);
      assertCommonHeaders(res.headers);
      assert.equal(res.headers.connection, 'close');
      assert.deepEqual(res.json, { ok: false, error: MSG.tooLarge });
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/command logs a chunked body over 16 KiB as one write line with 413, and no unhandled rejection', async () => {
      const body = bodyOf(20_000, 'say chunked and logged');
      const start = mark();
      const res = await d.post('/api/command', [body.subarray(0, 10_000), body.subarray(10_000)], { key: KEY });
      assertReply(res, 413, { ok: false, error: MSG.tooLarge });
      const next = await d.post('/api/command', { command: 'say after the chunked 413' }, { key: KEY });
      assert.equal(next.status, 200);
      // the game has it before the next test looks at what reaches the console
      assert.equal(await consoleSince(host, start, 'say after the chunked 413\n'), 'say after the chunked 413\n');
      // the daemon writes its lines in order: the one before the next request's is the 413's
      const [line] = await waitFor(() => {
        const lines = d.stdout().split('\n');
        const at = lines.findIndex((l) => l.endsWith(' POST /api/command 200 "Command sent: say after the chunked 413"'));
        return at > 0 && lines.slice(at - 1, at);
      });
      assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1 POST \/api\/command 413 "Request body is larger than 16384 bytes\."$/);
      assert.ok(!/unhandled rejection|uncaught exception/.test(d.stdout() + d.stderr()), d.stdout());
    });

    test('POST /api/command keeps delivering after a `stop` with an argument, which vanilla refuses', async () => {
      const start = mark();
      const refused = await d.post('/api/command', { command: 'stop now' }, { key: KEY });
      assertReply(refused, 200, { ok: true, message: 'Command sent: stop now' });
      const next = await d.post('/api/command', { command: 'say still here' }, { key: KEY });
      assertReply(next, 200, { ok: true, message: 'Command sent: say still here' });
      assert.equal(await consoleSince(host, start, 'stop now\nsay still here\n'), 'stop now\nsay still here\n');
    });

    test('POST /api/command answers 503 "the game server is stopping" after stop was sent through it, and types nothing more', async (t) => {
      const [game] = findGamePids(host.serverDir);
      const whitelist = serverFile(host, 'whitelist.json');
      const stored = fs.readFileSync(whitelist);
      // a game blocked reading a FIFO stands for one still saving its world: alive, in the foreground, reading no console
      fs.rmSync(whitelist);
      assert.equal(spawnSync('mkfifo', [whitelist]).status, 0);
      const feed = () => {   // ends the game's read; ENXIO while nobody has the FIFO open for reading
        try { const fd = fs.openSync(whitelist, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK); fs.writeSync(fd, '[]'); fs.closeSync(fd); return true; } catch { return false; }
      };
      t.after(() => { feed(); fs.rmSync(whitelist); fs.writeFileSync(whitelist, stored); });
      const start = mark();
      const busy = await d.post('/api/command', { command: 'whitelist list' }, { key: KEY });
      assert.equal(busy.status, 200);
      await consoleSince(host, start, 'whitelist list\n');
      const stop = await d.post('/api/command', { command: 'stop' }, { key: KEY });
      assertReply(stop, 200, { ok: true, message: 'Command sent: stop' });
      const res = await d.post('/api/command', { command: 'say too late' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}the game server is stopping.` });
      await waitFor(feed);
      await waitFor(() => !isAlive(game));
      assert.equal(consoleBytes(host).subarray(start).toString('utf8'), 'whitelist list\nstop\n');
    });

    test('POST /api/command answers 503 once the daemon has read Stopping server in latest.log of the running game, and delivers again once the game restarts', async () => {
      await host.stopGame();   // the tmux session may outlive its game by a moment
      await host.startGame();
      const start = mark();
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${P}Stopping server\n`);
      // delivery never reads the log itself (docs/api.md#console-delivery): what presence has read counts
      assert.equal((await d.get('/api/players/online')).status, 200);
      const res = await d.post('/api/command', { command: 'say while stopping' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}the game server is stopping.` });
      await host.stopGame();
      await host.startGame();   // a new latest.log, with its Starting line
      await assertNothingSentSince(d, host, start);
    });
  });

  // ---- Console availability (docs/api.md#console-delivery: a console command must never reach a shell) ----

  describe('POST /api/command when the console is not the game', { concurrency: 1 }, () => {
    // the admin accepted the risk of a game typed into the pane's shell; the default refuses it (test below)
    const { defer, host, d } = group({ arrange: (host) => host.startShell(), env: { CONSOLE_SHELL_PANE: 'allow' } });
    let game = 0;
    let markers = 0;
    /** `touch <marker>` through the daemon must not create the marker; a sentinel typed into the shell proves the order. */
    const assertTouchRefused = async (status: number, error: (e: string) => boolean) => {
      const marker = path.join(host.root, `marker-${++markers}`);
      const res = await d.post('/api/command', { command: `touch ${marker}` }, { key: KEY });
      assert.equal(res.status, status);
      assertCommonHeaders(res.headers);
      assert.deepEqual(Object.keys(res.json), ['ok', 'error']);
      assert.equal(res.json.ok, false);
      assert.ok(error(res.json.error), res.json.error);
      const sentinel = `${marker}-sentinel`;
      await typeIntoPane(host, `touch ${sentinel}`);
      await waitFor(() => fs.existsSync(sentinel));
      assert.equal(fs.existsSync(marker), false, 'the command reached the shell');
    };
    const stopped = () => procStat(game).state === 'T';
    const foreground = () => procStat(game).tpgid === procStat(game).pgrp;
    /** A game typed into the pane's shell and running as its foreground job: typed in when none runs, brought back with `fg`. */
    const gameInShell = async () => {
      if (game === 0 || !isAlive(game)) {
        await typeIntoPane(host, `${host.binDir}/java -Dgameserver.console=${host.consoleRecord} -jar server.jar nogui`);
        [game] = await waitFor(() => { const pids = findGamePids(host.serverDir); return pids.length === 1 && pids; });
      } else if (!foreground()) {
        await typeIntoPane(host, 'fg');
      }
      await waitFor(() => foreground() && !stopped()).catch(async (err: Error) => {
        // once in many runs the game never came back to the foreground: what the pane and the process showed then
        const pane = await runTool('tmux', ['-S', host.tmuxSocket, 'capture-pane', '-p', '-t', `=${host.tmuxSession}:`]);
        let state: string;
        try {
          state = JSON.stringify(procStat(game));
        } catch {
          state = 'gone';
        }
        throw new Error(`${err.message}; the game ${game}: ${state}; the pane (tmux ${pane.status} ${pane.stderr}):\n${pane.stdout}`);
      });
    };
    const noGameInShell = async () => {
      if (game !== 0 && isAlive(game)) process.kill(game, 'SIGKILL');   // even while job control has it stopped
      await waitFor(() => game === 0 || !isAlive(game));
    };

    test('POST /api/command answers 409 when the pane shows a shell and no game server runs', async () => {
      await noGameInShell();
      await assertTouchRefused(409, (e) => e === MSG.notRunning);
    });

    test('POST /api/command delivers to a game server that is the foreground job of the pane\'s shell with CONSOLE_SHELL_PANE=allow', async () => {
      await gameInShell();
      const start = consoleBytes(host).length;
      const res = await d.post('/api/command', { command: 'say in the foreground' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Command sent: say in the foreground' });
      assert.equal(await consoleSince(host, start, 'say in the foreground\n'), 'say in the foreground\n');
    });

    test('POST /api/command answers 503 to a game server typed into the pane\'s interactive shell by default, and types nothing', async () => {
      await gameInShell();
      const refusing = await startDaemon(host, defer);
      const start = consoleBytes(host).length;
      const res = await refusing.post('/api/command', { command: 'say refused' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}the game server was typed into an interactive shell in its tmux pane, which would read the command if the game exited first; start the game as the pane's command (tmux new-session -d -s gameserver 'java …') or set CONSOLE_SHELL_PANE=allow.` });
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/command answers 503 when the game server is suspended (Ctrl-Z)', async () => {
      await gameInShell();
      await host.tmux('send-keys', '-t', `=${host.tmuxSession}:`, 'C-z');
      await waitFor(() => stopped() && !foreground());
      await assertTouchRefused(503, (e) => e.startsWith(MSG.consolePrefix));
    });

    test('POST /api/command answers 503 when the game server is a background job of the pane\'s shell', async () => {
      await gameInShell();
      await host.tmux('send-keys', '-t', `=${host.tmuxSession}:`, 'C-z');
      await waitFor(() => stopped() && !foreground());
      await typeIntoPane(host, 'bg');
      await waitFor(() => !foreground() && isAlive(game));
      await assertTouchRefused(503, (e) => e.startsWith(MSG.consolePrefix));
    });

    test('POST /api/command answers 409 once the game server is gone and its pane shows the shell again', async () => {
      await gameInShell();
      await noGameInShell();   // SIGKILL: typing `stop` after `fg` raced the resumed read
      await assertTouchRefused(409, (e) => e === MSG.notRunning);
    });

    test('POST /api/command answers 503 when the game server runs outside any tmux session', async () => {
      const bare = await makeSandbox(defer);
      const child = spawn(path.join(bare.binDir, 'java'), [`-Dgameserver.console=${bare.consoleRecord}`, '-jar', 'server.jar', 'nogui'],
        { cwd: bare.serverDir, env: bare.daemonEnv(), stdio: ['pipe', 'ignore', 'ignore'] });
      defer(() => { if (child.pid && isAlive(child.pid)) process.kill(child.pid, 'SIGKILL'); });
      await waitFor(() => findGamePids(bare.serverDir).length === 1);
      const outside = await startDaemon(bare, defer);
      const res = await outside.post('/api/command', { command: 'say nobody hears this' }, { key: KEY });
      assert.equal(res.status, 503);
      assert.ok(res.json.error.startsWith(MSG.consolePrefix), res.json.error);
      assert.deepEqual(Object.keys(res.json), ['ok', 'error']);
      assert.equal(consoleBytes(bare).length, 0);
    });
  });

  describe('POST /api/command when tmux or the game\'s tmux session is missing', { concurrency: 1 }, () => {
    const defer = cleanupStack();

    test('POST /api/command answers 503 "tmux is not installed" when the daemon\'s PATH has no tmux, and sends nothing', async () => {
      const host = await makeSandbox(defer);
      await host.startGame();   // through the test's own tmux
      const withoutTmux = await startDaemon(host, defer, { PATH: host.binDir });   // serv, java and the report script only
      const mark = consoleBytes(host).length;
      const res = await withoutTmux.post('/api/command', { command: 'say nobody types this' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}tmux is not installed.` });
      assertReply(await withoutTmux.post('/api/say', { text: 'nobody sees this' }, { key: KEY }), 503, { ok: false, error: `${MSG.consolePrefix}tmux is not installed.` });
      assert.equal((await withoutTmux.get('/api/status')).json.online, true);
      await assertNothingSentSince(await startDaemon(host, defer), host, mark);
    });

    test('POST /api/command answers 503 and types nothing when the game runs only in a session whose name begins with TMUX_SESSION (gameserver-decoy)', async () => {
      const own = await makeSandbox(defer);
      const d = await startDaemon(own, defer);
      await own.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'gameserver-decoy', '-c', own.serverDir, '--',
        path.join(own.binDir, 'java'), `-Dgameserver.console=${own.consoleRecord}`, '-jar', 'server.jar', 'nogui');
      // the game's process is there a moment before its log: a busy machine may look in between
      const log = serverFile(own, 'logs/latest.log');
      await waitFor(() => findGamePids(own.serverDir).length === 1 && fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('Done ('));
      const res = await d.post('/api/command', { command: 'say to the decoy' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}the tmux session "gameserver" was not found.` });
      assert.equal(consoleBytes(own).length, 0);
    });

    test('POST /api/command answers 503 when tmux runs but the game\'s session was killed, and sends nothing', async () => {
      const host = await makeSandbox(defer);
      const game = spawn(path.join(host.binDir, 'java'), [`-Dgameserver.console=${host.consoleRecord}`, '-jar', 'server.jar', 'nogui'],
        { cwd: host.serverDir, env: host.daemonEnv(), stdio: ['pipe', 'ignore', 'ignore'] });
      defer(() => { if (game.pid && isAlive(game.pid)) process.kill(game.pid, 'SIGKILL'); });
      await host.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'other', '--', 'sleep', '300');   // keeps the tmux server up
      await host.tmux('new-session', '-d', '-s', host.tmuxSession, '--', 'sleep', '300');
      await host.tmux('kill-session', '-t', `=${host.tmuxSession}`);
      assert.equal((await host.tmux('list-sessions', '-F', '#{session_name}')).trim(), 'other');
      await waitFor(() => findGamePids(host.serverDir).length === 1);
      const d = await startDaemon(host, defer);
      const mark = consoleBytes(host).length;
      const res = await d.post('/api/command', { command: 'say nobody types this' }, { key: KEY });
      assert.equal(res.status, 503);
      assertCommonHeaders(res.headers);
      assert.deepEqual(Object.keys(res.json), ['ok', 'error']);
      assert.ok(res.json.error.startsWith(MSG.consolePrefix), res.json.error);
      assert.equal(consoleBytes(host).length, mark);
      assert.equal((await d.get('/api/status')).json.online, true);
    });
  });

  describe('POST /api/say', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });
    const mark = () => consoleBytes(host).length;
    const latestSince = (offset: number) => fs.readFileSync(serverFile(host, 'logs/latest.log')).subarray(offset).toString('utf8');

    for (const [body, shown] of [
      [{ text: 'hello from Discord', from: 'Mod Kim' }, '[Mod Kim] hello from Discord'],
      [{ text: 'restart in 5 minutes' }, '[Server] restart in 5 minutes'],
      [{ text: '"}, {"selector":"@a"} ; stop & $(reboot) `id` | <b> \\ §cred ${jndi:ldap://x} 😀 \u200fשלום', from: '@everyone' },
        '[@everyone] "}, {"selector":"@a"} ; stop & $(reboot) `id` | <b> \\ ⸹cred $\u200b{jndi:ldap://x} 😀 \u200fשלום'],
      [{ text: 'two\nlines\r\n\tand a tab' }, '[Server] two lines   and a tab'],
    ] as const) {
      test(`POST /api/say ${JSON.stringify(body).slice(0, 50)} types one tellraw line whose component every version reads as ${JSON.stringify(shown).slice(0, 40)}`, async () => {
        const start = mark();
        const res = await d.post('/api/say', body, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'Message sent.' });
        const typed = await consoleSince(host, start, 'tellraw @a {"text":""}\n');
        const lines = typed.trimEnd().split('\n');
        assert.equal(lines.length, 1, 'one line');
        assert.match(lines[0], /^tellraw @a \{"text":"[\x20-\x7e]*"\}$/);
        assert.doesNotMatch(lines[0], /[;&|`$()<>]/);
        assert.deepEqual(JSON.parse(lines[0].slice('tellraw @a '.length)), { text: shown });
        assert.equal(lines[0], tellrawLine(body.from, shown.slice(shown.indexOf('] ') + 2).replace(/⸹/g, '§').replace('$\u200b{', '${')));
      });
    }

    test('POST /api/say answers 200 with nobody online, and the game logs that no player was found, as 1.13+ does', async () => {
      const online = (await d.get('/api/players/online')).json.players as string[];
      if (online.length > 0) act(host, ...online.map((player): GameAction => ({ do: 'leave', player })));
      await waitFor(async () => (await d.get('/api/players/online')).json.count === 0);
      const size = fs.statSync(serverFile(host, 'logs/latest.log')).size;
      assertReply(await d.post('/api/say', { text: 'anyone?' }, { key: KEY }), 200, { ok: true, message: 'Message sent.' });
      await waitFor(() => latestSince(size).includes('[Server thread/INFO]: No player was found\n'));
    });

    for (const [body, error] of [
      [{}, 'text is required and must be a string.'],
      [{ text: ['hi'] }, 'text is required and must be a string.'],
      [{ text: ' \n ' }, 'text must be 1 to 256 characters long.'],
      [{ text: 'x'.repeat(257) }, 'text must be 1 to 256 characters long.'],
      [{ text: 'hi', from: 'x'.repeat(33) }, 'from must be 1 to 32 characters long.'],
      [{ text: 'x', from: 'Server' }, 'from must not be Server: players read [Server] as the console itself.'],
      [{ text: 'x', from: 'sERVER' }, 'from must not be Server: players read [Server] as the console itself.'],
      [{ text: 'x', from: 'Alex] [Server' }, 'from must not contain [ or ]: players would read two speakers.'],
      [{ text: 'hi', from: 42 }, 'from must be a string when given.'],
      [{ text: 'hi \ud800' }, 'text and from must be valid Unicode text.'],
    ] as const) {
      test(`POST /api/say answers 400 "${error}" to ${JSON.stringify(body).slice(0, 40)} and types nothing`, async () => {
        const start = mark();
        assertReply(await d.post('/api/say', body, { key: KEY }), 400, { ok: false, error });
        await assertNothingSentSince(d, host, start);
      });
    }

    test('POST /api/say answers 401 without the key and types nothing', async () => {
      const start = mark();
      assertReply(await d.post('/api/say', { text: 'hi' }), 401, { ok: false, error: MSG.unauthorized });
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/say answers 409 while the game server is stopped', async () => {
      await host.stopGame();
      assertReply(await d.post('/api/say', { text: 'hi' }, { key: KEY }), 409, { ok: false, error: MSG.notRunning });
      await host.startGame();
    });
  });

  // ---- POST /api/whitelist/add|remove (docs/api.md#post-apiwhitelistadd-and-remove) ----

  describe('POST /api/whitelist/add and /remove while the game server runs', { concurrency: 1 }, () => {
    const { host, d } = group({ host: { onlineMode: false }, game: true });
    const whitelist = () => serverFile(host, 'whitelist.json');
    const mark = () => consoleBytes(host).length;
    const listOnly = (...names: string[]) => fs.writeFileSync(whitelist(), gson(names.map((name) => ({ uuid: offlineUuid(name), name }))));

    test('POST /api/whitelist/add answers "already on the whitelist" for another letter case and sends nothing', async () => {
      fs.writeFileSync(whitelist(), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }]));
      const before = fs.readFileSync(whitelist());
      const start = mark();
      const res = await d.post('/api/whitelist/add', { player: 'aLEX' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'aLEX is already on the whitelist.' });
      await assertNothingSentSince(d, host, start);
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/remove answers "not on the whitelist" for an absent player and sends nothing', async () => {
      const start = mark();
      const res = await d.post('/api/whitelist/remove', { player: 'Nobody' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Nobody is not on the whitelist.' });
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/whitelist/add sends whitelist add NAME to the console', async () => {
      listOnly('Alex');
      const start = mark();
      const res = await d.post('/api/whitelist/add', { player: 'Steve' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Steve added to whitelist.' });
      assert.equal(await consoleSince(host, start, 'whitelist add Steve\n'), 'whitelist add Steve\n');
      await waitFor(() => fs.readFileSync(whitelist(), 'utf8').includes('"Steve"'));
    });

    test('POST /api/whitelist/remove sends whitelist remove NAME to the console', async () => {
      listOnly('Alex', 'Steve');
      const start = mark();
      const res = await d.post('/api/whitelist/remove', { player: 'STEVE' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'STEVE removed from whitelist.' });
      assert.equal(await consoleSince(host, start, 'whitelist remove STEVE\n'), 'whitelist remove STEVE\n');
    });

    // one rule of letter case running and stopped: the stopped group has the same test
    for (const era of ['1.21', '1.12']) {
      test(`POST /api/whitelist/remove zed_9 removes the entry Zed_9 and answers "zed_9 removed from whitelist." while the ${era} game runs, as while it is stopped`, async (t) => {
        const eraFile = path.join(host.controlDir, 'game-era');
        if (era === '1.12') fs.writeFileSync(eraFile, '1.12\n');
        t.after(() => fs.rmSync(eraFile, { force: true }));
        fs.writeFileSync(whitelist(), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }, { uuid: offlineUuid('Zed_9'), name: 'Zed_9' }]));
        const start = mark();
        const res = await d.post('/api/whitelist/remove', { player: 'zed_9' }, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'zed_9 removed from whitelist.' });
        assert.equal(await consoleSince(host, start, 'whitelist remove zed_9\n'), 'whitelist remove zed_9\n');
        assert.deepEqual(JSON.parse(fs.readFileSync(whitelist(), 'utf8')), [{ uuid: offlineUuid('Alex'), name: 'Alex' }]);
        const reply = era === '1.12' ? 'Removed zed_9 from the whitelist' : 'Removed Zed_9 from the whitelist';
        await waitFor(() => fs.readFileSync(serverFile(host, 'logs/latest.log'), 'utf8').includes(`]: ${reply}\n`));
      });
    }

    for (const [player, error] of [['bad name', MSG.playerPattern], ['x'.repeat(17), MSG.playerPattern], ['', MSG.playerPattern], ['a;b', MSG.playerPattern],
      [undefined, MSG.playerRequired], [7, MSG.playerRequired]] as const) {
      for (const route of ['/api/whitelist/add', '/api/whitelist/remove']) {
        test(`POST ${route} refuses player ${JSON.stringify(player) ?? 'missing'} with 400 and sends nothing`, async () => {
          const start = mark();
          const res = await d.post(route, player === undefined ? {} : { player }, { key: KEY });
          assertReply(res, 400, { ok: false, error });
          await assertNothingSentSince(d, host, start);
        });
      }
    }
  });

  describe('POST /api/whitelist/add and /remove while the game server is stopped, online-mode=false', { concurrency: 1 }, () => {
    const entries = [
      { uuid: offlineUuid('Alex'), name: 'Alex' },
      { uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', name: 'Notch_Fan' },
      { uuid: offlineUuid('Kai_2'), name: 'Kai_2' },
    ];
    const { host, d } = group({
      host: { onlineMode: false },
      arrange: (host) => {
        fs.writeFileSync(serverFile(host, 'server.properties'), 'white-list=true\nonline-mode=false\n');
        fs.writeFileSync(serverFile(host, 'whitelist.json'), gson(entries));
        fs.chmodSync(serverFile(host, 'whitelist.json'), 0o640);
      },
    });
    const whitelist = () => serverFile(host, 'whitelist.json');
    const stored = () => JSON.parse(fs.readFileSync(whitelist(), 'utf8')) as Array<{ uuid: string; name: string }>;
    const storeOnly = (list: typeof entries) => {
      fs.writeFileSync(whitelist(), gson(list));
      fs.chmodSync(whitelist(), 0o640);
    };

    test('POST /api/whitelist/add writes the offline UUID and keeps every other entry, atomically', async () => {
      storeOnly(entries);
      const res = await d.post('/api/whitelist/add', { player: 'Steve' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Steve added to whitelist.' });
      const after = stored();
      assert.equal(after.length, 4);
      assert.deepEqual(after.filter((e) => e.name !== 'Steve'), entries);
      assert.deepEqual(after.find((e) => e.name === 'Steve'), { uuid: '5627dd98-e6be-3c21-b8a8-e92344183641', name: 'Steve' });
      assert.equal(fs.statSync(whitelist()).mode & 0o777, 0o640);
      assert.deepEqual(fs.readdirSync(host.serverDir).filter((n) => n.startsWith('whitelist.json') && n !== 'whitelist.json'), []);
      assert.deepEqual(servCalls(host), []);
    });

    test('POST /api/whitelist/add answers "already on the whitelist" for another letter case and leaves the file as it was', async () => {
      storeOnly(entries);
      const before = fs.readFileSync(whitelist());
      const res = await d.post('/api/whitelist/add', { player: 'ALEX' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'ALEX is already on the whitelist.' });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/remove removes the entry in any letter case and keeps every other entry', async () => {
      storeOnly(entries);
      const res = await d.post('/api/whitelist/remove', { player: 'alex' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'alex removed from whitelist.' });
      assert.deepEqual(stored(), entries.slice(1));
    });

    // one rule of letter case running and stopped: the running group has the same test
    test('POST /api/whitelist/remove zed_9 removes the entry Zed_9 and answers "zed_9 removed from whitelist." while the game is stopped, as while it runs', async () => {
      storeOnly([...entries, { uuid: offlineUuid('Zed_9'), name: 'Zed_9' }]);
      const res = await d.post('/api/whitelist/remove', { player: 'zed_9' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'zed_9 removed from whitelist.' });
      assert.deepEqual(stored(), entries);
    });

    test('POST /api/whitelist/remove answers "not on the whitelist" and leaves the file as it was', async () => {
      storeOnly(entries.slice(1));
      const before = fs.readFileSync(whitelist());
      const res = await d.post('/api/whitelist/remove', { player: 'Alex' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Alex is not on the whitelist.' });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/add writes through a symlinked whitelist.json to its target, keeping the link, the mode and the owner', async () => {
      const shared = fs.mkdtempSync(path.join(host.root, 'lists-'));
      const target = path.join(shared, 'whitelist.json');
      fs.writeFileSync(target, gson(entries.slice(0, 1)));
      fs.chmodSync(target, 0o640);
      fs.chownSync(target, 1234, 2345);   // tests run as root: another owner than the daemon's
      const link = whitelist();
      const saved = fs.readFileSync(link);
      fs.rmSync(link);
      fs.symlinkSync(target, link);
      try {
        const res = await d.post('/api/whitelist/add', { player: 'Link_Player' }, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'Link_Player added to whitelist.' });
        assert.equal(fs.lstatSync(link).isSymbolicLink(), true);
        assert.equal(fs.readlinkSync(link), target);
        const written = JSON.parse(fs.readFileSync(target, 'utf8')) as Array<{ name: string }>;
        assert.deepEqual(written.map((e) => e.name), [entries[0].name, 'Link_Player']);
        const st = fs.statSync(target);
        assert.deepEqual([st.mode & 0o777, st.uid, st.gid], [0o640, 1234, 2345]);
        assert.deepEqual(fs.readdirSync(shared), ['whitelist.json']);
        assert.deepEqual(fs.readdirSync(host.serverDir).filter((n) => n.startsWith('whitelist.json') && n !== 'whitelist.json'), []);
      } finally {
        fs.rmSync(link);
        fs.writeFileSync(link, saved);
        fs.chmodSync(link, 0o640);
      }
    });

    test('POST /api/whitelist/add replaces whitelist.json by rename: a reader holding the old file still reads it whole', async () => {
      const before = fs.readFileSync(whitelist());
      const fd = fs.openSync(whitelist(), 'r');   // a reader in the middle of reading, as the game could be
      try {
        const res = await d.post('/api/whitelist/add', { player: 'Atomic_One' }, { key: KEY });
        assert.equal(res.status, 200);
        const old = Buffer.alloc(before.length + 16);
        assert.deepEqual(old.subarray(0, fs.readSync(fd, old, 0, old.length, 0)), before);   // an in-place write would have changed it
        assert.ok(fs.readFileSync(whitelist(), 'utf8').includes('"Atomic_One"'));
      } finally {
        fs.closeSync(fd);
      }
    });

    // Minecraft reads the flag with Boolean.valueOf: only "true", in any letter case and without blanks, is online
    for (const [setting, player] of [['online-mode=False', 'Mixed_Case'], ['online-mode=false ', 'Trailing_Blank']]) {
      test(`POST /api/whitelist/add writes the offline UUID without a lookup when server.properties says ${JSON.stringify(setting)}`, async () => {
        fs.writeFileSync(serverFile(host, 'server.properties'), `white-list=true\n${setting}\n`);
        const lookups = lookupsOf(host).length;
        const res = await d.post('/api/whitelist/add', { player }, { key: KEY });
        assertReply(res, 200, { ok: true, message: `${player} added to whitelist.` });
        assert.deepEqual(stored().find((e) => e.name === player), { uuid: offlineUuid(player), name: player });
        assert.equal(lookupsOf(host).length, lookups);
      });
    }
  });

  describe('POST /api/whitelist/add while the game server is stopped, online-mode=true', { concurrency: 1 }, () => {
    const { host, d } = group({
      host: { onlineMode: true },
      arrange: (host) => {
        fs.writeFileSync(serverFile(host, 'server.properties'), 'white-list=true\nonline-mode=true\n');
        fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }]));
        fs.writeFileSync(serverFile(host, 'usercache.json'), JSON.stringify([
          { name: 'Jeb_', uuid: '853c80ef-3c37-49fd-aa49-938b674adae6', expiresOn: '2030-01-01 00:00:00 +0000' },
        ]));
      },
    });
    const whitelist = () => serverFile(host, 'whitelist.json');
    const stored = () => JSON.parse(fs.readFileSync(whitelist(), 'utf8')) as Array<{ uuid: string; name: string }>;
    const alexOnly = () => fs.writeFileSync(whitelist(), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }]));

    test('POST /api/whitelist/add takes UUID and letter case from usercache.json without a lookup', async () => {
      alexOnly();
      const lookups = lookupsOf(host).length;
      const res = await d.post('/api/whitelist/add', { player: 'jeb_' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'jeb_ added to whitelist.' });
      assert.deepEqual(stored(), [{ uuid: offlineUuid('Alex'), name: 'Alex' }, { uuid: '853c80ef-3c37-49fd-aa49-938b674adae6', name: 'Jeb_' }]);
      assert.equal(lookupsOf(host).length, lookups);
    });

    test('POST /api/whitelist/add takes UUID and letter case from PROFILE_LOOKUP_URL for a player usercache.json lacks', async () => {
      alexOnly();
      const lookups = lookupsOf(host).length;
      const res = await d.post('/api/whitelist/add', { player: 'technoblade' }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'technoblade added to whitelist.' });
      assert.deepEqual(lookupsOf(host).slice(lookups), ['/technoblade']);
      assert.deepEqual(stored(), [{ uuid: offlineUuid('Alex'), name: 'Alex' }, { uuid: 'b876ec32-e396-476b-a115-8438d83c67d4', name: 'Technoblade' }]);
    });

    for (const [player, error] of [
      ['Nobody_Here', 'No Minecraft account is named Nobody_Here.'],   // 404
      ['No_Content', 'No Minecraft account is named No_Content.'],     // 204
      ['Server_Error', MSG.lookupFailed],
      ['Bad_Json', MSG.lookupFailed],
      ['Drop_Conn', MSG.lookupFailed],
      ['Huge_Answer', MSG.lookupFailed],
    ]) {
      test(`POST /api/whitelist/add answers 502 and writes nothing when the lookup of ${player} fails`, async () => {
        const before = fs.readFileSync(whitelist());
        const res = await d.post('/api/whitelist/add', { player }, { key: KEY });
        assertReply(res, 502, { ok: false, error });
        assert.deepEqual(fs.readFileSync(whitelist()), before);
      });
    }

    test('POST /api/whitelist/add does not use a usercache.json entry whose uuid is malformed, and asks the lookup instead', async () => {
      fs.writeFileSync(serverFile(host, 'usercache.json'), JSON.stringify([
        { name: 'Bad_Uuid', uuid: 'not-a-uuid', expiresOn: '2030-01-01 00:00:00 +0000' },
        { name: 'Undashed', uuid: '069a79f444e94726a5befca90e38aaf5', expiresOn: '2030-01-01 00:00:00 +0000' },
      ]));
      const before = fs.readFileSync(whitelist());
      for (const player of ['Bad_Uuid', 'Undashed']) {
        const lookups = lookupsOf(host).length;
        const res = await d.post('/api/whitelist/add', { player }, { key: KEY });
        assertReply(res, 502, { ok: false, error: `No Minecraft account is named ${player}.` });
        assert.deepEqual(lookupsOf(host).slice(lookups), [`/${player}`]);
      }
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/add answers 502 within its 5 s deadline when the lookup answers a byte every 200 ms, and writes nothing', async () => {
      const before = fs.readFileSync(whitelist());
      const res = await d.post('/api/whitelist/add', { player: 'Slow_Drip' }, { key: KEY, timeoutMs: 12_000 });
      assertReply(res, 502, { ok: false, error: MSG.lookupFailed });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/add looks the player up, not the offline UUID, when server.properties says "online-mode=TRUE"', async () => {
      fs.writeFileSync(serverFile(host, 'server.properties'), 'white-list=true\nonline-mode=TRUE\n');
      const before = fs.readFileSync(whitelist());
      const lookups = lookupsOf(host).length;
      const res = await d.post('/api/whitelist/add', { player: 'Upper_True' }, { key: KEY });
      assertReply(res, 502, { ok: false, error: 'No Minecraft account is named Upper_True.' });
      assert.deepEqual(lookupsOf(host).slice(lookups), ['/Upper_True']);
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });
  });

  describe('POST /api/whitelist/add and /remove while the game server is stopped and whitelist.json is missing, unreadable, corrupt or cannot be written', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ host: { onlineMode: false } });
    const whitelist = () => serverFile(host, 'whitelist.json');
    const leftovers = () => fs.readdirSync(host.serverDir).filter((n) => n.startsWith('whitelist.json') && n !== 'whitelist.json');
    const alex = gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }]);

    for (const route of ['/api/whitelist/add', '/api/whitelist/remove']) {
      test(`POST ${route} answers 404 when whitelist.json is missing and creates nothing`, async () => {
        fs.rmSync(whitelist(), { recursive: true, force: true });
        const res = await d.post(route, { player: 'Steve' }, { key: KEY });
        assertReply(res, 404, { ok: false, error: 'whitelist.json not found' });
        assert.equal(fs.existsSync(whitelist()), false);
        assert.deepEqual(leftovers(), []);
      });
    }

    test('POST /api/whitelist/add answers 500 when whitelist.json is a folder, not a regular file, and leaves it as it was', async () => {
      fs.rmSync(whitelist(), { recursive: true, force: true });
      fs.mkdirSync(whitelist());   // tests run as root: chmod 000 would not stop a read
      const res = await d.post('/api/whitelist/add', { player: 'Steve' }, { key: KEY });
      assertReply(res, 500, { ok: false, error: 'whitelist.json is not a regular file.' });
      assert.deepEqual(fs.readdirSync(whitelist()), []);
      assert.deepEqual(leftovers(), []);
    });

    for (const [label, content, error] of [
      ['is not valid JSON', '[{"uuid":', 'whitelist.json is not valid JSON.'],
      ['is not an array', '{"uuid":"x","name":"Alex"}', 'whitelist.json is not a JSON array of entries.'],
    ]) {
      for (const [route, player] of [['/api/whitelist/add', 'Steve'], ['/api/whitelist/remove', 'Alex']]) {
        test(`POST ${route} answers 500 when whitelist.json ${label}, and leaves its bytes as they were`, async () => {
          fs.rmSync(whitelist(), { recursive: true, force: true });
          fs.writeFileSync(whitelist(), content);
          const res = await d.post(route, { player }, { key: KEY });
          assertReply(res, 500, { ok: false, error });
          assert.equal(fs.readFileSync(whitelist(), 'utf8'), content);
          assert.deepEqual(leftovers(), []);
        });
      }
    }

    test('POST /api/whitelist/add answers 500 and leaves whitelist.json byte for byte when the write fails half-way (prlimit --fsize)', async (t) => {
      if (spawnSync('prlimit', ['--version'], { env: host.daemonEnv() }).status !== 0) return t.skip('prlimit is not installed');
      fs.rmSync(whitelist(), { recursive: true, force: true });
      fs.writeFileSync(whitelist(), alex);
      const planned = gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }, { uuid: offlineUuid('Steve'), name: 'Steve' }]);
      // RLIMIT_FSIZE: the first write stops at the limit, the next fails with EFBIG (Node ignores SIGXFSZ)
      const limit = Math.floor(Buffer.byteLength(planned) / 2);
      const limited = await startDaemon(host, defer, {}, { wrap: ['prlimit', `--fsize=${limit}`, '--'] });
      const res = await limited.post('/api/whitelist/add', { player: 'Steve' }, { key: KEY });
      assert.equal(res.status, 500);
      assertCommonHeaders(res.headers);
      assert.deepEqual(Object.keys(res.json), ['ok', 'error']);
      assert.equal(res.json.ok, false);
      assert.equal(fs.readFileSync(whitelist(), 'utf8'), alex);
      assert.deepEqual(leftovers(), []);
      assert.equal((await limited.get('/api/status')).status, 200);
    });
  });

  // ---- Every response (docs/api.md#every-response: unknown path, wrong method, OPTIONS, HEAD, parser errors) ----

  describe('every response', { concurrency: 1 }, () => {
    const { defer, host, d } = group();

    for (const [method, target] of [['GET', '/nope'], ['GET', '/api/'], ['GET', '//api/status'], ['GET', '/API'], ['GET', '/api/status/x'], ['POST', '/api/nope'], ['OPTIONS', '/nope']]) {
      test(`${method} ${target} answers 404 Not found`, async () => {
        const res = await d.request(method, target);
        assertReply(res, 404, { ok: false, error: 'Not found' });
      });
    }

    for (const [method, target, allow] of [
      ['POST', '/api/status', 'GET, HEAD, OPTIONS'], ['DELETE', '/', 'GET, HEAD, OPTIONS'], ['PUT', '/api/logs/latest', 'GET, HEAD, OPTIONS'],
      ['GET', '/api/server/start', 'OPTIONS, POST'], ['HEAD', '/api/command', 'OPTIONS, POST'], ['PATCH', '/api/backup', 'OPTIONS, POST'],
    ]) {
      test(`${method} ${target} answers 405 with Allow: ${allow}`, async () => {
        const res = await d.request(method, target, { key: KEY });
        assert.equal(res.status, 405);
        assertCommonHeaders(res.headers);
        assert.equal(res.headers.allow, allow);
        if (method !== 'HEAD') assert.deepEqual(res.json, { ok: false, error: `Method not allowed: this path takes ${allow}.` });
      });
    }

    for (const [target, methods] of [['/api/status', 'GET, HEAD, OPTIONS'], ['/', 'GET, HEAD, OPTIONS'], ['/api/command', 'OPTIONS, POST']]) {
      test(`OPTIONS ${target} answers the 204 CORS preflight without a key`, async () => {
        const res = await d.request('OPTIONS', target, { headers: { Origin: 'https://relay.example', 'Access-Control-Request-Method': 'POST' } });
        assert.equal(res.status, 204);
        assertCommonHeaders(res.headers, null);
        assert.equal(res.headers['access-control-allow-methods'], methods);
        assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, X-API-Key');
        assert.equal(res.headers['access-control-max-age'], '600');
        assert.equal(res.text, '');
      });
    }

    for (const target of ['/api', '/api/properties', '/api/players/whitelist', '/api/logs/latest?lines=3']) {
      test(`HEAD ${target} answers GET's status and headers without a body`, async () => {
        const get = await d.get(target);
        const head = await d.request('HEAD', target);
        const strip = (h: http.IncomingHttpHeaders) => { const { date: _d, connection: _c, 'keep-alive': _k, ...rest } = h; return rest; };
        assert.equal(head.status, get.status);
        assert.deepEqual(strip(head.headers), strip(get.headers));
        assertCommonHeaders(head.headers, get.headers['content-type'] as string);
        const raw = await rawRequest(d.port, `HEAD ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, { untilClose: true });
        assert.equal(raw.status, get.status);
        assert.equal(raw.headers['content-length'], get.headers['content-length']);
        assert.equal(raw.body.length, 0);
      });
    }

    test('GET /api answers 417 JSON with the common headers to an Expect other than 100-continue', async () => {
      const raw = await rawRequest(d.port, 'GET /api HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\n\r\n');
      assert.equal(raw.status, 417);
      assertCommonHeaders(raw.headers);
      assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error: 'Expectation failed' });
    });

    test('POST /api/command with Expect: 100-continue and a wrong key gets the 401 JSON, and no 100 Continue before it', async () => {
      const raw = await rawRequest(d.port, 'POST /api/command HTTP/1.1\r\nHost: localhost\r\nX-API-Key: wrong\r\nExpect: 100-continue\r\nContent-Length: 23\r\n\r\n');
      assert.equal(raw.status, 401);   // the first status line the daemon wrote
      assertCommonHeaders(raw.headers);
      assert.equal(raw.headers.connection, 'close');
      assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error: MSG.unauthorized });
    });

    test('POST /api/command with Expect: 100-continue and the valid key gets 100 Continue, then its answer once the body is sent', async () => {
      const socket = net.connect(d.port, '127.0.0.1');
      let received = '';
      socket.setEncoding('latin1').on('data', (text: string) => (received += text));
      defer(() => socket.destroy());
      const body = '{"command":"say hello"}';
      socket.write(`POST /api/command HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
      await waitFor(() => received.startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
      socket.write(body);
      await waitFor(() => /\r\n\r\n\{.*\}$/.test(received.slice('HTTP/1.1 100 Continue\r\n\r\n'.length)));
      // no game runs here: the body was read and the command checked (409), which it could not be without the body
      assert.match(received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 409 Conflict\r\n/);
      assert.ok(received.endsWith(JSON.stringify({ ok: false, error: MSG.notRunning })));
    });

    test('CONNECT answers 405 JSON with the common headers and Allow: GET, HEAD, OPTIONS, POST', async () => {
      const raw = await rawRequest(d.port, 'CONNECT localhost:6767 HTTP/1.1\r\nHost: localhost:6767\r\n\r\n');
      assert.equal(raw.status, 405);
      assertCommonHeaders(raw.headers);
      assert.equal(raw.headers.allow, 'GET, HEAD, OPTIONS, POST');
      assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error: 'Method not allowed: this path takes GET, HEAD, OPTIONS, POST.' });
    });

    test('GET /api/status ignores a query string', async () => {
      assert.deepEqual((await d.get('/api/status?x=1')).json, { ok: true, online: false });
    });

    for (const [rule, data, status, error] of [
      ['answers 400 JSON to malformed HTTP', 'GARBAGE\r\n\r\n', 400, 'Bad request'],
      ['answers 400 JSON to a malformed header line', 'GET /api HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n', 400, 'Bad request'],
      ['answers 400 JSON to an HTTP/1.1 request without Host', 'GET /api HTTP/1.1\r\n\r\n', 400, 'Bad request'],
      ['answers 431 JSON to headers over the size limit', `GET /api HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'Request header fields too large'],
    ] as const) {
      test(`GET /api ${rule}, and the daemon keeps serving`, async () => {
        const raw = await rawRequest(d.port, data);
        assert.equal(raw.status, status);
        assertCommonHeaders(raw.headers);
        assert.deepEqual(JSON.parse(raw.body.toString('utf8')), { ok: false, error });
        assert.equal((await d.get('/api')).status, 200);
      });
    }

    test('GET, POST, OPTIONS and HEAD responses of every kind carry the common headers (200, 400, 401, 404, 405, 413, 500, 204, HEAD)', async () => {
      fs.rmSync(serverFile(host, 'whitelist.json'), { force: true });
      fs.mkdirSync(serverFile(host, 'whitelist.json'));
      const replies: Array<[Res, string | null]> = [
        [await d.get('/api/status'), JSON_TYPE],
        [await d.get('/api/logs/latest?lines=0'), JSON_TYPE],
        [await d.post('/api/backup'), JSON_TYPE],
        [await d.get('/missing'), JSON_TYPE],
        [await d.request('PUT', '/api'), JSON_TYPE],
        [await d.post('/api/command', 'x'.repeat(20_000), { key: KEY }), JSON_TYPE],
        [await d.get('/api/players/whitelist'), JSON_TYPE],
        [await d.request('OPTIONS', '/api'), null],
        [await d.request('HEAD', '/api/status'), JSON_TYPE],
      ];
      assert.deepEqual(replies.map(([r]) => r.status), [200, 400, 401, 404, 405, 413, 500, 204, 200]);
      for (const [res, type] of replies) assertCommonHeaders(res.headers, type);
      fs.rmSync(serverFile(host, 'whitelist.json'), { recursive: true });
    });
  });

  // ---- Slow and hostile clients (docs/api.md#limits-and-protection: the daemon keeps serving others) ----

  describe('slow and hostile clients', { concurrency: 1 }, () => {
    const { defer, host, d } = group();

    test('GET /api/status answers 200 while another client sends its headers one byte every 200 ms', async (t) => {
      const head = Buffer.from(`GET /api/status HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`);
      const slow = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
      let sent = 0;
      const timer = setInterval(() => { if (sent < head.length) slow.write(head.subarray(sent, ++sent)); }, 200);
      t.after(() => { clearInterval(timer); slow.destroy(); });
      await waitFor(() => sent >= 5);
      const res = await d.get('/api/status');
      assertReply(res, 200, { ok: true, online: false });
      assert.ok(sent < head.length && !slow.destroyed, 'the slow client is still sending its headers');
    });

    test('GET /api/status answers 200 while 100 other connections stay open and idle', async (t) => {
      const idle: net.Socket[] = [];
      t.after(() => idle.forEach((socket) => socket.destroy()));
      for (let i = 0; i < 100; i++) idle.push(net.connect(d.port, '127.0.0.1').on('error', () => undefined));
      await waitFor(() => idle.every((socket) => !socket.connecting));
      const res = await d.get('/api/status');
      assertReply(res, 200, { ok: true, online: false });
      assert.deepEqual(idle.filter((socket) => socket.destroyed), []);
    });

    test('GET /api/status answers 200 once connections beyond 512 at once were closed at the door', async (t) => {
      // a daemon of its own: the group's may not yet have seen the last test's 100 connections close, and would count
      // them among the 512 (412 taken, once, on a busy machine)
      const own = await startDaemon(host, defer);
      t.after(() => own.stop());
      const clients: net.Socket[] = [];
      const closed = new Set<net.Socket>();
      t.after(() => clients.forEach((socket) => socket.destroy()));
      for (let i = 0; i < 530; i++) {
        const socket = net.connect(own.port, '127.0.0.1').on('error', () => undefined);
        socket.once('close', () => closed.add(socket));
        clients.push(socket);
      }
      await waitFor(() => closed.size >= 18);
      const open = clients.filter((socket) => !closed.has(socket));
      assert.equal(open.length, 512);
      open.slice(0, 10).forEach((socket) => socket.destroy());
      // the daemon sees those ten close a moment later: until then a new client is closed at the door too
      const res = await waitFor(() => own.get('/api/status').catch(() => undefined));
      assertReply(res, 200, { ok: true, online: false });
    });

    test('GET /api/status answers 200 after a client disconnects in the middle of a POST body', async (t) => {
      const socket = net.connect(d.port, '127.0.0.1').on('error', () => undefined);
      t.after(() => socket.destroy());
      await new Promise((resolve) => socket.once('connect', resolve));
      await new Promise((resolve) => socket.write(`POST /api/command HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\n`
        + 'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"command":"say half a bo', resolve));
      assert.equal((await d.get('/api/status')).status, 200);   // the daemon has read the half body by now
      socket.destroy();
      await new Promise((resolve) => socket.once('close', resolve));
      const res = await d.get('/api/status');
      assertReply(res, 200, { ok: true, online: false });
      assert.doesNotMatch(d.stdout() + d.stderr(), /uncaught exception|unhandled rejection/);
    });
  });

  // ---- Security (README: Security) ----

  describe('security', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ host: { onlineMode: false } });

    test('POST /api/command answers 401, never 500, to a wrong X-API-Key of every length from 0 to 300, ASCII or not', async () => {
      const body = '{"command":"say hello"}';
      const request = (key: Buffer) => Buffer.concat([
        Buffer.from(`POST /api/command HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\nX-API-Key: `), key, Buffer.from(`\r\n\r\n${body}`)]);
      const wrong: Array<[string, Buffer]> = [];
      for (let length = 0; length <= 300; length++) {
        // prefixes and extensions of the valid key are the nearest misses; the hashed comparison takes one path for all
        const ascii = length < KEY.length ? KEY.slice(0, length) : length === KEY.length ? `${KEY.slice(0, -1)}${KEY.endsWith('A') ? 'B' : 'A'}` : KEY + 'x'.repeat(length - KEY.length);
        wrong.push([`ascii ${length}`, Buffer.from(ascii)], [`bytes 0x80-0xff ${length}`, Buffer.from(Array.from({ length }, (_, i) => 0x80 + ((i * 31 + length) & 0x7f)))]);
      }
      // pipelined on keep-alive connections, 25 a connection (the daemon reads up to 32 ahead): the same requests as
      // one a connection, without 600 connections' cost
      const answers: Array<[string, number, unknown]> = [];
      const batches: Array<Array<[string, Buffer]>> = [];
      for (let i = 0; i < wrong.length; i += 25) batches.push(wrong.slice(i, i + 25));
      await Promise.all(batches.map(async (batch) => {
        const replies = await sendPipelined(d.port, batch.map(([, key]) => request(key)));
        batch.forEach(([label], j) => answers.push([label, replies[j].status, replies[j].json]));
      }));
      assert.deepEqual(answers.filter(([, status, json]) => status !== 401 || JSON.stringify(json) !== JSON.stringify({ ok: false, error: MSG.unauthorized })), []);
      assert.equal(answers.length, 602);
    });

    test('POST write routes never print the valid key or a wrong one to the daemon\'s stdout or stderr', async () => {
      const wrong = `wrong-${randomBytes(24).toString('base64url')}`;
      const logged = await startDaemon(host, defer);
      const writes: Array<[string, object | undefined]> = [['/api/command', { command: 'say with the key' }], ['/api/whitelist/add', { player: 'Keyed_One' }],
        ['/api/whitelist/remove', { player: 'Keyed_One' }], ['/api/server/stop', undefined], ['/api/backup', undefined]];
      const statuses: number[] = [];
      for (const [route, body] of writes) {
        statuses.push((await logged.post(route, body, { key: KEY })).status, (await logged.post(route, body, { key: wrong })).status);
      }
      statuses.push((await logged.get('/api/properties', { key: KEY })).status, (await logged.get('/api/logs/latest', { key: wrong })).status);
      assert.deepEqual(statuses, [409, 401, 200, 401, 200, 401, 200, 401, 200, 401, 200, 200]);
      assert.deepEqual(await logged.stop(), { code: 0, signal: null });
      const output = logged.stdout() + logged.stderr();
      assert.equal(output.split('\n').filter((line) => / POST \/api\//.test(line)).length, 10, output);   // every write was logged
      assert.equal(output.includes(KEY), false);
      assert.equal(output.includes(wrong), false);
    });

    test('GET routes read no path built from input: traversal in the path answers 404', async () => {
      const targets = ['/etc/passwd', '//etc/passwd', '/api/logs/../../../../etc/passwd', '/api/logs/latest/../../../etc/passwd', '/api/logs/latest/%2e%2e/%2e%2e/etc/passwd',
        '/%2e%2e/%2e%2e/etc/passwd', '/api/logs/..%2f..%2f..%2fetc%2fpasswd', '/api/backups/../../../etc/passwd', '/api/backups/..%2f..%2fetc%2fpasswd',
        '/api/properties/../../../etc/passwd', '/api/logs/latest%00/etc/passwd', '/api/logs/%2fetc%2fpasswd', '/api/logs/latest.log'];
      const answers = [];
      for (const target of targets) {
        const res = await d.get(target);
        answers.push([target, res.status, res.json]);
      }
      assert.deepEqual(answers, targets.map((target) => [target, 404, { ok: false, error: 'Not found' }]));
    });

    test('GET routes read no path built from input: a file, path or dir in the query changes nothing', async () => {
      fs.writeFileSync(serverFile(host, 'logs/latest.log'), 'the real latest.log\n');
      const plain = {
        latest: (await d.get('/api/logs/latest')).json, snapshot: (await d.get('/api/logs/snapshot')).json,
        properties: (await d.get('/api/properties')).json, backups: (await d.get('/api/backups')).json, whitelist: (await d.get('/api/players/whitelist')).json,
      };
      assert.deepEqual(plain.latest, { ok: true, file: 'latest.log', lines: ['the real latest.log'] });
      const hostile = {
        latest: (await d.get('/api/logs/latest?file=/etc/passwd')).json,
        snapshot: (await d.get('/api/logs/snapshot?file=../../../../etc/passwd&path=/etc/passwd')).json,
        properties: (await d.get('/api/properties?file=/etc/passwd&name=../../../etc/passwd')).json,
        backups: (await d.get('/api/backups?dir=/etc&path=..%2f..%2f..')).json,
        whitelist: (await d.get('/api/players/whitelist?file=/etc/passwd')).json,
      };
      assert.deepEqual(hostile, plain);
      const lines = await d.get('/api/logs/latest?lines=../../../etc/passwd');
      assertReply(lines, 400, { ok: false, error: MSG.lines });
      const player = await d.post('/api/whitelist/add', { player: '../../../etc/passwd' }, { key: KEY });
      assertReply(player, 400, { ok: false, error: MSG.playerPattern });
    });

    for (const name of ['serv;touch shell-ran', 'serv $(touch shell-ran) `touch shell-ran-too`', 'serv && touch shell-ran', 'serv | touch shell-ran']) {
      test(`POST /api/server/start runs a SERV_BIN named ${JSON.stringify(name)} in a folder with a space, without a shell`, async () => {
        const dir = path.join(host.root, 'odd bin');   // the fake serv finds its host from its own folder's parent
        fs.mkdirSync(dir, { recursive: true });
        const bin = path.join(dir, name);
        fs.copyFileSync(path.join(host.binDir, 'serv'), bin);
        fs.chmodSync(bin, 0o755);
        const cwd = fs.mkdtempSync(path.join(host.root, 'cwd-'));   // a shell would run touch here, in the daemon's working directory
        const daemon = await startDaemon(host, defer, { SERV_BIN: bin }, { cwd });
        const calls = servCalls(host).length;
        const res = await daemon.post('/api/server/start', undefined, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'Server start command issued.' });
        const call = await waitFor(() => servCalls(host)[calls]);
        assert.deepEqual(call.argv, ['start']);
        assert.deepEqual(fs.readdirSync(cwd), []);
        assert.deepEqual(fs.readdirSync(host.root).filter((entry) => entry.startsWith('shell-ran')), []);
      });
    }
  });

  // ---- The console reaches the game's own pane, and only it (docs/api.md#console-delivery) ----

  describe('POST /api/command reaches the game\'s own tmux pane, and only it', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ game: true });
    let markers = 0;
    const gamePane = async () => {
      const [game] = findGamePids(host.serverDir);
      const panes = (await host.tmux('list-panes', '-s', '-t', `=${host.tmuxSession}`, '-F', '#{pane_id} #{pane_pid}')).trim().split('\n');
      return panes.map((line) => line.split(' ')).find(([, pid]) => Number(pid) === game)![0];
    };
    /** A shell in a new window or a split of the game's pane; it becomes the active pane. Killed after the test. */
    const openShell = async (t: { after: (fn: () => unknown) => void }, how: 'new-window' | 'split-window') => {
      const target = how === 'new-window' ? `=${host.tmuxSession}:` : await gamePane();   // a window goes into the session
      const pane = (await host.tmux(how, '-t', target, '-P', '-F', '#{pane_id}', '--', 'bash', '--norc', '--noprofile')).trim();
      t.after(() => host.tmux('kill-pane', '-t', pane).catch(() => undefined));
      return pane;
    };
    /** A command that would create `marker` if a shell ran it; a sentinel typed into `shell` proves that shell read nothing before it. */
    const assertShellRanNothing = async (shell: string, marker: string) => {
      const sentinel = `${marker}-sentinel`;
      await host.tmux('send-keys', '-t', shell, '-l', '--', `touch ${sentinel}`);
      await host.tmux('send-keys', '-t', shell, 'Enter');
      await waitFor(() => fs.existsSync(sentinel));
      assert.equal(fs.existsSync(marker), false, 'the command reached the shell');
    };

    for (const how of ['new-window', 'split-window'] as const) {
      test(`POST /api/command types into the game's pane, not into a shell in a ${how === 'new-window' ? 'second window' : 'split of its pane'} that is active`, async (t) => {
        const shell = await openShell(t, how);
        assert.equal((await host.tmux('display-message', '-p', '-t', `=${host.tmuxSession}:`, '#{pane_id}')).trim(), shell);   // the active pane
        const marker = path.join(host.root, `pane-marker-${++markers}`);
        const start = consoleBytes(host).length;
        const res = await d.post('/api/command', { command: `touch ${marker}` }, { key: KEY });
        assertReply(res, 200, { ok: true, message: `Command sent: touch ${marker}` });
        assert.equal(await consoleSince(host, start, `touch ${marker}\n`), `touch ${marker}\n`);
        await assertShellRanNothing(shell, marker);
      });
    }

    test('POST /api/command answers 503 while the game\'s pane is in copy mode, types nothing, and a stop refused then leaves no "stopping" behind', async (t) => {
      const pane = await gamePane();
      await host.tmux('copy-mode', '-t', pane);
      t.after(() => host.tmux('send-keys', '-t', pane, '-X', 'cancel').catch(() => undefined));
      const start = consoleBytes(host).length;
      for (const command of ['say in copy mode', 'stop']) {
        const res = await d.post('/api/command', { command }, { key: KEY });
        assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}its tmux pane is in copy-mode; leave that mode (press q in the pane) and try again.` });
      }
      await host.tmux('send-keys', '-t', pane, '-X', 'cancel');
      await assertNothingSentSince(d, host, start);   // delivered once copy mode is left: the refused stop recorded nothing
    });

    test('POST /api/command answers 503 while synchronize-panes is on in the game\'s window, and types into no pane', async (t) => {
      const shell = await openShell(t, 'split-window');
      await host.tmux('set-window-option', '-t', shell, 'synchronize-panes', 'on');
      t.after(() => host.tmux('set-window-option', '-t', shell, 'synchronize-panes', 'off').catch(() => undefined));
      const marker = path.join(host.root, `pane-marker-${++markers}`);
      const start = consoleBytes(host).length;
      const res = await d.post('/api/command', { command: `touch ${marker}` }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}synchronize-panes is on in its tmux window, so the keys would also reach its other panes; turn it off with: tmux set-window-option synchronize-panes off.` });
      await host.tmux('set-window-option', '-t', shell, 'synchronize-panes', 'off');
      await assertShellRanNothing(shell, marker);
      await assertNothingSentSince(d, host, start);
    });

    test('POST /api/command delivers while latest.log is a FIFO: delivery never waits for the log (GET /api/players/online answers 500)', async (t) => {
      const latest = serverFile(host, 'logs/latest.log');
      const saved = fs.readFileSync(latest);
      fs.rmSync(latest);
      assert.equal(spawnSync('mkfifo', [latest]).status, 0);
      t.after(() => { fs.rmSync(latest, { force: true }); fs.writeFileSync(latest, saved); });
      const start = consoleBytes(host).length;
      const res = await d.post('/api/command', { command: 'say past a fifo' }, { key: KEY, timeoutMs: 5_000 });
      assertReply(res, 200, { ok: true, message: 'Command sent: say past a fifo' });
      assert.equal(await consoleSince(host, start, 'say past a fifo\n'), 'say past a fifo\n');
      const players = await d.get('/api/players/online', { timeoutMs: 5_000 });
      assertReply(players, 500, { ok: false, error: 'latest.log is not a regular file.' });
    });

    test('POST /api/command answers 503 naming the session when the game runs outside any tmux session', async () => {
      const bare = await makeSandbox(defer);
      const child = spawn(path.join(bare.binDir, 'java'), [`-Dgameserver.console=${bare.consoleRecord}`, '-jar', 'server.jar', 'nogui'],
        { cwd: bare.serverDir, env: bare.daemonEnv(), stdio: ['pipe', 'ignore', 'ignore'] });
      defer(() => { if (child.pid && isAlive(child.pid)) process.kill(child.pid, 'SIGKILL'); });
      await waitFor(() => findGamePids(bare.serverDir).length === 1);
      await bare.tmux('-f', '/dev/null', 'new-session', '-d', '-s', bare.tmuxSession, '--', 'sleep', '300');   // the session exists, the game is not in it
      const outside = await startDaemon(bare, defer);
      const res = await outside.post('/api/command', { command: 'say nobody hears this' }, { key: KEY });
      assertReply(res, 503, { ok: false, error: `${MSG.consolePrefix}the game server does not run in a pane of the tmux session "gameserver".` });
      assert.equal(consoleBytes(bare).length, 0);
    });
  });

  // ---- Files that are not files (docs/api.md#files-that-are-not-files) ----

  describe('files that are not files', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ game: true });
    const kinds: Array<[string, (file: string) => Promise<void>]> = [
      ['a FIFO', async (file) => assert.equal(spawnSync('mkfifo', [file]).status, 0)],
      ['a unix socket', async (file) => {
        const server = net.createServer();
        await new Promise<void>((resolve) => server.listen(file, resolve));
        defer(() => new Promise((resolve) => server.close(resolve)));
      }],
      ['a character device (a symlink to /dev/zero)', async (file) => fs.symlinkSync('/dev/zero', file)],
    ];
    const files: Array<[string, () => string, string]> = [
      ['latest.log', () => serverFile(host, 'logs/latest.log'), '/api/logs/latest'],
      ['latest.log', () => serverFile(host, 'logs/latest.log'), '/api/players/online'],
      ['gameserver_snapshot.log', () => host.snapshotLog, '/api/logs/snapshot'],
      ['whitelist.json', () => serverFile(host, 'whitelist.json'), '/api/players/whitelist'],
      ['server.properties', () => serverFile(host, 'server.properties'), '/api/properties'],
    ];
    for (const [kind, make] of kinds) {
      for (const [name, fileOf, route] of files) {
        test(`GET ${route} answers 500 "${name} is not a regular file." when ${name} is ${kind}, at once`, async (t) => {
          const file = fileOf();
          const saved = fs.readFileSync(file);
          fs.rmSync(file);
          t.after(() => { fs.rmSync(file, { force: true }); fs.writeFileSync(file, saved); });
          await make(file);
          const res = await d.get(route, { afterChange: true, timeoutMs: 5_000 });
          assertReply(res, 500, { ok: false, error: `${name} is not a regular file.` });
        });
      }
    }

    test('GET /api/status leaves version out while version_history.json is a FIFO', async (t) => {
      const file = serverFile(host, 'version_history.json');
      const saved = fs.readFileSync(file);
      fs.rmSync(file);
      assert.equal(spawnSync('mkfifo', [file]).status, 0);
      t.after(() => { fs.rmSync(file, { force: true }); fs.writeFileSync(file, saved); });
      const res = await d.get('/api/status', { afterChange: true, timeoutMs: 5_000 });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.json), ['ok', 'online', 'pid', 'uptime', 'memory']);
    });

    test('GET /api/backups does not list a FIFO named like an archive', async (t) => {
      const fifo = path.join(host.backupDir, 'snapshot_2099-01-01_00-00-00.tar.gz');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      t.after(() => fs.rmSync(fifo, { force: true }));
      const res = await d.get('/api/backups', { afterChange: true, timeoutMs: 5_000 });
      assert.equal(res.status, 200);
      assert.equal(res.json.backups.some((b: { name: string }) => b.name === path.basename(fifo)), false);
    });

    test('after requests for FIFOs, 8 tails of a regular file are all answered and SIGTERM exits 0 at once: no thread was left blocked', async (t) => {
      const latest = serverFile(host, 'logs/latest.log');
      const saved = fs.readFileSync(latest);
      fs.rmSync(latest);
      assert.equal(spawnSync('mkfifo', [latest]).status, 0);
      t.after(() => { fs.rmSync(latest, { force: true }); fs.writeFileSync(latest, saved); });
      // more requests than libuv has threads (4): each would hold one for ever in a blocking open()
      const fifoAnswers = await Promise.all(Array.from({ length: 6 }, (_, i) => d.get(`/api/logs/latest?lines=${i + 1}`, { afterChange: true, timeoutMs: 5_000 })));
      assert.deepEqual(fifoAnswers.map((r) => r.status), Array(6).fill(500));
      fs.rmSync(latest);
      fs.writeFileSync(latest, 'one\ntwo\n');
      const tails = await Promise.all(Array.from({ length: 8 }, (_, i) => d.get(`/api/logs/latest?lines=${i + 1}`, { afterChange: true, timeoutMs: 5_000 })));
      assert.deepEqual(tails.map((r) => r.status), Array(8).fill(200));
      assert.deepEqual(await d.stop('SIGTERM'), { code: 0, signal: null });
      assert.ok(!d.stdout().includes('requests still in flight'), 'the daemon exits without its 5 s grace: nothing was in flight');
    });
  });

  // ---- Presence belongs to one game process; hostile lines (docs/formats.md#midnight-roll) ----

  describe('GET /api/players/online and the logs of an earlier run', { concurrency: 1 }, () => {
    const defer = cleanupStack();
    /** Local date and time of day, as log4j names archives and stamps lines. */
    const localStamp = (ms: number) => {
      const at = new Date(ms);
      const pad = (n: number) => String(n).padStart(2, '0');
      return { date: `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`, clock: `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}` };
    };
    const startedAtMs = (pid: number) => {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      return Date.now() - (parseFloat(fs.readFileSync('/proc/uptime', 'utf8')) - startTicks / 100) * 1000;
    };

    test('GET /api/players/online counts nobody from an archive of an earlier run while latest.log has no Starting line yet, and counts the players of an archive this process rolled', async () => {
      const host = await makeSandbox(defer);
      const pid = await host.startGame();
      const logs = serverFile(host, 'logs');
      for (const name of fs.readdirSync(logs)) fs.rmSync(path.join(logs, name));
      // the running game's log as it is before its Starting line (early ServerMain lines only)
      fs.writeFileSync(path.join(logs, 'latest.log'), `[${localStamp(Date.now()).clock}] [ServerMain/INFO]: Loaded 1370 recipes\n`);
      // the run before, rolled when this one started: it crashed with Kim online
      const earlier = localStamp(startedAtMs(pid) - 3 * 3600_000);
      fs.writeFileSync(path.join(logs, `${earlier.date}-1.log.gz`), gzipSync(`[${earlier.clock}] [Server thread/INFO]: Starting minecraft server version 1.21.4\n[${earlier.clock}] [Server thread/INFO]: Kim joined the game\n`));
      const d = await startDaemon(host, defer);
      assert.deepEqual((await d.get('/api/players/online')).json, { ok: true, online: true, count: 0, players: [] });
      // this process's own session, rolled at midnight: a Starting line after the process started
      const own = localStamp(startedAtMs(pid) + 1_000);
      const rolled = path.join(logs, `${own.date}-2.log.gz`);
      fs.writeFileSync(rolled, gzipSync(`[${own.clock}] [Server thread/INFO]: Starting minecraft server version 1.21.4\n[${own.clock}] [Server thread/INFO]: Lou joined the game\n`));
      const fresh = await startDaemon(host, defer);
      assert.deepEqual((await fresh.get('/api/players/online')).json, { ok: true, online: true, count: 1, players: ['Lou'] });
    });

    test('GET /api/players/online answers at once when latest.log ends in a 512 KiB line built to make a prefix pattern backtrack', async () => {
      const host = await makeSandbox(defer);
      await host.startGame();
      const d = await startDaemon(host, defer);
      assert.equal((await d.get('/api/players/online')).status, 200);   // read to its end
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), `[${'00:00:00 '.repeat(58_000)}Alex joined the game`);
      // a backtracking pattern took about 10 s per request here; the bound says "at once", generously
      const res = await d.get('/api/players/online', { timeoutMs: 3_000 });
      assert.deepEqual(res.json, { ok: true, online: true, count: 0, players: [] });
      const tail = await d.get('/api/logs/latest?lines=1', { timeoutMs: 3_000 });
      assert.equal(tail.status, 200);
      assert.equal(tail.json.lines[0].length, 9 * 58_000 + 21);
    });
  });

  // ---- Command output (docs/api.md#command-output) ----

  describe('POST /api/command with "output": true', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ game: true });
    const withOutput = (command: string) => d.post('/api/command', { command, output: true }, { key: KEY });

    test('POST /api/command answers the game\'s one-line reply to list, as its message text', async () => {
      const res = await withOutput('list');
      assertReply(res, 200, { ok: true, message: 'Command sent: list', output: ['There are 0 of a max of 20 players online: '] });
    });

    test('POST /api/command answers every line of a reply of several lines, in order', async () => {
      const res = await withOutput('banlist');
      assert.deepEqual(res.json, { ok: true, message: 'Command sent: banlist', output: ['There are 2 ban(s):', 'Griefer_1 was banned by Server: Griefing', 'Spammer_2 was banned by Alex: Spam'] });
    });

    test('POST /api/command answers at most 100 lines of a longer reply', async () => {
      const res = await withOutput('help');
      assert.equal(res.json.output.length, 100);
      assert.deepEqual([res.json.output[0], res.json.output[99]], ['/command001 <arguments>', '/command100 <arguments>']);
    });

    test('POST /api/command answers at most 64 KiB of reply lines', async (t) => {
      await someoneOnline(host, d, t);
      const latest = serverFile(host, 'logs/latest.log');
      const start = consoleBytes(host).length;
      const pending = withOutput('tellraw @a "quiet"');
      // lines logged in the window, 1,000 bytes each: 65 fit in 64 KiB, the 66th does not
      await waitFor(() => consoleBytes(host).subarray(start).includes('tellraw @a "quiet"'));
      fs.appendFileSync(latest, Array.from({ length: 80 }, (_, i) => `${P}Reply ${String(i).padStart(2, '0')} ${'z'.repeat(990)}\n`).join(''));
      const res = await pending;
      assert.equal(res.json.output.length, 65);
      assert.ok(res.json.output.reduce((sum: number, line: string) => sum + Buffer.byteLength(line), 0) <= 64 * 1024);
    });

    test('POST /api/command answers the reply without a chat line logged in the same moment', async () => {
      // the game logs the chat line right after its reply
      fs.writeFileSync(path.join(host.controlDir, 'chat-after-reply'), '<§eAlex§r> hello there');
      const res = await withOutput('say window');
      assert.deepEqual(res.json.output, ['[Server] window']);
      assert.match(fs.readFileSync(serverFile(host, 'logs/latest.log'), 'utf8'), /\[Server\] window\n\[\d\d:\d\d:\d\d\] \[Async Chat Thread - #2\/INFO\]: <§eAlex§r> hello there\n$/);
    });

    for (const output of [null, 'yes', 1, {}]) {
      test(`POST /api/command answers 400 for "output": ${JSON.stringify(output)}, and sends nothing`, async () => {
        const start = consoleBytes(host).length;
        const res = await d.post('/api/command', { command: 'say not sent', output }, { key: KEY });
        assertReply(res, 400, { ok: false, error: 'output must be true or false.' });
        await assertNothingSentSince(d, host, start);
      });
    }

    test('POST /api/command with "output": false answers as without it', async () => {
      const res = await d.post('/api/command', { command: 'say plain', output: false }, { key: KEY });
      assertReply(res, 200, { ok: true, message: 'Command sent: say plain' });
    });


    test('POST /api/command answers only the reply: no login (with its address), join, leave, chat (U+2028 and U+2029 included), /me, player /say or player command line logged in its window, before or after the reply', async () => {
      const start = consoleBytes(host).length;
      const release = holdConsole(host, defer);
      const pending = withOutput('list');
      await waitFor(() => consoleBytes(host).subarray(start).includes('list\n'));
      const players = [
        `${P}Mallory[/198.51.100.7:53120] logged in with entity id 9 at (0.5, 64.0, 0.5)`, `${P}Mallory joined the game`,
        `${P}<Mallory> @everyone free nitro https://example.com`, `${P}[Not Secure] <Mallory> @everyone free nitro`,
        '[12:00:00] [Async Chat Thread - #1/INFO]: <Mallory> @everyone free nitro', `${P}* Mallory waves`, `${P}[Mallory] @here`,
        `${P}<Mallory> @everyone free nitro https://discord.gg/scam \u2028`, `${P}<Mallory> \u2029@here`, `${P}* Mallory waves\u2028`,
        `${P}Mallory issued server command: /tell Alex @everyone free nitro`,
      ];
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), players.map((line) => `${line}\n`).join(''));
      fs.writeFileSync(path.join(host.controlDir, 'lines-after-reply'), JSON.stringify([
        ['Server thread', '<Mallory> @everyone again'], ['Async Chat Thread - #1', '<Mallory> and again'], ['Server thread', 'Mallory lost connection: Disconnected'],
        ['Server thread', 'Mallory left the game'],
      ]));
      release();
      const res = await pending;
      assert.deepEqual([res.status, res.json.output], [200, ['There are 0 of a max of 20 players online: ']]);
    });

    test('POST /api/command masks addresses in the reply: it is meant for a chat channel', async () => {
      const res = await withOutput('banlist ips');
      assert.deepEqual(res.json.output, ['There are 1 ban(s):', '<ip> was banned by Server: Griefing']);
    });

  });

  // the tests that wait out a window (3 s without a reply, 2 s of a stream of lines) run beside the others
  describe('POST /api/command with "output": true, windows over time', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });
    const withOutput = (command: string) => d.post('/api/command', { command, output: true }, { key: KEY });

    test('POST /api/command answers "output": [] for a command that prints nothing, once its 3 s pass', async (t) => {
      await someoneOnline(host, d, t);
      const res = await withOutput('tellraw @a "hi"');
      assert.deepEqual(res.json, { ok: true, message: 'Command sent: tellraw @a "hi"', output: [] });
    });

    test('POST /api/command runs output windows one at a time: nine are answered, a tenth beyond eight waiting gets 429', async () => {
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => withOutput(`say queued ${i}`)));
      assert.deepEqual(replies.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 429]);
      assert.deepEqual(replies.find((r) => r.status === 429)!.json, { ok: false, error: 'Too many commands waiting for output; try again.' });
      // each window holds its own reply and no other command's
      for (const reply of replies.filter((r) => r.status === 200)) {
        assert.deepEqual(reply.json.output, [`[Server] ${reply.json.message.slice('Command sent: say '.length)}`]);
      }
    });

    test('POST /api/command closes its window 2 s after the first line, however many still arrive', async (t) => {
      const pending = withOutput('say first');
      let answered = false;
      void pending.then(() => (answered = true));
      await waitFor(() => fs.readFileSync(serverFile(host, 'logs/latest.log'), 'utf8').includes('[Server] first\n'));
      // a line every 250 ms, never 300 ms of quiet: the old rule alone would keep the window open to its 100 lines
      let n = 0;
      const timer = setInterval(() => { if (!answered) fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${P}Saving chunks ${++n}\n`); }, 250);
      t.after(() => clearInterval(timer));
      const res = await pending;
      clearInterval(timer);
      assert.equal(res.json.output[0], '[Server] first');
      assert.ok(res.json.output.length <= 16, `${res.json.output.length} lines`);
      assert.deepEqual(res.json.output.slice(1), Array.from({ length: res.json.output.length - 1 }, (_, i) => `Saving chunks ${i + 1}`));
    });

    test('POST /api/command without output waits for an open output window to close, and its reply is not in that output', async (t) => {
      await someoneOnline(host, d, t);
      const start = consoleBytes(host).length;
      const slow = withOutput('tellraw @a "slow"');   // no reply: its window stays open 3 s
      const order: string[] = [];
      void slow.then(() => order.push('output'));
      await waitFor(() => consoleBytes(host).subarray(start).includes('tellraw @a "slow"\n'));
      const plain = await d.post('/api/command', { command: 'say meanwhile' }, { key: KEY });
      order.push('plain');
      assert.equal(plain.status, 200);
      assert.deepEqual(order, ['output', 'plain']);
      assert.deepEqual((await slow).json.output, []);
      assert.equal(await consoleSince(host, start, 'tellraw @a "slow"\nsay meanwhile\n'), 'tellraw @a "slow"\nsay meanwhile\n');
    });
  });

  // ---- Confirmed whitelist edits (docs/api.md#confirmed-whitelist-edits) ----

  describe('POST /api/whitelist/add and /remove wait for the running game\'s verdict', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ host: { onlineMode: true }, game: true });   // only names in usercache.json exist for this game
    const whitelist = () => serverFile(host, 'whitelist.json');
    const names = () => (JSON.parse(fs.readFileSync(whitelist(), 'utf8')) as Array<{ name: string }>).map((e) => e.name).sort();
    const setEra = (era: string | null) => (era === null ? fs.rmSync(path.join(host.controlDir, 'game-era'), { force: true }) : fs.writeFileSync(path.join(host.controlDir, 'game-era'), `${era}\n`));

    for (const era of ['1.21', '1.12']) {
      test(`POST /api/whitelist/add answers 200 once the ${era} game confirms, and remove too`, async () => {
        setEra(era === '1.12' ? era : null);
        const added = await d.post('/api/whitelist/add', { player: 'kai_2' }, { key: KEY });
        assertReply(added, 200, { ok: true, message: 'kai_2 added to whitelist.' });
        assert.ok(names().includes('Kai_2'));
        const removed = await d.post('/api/whitelist/remove', { player: 'Kai_2' }, { key: KEY });
        assertReply(removed, 200, { ok: true, message: 'Kai_2 removed from whitelist.' });
        assert.ok(!names().includes('Kai_2'));
      });

      test(`POST /api/whitelist/add answers 404 when the ${era} game says the account does not exist, and nothing changes`, async () => {
        setEra(era === '1.12' ? era : null);
        const before = fs.readFileSync(whitelist());
        const res = await d.post('/api/whitelist/add', { player: 'Nobody_Here' }, { key: KEY });
        assertReply(res, 404, { ok: false, error: 'Nobody_Here is not a Minecraft account.' });
        assert.deepEqual(fs.readFileSync(whitelist()), before);
      });
    }

    test('POST /api/whitelist/add answers "already on the whitelist" when the game says so of a player listed under an older name', async () => {
      setEra(null);
      const before = fs.readFileSync(whitelist());
      fs.writeFileSync(whitelist(), gson([...JSON.parse(before.toString('utf8')), { uuid: offlineUuid('Kai_2'), name: 'Kai_Old' }]));
      try {
        const res = await d.post('/api/whitelist/add', { player: 'Kai_2' }, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'Kai_2 is already on the whitelist.' });
      } finally {
        fs.writeFileSync(whitelist(), before);
      }
    });

    // the game's list in memory lacks an entry the file has (written while it ran, not reloaded): 1.12 finds none by that name
    test('POST /api/whitelist/remove answers "not on the whitelist" when the 1.12 game cannot remove a name it has no such entry for', async (t) => {
      setEra('1.12');
      const before = fs.readFileSync(whitelist());
      fs.writeFileSync(whitelist(), gson([...JSON.parse(before.toString('utf8')), { uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', name: 'Kai_2' }]));
      fs.writeFileSync(path.join(host.controlDir, 'game-ignores-whitelist'), '');
      t.after(() => fs.rmSync(path.join(host.controlDir, 'game-ignores-whitelist'), { force: true }));
      fs.writeFileSync(path.join(host.controlDir, 'lines-after-reply'), JSON.stringify([['Server thread', 'Could not remove Kai_2 from the whitelist']]));
      try {
        const res = await d.post('/api/whitelist/remove', { player: 'Kai_2' }, { key: KEY });
        assertReply(res, 200, { ok: true, message: 'Kai_2 is not on the whitelist.' });
      } finally {
        fs.writeFileSync(whitelist(), before);
        setEra(null);
      }
    });

    /** Types `plain` through POST /api/command, then starts the edit; both wait in the held console. */
    const editBehind = async (plain: string, route: string, player: string) => {
      const start = consoleBytes(host).length;
      const release = holdConsole(host, defer);
      assert.equal((await d.post('/api/command', { command: plain }, { key: KEY })).status, 200);
      const edit = d.post(route, { player }, { key: KEY });
      const action = route.endsWith('add') ? 'add' : 'remove';
      await waitFor(() => consoleBytes(host).subarray(start).includes(`whitelist ${action} ${player}\n`));
      return { release, edit };
    };

    test('POST /api/whitelist/add answers 404 for an unknown name whose edit follows a plain whitelist add of a listed player: the other command\'s "already whitelisted" is not its verdict', async () => {
      const before = fs.readFileSync(whitelist());
      const { release, edit } = await editBehind('whitelist add Alex', '/api/whitelist/add', 'Nobody456');
      release();
      const res = await edit;
      assertReply(res, 404, { ok: false, error: 'Nobody456 is not a Minecraft account.' });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/add answers 200 for a name it added whose edit follows a plain whitelist add of an unknown name: the other command\'s refusal is not its verdict', async () => {
      const before = fs.readFileSync(whitelist());
      try {
        const { release, edit } = await editBehind('whitelist add Nobody_7', '/api/whitelist/add', 'Kai_2');
        release();
        const res = await edit;
        assertReply(res, 200, { ok: true, message: 'Kai_2 added to whitelist.' });
        assert.ok(names().includes('Kai_2'));
      } finally {
        fs.writeFileSync(whitelist(), before);
      }
    });

    test('POST /api/whitelist/add takes no verdict from a chat line, an Async Chat Thread line or a line without the log\'s prefix', async () => {
      const before = fs.readFileSync(whitelist());
      const start = consoleBytes(host).length;
      const release = holdConsole(host, defer);
      const edit = d.post('/api/whitelist/add', { player: 'Nobody789' }, { key: KEY });
      await waitFor(() => consoleBytes(host).subarray(start).includes('whitelist add Nobody789\n'));
      fs.appendFileSync(whitelist().replace('whitelist.json', 'logs/latest.log'), [
        '[12:00:00] [Async Chat Thread - #2/INFO]: Added Nobody789 to the whitelist', 'Added Nobody789 to the whitelist',
        `${P}<Mallory> Added Nobody789 to the whitelist`, '[12:00:00] [Async Chat Thread - #2/INFO]: Player is already whitelisted',
      ].map((line) => `${line}\n`).join(''));
      release();
      const res = await edit;
      assertReply(res, 404, { ok: false, error: 'Nobody789 is not a Minecraft account.' });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });

    test('POST /api/whitelist/add answers 202 when the game neither answers nor changes whitelist.json within 5 s', async (t) => {
      fs.writeFileSync(path.join(host.controlDir, 'game-ignores-whitelist'), '');
      t.after(() => fs.rmSync(path.join(host.controlDir, 'game-ignores-whitelist'), { force: true }));
      const before = fs.readFileSync(whitelist());
      const res = await d.post('/api/whitelist/add', { player: 'Kai_2' }, { key: KEY });
      assertReply(res, 202, { ok: true, message: 'Kai_2: whitelist add sent; the game server has not confirmed it yet.' });
      assert.deepEqual(fs.readFileSync(whitelist()), before);
    });
  });

  // ---- Moderation (docs/api.md#post-apiplayerskick-ban-pardon-op-deop) ----

  describe('POST /api/players/kick|ban|pardon|op|deop wait for the running game\'s verdict', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ host: { onlineMode: true }, game: true });   // only names in usercache.json exist for this game
    const bans = () => serverFile(host, 'banned-players.json');
    const ops = () => serverFile(host, 'ops.json');
    const stored = (file: string) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) as Array<Record<string, unknown>> : []);
    const names = (file: string) => stored(file).map((e) => e.name);
    const mark = () => consoleBytes(host).length;
    const post = (action: string, body: object) => d.post(`/api/players/${action}`, body, { key: KEY });
    const latest = () => fs.readFileSync(serverFile(host, 'logs/latest.log'), 'utf8');
    const online = async (player: string) => {
      act(host, { do: 'join', player });
      await waitFor(async () => ((await d.get('/api/players/online')).json.players as string[]).includes(player));
    };

    for (const era of ['1.21', '1.12', '1.8']) {
      test(`POST /api/players/ban, pardon, op and deop answer 200 once the ${era} game confirms, naming the player as sent, and the files hold the game's entries`, async (t) => {
        control(host, 'game-era', era === '1.21' ? null : era);
        t.after(() => control(host, 'game-era', null));
        const start = mark();
        assertReply(await post('ban', { player: 'kai_2', reason: 'Spam bot' }), 200, { ok: true, message: 'kai_2 banned.' });
        const ban = stored(bans()).find((e) => e.name === 'Kai_2');
        assert.deepEqual(Object.keys(ban ?? {}), ['uuid', 'name', 'created', 'source', 'expires', 'reason']);
        assert.deepEqual([ban!.uuid, ban!.source, ban!.expires, ban!.reason], [offlineUuid('Kai_2'), 'Server', 'forever', 'Spam bot']);
        assertReply(await post('pardon', { player: 'KAI_2' }), 200, { ok: true, message: 'KAI_2 unbanned.' });
        assert.ok(!names(bans()).includes('Kai_2'));
        assertReply(await post('op', { player: 'kai_2' }), 200, { ok: true, message: 'kai_2 is now an operator.' });
        assert.deepEqual(stored(ops()).find((e) => e.name === 'Kai_2'), { uuid: offlineUuid('Kai_2'), name: 'Kai_2', level: 4, bypassesPlayerLimit: false });
        assertReply(await post('deop', { player: 'Kai_2' }), 200, { ok: true, message: 'Kai_2 is no longer an operator.' });
        assert.ok(!names(ops()).includes('Kai_2'));
        assert.equal(await consoleSince(host, start, 'ban kai_2 Spam bot\npardon KAI_2\nop kai_2\ndeop Kai_2\n'), 'ban kai_2 Spam bot\npardon KAI_2\nop kai_2\ndeop Kai_2\n');
      });

      test(`POST /api/players/kick answers 200 once the ${era} game says so and the player left, in whichever order it logs them`, async (t) => {
        control(host, 'game-era', era === '1.21' ? null : era);
        t.after(() => control(host, 'game-era', null));
        await online('Kai_2');
        const start = mark();
        assertReply(await post('kick', { player: 'kai_2', reason: 'Take a break' }), 200, { ok: true, message: 'kai_2 was kicked.' });
        assert.equal(await consoleSince(host, start, 'kick kai_2 Take a break\n'), 'kick kai_2 Take a break\n');
        const reply = era === '1.21' ? 'Kicked Kai_2: Take a break' : 'Kicked Kai_2 from the game: \'Take a break\'';
        const log = latest();
        const [replyAt, leftAt] = [log.lastIndexOf(`]: ${reply}\n`), log.lastIndexOf(']: Kai_2 left the game\n')];
        assert.ok(replyAt > 0 && leftAt > 0);
        assert.equal(leftAt < replyAt, era === '1.21', 'the leave lines come before the reply on 1.13+ and after it on 1.8-1.12');
      });

      test(`POST /api/players/kick answers 409 "is not online" when the ${era} game finds no such player online`, async (t) => {
        control(host, 'game-era', era === '1.21' ? null : era);
        t.after(() => control(host, 'game-era', null));
        assertReply(await post('kick', { player: 'Steve' }), 409, { ok: false, error: 'Steve is not online.' });
      });
    }

    for (const era of ['1.21', '1.12']) {
      for (const action of ['ban', 'op']) {
        test(`POST /api/players/${action} answers 404 when the ${era} game says the account does not exist, and nothing changes`, async (t) => {
          control(host, 'game-era', era === '1.21' ? null : era);
          t.after(() => control(host, 'game-era', null));
          const file = action === 'ban' ? bans() : ops();
          const before = stored(file);
          assertReply(await post(action, { player: 'Nobody_Here' }), 404, { ok: false, error: 'Nobody_Here is not a Minecraft account.' });
          assert.deepEqual(stored(file), before);
        });
      }
    }

    for (const [action, player, message] of [['ban', 'griefer_1', 'griefer_1 is already banned.'], ['pardon', 'Steve', 'Steve is not banned.'], ['op', 'Alex', 'Alex is already an operator.'], ['deop', 'Steve', 'Steve is not an operator.']]) {
      test(`POST /api/players/${action} answers "${message}" from the file and sends nothing`, async () => {
        fs.writeFileSync(ops(), gson([{ uuid: offlineUuid('Alex'), name: 'Alex', level: 4, bypassesPlayerLimit: false }]));
        const start = mark();
        assertReply(await post(action, { player }), 200, { ok: true, message });
        await assertNothingSentSince(d, host, start);
      });
    }

    // the game's list in memory lacks an entry the file has (written while it ran, not reloaded): 1.12 finds none by that name
    test('POST /api/players/pardon answers "not banned" when the 1.12 game cannot unban a name it has no ban for', async (t) => {
      control(host, 'game-era', '1.12');
      control(host, 'game-ignores-pardon', '');
      control(host, 'lines-after-reply', JSON.stringify([['Server thread', 'Could not unban player Spammer_2']]));
      t.after(() => { control(host, 'game-era', null); control(host, 'game-ignores-pardon', null); });
      assertReply(await post('pardon', { player: 'Spammer_2' }), 200, { ok: true, message: 'Spammer_2 is not banned.' });
      assert.ok(names(bans()).includes('Spammer_2'));
    });

    test('POST /api/players/ban takes no verdict from a chat line, an op\'s echo, an Async Chat Thread line or a line without the log\'s prefix', async () => {
      const before = fs.readFileSync(bans());
      const start = mark();
      const release = holdConsole(host, defer);
      const pending = post('ban', { player: 'Nobody789' });
      await waitFor(() => consoleBytes(host).subarray(start).includes('ban Nobody789\n'));
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), [
        `${P}<Mallory> Banned Nobody789: x`, `${P}[Mallory: Banned Nobody789: x]`, '[12:00:00] [Async Chat Thread - #2/INFO]: Banned Nobody789: x',
        'Banned Nobody789: x', '[12:00:00] [Async Chat Thread - #2/INFO]: Nothing changed. The player is already banned',
      ].map((line) => `${line}\n`).join(''));
      release();
      assertReply(await pending, 404, { ok: false, error: 'Nobody789 is not a Minecraft account.' });
      assert.deepEqual(fs.readFileSync(bans()), before);
    });

    test('POST /api/players/kick takes no verdict from a chat line: a player who is not online is not kicked', async () => {
      const start = mark();
      const release = holdConsole(host, defer);
      const pending = post('kick', { player: 'Steve' });
      await waitFor(() => consoleBytes(host).subarray(start).includes('kick Steve\n'));
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${P}<Mallory> Kicked Steve: x\n${P}<Mallory> Steve left the game\n`);
      release();
      assertReply(await pending, 409, { ok: false, error: 'Steve is not online.' });
    });

    for (const action of ['kick', 'ban', 'pardon', 'op', 'deop']) {
      for (const [player, error] of [['bad name', MSG.playerPattern], ['x'.repeat(17), MSG.playerPattern], ['a;b', MSG.playerPattern], [undefined, MSG.playerRequired]] as const) {
        test(`POST /api/players/${action} refuses player ${JSON.stringify(player) ?? 'missing'} with 400 and sends nothing`, async () => {
          const start = mark();
          assertReply(await post(action, player === undefined ? {} : { player }), 400, { ok: false, error });
          await assertNothingSentSince(d, host, start);
        });
      }
    }

    for (const action of ['kick', 'ban']) {
      for (const [reason, error] of [['', MSG.reasonLength], ['x'.repeat(257), MSG.reasonLength], ['a;say x', MSG.reasonChars], ['line\nbreak', MSG.reasonChars], [7, MSG.reasonType]] as const) {
        test(`POST /api/players/${action} refuses reason ${JSON.stringify(reason).slice(0, 20)} with 400 and sends nothing`, async () => {
          const start = mark();
          assertReply(await post(action, { player: 'Kai_2', reason }), 400, { ok: false, error });
          await assertNothingSentSince(d, host, start);
        });
      }
    }
  });


  // the two that wait out the 5 s run beside the others
  describe('POST /api/players/ban and kick when the game does not answer', { concurrency: 1 }, () => {
    const { host, d } = group({ host: { onlineMode: true }, game: true });
    const bans = () => serverFile(host, 'banned-players.json');
    for (const action of ['ban', 'kick']) {
      test(`POST /api/players/${action} answers 202 when the game neither answers nor changes anything within 5 s`, async (t) => {
        control(host, `game-ignores-${action}`, '');
        t.after(() => control(host, `game-ignores-${action}`, null));
        if (action === 'kick') {
          act(host, { do: 'join', player: 'Kai_2' });
          await waitFor(async () => ((await d.get('/api/players/online')).json.players as string[]).includes('Kai_2'));
        }
        const before = fs.readFileSync(bans());
        assertReply(await d.post(`/api/players/${action}`, { player: 'Kai_2' }, { key: KEY }), 202, { ok: true, message: `Kai_2: ${action} sent; the game server has not confirmed it yet.` });
        assert.deepEqual(fs.readFileSync(bans()), before);
        if (action === 'kick') act(host, { do: 'leave', player: 'Kai_2' });
      });
    }
  });
  describe('POST /api/players/ban|pardon|op|deop|kick while the game server is stopped', { concurrency: 1 }, () => {
    const { host, d } = group({
      host: { onlineMode: false },
      arrange: (host) => fs.writeFileSync(serverFile(host, 'server.properties'), 'online-mode=false\nop-permission-level=2\n'),
    });
    const bans = () => serverFile(host, 'banned-players.json');
    const ops = () => serverFile(host, 'ops.json');
    const stored = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Array<Record<string, unknown>>;
    const post = (action: string, body: object) => d.post(`/api/players/${action}`, body, { key: KEY });
    const leftovers = () => fs.readdirSync(host.serverDir).filter((n) => n.includes('.json.tmp'));

    test('POST /api/players/ban writes the game\'s entry atomically, keeping every other entry, the mode and the layout', async () => {
      fs.chmodSync(bans(), 0o640);
      const before = stored(bans());
      assertReply(await post('ban', { player: 'Steve' }), 200, { ok: true, message: 'Steve banned.' });
      assertReply(await post('ban', { player: 'Zed_9', reason: 'Spamming the chat' }), 200, { ok: true, message: 'Zed_9 banned.' });
      const after = stored(bans());
      assert.deepEqual(after.slice(0, before.length), before);
      const [steve, zed] = after.slice(before.length);
      assert.deepEqual({ ...steve, created: '' }, { uuid: offlineUuid('Steve'), name: 'Steve', created: '', source: 'Server', expires: 'forever', reason: 'Banned by an operator.' });
      assert.match(steve.created as string, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}$/);
      assert.equal(zed.reason, 'Spamming the chat');
      assert.equal(fs.readFileSync(bans(), 'utf8'), gson(after));
      assert.equal(fs.statSync(bans()).mode & 0o777, 0o640);
      assert.deepEqual(leftovers(), []);
    });

    test('POST /api/players/pardon removes the entry in any letter case and keeps every other entry', async () => {
      const before = stored(bans());
      assertReply(await post('pardon', { player: 'griefer_1' }), 200, { ok: true, message: 'griefer_1 unbanned.' });
      assert.deepEqual(stored(bans()), before.filter((e) => e.name !== 'Griefer_1'));
    });

    test('POST /api/players/op creates ops.json with the game\'s entry, its level from op-permission-level, and deop empties it', async () => {
      fs.rmSync(ops(), { force: true });
      assertReply(await post('op', { player: 'alex' }), 200, { ok: true, message: 'alex is now an operator.' });
      assert.equal(fs.readFileSync(ops(), 'utf8'), gson([{ uuid: offlineUuid('alex'), name: 'alex', level: 2, bypassesPlayerLimit: false }]));
      assertReply(await post('op', { player: 'ALEX' }), 200, { ok: true, message: 'ALEX is already an operator.' });
      assertReply(await post('deop', { player: 'Alex' }), 200, { ok: true, message: 'Alex is no longer an operator.' });
      assert.equal(fs.readFileSync(ops(), 'utf8'), '[]');
      assert.deepEqual(leftovers(), []);
    });

    test('POST /api/players/kick answers 409 "Game server is not running." and writes nothing', async () => {
      const before = fs.readFileSync(bans());
      assertReply(await post('kick', { player: 'Alex' }), 409, { ok: false, error: MSG.notRunning });
      assert.deepEqual(fs.readFileSync(bans()), before);
    });

    for (const [label, content, error] of [['is not valid JSON', '[{"uuid":', 'banned-players.json is not valid JSON.'], ['is not an array', '{}', 'banned-players.json is not a JSON array of entries.']]) {
      test(`POST /api/players/ban answers 500 when banned-players.json ${label}, and leaves its bytes as they were`, async () => {
        const saved = fs.readFileSync(bans());
        fs.writeFileSync(bans(), content);
        try {
          assertReply(await post('ban', { player: 'Steve' }), 500, { ok: false, error });
          assert.equal(fs.readFileSync(bans(), 'utf8'), content);
        } finally {
          fs.writeFileSync(bans(), saved);
        }
      });
    }
  });

  describe('POST /api/players/ban and op while the game server is stopped, online-mode=true: the profile lookup', { concurrency: 1 }, () => {
    const { host, d } = group({ host: { onlineMode: true } });
    const bans = () => serverFile(host, 'banned-players.json');

    test('POST /api/players/ban takes UUID and letter case from PROFILE_LOOKUP_URL', async () => {
      const lookups = lookupsOf(host).length;
      assertReply(await d.post('/api/players/ban', { player: 'technoblade' }, { key: KEY }), 200, { ok: true, message: 'technoblade banned.' });
      assert.deepEqual(lookupsOf(host).slice(lookups), ['/technoblade']);
      const entry = (JSON.parse(fs.readFileSync(bans(), 'utf8')) as Array<Record<string, unknown>>).at(-1)!;
      assert.deepEqual([entry.uuid, entry.name], ['b876ec32-e396-476b-a115-8438d83c67d4', 'Technoblade']);
    });

    for (const [action, player, error] of [['ban', 'Nobody_Here', 'No Minecraft account is named Nobody_Here.'], ['op', 'Server_Error', MSG.lookupFailed]]) {
      test(`POST /api/players/${action} answers 502 and writes nothing when the lookup of ${player} fails`, async () => {
        const before = fs.readFileSync(bans());
        assertReply(await d.post(`/api/players/${action}`, { player }, { key: KEY }), 502, { ok: false, error });
        assert.deepEqual(fs.readFileSync(bans()), before);
        assert.equal(fs.existsSync(serverFile(host, 'ops.json')), false);
      });
    }
  });

  describe('GET /api/players/banned and /ops, and their events', { concurrency: 1 }, () => {
    const { host, d } = group();
    const bans = () => serverFile(host, 'banned-players.json');

    test('GET /api/players/banned answers the entries exactly as stored, and a change to the first request 100 ms after it', async () => {
      const entries = [{ uuid: offlineUuid('Mallory'), name: 'Mallory', created: '2026-11-27 12:00:00 +0000', source: 'Alex', expires: 'forever', reason: 'Griefing', extra: 1 }];
      fs.writeFileSync(bans(), JSON.stringify(entries, null, 4) + '\n');
      assertReply(await d.get('/api/players/banned', { afterChange: true }), 200, { ok: true, count: 1, banned: entries });
      fs.writeFileSync(bans(), '[]');
      assertReply(await d.get('/api/players/banned', { afterChange: true }), 200, { ok: true, count: 0, banned: [] });
    });

    test('GET /api/players/ops answers count 0 and an empty list when ops.json is missing, and GET /api/players/banned too', async () => {
      fs.rmSync(serverFile(host, 'ops.json'), { force: true });
      assertReply(await d.get('/api/players/ops', { afterChange: true }), 200, { ok: true, count: 0, ops: [] });
      fs.rmSync(bans(), { force: true });
      assertReply(await d.get('/api/players/banned', { afterChange: true }), 200, { ok: true, count: 0, banned: [] });
    });

    test('GET /api/players/ops answers 500 when ops.json is a folder, not a regular file', async () => {
      fs.mkdirSync(serverFile(host, 'ops.json'));
      try {
        assertReply(await d.get('/api/players/ops', { afterChange: true }), 500, { ok: false, error: 'ops.json is not a regular file.' });
      } finally {
        fs.rmSync(serverFile(host, 'ops.json'), { recursive: true });
      }
    });

    test('GET /api/events sends bans.changed and ops.changed when another tool rewrites banned-players.json and ops.json', async (t) => {
      fs.writeFileSync(bans(), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }]));
      const stream = openEventStream(d.port);
      t.after(() => stream.close());
      await stream.opened;
      await waitFor(() => stream.retryMs() !== undefined);   // the stream begins once watching took the starting state
      fs.writeFileSync(bans(), gson([{ uuid: offlineUuid('Mallory'), name: 'Mallory' }]));
      fs.writeFileSync(serverFile(host, 'ops.json'), gson([{ uuid: offlineUuid('Kai_2'), name: 'Kai_2', level: 4, bypassesPlayerLimit: false }]));
      await waitFor(() => stream.parsed().some((e) => e.type === 'ops.changed'));
      const events = stream.parsed().filter((e) => e.type === 'bans.changed' || e.type === 'ops.changed').map(({ time: _t, ...e }) => e);
      assert.deepEqual(events.sort((a, b) => a.type.localeCompare(b.type)), [
        { type: 'bans.changed', added: ['Mallory'], removed: ['Alex'] },
        { type: 'ops.changed', added: ['Kai_2'], removed: [] },
      ]);
    });

    test('GET /api/events tells ops.changed when ops.json is written after it was missing at several looks', async (t) => {
      fs.rmSync(serverFile(host, 'ops.json'), { force: true });
      const stream = openEventStream(d.port);
      t.after(() => stream.close());
      await stream.opened;
      await waitFor(() => stream.retryMs() !== undefined);
      // each whitelist change has the folder's lists looked at: ops.json is seen missing again, and not read again
      for (const name of ['Kai_2', 'Mallory']) {
        fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid(name), name }]));
        await waitFor(() => stream.parsed().some((e) => e.type === 'whitelist.changed' && (e.added as string[]).includes(name)));
      }
      // the removal of what an earlier test left in ops.json, if any, was told with the first of those changes
      const mark = stream.parsed().length;
      fs.writeFileSync(serverFile(host, 'ops.json'), gson([{ uuid: offlineUuid('Alex'), name: 'Alex', level: 4, bypassesPlayerLimit: false }]));
      await waitFor(() => stream.parsed().slice(mark).some((e) => e.type === 'ops.changed'));
      assert.deepEqual(stream.parsed().slice(mark).filter((e) => e.type === 'ops.changed').map(({ time: _t, ...e }) => e), [
        { type: 'ops.changed', added: ['Alex'], removed: [] },
      ]);
    });
  });

  // ---- Live events (docs/api.md#get-apievents) ----

  interface StreamEvent { type: string; data: string; lastEventId: string }

  /**
   * An event stream read as browsers and n8n's SSE Trigger (the eventsource package) read one: the WHATWG HTML rules
   * "Interpreting an event stream" — lines end in CR, LF or CRLF; a leading BOM is skipped; `:` starts a comment; data
   * lines join with LF; `id` without NUL sets the last event id; `retry` takes digits only; a blank line dispatches,
   * an empty data buffer dispatches nothing; an event without `event:` is a `message`.
   */
  // headers: sent as they are (X-API-Key); auth: `user:password`, sent as Basic auth the way a URL's userinfo is
  function openEventStream(port: number, { path: target = '/api/events', lastEventId, headers: extra = {}, auth }: { path?: string; lastEventId?: string; headers?: Record<string, string>; auth?: string } = {}) {
    const events: StreamEvent[] = [];
    let comments = 0;
    let retryMs: number | undefined;
    let lastId = lastEventId ?? '';   // a reconnecting EventSource keeps the last id it had
    let buffer = '';
    let data = '';
    let eventType = '';
    let first = true;
    const interpret = (line: string): void => {
      if (line === '') {
        if (data !== '') events.push({ type: eventType || 'message', data: data.slice(0, -1), lastEventId: lastId });
        data = '';
        eventType = '';
        return;
      }
      if (line.startsWith(':')) return void comments++;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') eventType = value;
      else if (field === 'data') data += `${value}\n`;
      else if (field === 'id' && !value.includes('\0')) lastId = value;
      else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
    };
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...extra };
    if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
    let response: http.IncomingMessage | undefined;
    const opened = new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: target, headers, auth, agent: false }, (res) => {
        response = res;
        res.setEncoding('utf8').on('data', (chunk: string) => {
          if (first && chunk.startsWith('\uFEFF')) chunk = chunk.slice(1);
          first = false;
          buffer += chunk;
          // a CR at the end of a chunk may be the first half of a CRLF: it waits for the next chunk
          for (let match = /\r\n|\r(?!$)|\n/.exec(buffer); match !== null; match = /\r\n|\r(?!$)|\n/.exec(buffer)) {
            interpret(buffer.slice(0, match.index));
            buffer = buffer.slice(match.index + match[0].length);
          }
        });
        res.on('error', () => undefined);
        resolve(res);
      });
      req.on('error', reject);
    });
    return {
      events, opened,
      comments: () => comments, retryMs: () => retryMs, lastEventId: () => lastId,
      // every event the daemon sends is one its API description's Event schema allows
      parsed: () => events.map((e) => {
        const event = JSON.parse(e.data) as { type: string; time: string; [field: string]: unknown };
        assert.deepEqual(schemaErrors(event, { $ref: '#/components/schemas/Event' }), [], e.data);
        return event;
      }),
      close: () => response?.destroy(),
    };
  }

  describe('GET /api/events', { concurrency: 1 }, () => {
    const { defer, host, d } = group();
    const latest = () => serverFile(host, 'logs/latest.log');
    const stream = (options?: Parameters<typeof openEventStream>[1]) => {
      const s = openEventStream(d.port, options);
      defer(() => s.close());
      return s;
    };
    const typesOf = (s: ReturnType<typeof openEventStream>) => s.parsed().map((e) => e.type);
    // a stream's first bytes (retry:) come once the daemon took the starting state: a change after them is an event
    const begunStream = async () => {
      const s = stream();
      await s.opened;
      await waitFor(() => s.retryMs() !== undefined);
      return s;
    };

    test('GET /api/events answers text/event-stream with the common headers, no-store and X-Accel-Buffering: no, and begins with retry: 3000', async () => {
      const s = stream();
      const res = await s.opened;
      assert.equal(res.statusCode, 200);
      assertCommonHeaders(res.headers, 'text/event-stream; charset=utf-8');
      assert.equal(res.headers['x-accel-buffering'], 'no');
      await waitFor(() => s.retryMs() === 3000);
      assert.deepEqual(s.events, []);
      s.close();
    });

    test('GET /api/events tells a game server\'s start, its players, its stop line and its end, in order, each once, as unnamed events with ids', async () => {
      const s = await begunStream();
      const pid = await host.startGame();
      await waitFor(() => typesOf(s).includes('server.ready'));
      fs.appendFileSync(latest(), `${P}Alex[/198.51.100.7:53120] logged in with entity id 7 at (0.5, 64.0, 0.5)\n${P}Alex joined the game\n`);
      await waitFor(() => typesOf(s).includes('player.joined'));
      const stop = await d.post('/api/command', { command: 'stop' }, { key: KEY });
      assert.equal(stop.status, 200);
      await waitFor(() => typesOf(s).includes('server.stopped'));
      assert.deepEqual(s.parsed().map(({ time: _time, ...rest }) => rest), [
        { type: 'server.started', pid },
        { type: 'server.ready', pid },   // the game answered its ping on its own port
        { type: 'player.joined', player: 'Alex' },   // no address: events show nothing the public routes do not
        { type: 'server.stopping' },
        { type: 'player.left', player: 'Alex' },
        { type: 'server.stopped', pid, crashed: false },
      ]);
      assert.ok(s.events.every((e) => e.type === 'message' && e.lastEventId !== ''));
      assert.equal(new Set(s.events.map((e) => e.lastEventId)).size, s.events.length);
      assert.ok(s.parsed().every((e) => !Number.isNaN(Date.parse(e.time)) && e.time.endsWith('Z')));
      s.close();
    });

    test('GET /api/events tells server.ready once for each run of the game: a game started again after it ended is told ready again', async () => {
      const s = await begunStream();
      const first = await host.startGame();
      await waitFor(() => typesOf(s).includes('server.ready'));
      fs.appendFileSync(latest(), `${P}<Alex> lines of a run told ready already\n`);   // glances at the log meanwhile
      await host.stopGame();
      await waitFor(() => typesOf(s).includes('server.stopped'));
      const second = await host.startGame();
      await waitFor(() => typesOf(s).filter((type) => type === 'server.ready').length === 2);
      assert.deepEqual(s.parsed().filter((e) => e.type === 'server.ready').map(({ time: _t, ...e }) => e), [
        { type: 'server.ready', pid: first },
        { type: 'server.ready', pid: second },
      ]);
      await host.stopGame();
      await waitFor(() => typesOf(s).filter((type) => type === 'server.stopped').length === 2);   // told before the next test's stream opens
    });

    test('GET /api/events tells a game server that ended without a stop line as crashed, and its players as left', async () => {
      const s = stream();
      await s.opened;
      const pid = await host.startGame();
      await waitFor(() => typesOf(s).includes('server.started'));
      fs.appendFileSync(latest(), `${P}Bob joined the game\n`);
      await waitFor(() => typesOf(s).includes('player.joined'));
      process.kill(pid, 'SIGKILL');
      await waitFor(() => typesOf(s).includes('server.stopped'));
      assert.deepEqual(s.parsed().slice(-2).map(({ time: _time, ...rest }) => rest), [{ type: 'player.left', player: 'Bob' }, { type: 'server.stopped', pid, crashed: true }]);
      await host.stopGame();
      s.close();
    });

    test('GET /api/events tells whitelist changes made by anyone, and a finished backup with its /api/backups entry', async () => {
      const s = await begunStream();
      fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid('Alex'), name: 'Alex' }, { uuid: offlineUuid('Zoe'), name: 'Zoe' }]));
      await waitFor(() => typesOf(s).includes('whitelist.changed'));
      const archive = path.join(host.backupDir, 'snapshot_2099-01-01_00-00-00.tar.gz');
      fs.writeFileSync(`${archive}.part`, Buffer.alloc(1536, 1));
      fs.renameSync(`${archive}.part`, archive);
      await waitFor(() => typesOf(s).includes('backup.finished'));
      const listed = (await d.get('/api/backups', { afterChange: true })).json.backups.find((b: { name: string }) => b.name === path.basename(archive));
      const [changed, finished] = s.parsed().filter((e) => e.type !== 'player.left');
      assert.deepEqual({ added: changed.added, removed: changed.removed }, { added: ['Zoe'], removed: ['Steve'] });
      assert.deepEqual(finished.backup, listed);
      s.close();
    });

    test('GET /api/events replays the events after Last-Event-ID (header or ?lastEventId=), and a reset first for an id it does not have', async () => {
      const first = stream();
      const observer = stream();   // sees the events while the first is closed
      await waitFor(() => first.retryMs() !== undefined && observer.retryMs() !== undefined);
      fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid('Replay_1'), name: 'Replay_1' }]));
      await waitFor(() => first.events.length >= 1);
      const seen = first.lastEventId();
      first.close();
      fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid('Replay_2'), name: 'Replay_2' }]));
      await waitFor(() => observer.events.length >= 2);
      const header = stream({ lastEventId: seen });
      const query = stream({ path: `/api/events?lastEventId=${encodeURIComponent(seen)}` });
      for (const s of [header, query]) {
        await waitFor(() => s.events.length >= 1);
        assert.deepEqual(s.parsed().map((e) => [e.type, e.added, e.removed]), [['whitelist.changed', ['Replay_2'], ['Replay_1']]]);
      }
      const unknown = stream({ lastEventId: 'from-an-earlier-run-7' });
      await waitFor(() => unknown.events.length >= 1);
      assert.deepEqual(unknown.parsed().map((e) => e.type), ['stream.reset']);
      assert.equal(unknown.events[0].lastEventId, 'from-an-earlier-run-7');   // the reset carries no id of its own
      [header, query, unknown, observer].forEach((s) => s.close());
    });

    test('GET /api/events keeps the last 1,000 events: a reconnect after an id older than those gets a reset first', async () => {
      await runningGame(host);
      const s = await begunStream();
      fs.appendFileSync(latest(), Array.from({ length: 501 }, () => `${P}Kai_2 joined the game\n${P}Kai_2 left the game\n`).join(''));
      await waitFor(() => s.parsed().filter((e) => e.player === 'Kai_2').length === 1_002);
      const oldest = s.events[s.parsed().findIndex((e) => e.player === 'Kai_2')].lastEventId;
      s.close();
      const late = stream({ lastEventId: oldest });
      await waitFor(() => late.events.length >= 1);
      assert.equal(late.parsed()[0].type, 'stream.reset');
      late.close();
    });

    for (const [how, options] of [
      ['as X-API-Key', { headers: { 'X-API-Key': `${KEY}x` } }],
      ['as the password of Basic auth', { auth: `relay:${KEY}x` }],
    ] as const) {
      test(`GET /api/events answers 401 JSON to a wrong key sent ${how}, and carries the same events for the right one`, async () => {
        const wrong = await d.request('GET', '/api/events', { ...('headers' in options ? { headers: options.headers } : { headers: { Authorization: `Basic ${Buffer.from(options.auth).toString('base64')}` } }), timeoutMs: 5_000 });
        assertReply(wrong, 401, { ok: false, error: 'Unauthorized — the key sent (X-API-Key, or the password of Basic auth) is wrong.' });
        assertCommonHeaders(wrong.headers);
        const right = stream('headers' in options ? { headers: { 'X-API-Key': KEY } } : { auth: `relay:${KEY}` });
        assert.equal((await right.opened).statusCode, 200);
        await waitFor(() => right.retryMs() === 3000);
          const name = 'headers' in options ? 'Keyed_Header' : 'Keyed_Basic';
        fs.writeFileSync(serverFile(host, 'whitelist.json'), gson([{ uuid: offlineUuid(name), name }]));
        await waitFor(() => typesOf(right).includes('whitelist.changed'));
        right.close();
      });
    }

    test('HEAD /api/events answers the stream\'s headers and no body', async () => {
      const raw = await rawRequest(d.port, 'HEAD /api/events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', { untilClose: true });
      assert.equal(raw.status, 200);
      assertCommonHeaders(raw.headers, 'text/event-stream; charset=utf-8');
      assert.equal(raw.body.length, 0);
    });
  });

  describe('GET /api/events: what players say and do, lag and crashes', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ game: true });
    const stream = () => {
      const s = openEventStream(d.port);
      defer(() => s.close());
      return s;
    };
    /** A stream that has taken the starting state, with these players online in the game. */
    const watching = async (...players: string[]) => {
      await runningGame(host);
      const s = stream();
      await waitFor(() => s.retryMs() !== undefined);
      const online = async () => (await d.get('/api/players/online')).json.players as string[];
      const here = await online();
      const missing = players.filter((player) => !here.includes(player));
      if (missing.length > 0) act(host, ...missing.map((player): GameAction => ({ do: 'join', player })));
      await waitFor(async () => { const now = await online(); return players.every((player) => now.includes(player)); });
      return s;
    };
    let markers = 0;
    /** Alex says a marker, and the stream shows it: everything the game wrote before it has been read. */
    const settle = async (s: ReturnType<typeof openEventStream>) => {
      const marker = `marker ${++markers}`;
      act(host, { do: 'chat', player: 'Alex', text: marker });
      await waitFor(() => s.parsed().some((e) => e.type === 'player.chat' && e.text === marker));
    };
    const carried = (s: ReturnType<typeof openEventStream>, type: string) =>
      s.parsed().filter((e) => e.type === type && !(type === 'player.chat' && String(e.text).startsWith('marker '))).map(({ type: _type, time: _time, ...rest }) => rest);

    test('player.chat carries the chat of players online in each layout (vanilla, [Not Secure], Paper\'s chat threads, Forge), colour codes removed, addresses masked, at most 256 characters, and nothing else', async () => {
      const s = await watching('Alex', '.Bramble_Crest');
      act(host,
        { do: 'chat', player: 'Alex', text: 'hello there' },
        { do: 'chat', player: '.Bramble_Crest', text: 'unsigned', secure: false },
        { do: 'chat', player: 'Alex', text: '<Bob> hi' },   // Alex saying `<Bob> hi`
        { do: 'chat', player: 'Alex', text: '[12:00:00] [Server thread/INFO]: <Bob> I quit' },   // a line pasted into chat
        { do: 'chat', player: 'Alex', text: '§cred§r, my IP is 203.0.113.9' },
        { do: 'say', player: 'Alex', text: 'a /say' },
        { do: 'me', player: 'Alex', text: 'waves' },
        { do: 'tell', player: 'Alex', to: 'Bob', text: 'psst' },
        { do: 'chat', player: 'Bob', text: 'I am not online' },
        { do: 'chat', player: 'Alex', text: 'y'.repeat(300) },
        { do: 'chat', player: 'Alex', text: 'line\u2028separator\u2029and next\u0085line' },   // vanilla takes all three
      );
      await settle(s);
      control(host, 'game-flavour', 'paper');
      defer(() => control(host, 'game-flavour', null));
      act(host, { do: 'chat', player: 'Alex', text: 'from a chat thread' }, { do: 'say', player: 'Alex', text: 'a /say on Paper' }, { do: 'tell', player: 'Alex', to: 'Bob', text: 'psst' });
      await settle(s);
      control(host, 'game-flavour', 'forge');
      act(host, { do: 'chat', player: 'Alex', text: 'from Forge' });
      await settle(s);
      control(host, 'game-flavour', null);
      assert.deepEqual(carried(s, 'player.chat'), [
        { player: 'Alex', text: 'hello there' },
        { player: '.Bramble_Crest', text: 'unsigned' },
        { player: 'Alex', text: '<Bob> hi' },
        { player: 'Alex', text: '[12:00:00] [Server thread/INFO]: <Bob> I quit' },
        { player: 'Alex', text: 'red, my IP is <ip>' },
        { player: 'Alex', text: 'y'.repeat(256) },
        { player: 'Alex', text: 'line\u2028separator\u2029and next\u0085line' },
        { player: 'Alex', text: 'from a chat thread' },
        { player: 'Alex', text: 'from Forge' },
      ]);
    });

    test('player.died carries the game\'s death messages of players online, and neither a chat line that reads like one nor a death of a name not online', async () => {
      const s = await watching('Alex');
      act(host,
        { do: 'die', player: 'Alex', message: 'was slain by Zombie' },
        { do: 'chat', player: 'Alex', text: 'Alex fell from a high place' },
        { do: 'die', player: 'Bob', message: 'drowned' },
        { do: 'die', player: 'Alex', message: 'was shot by a Skeleton named @everyone using [Bow of https://evil.example]' },
        { do: 'die', player: 'Alex', message: 'fell too far and was finished by Creeper using [Bow]' },
      );
      await settle(s);
      assert.deepEqual(carried(s, 'player.died'), [
        { player: 'Alex', message: 'Alex was slain by Zombie' },
        { player: 'Alex', message: 'Alex was shot by a Skeleton named @everyone using [Bow of https://evil.example]' },
        { player: 'Alex', message: 'Alex fell too far and was finished by Creeper using [Bow]' },
      ]);
    });

    test('player.advancement carries tasks, goals, challenges and 1.8-1.11\'s achievements of players online', async () => {
      const s = await watching('Alex');
      act(host,
        { do: 'advance', player: 'Alex', kind: 'task', title: 'Stone Age' },
        { do: 'advance', player: 'Alex', kind: 'goal', title: 'The End?' },
        { do: 'advance', player: 'Alex', kind: 'challenge', title: 'Return to Sender' },
        { do: 'advance', player: 'Bob', kind: 'task', title: 'Not Online' },
      );
      await settle(s);
      control(host, 'game-era', '1.8');
      defer(() => control(host, 'game-era', null));
      act(host, { do: 'advance', player: 'Alex', kind: 'task', title: 'Taking Inventory' });
      await settle(s);
      control(host, 'game-era', null);
      assert.deepEqual(carried(s, 'player.advancement'), [
        { player: 'Alex', advancement: 'Stone Age', kind: 'task' },
        { player: 'Alex', advancement: 'The End?', kind: 'goal' },
        { player: 'Alex', advancement: 'Return to Sender', kind: 'challenge' },
        { player: 'Alex', advancement: 'Taking Inventory', kind: 'achievement' },
      ]);
    });

    test('server.lagging tells the first warning of a quiet minute at once and keeps the rest for the minute\'s sum; the counters count every warning, in both texts', async () => {
      const s = await watching('Alex');
      const before = parseExposition((await d.get('/metrics', { afterChange: true })).text).samples;
      act(host, { do: 'lag', ms: 2034 }, { do: 'lag', ms: 3000 });
      control(host, 'game-era', '1.12');
      defer(() => control(host, 'game-era', null));
      await settle(s);
      act(host, { do: 'lag', ms: 2500 });
      await settle(s);
      control(host, 'game-era', null);
      assert.deepEqual(carried(s, 'server.lagging'), [{ behind_ms: 2034, ticks: 40, overloads: 1 }]);
      const after = parseExposition((await d.get('/metrics', { afterChange: true })).text).samples;
      const grew = (name: string) => after.get(name)! - before.get(name)!;
      assert.equal(grew('minecraft_tick_overloads_total'), 3);
      assert.equal(grew('minecraft_ticks_behind_total'), 40 + 60 + 50);
    });

    test('a backlog over 16 MiB is read for presence alone: its joins are told and counted as presence, its chat neither told nor counted, its bytes counted', async () => {
      const s = await watching('Alex');
      await settle(s);
      const scrape = async () => parseExposition((await d.get('/metrics', { afterChange: true })).text).samples;
      const before = await scrape();
      // 17 MiB of Alex's chat, then Kai joins; the daemon is stopped meanwhile, so that it meets the flood whole
      // (a reader can see a large write in parts, and what it meets in parts of 16 MiB or less it reads live)
      const flood = `${P}<Alex> flood ${'x'.repeat(48)}\n`.repeat(Math.ceil(17 * 2 ** 20 / (P.length + 62)));
      d.child.kill('SIGSTOP');
      try {
        fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${flood}${P}Kai_2 joined the game\n`);
      } finally {
        d.child.kill('SIGCONT');
      }
      await waitFor(() => s.parsed().some((e) => e.type === 'player.joined' && e.player === 'Kai_2'));
      await settle(s);
      const after = await scrape();
      assert.ok(!s.parsed().some((e) => e.type === 'player.chat' && String(e.text).startsWith('flood')), 'no chat of the backlog told');
      assert.equal(after.get('minecraft_chat_messages_total')! - before.get('minecraft_chat_messages_total')!, 1, 'the marker alone');
      assert.ok(after.get('gameserver_api_log_backlog_bytes_total')! - before.get('gameserver_api_log_backlog_bytes_total')! >= 17 * 2 ** 20);
      assert.ok((await d.get('/api/players/online')).json.players.includes('Kai_2'));
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${P}Kai_2 left the game\n`);
    });

    test('the chat, death and advancement counters count the lines of players online, and a daemon started later counts none written before it', async () => {
      const s = await watching('Alex');
      const scrape = async (daemon: Daemon) => parseExposition((await daemon.get('/metrics', { afterChange: true })).text).samples;
      const before = await scrape(d);
      act(host,
        { do: 'chat', player: 'Alex', text: 'one' }, { do: 'chat', player: 'Bob', text: 'not online' },
        { do: 'die', player: 'Alex', message: 'drowned' }, { do: 'advance', player: 'Alex', kind: 'goal', title: 'The End?' },
      );
      await settle(s);
      const after = await scrape(d);
      for (const [name, grew] of [['minecraft_chat_messages_total', 2], ['minecraft_player_deaths_total', 1], ['minecraft_advancements_total', 1]] as const) {
        assert.equal(after.get(name)! - before.get(name)!, grew, name);   // the marker is chat too
      }
      const later = await startDaemon(host, defer);
      const fresh = await scrape(later);
      for (const name of ['minecraft_chat_messages_total', 'minecraft_player_deaths_total', 'minecraft_advancements_total', 'minecraft_tick_overloads_total', 'minecraft_ticks_behind_total']) {
        assert.equal(fresh.get(name), 0, name);
      }
      await settle(s);
      assert.equal((await scrape(later)).get('minecraft_chat_messages_total'), 1);
    });

    test('server.stopped after a crash in the tick loop is crashed with the crash report\'s Description as reason, though a stop line followed', async () => {
      const s = await watching();
      const pid = await runningGame(host);
      act(host, { do: 'crash', description: 'Exception in server tick loop' });
      await waitFor(() => s.parsed().some((e) => e.type === 'server.stopped'));
      assert.deepEqual(s.parsed().filter((e) => e.type.startsWith('server.')).map(({ time: _time, ...rest }) => rest), [
        { type: 'server.stopping' },
        { type: 'server.stopped', pid, crashed: true, reason: 'Exception in server tick loop' },
      ]);
    });

    test('server.stopped after a crash takes its reason from the report written, not from a name that sorts later (a clock once ahead, a FIFO)', async () => {
      const s = await watching();
      const pid = await runningGame(host);
      const reports = serverFile(host, 'crash-reports');
      fs.mkdirSync(reports, { recursive: true });
      const ahead = path.join(reports, 'crash-2099-01-01_00.00.00-server.txt');
      fs.writeFileSync(ahead, '---- Minecraft Crash Report ----\nDescription: A crash of the clock that ran ahead\n');
      fs.utimesSync(ahead, new Date(Date.now() - 86_400_000), new Date(Date.now() - 86_400_000));
      const fifo = path.join(reports, 'crash-2100-01-01_00.00.00-server.txt');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      defer(() => { fs.rmSync(ahead, { force: true }); fs.rmSync(fifo, { force: true }); });
      act(host, { do: 'crash', description: 'Exception in server tick loop' });
      await waitFor(() => s.parsed().some((e) => e.type === 'server.stopped'));
      assert.deepEqual(s.parsed().filter((e) => e.type === 'server.stopped').map(({ time: _time, ...rest }) => rest), [
        { type: 'server.stopped', pid, crashed: true, reason: 'Exception in server tick loop' },
      ]);
    });

    test('server.stopped after the watchdog\'s crash carries its reason; a clean stop after an earlier run\'s crash report has none', async () => {
      const s = await watching();
      const pid = await runningGame(host);
      act(host, { do: 'crash', description: 'Watching Server', by: 'watchdog' });
      await waitFor(() => s.parsed().some((e) => e.type === 'server.stopped'));
      const next = await runningGame(host);
      await waitFor(() => s.parsed().some((e) => e.type === 'server.started'));
      assert.equal((await d.post('/api/command', { command: 'stop' }, { key: KEY })).status, 200);
      await waitFor(() => s.parsed().filter((e) => e.type === 'server.stopped').length === 2);
      assert.deepEqual(s.parsed().filter((e) => e.type === 'server.stopped').map(({ time: _time, ...rest }) => rest), [
        { type: 'server.stopped', pid, crashed: true, reason: 'Watching Server' },
        { type: 'server.stopped', pid: next, crashed: false },
      ]);
    });
  });

  // ---- The relay's workflows against the daemon (docs/n8n/) ----

  describe('docs/n8n: what the workflows send for a chat message, and what they answer', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });
    const load = (file: string) => JSON.parse(fs.readFileSync(path.join(N8N_DIR, file), 'utf8')) as N8nWorkflow;
    /**
     * A message through a workflow as n8n runs it: its HTTP Request node's URL and body for the message, sent to the
     * daemon with the key, and the reply its Respond to Webhook node makes of the answer.
     */
    const relay = async (file: string, message: object, node?: string) => {
      const workflow = load(file);
      const call = node === undefined ? n8nNodes(workflow, 'httpRequest')[0] : workflow.nodes.find((n) => n.name === node)!;
      const [trigger] = n8nNodes(workflow, 'webhook');
      const items = { [trigger.name]: { body: message }, Settings: { apiBase: `http://127.0.0.1:${d.port}` } };
      const body = n8nEvaluate(call.parameters.jsonBody, {}, items);
      const res = await d.request(call.parameters.method, new URL(n8nEvaluate(call.parameters.url, {}, items)).pathname, { key: KEY, body });
      const answer = workflow.connections[call.name].main[0][0].node;
      const responseBody = workflow.nodes.find((node) => node.name === answer)!.parameters.responseBody as string;
      return { body: JSON.parse(body) as Record<string, unknown>, res, reply: (JSON.parse(n8nEvaluate(responseBody, { statusCode: res.status, body: res.json }, items)) as { reply: string }).reply };
    };
    const mark = () => consoleBytes(host).length;

    for (const text of ['say "quoted" it\'s fine', 'say emoji 😀 and ümlauts', 'list']) {
      test(`chat-command.json types !mc ${JSON.stringify(text)} as written and replies with the game's reply`, async () => {
        const start = mark();
        const { body, res, reply } = await relay('chat-command.json', { content: `!mc ${text}`, author: { username: 'kim' }, roles: ['Minecraft Admin'] });
        assert.deepEqual(body, { command: text, output: true });
        assert.equal(res.status, 200);
        assert.equal(await consoleSince(host, start, `${text}\n`), `${text}\n`);
        assert.equal(reply, escapeForDiscord(res.json.output.join('\n') || 'Done.'));
      });
    }

    for (const text of ['say back\\slash', 'say two\nlines', 'say {{ not an expression }}']) {
      test(`chat-command.json carries !mc ${JSON.stringify(text)} intact, and the daemon's 400 is the chat's reply`, async () => {
        const start = mark();
        const { body, res, reply } = await relay('chat-command.json', { content: `!mc ${text}`, author: { username: 'kim' }, roles: ['Minecraft Admin'] });
        assert.deepEqual(body, { command: text, output: true });
        assertReply(res, 400, { ok: false, error: MSG.commandChars });
        assert.equal(reply, escapeForDiscord(MSG.commandChars));
        await assertNothingSentSince(d, host, start);
      });
    }

    test('chat-command.json bans with the reason of !ban Name reason, pardons !pardon Name and kicks !kick Name, replying with the daemon\'s verdict', async () => {
      const admin = (content: string) => ({ content, author: { username: 'kim' }, roles: ['Minecraft Admin'] });
      const switchNode = load('chat-command.json').nodes.find((n) => n.name === 'Which moderation command')!;
      assert.deepEqual(switchNode.parameters.rules.values.map((rule: any) => rule.conditions.conditions[0].rightValue), ['!kick ', '!ban ', '!pardon ']);
      const banned = await relay('chat-command.json', admin('!ban Mallory_7  Griefing at spawn'), 'POST /api/players/ban');
      assert.deepEqual([banned.body, banned.res.status, banned.reply], [{ player: 'Mallory_7', reason: 'Griefing at spawn' }, 200, 'Mallory\\_7 banned.']);
      const pardoned = await relay('chat-command.json', admin('!pardon Mallory_7'), 'POST /api/players/pardon');
      assert.deepEqual([pardoned.body, pardoned.res.status, pardoned.reply], [{ player: 'Mallory_7' }, 200, 'Mallory\\_7 unbanned.']);
      const kicked = await relay('chat-command.json', admin('!kick Nobody_Here'), 'POST /api/players/kick');
      assert.deepEqual([kicked.body, kicked.res.status, kicked.reply], [{ player: 'Nobody_Here' }, 409, 'Nobody\\_Here is not online.']);
    });

    test('chat-bridge.json says a channel message, quotes, backslashes, braces, emoji and line breaks included, as [sender] text to every player', async () => {
      const start = mark();
      const content = 'He said "hi" \\ {{ $json }} 😀\nand @a left';
      const { body, res, reply } = await relay('chat-bridge.json', { content, author: { username: 'kim', global_name: 'Kim ✨', bot: false } });
      assert.deepEqual(body, { text: content, from: 'Kim ✨' });
      assertReply(res, 200, { ok: true, message: 'Message sent.' });
      assert.equal(reply, 'Message sent.');
      const typed = tellrawLine('Kim ✨', 'He said "hi" \\ {{ $json }} 😀 and @a left');
      assert.equal(await consoleSince(host, start, `${typed}\n`), `${typed}\n`);
    });

    test('whitelist-request.json adds the name of !whitelist Name and replies with the daemon\'s verdict, 202 and 400 included', async (t) => {
      const roles = ['Member'];
      assert.equal((await relay('whitelist-request.json', { content: '!whitelist Zed_9', author: { username: 'zed' }, roles })).reply, 'Zed\\_9 added to whitelist.');
      assert.equal((await relay('whitelist-request.json', { content: '!whitelist Zed_9 ', author: { username: 'zed' }, roles })).reply, 'Zed\\_9 is already on the whitelist.');
      const refused = await relay('whitelist-request.json', { content: '!whitelist "Zed"', author: { username: 'zed' }, roles });
      assert.deepEqual([refused.body, refused.res.status, refused.reply], [{ player: '"Zed"' }, 400, escapeForDiscord(MSG.playerPattern)]);
      fs.writeFileSync(path.join(host.controlDir, 'game-ignores-whitelist'), '');
      t.after(() => fs.rmSync(path.join(host.controlDir, 'game-ignores-whitelist'), { force: true }));
      const waiting = await relay('whitelist-request.json', { content: '!whitelist Quiet_8', author: { username: 'q' }, roles });
      assert.deepEqual([waiting.res.status, waiting.reply], [202, 'Quiet\\_8: whitelist add sent; the game server has not confirmed it yet.']);
    });

    test('chat-bridge.json sends a name the daemon takes for every author, one who calls themselves Server or [Server] included', async () => {
      for (const [author, from] of BRIDGE_SENDERS) {
        const start = mark();
        const { body, res, reply } = await relay('chat-bridge.json', { content: 'hi', author });
        assert.deepEqual([body.from, res.status, reply], [from, 200, 'Message sent.'], JSON.stringify(author));
        const typed = tellrawLine(from, 'hi');
        assert.equal(await consoleSince(host, start, `${typed}\n`), `${typed}\n`);
      }
    });

    test('chat-command.json escapes the game\'s reply for Discord: a name-tagged mob\'s @everyone and invite in a death message reach the chat as text', async () => {
      const death = 'Alex was slain by @everyone join DISCORD.GG/abc, discord.gift/x or dsc.gg/x [**now**]';
      fs.writeFileSync(path.join(host.controlDir, 'lines-after-reply'), JSON.stringify([['Server thread', death]]));
      const { res, reply } = await relay('chat-command.json', { content: '!mc list', author: { username: 'kim' }, roles: ['Minecraft Admin'] });
      assert.equal(res.status, 200);
      assert.deepEqual([res.json.output.length, res.json.output[1]], [2, death]);
      assert.equal(reply, `${escapeForDiscord(res.json.output[0])}\nAlex was slain by @\u200beveryone join DISCORD\u200b.GG/abc, discord\u200b.gift/x or dsc\u200b.gg/x \\[\\*\\*now\\*\\*\\]`);
    });
  });

  // ---- The slash commands and the scheduled restart against the daemon (docs/n8n/discord-commands.json, …) ----

  /** An HTTP Request node of a workflow as n8n sends it to the daemon (the key when it names the credential), and the item it makes. */
  async function n8nSendToDaemon(d: Daemon, node: N8nNode, $json: unknown, items: Record<string, unknown>) {
    const url = new URL(n8nEvaluate(node.parameters.url, $json, items));
    for (const { name, value } of node.parameters.queryParameters?.parameters ?? []) url.searchParams.set(name, n8nEvaluate(value, $json, items));
    const body = node.parameters.sendBody === true ? n8nEvaluate(node.parameters.jsonBody, $json, items) : undefined;
    const res = await d.request(node.parameters.method, `${url.pathname}${url.search}`, { key: node.credentials?.httpHeaderAuth.name === 'X-API-Key' ? KEY : undefined, body });
    return { sent: body === undefined ? undefined : JSON.parse(body) as Record<string, unknown>, item: { statusCode: res.status, body: res.json }, res };
  }

  describe('docs/n8n: the slash commands against the daemon, each reply as Discord receives it', { concurrency: 1 }, () => {
    const { defer, host, d } = group({ game: true });
    const workflow = n8nWorkflow('discord-commands.json');
    /** A fake Discord API: what the workflow sends it (the edits of deferred replies). */
    const received: Array<{ method: string; url: string; body: any }> = [];
    let discordApi: string | undefined;
    const fakeDiscord = async () => {
      if (discordApi !== undefined) return discordApi;
      const server = http.createServer((req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (part: Buffer) => parts.push(part)).on('end', () => {
          received.push({ method: req.method!, url: req.url!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) });
          res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => server.close(resolve)));
      discordApi = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/v10`;
      return discordApi;
    };
    const ADMIN = { roles: ['11'], nick: 'Kim [Mod]', user: { id: '5', username: 'kim', global_name: 'Kim ✨' } };
    let interactions = 0;

    /** An interaction as Discord sends it, signed and checked, and the items the workflow's nodes read. */
    async function interact(name: string, options: Record<string, string>, member: unknown) {
      const interaction = {
        id: `${1180000000000000000n + BigInt(++interactions)}`, application_id: '1111', type: 2, token: 'interaction-token', guild_id: '2222', version: 1,
        data: { id: '9', name, type: 1, options: Object.entries(options).map(([option, value]) => ({ name: option, type: 3, value })) }, member,
      };
      assert.equal(verifyInteraction(discordSigned(JSON.stringify(interaction))), 'valid');
      const items: Record<string, unknown> = {
        Interaction: { body: interaction },
        Settings: { apiBase: `http://127.0.0.1:${d.port}`, applicationId: '1111', publicKey: DISCORD_PUBLIC_KEY, adminRoleIds: '11', memberRoleIds: '20', discordApi: await fakeDiscord() },
      };
      return { items, mayUse: n8nRoute(n8nNode(workflow, 'May use the command'), {}, items) === 0, output: n8nRoute(n8nNode(workflow, 'Command'), {}, items) };
    }
    const answerOf = (node: string, $json: unknown, items: Record<string, unknown>) => JSON.parse(n8nEvaluate(n8nNode(workflow, node).parameters.responseBody, $json, items));

    /** A slash command the workflow answers at once (type 4): a refusal, /status, /players, from the daemon's answers. */
    async function slash(name: string, options: Record<string, string> = {}, member: unknown = ADMIN) {
      const { items, mayUse, output } = await interact(name, options, member);
      const answer = (node: string, $json: unknown) => answerOf(node, $json, items);
      if (!mayUse) return { answer: answer('Not allowed', {}) };
      if (output === 0) {
        const status = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/status'), {}, items);
        items['GET /api/status'] = status.item;
        const ping = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/ping'), status.item, items);
        return { status: status.res.json, ping: ping.res.json, answer: answer('Status reply', ping.item) };
      }
      assert.equal(output, 1);
      const online = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/players/online'), {}, items);
      return { answer: answer('Players reply', online.item) };
    }

    /** A slow slash command: the deferral answered at once, the daemon asked with the node's body, the edit Discord receives. */
    async function slashLater(name: string, options: Record<string, string> = {}, member: unknown = ADMIN) {
      const { items, mayUse, output } = await interact(name, options, member);
      assert.deepEqual([mayUse, output], [true, 2]);
      const deferral = answerOf('Defer', {}, items);
      const call = n8nNode(workflow, n8nNext(workflow, 'Slow command', n8nRoute(n8nNode(workflow, 'Slow command'), {}, items)));
      const { sent, item, res } = await n8nSendToDaemon(d, call, {}, items);
      const edit = n8nNode(workflow, 'Edit the reply');
      const before = received.length;
      const url = new URL(n8nEvaluate(edit.parameters.url, item, items));
      await new Promise<void>((resolve, reject) => {
        const req = http.request(url, { method: edit.parameters.method, headers: { 'Content-Type': 'application/json' } }, (answer) => answer.resume().on('end', resolve));
        req.on('error', reject).end(n8nEvaluate(edit.parameters.jsonBody, item, items));
      });
      assert.equal(received.length, before + 1);
      const { method, url: path, body } = received[before];
      assert.deepEqual([method, path, Object.keys(body), body.allowed_mentions], ['PATCH', '/api/v10/webhooks/1111/interaction-token/messages/@original', ['content', 'allowed_mentions'], { parse: [] }]);
      return { deferral, sent, res, content: body.content as string };
    }
    const mark = () => consoleBytes(host).length;

    test('/status answers at once, for everyone to read: up, version, players, uptime, memory and MOTD, escaped, pinging nobody', async () => {
      const { status, ping, answer } = await slash('status', {}, { roles: [], user: { id: '6', username: 'guest' } });
      assert.equal(ping.ready, true);
      const text = `The server is up: ${ping.version.name}, ${ping.players.online} of ${ping.players.max} players online, up ${status.uptime}, memory ${status.memory}.${ping.motd ? `\n${ping.motd}` : ''}`;
      assert.deepEqual(answer, { type: 4, data: { content: escapeForDiscord(text), allowed_mentions: { parse: [] } } });
    });

    test('/players answers at once with who is online, names escaped', async (t) => {
      act(host, { do: 'join', player: 'Kai_2' });
      t.after(() => act(host, { do: 'leave', player: 'Kai_2' }));
      await waitFor(async () => ((await d.get('/api/players/online')).json.players as string[]).includes('Kai_2'));
      const { answer } = await slash('players', {}, { roles: [], user: { id: '6', username: 'guest' } });
      assert.deepEqual(answer, { type: 4, data: { content: '1 player online: Kai\\_2', allowed_mentions: { parse: [] } } });
    });

    for (const text of ['say "quoted" it\'s fine 😀 @everyone', 'list']) {
      test(`/mc command:${JSON.stringify(text)} defers to the member alone, types the command as written and edits the reply with the game's reply`, async () => {
        const start = mark();
        const { deferral, sent, res, content } = await slashLater('mc', { command: text });
        assert.deepEqual(deferral, { type: 5, data: { flags: 64 } });
        assert.deepEqual(sent, { command: text, output: true });
        assert.equal(res.status, 200);
        assert.equal(await consoleSince(host, start, `${text}\n`), `${text}\n`);
        assert.equal(content, escapeForDiscord(res.json.output.join('\n') || 'Done.'));
      });
    }

    for (const text of ['say back\\slash', 'say <@123> {{ $json }}']) {
      test(`/mc command:${JSON.stringify(text)} reaches the member as the daemon's 400, and nothing reaches the console`, async () => {
        const start = mark();
        const { sent, res, content } = await slashLater('mc', { command: text });
        assert.deepEqual(sent, { command: text, output: true });
        assertReply(res, 400, { ok: false, error: MSG.commandChars });
        assert.equal(content, escapeForDiscord(MSG.commandChars));
        await assertNothingSentSince(d, host, start);
      });
    }

    test('/say text: quotes, backslashes, braces, emoji and mentions reach every player as written, under the member\'s cleaned nickname', async () => {
      const start = mark();
      const text = 'He said "hi" \\ {{ $json }} 😀 <@123> @everyone @a';
      const { deferral, sent, res, content } = await slashLater('say', { text }, { ...ADMIN, roles: ['20'] });
      assert.deepEqual(deferral, { type: 5, data: {} });
      assert.deepEqual([sent, res.status, content], [{ text, from: 'Kim Mod' }, 200, 'Message sent.']);
      const typed = tellrawLine('Kim Mod', text);
      assert.equal(await consoleSince(host, start, `${typed}\n`), `${typed}\n`);
    });

    test('/whitelist player: the daemon\'s verdict, its 400 and its 202 reach the member as its message', async (t) => {
      const member = { ...ADMIN, roles: ['20'] };
      assert.equal((await slashLater('whitelist', { player: 'Zed_9' }, member)).content, 'Zed\\_9 added to whitelist.');
      assert.equal((await slashLater('whitelist', { player: 'Zed_9' }, member)).content, 'Zed\\_9 is already on the whitelist.');
      const refused = await slashLater('whitelist', { player: '"Zed"' }, member);
      assert.deepEqual([refused.sent, refused.res.status, refused.content], [{ player: '"Zed"' }, 400, escapeForDiscord(MSG.playerPattern)]);
      fs.writeFileSync(path.join(host.controlDir, 'game-ignores-whitelist'), '');
      t.after(() => fs.rmSync(path.join(host.controlDir, 'game-ignores-whitelist'), { force: true }));
      const waiting = await slashLater('whitelist', { player: 'Quiet_8' }, member);
      assert.deepEqual([waiting.res.status, waiting.content], [202, 'Quiet\\_8: whitelist add sent; the game server has not confirmed it yet.']);
    });

    test('/ban player reason, /pardon player and /kick player: the daemon\'s verdict, its 409 included, edits the public reply', async () => {
      const banned = await slashLater('ban', { player: 'Mallory_7', reason: 'Griefing at spawn' });
      assert.deepEqual([banned.deferral, banned.sent, banned.res.status, banned.content], [{ type: 5, data: {} }, { player: 'Mallory_7', reason: 'Griefing at spawn' }, 200, 'Mallory\\_7 banned.']);
      const pardoned = await slashLater('pardon', { player: 'Mallory_7' });
      assert.deepEqual([pardoned.sent, pardoned.res.status, pardoned.content], [{ player: 'Mallory_7' }, 200, 'Mallory\\_7 unbanned.']);
      const kicked = await slashLater('kick', { player: 'Nobody_Here' });
      assert.deepEqual([kicked.sent, kicked.res.status, kicked.content], [{ player: 'Nobody_Here' }, 409, 'Nobody\\_Here is not online.']);
    });

    test('a member without the role gets "needs a role" to themselves, and nothing reaches the daemon', async () => {
      const start = mark();
      for (const [name, options] of [['mc', { command: 'op Mallory_7' }], ['kick', { player: 'Kai_2' }], ['whitelist', { player: 'Zed_10' }]] as const) {
        const { answer } = await slash(name, options, { ...ADMIN, roles: name === 'whitelist' ? [] : ['20'] });
        assert.deepEqual(answer, { type: 4, data: { flags: 64, content: `/${name} needs a role this server has not given you.`, allowed_mentions: { parse: [] } } });
      }
      await assertNothingSentSince(d, host, start);
    });
  });

  describe('docs/n8n: scheduled-restart.json against the daemon', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });
    const workflow = n8nWorkflow('scheduled-restart.json');
    const items = () => ({ Settings: { apiBase: `http://127.0.0.1:${d.port}`, readyTimeoutMinutes: 10 } } as Record<string, unknown>);
    const post = (line: string, $json: unknown, more: Record<string, unknown>) => {
      const value = n8nEvaluate(n8nNode(workflow, line).parameters.assignments.assignments[0].value, $json, more);
      return n8nEvaluate(n8nNode(workflow, n8nNext(workflow, line)).parameters.assignments.assignments[0].value, { line: value });
    };

    test('the warnings reach every player as [Server] lines', async () => {
      for (const name of ['Say: in 5 minutes', 'Say: in 1 minute', 'Say: in 10 seconds']) {
        const start = consoleBytes(host).length;
        const { sent, res } = await n8nSendToDaemon(d, n8nNode(workflow, name), {}, items());
        assert.equal(res.status, 200);
        const typed = tellrawLine(undefined, sent!.text as string);
        assert.equal(await consoleSince(host, start, `${typed}\n`), `${typed}\n`);
      }
    });

    test('with nobody online it restarts at once, waits for a new game process that answers its ping, and posts that it is back', async () => {
      const known = items();
      const online = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/players/online'), {}, known);
      assert.equal(n8nNext(workflow, 'Who is online', n8nRoute(n8nNode(workflow, 'Who is online'), online.item)), 'GET /api/status (before)');
      known['GET /api/status (before)'] = (await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/status (before)'), {}, known)).item;
      const restart = await n8nSendToDaemon(d, n8nNode(workflow, 'POST /api/server/restart'), {}, known);
      assert.equal(n8nRoute(n8nNode(workflow, 'Restart issued'), restart.item), 0);
      const ping = await waitFor(async () => {
        known['GET /api/status'] = (await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/status'), {}, known)).item;
        const answer = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/ping'), {}, known);
        return n8nRoute(n8nNode(workflow, 'Back and ready'), answer.item, known) === 0 && answer.res.json;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      assert.notEqual((known['GET /api/status'] as any).body.pid, (known['GET /api/status (before)'] as any).body.pid);
      assert.equal(post('Line: back', { body: ping }, known), escapeForDiscord(`The scheduled restart is done: the server is ready again (${ping.version.name}), 0 of ${ping.players.max} players online.`));
    });

    test('a game that crashed and did not come back is posted as not running, with the exception the log shows', async () => {
      const known = items();
      known['GET /api/status (before)'] = (await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/status (before)'), {}, known)).item;
      act(host, { do: 'crash', description: 'Exception in server tick loop' });
      await waitFor(async () => (await d.get('/api/status')).json.online === false);
      known['GET /api/status'] = (await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/status'), {}, known)).item;
      const logs = await n8nSendToDaemon(d, n8nNode(workflow, 'GET /api/logs/latest'), {}, known);
      assert.equal(logs.res.status, 200);
      assert.equal(post('Line: not back', logs.item, known), 'The scheduled restart did not bring the server back within 10 minutes: the game is not running. It crashed: java.lang.IllegalStateException: simulated');
    });
  });

  // ---- Metrics (docs/api.md#get-metrics) ----

  /** The samples of a text exposition: name{labels} → value; HELP and TYPE lines by family. */
  function parseExposition(text: string) {
    const samples = new Map<string, number>();
    const help = new Set<string>();
    const types = new Map<string, string>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const meta = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
      if (meta !== null) {
        if (meta[1] === 'HELP') help.add(meta[2]);
        else types.set(meta[2], meta[3]);
        continue;
      }
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})?) (\S+)$/.exec(line);
      assert.ok(sample !== null, `not an exposition line: ${JSON.stringify(line)}`);
      samples.set(sample[1], Number(sample[2]));
    }
    return { samples, help, types };
  }

  // ---- Issue 28: readiness, history, the status page (docs/api.md#get-apiping, #get-apiplayershistory, #get-status) ----

  describe('GET /api/ping', { concurrency: 1 }, () => {
    const { defer, host, d } = group();
    const properties = () => serverFile(host, 'server.properties');
    const setProperty = (name: string, value: string) =>
      fs.writeFileSync(properties(), fs.readFileSync(properties(), 'utf8').replace(new RegExp(`^${name}=.*$`, 'm'), `${name}=${value}`));

    test('GET /api/ping says online false and ready false while no game runs, and pings nothing', async () => {
      assertReply(await d.get('/api/ping'), 200, { ok: true, online: false, ready: false });
    });

    test('GET /api/ping gives the game\'s own answer on its server-port: ready, latency, version, MOTD without colour codes, players, and the gauges', async () => {
      await host.startGame();
      act(host, { do: 'join', player: 'Alex' });
      const res = await waitFor(async () => {
        const r = await d.get('/api/ping');
        return r.json.ready === true && r.json.players.online === 1 ? r : undefined;
      });
      assertCommonHeaders(res.headers);
      const { latency_ms: latency, ...rest } = res.json;
      assert.ok(typeof latency === 'number' && latency >= 0);
      assert.deepEqual(rest, { ok: true, online: true, ready: true, version: { name: '1.21.4', protocol: 769 }, motd: 'Gameserver survival — be nice!', players: { online: 1, max: 20 } });
      const metrics = (await d.get('/metrics', { afterChange: true })).text;
      assert.match(metrics, /^minecraft_server_ready 1$/m);
      assert.match(metrics, /^minecraft_ping_seconds \d/m);
      assert.match(metrics, /^minecraft_players_max 20$/m);
      await host.stopGame();
    });

    test('GET /api/ping with enable-status=false is ready by the Done line of the current run, and asks the game nothing', async () => {
      setProperty('enable-status', 'false');
      try {
        await host.startGame();
        const res = await waitFor(async () => {
          const r = await d.get('/api/ping');
          return r.json.ready === true ? r : undefined;
        });
        assertReply(res, 200, { ok: true, online: true, ready: true });
        assert.match((await d.get('/metrics', { afterChange: true })).text, /^minecraft_server_ready 1$/m);
      } finally {
        await host.stopGame();
        setProperty('enable-status', 'true');
      }
    });

    test('GET /api/ping falls back to the legacy ping (FE 01) for a server that does not speak 1.7\'s', async () => {
      control(host, 'game-ping', 'legacy');
      try {
        await host.startGame();
        const res = await waitFor(async () => {
          const r = await d.get('/api/ping');
          return r.json.ready === true ? r : undefined;
        });
        assert.deepEqual(res.json.version, { name: '1.21.4', protocol: 127 });
        assert.equal(res.json.motd, 'Gameserver survival — be nice!');
      } finally {
        await host.stopGame();
        control(host, 'game-ping', null);
      }
    });

    test('GET /api/ping reads a bounded answer: a server that sends without end is cut off and not ready', async () => {
      const port = await freePort();
      let closed = false;
      const hostile = net.createServer((socket) => {
        socket.on('error', () => undefined);
        socket.on('close', () => (closed = true));
        socket.write(Buffer.from([0xff, 0xff, 0xff, 0x7f]));   // announces a packet of 256 MiB
        const flood = () => { while (!socket.destroyed && socket.write(Buffer.alloc(64 * 1024, 0x41))); };
        socket.on('drain', flood);
        flood();
      });
      await new Promise<void>((resolve) => hostile.listen(port, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => hostile.close(resolve)));
      await host.startGame();
      setProperty('server-port', String(port));
      try {
        const res = await waitFor(async () => {
          const r = await d.get('/api/ping');
          return r.json.ready === false ? r : undefined;
        });
        assertReply(res, 200, { ok: true, online: true, ready: false });
        await waitFor(() => closed);
      } finally {
        setProperty('server-port', String(host.serverPort));
        await host.stopGame();
      }
    });
  });

  describe('GET /api/players/history', { concurrency: 1 }, () => {
    const { defer, host } = group({ daemon: false });
    const stateDir = () => path.join(host.root, 'state');

    test('GET /api/players/history and GET /status take no join from inside a line longer than the 64 KiB the history reads at once', async () => {
      const latest = serverFile(host, 'logs/latest.log');
      const stamp = () => `[${new Date().toTimeString().slice(0, 8)}] [Server thread/INFO]: `;
      await host.startGame();   // running: the last minute holds the players online now, whenever the minute turns
      fs.appendFileSync(latest, `${stamp()}Alex joined the game\n`);
      const d = await startDaemon(host, defer);
      const before = (await d.get('/api/players/history')).json.counts as Array<number | null>;
      assert.equal(before[before.length - 1], 1);
      // a player's line whose text reaches a piece's end, where a forged join begins the next piece
      const prefix = `${stamp()}<Alex> `;
      fs.appendFileSync(latest, `${prefix}${'x'.repeat(65_536 - prefix.length)}${stamp()}Forged_1 joined the game\n`);
      const after = (await d.get('/api/players/history', { afterChange: true })).json.counts as Array<number | null>;
      assert.equal(after[after.length - 1], 1);
      assert.ok(!(await d.get('/status', { afterChange: true })).text.includes('Forged_1'));
      await d.stop();
      await host.stopGame();
    });

    test('GET /api/players/history gives 1,440 minutes rebuilt from the archives, and keeps them in STATE_DIRECTORY across a restart even when the logs are gone', async () => {
      fs.mkdirSync(stateDir(), { recursive: true });
      fs.rmSync(serverFile(host, 'logs/latest.log'));   // the archive below is the one log
      const now = Date.now();
      const at = (minutesAgo: number) => new Date(Math.floor(now / 60_000) * 60_000 - minutesAgo * 60_000 + 10_000);
      const stamp = (when: Date) => `[${[when.getHours(), when.getMinutes(), when.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':')}] [Server thread/INFO]: `;
      const lines = [
        [30, 'Starting minecraft server version 1.21.4'], [30, 'Alex joined the game'], [20, 'Steve joined the game'],
        [10, 'Steve left the game'], [5, 'Stopping server'], [5, 'Alex left the game'],
      ] as const;
      const day = at(5);
      const archive = path.join(host.serverDir, 'logs', `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}-7.log.gz`);
      fs.writeFileSync(archive, gzipSync(lines.map(([ago, text]) => `${stamp(at(ago))}${text}\n`).join('')));
      // the points of these minutes before `now`, wherever the answer's 24 hours begin (a minute may turn meanwhile)
      const expected = ({ from, counts }: { from: string; counts: Array<number | null> }) =>
        [31, 30, 25, 20, 10, 9, 5, 0].map((ago) => counts[Math.floor(now / 60_000) - ago - Date.parse(from) / 60_000]);
      const first = await startDaemon(host, defer, { STATE_DIRECTORY: stateDir() });
      const res = await first.get('/api/players/history');
      assert.equal(res.status, 200);
      assert.equal(res.json.step_s, 60);
      assert.equal(res.json.counts.length, 1440);
      const firstMinute = Date.parse(res.json.from) / 60_000;
      assert.ok(Number.isInteger(firstMinute) && firstMinute >= Math.floor(now / 60_000) - 1439 && firstMinute <= Math.floor(Date.now() / 60_000) - 1439, res.json.from);
      assert.deepEqual(expected(res.json), [null, 1, 1, 2, 2, 1, 1, 0]);
      assert.ok(fs.existsSync(path.join(stateDir(), 'players-history.json')));
      await first.stop();
      fs.rmSync(archive);
      const second = await startDaemon(host, defer, { STATE_DIRECTORY: stateDir() });
      assert.deepEqual(expected((await second.get('/api/players/history')).json), [null, 1, 1, 2, 2, 1, 1, 0]);
      await second.stop();
      const without = await startDaemon(host, defer);
      assert.deepEqual(expected((await without.get('/api/players/history')).json), [null, null, null, null, null, null, null, null]);
    });

    const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));
    /** A busy latest.log from `startMs` to `endMs`: joins and leaves (each logged twice) in one line of ten, chat in most others. */
    function busyLog(seed: number, startMs: number, endMs: number, bytes: number, keepMeanings = true) {
      const random = seededRandom(seed);
      const names = Array.from({ length: 30 }, (_, i) => `Player_${i}`);
      const online = new Set<string>();
      const texts: string[] = [];
      const times: number[] = [];
      const written: Array<{ text: number; line: DayLine }> = [];
      const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
      const stepMs = (endMs - startMs) / (bytes / 75);
      let atMs = startMs;
      let size = 0;
      let stamp = '';
      let stampSecond = NaN;
      const emit = (thread: string, message: string, meaning?: Meaning) => {
        atMs = Math.min(endMs, atMs + random() * 2 * stepMs);
        if (Math.floor(atMs / 1000) !== stampSecond) {
          const when = new Date(atMs);
          stamp = `${TWO_DIGITS[when.getHours()]}:${TWO_DIGITS[when.getMinutes()]}:${TWO_DIGITS[when.getSeconds()]}`;
          stampSecond = Math.floor(atMs / 1000);
        }
        const text = `[${stamp}] [${thread}/INFO]: ${message}\n`;
        if (meaning !== undefined && keepMeanings) written.push({ text: texts.length, line: { secondOfDay: secondOfDay(new Date(atMs)), meaning } });
        // read once, a line built from pieces is kept as one string: 1.2 million trees of pieces held this process at
        // 550 MiB, and every child process it spawned afterwards took longer to start
        text.charCodeAt(0);
        texts.push(text);
        times.push(atMs);
        size += text.length;
      };
      emit('Server thread', 'Starting minecraft server version 1.21.4', { type: 'session.started' });
      const here: string[] = [];   // the names of `online` in its order, without a copy per line
      while (size < bytes) {
        const roll = random();
        if (roll < 0.05 && here.length < names.length) {
          const name = pick(names.filter((n) => !online.has(n)));
          emit('Server thread', `${name}[/203.0.113.7:40000] logged in with entity id 5 at (1.5, 64.0, -3.5)`, join(name));
          emit('Server thread', `${name} joined the game`, join(name));
          online.add(name);
          here.push(name);
        } else if (roll < 0.1 && here.length > 0) {
          const name = pick(here);
          emit('Server thread', `${name} lost connection: Disconnected`, leave(name));
          emit('Server thread', `${name} left the game`, leave(name));
          online.delete(name);
          here.splice(here.indexOf(name), 1);
        } else if (roll < 0.9 && here.length > 0) {
          const [player, text] = [pick(here), `anyone up for the nether? ${Math.floor(random() * 1000)}`];
          emit('Async Chat Thread - #3', `<${player}> ${text}`, { type: 'player.chat', player, text });
        } else emit('Server thread', 'Saving chunks for level \'ServerLevel[world]\'/minecraft:overworld');
      }
      return { texts, times, written };
    }

    test('GET /api/players/history of a busy latest.log, across midnight, is what every line kept tells, whether the daemon read it whole or as it grew', async () => {
      const log = serverFile(host, 'logs/latest.log');
      const endMs = Date.now() - 60_000;
      const { texts, times, written } = busyLog(28, endMs - 30 * 3600_000, endMs, 2 * 1024 * 1024);
      fs.writeFileSync(log, '');
      const growing = await startDaemon(host, defer);
      // what every line written up to `upTo` tells, kept whole, the file's time being that of its last line
      const keptWhole = (upTo: number, from: string) => {
        const modified = new Date(times[upTo - 1]);
        const lines = written.filter((w) => w.text < upTo).map((w) => w.line);
        return historyKeptWhole([{ lines, lastDay: modified, lastSecondOfDay: secondOfDay(modified) }], Date.parse(from), 1440, false, false).counts;
      };
      let upTo = 0;
      for (const share of [0.4, 0.75, 1]) {
        const end = Math.floor(texts.length * share);
        fs.appendFileSync(log, texts.slice(upTo, end).join(''));
        upTo = end;
        const modified = new Date(times[upTo - 1]);
        fs.utimesSync(log, modified, modified);
        const res = await growing.get('/api/players/history', { afterChange: true });
        assert.equal(res.status, 200);
        assert.deepEqual(res.json.counts, keptWhole(upTo, res.json.from), `${share * 100} % written`);
      }
      assert.ok(written.length > 10_000 && new Date(times[0]).getDate() !== new Date(times[times.length - 1]).getDate());
      await growing.stop();
      const whole = await startDaemon(host, defer);
      const res = await whole.get('/api/players/history');
      assert.deepEqual(res.json.counts, keptWhole(upTo, res.json.from));
    });

    test('GET /api/players/history of a 50 MiB busy latest.log leaves the daemon\'s memory within 32 MiB of before it, and 100 MiB appended within 48 MiB', async () => {
      const log = serverFile(host, 'logs/latest.log');
      const endMs = Date.now() - 60_000;
      const { texts } = busyLog(50, endMs - 10 * 24 * 3600_000, endMs, 100 * 1024 * 1024, false);
      fs.writeFileSync(log, texts.slice(0, texts.length / 2).join(''));
      const d = await startDaemon(host, defer);
      const anonymousBytes = () => 1024 * Number(/^RssAnon:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${d.child.pid}/status`, 'utf8'))![1]);
      await d.get('/api/health');
      const before = anonymousBytes();
      const first = await d.get('/api/players/history', { timeoutMs: 120_000 });
      assert.ok(first.json.counts.some((count: number | null) => count !== null && count > 0));
      const afterFirst = anonymousBytes();
      const later = texts.slice(texts.length / 2).join('');
      for (const appended of [1, 2]) {
        fs.appendFileSync(log, later);
        const res = await d.get('/api/players/history', { afterChange: true, timeoutMs: 120_000 });
        assert.notDeepEqual(res.json.counts, first.json.counts, `after ${appended * 50} MiB appended`);
      }
      const afterAll = anonymousBytes();
      // a daemon that kept the lines held hundreds of MiB more; what reading grows is the heap (its new space, up to
      // two semi-spaces of --max-semi-space-size=16 as gameserver-api.service runs it), to a size that stays
      assert.ok(afterFirst - before < 32 * 1024 * 1024, `grew by ${afterFirst - before} bytes reading 50 MiB`);
      assert.ok(afterAll - before < 48 * 1024 * 1024, `grew by ${afterAll - before} bytes reading 150 MiB`);
    });
  });

  // Debian's Chromium, headless, driven over the DevTools protocol on --remote-debugging-pipe (fd 3 in, fd 4 out,
  // messages ended by NUL): no dependency. Skipped with a line saying so where it is not installed.
  describe('GET /status in Chromium', { concurrency: 1 }, () => {
    const CHROMIUM = '/usr/bin/chromium';
    const { defer, host, d } = group({
      game: true,
      env: { STATUS_PAGE_CHAT: 'on' },
      arrange: (h) => {
        const file = serverFile(h, 'server.properties');
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^motd=.*$/m, 'motd=\\u00A76Gameserver <script>window.pwned\\=1</script>\\nsecond line'));
      },
    });
    const chromiumFlags = (dir: string) => ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${dir}`];
    const profile = () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-chromium-'));
      defer(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
      return dir;
    };
    const stopGroup = (child: ChildProcess) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { resolve(); }
    });

    /** A browser on the pipe: send(method, params, session) answers the result; `events` holds every event. */
    function devtools() {
      const child = spawn(CHROMIUM, [...chromiumFlags(profile()), '--remote-debugging-pipe', 'about:blank'],
        { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
      yieldToTests(child);
      defer(() => stopGroup(child));
      const input = child.stdio[3] as NodeJS.WritableStream;
      const output = child.stdio[4] as NodeJS.ReadableStream;
      const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
      const events: Array<{ method: string; params: any; sessionId?: string }> = [];
      let buffer = '';
      let nextId = 0;
      output.setEncoding('utf8');
      output.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\0'); end !== -1; end = buffer.indexOf('\0')) {
          const message = JSON.parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
          if (message.id === undefined) events.push(message);
          else if (message.error) waiting.get(message.id)?.reject(new Error(JSON.stringify(message.error)));
          else waiting.get(message.id)?.resolve(message.result);
        }
      });
      const send = (method: string, params: object = {}, sessionId?: string): Promise<any> => new Promise((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, { resolve, reject });
        input.write(`${JSON.stringify({ id, method, params, ...sessionId === undefined ? {} : { sessionId } })}\0`);
      });
      return { send, events, child };
    }

    test('GET /status renders its content without JavaScript: state, players, MOTD, names and messages as text', async (t) => {
      if (!fs.existsSync(CHROMIUM)) return t.skip('Chromium is not installed (.ci/run installs Debian\'s chromium package)');
      act(host, { do: 'join', player: 'Alex' }, { do: 'die', player: 'Alex', message: 'was slain by <script>window.pwned=1</script>' });
      await waitFor(async () => (await d.get('/api/players/online')).json.count === 1);
      const res = await d.get('/status');
      assertCommonHeaders(res.headers, 'text/html; charset=utf-8');
      assert.match(String(res.headers['content-security-policy']), /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src data:; connect-src 'self'/);
      assert.ok(!String(res.headers['content-security-policy']).includes('unsafe-inline'));
      // scripts off, as a visitor without JavaScript: what shows is what the daemon drew
      const browser = devtools();
      const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
      await browser.send('Page.enable', {}, sessionId);
      await browser.send('Emulation.setScriptExecutionDisabled', { value: true }, sessionId);
      await browser.send('Page.navigate', { url: `http://127.0.0.1:${d.port}/status` }, sessionId);
      await waitFor(() => browser.events.some((e) => e.method === 'Page.loadEventFired'));
      const { root } = await browser.send('DOM.getDocument', {}, sessionId);
      const dom = String((await browser.send('DOM.getOuterHTML', { nodeId: root.nodeId }, sessionId)).outerHTML);
      await stopGroup(browser.child);
      assert.match(dom, /<span id="state-text">Up and ready<\/span>/);
      assert.match(dom, /<li data-name="Alex">Alex<\/li>/);
      assert.match(dom, /<span class="mc-gold">Gameserver &lt;script&gt;window.pwned=1&lt;\/script&gt;<\/span>/);
      assert.match(dom, /Alex was slain by &lt;script&gt;window.pwned=1&lt;\/script&gt;/);
      assert.match(dom, /<p class="motd-more"><span class="mc-gold">second line<\/span><\/p>/);   // the colour goes on past the line break, as in the game
      assert.equal((dom.match(/<script>/g) ?? []).length, 1, 'the page\'s own script is the one script element');
    });

    test('GET /status in Chromium updates live from the events, asks no other origin, and breaks no rule of its Content-Security-Policy', async (t) => {
      if (!fs.existsSync(CHROMIUM)) return t.skip('Chromium is not installed (.ci/run installs Debian\'s chromium package)');
      const browser = devtools();
      const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
      for (const domain of ['Page', 'Runtime', 'Log', 'Network']) await browser.send(`${domain}.enable`, {}, sessionId);
      const evaluate = async (expression: string) => (await browser.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
      await browser.send('Page.navigate', { url: `http://127.0.0.1:${d.port}/status` }, sessionId);
      await waitFor(() => browser.events.some((e) => e.method === 'Page.loadEventFired'));
      // the page's stream is open once the daemon counts it
      await waitFor(async () => /^gameserver_api_event_streams [1-9]/m.test((await d.get('/metrics')).text));
      act(host, { do: 'join', player: 'Steve' }, { do: 'chat', player: 'Steve', text: '<img src=x onerror="window.pwned=2">hi' }, { do: 'advance', player: 'Steve', kind: 'task', title: '<b>Stone Age</b>' });
      await waitFor(async () => String(await evaluate("document.getElementById('recent').textContent")).includes('[<b>Stone Age</b>]'), { timeoutMs: 15_000 });
      assert.equal(await evaluate("[...document.querySelectorAll('#players li')].map((li) => li.textContent).join(',')"), 'Alex,Steve');
      assert.equal(await evaluate("document.getElementById('online').textContent"), '2');
      assert.ok(String(await evaluate("document.getElementById('recent').textContent")).includes('<Steve> <img src=x onerror="window.pwned=2">hi'));
      assert.equal(await evaluate('window.pwned'), undefined, 'no text from the game ran as script');
      assert.equal(await evaluate("document.querySelectorAll('#recent img, #recent b, script').length"), 1);
      const origin = `http://127.0.0.1:${d.port}`;
      const elsewhere = browser.events.filter((e) => e.method === 'Network.requestWillBeSent')
        .map((e) => String(e.params.request.url)).filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
      assert.deepEqual(elsewhere, []);
      const problems = browser.events.filter((e) => (e.method === 'Log.entryAdded' && ['error', 'warning'].includes(e.params.entry.level))
        || e.method === 'Runtime.exceptionThrown' || (e.method === 'Runtime.consoleAPICalled' && e.params.type === 'error'))
        .map((e) => JSON.stringify(e.params).slice(0, 300));
      assert.deepEqual(problems.filter((p) => /Content.Security.Policy|Refused/i.test(p) || !/favicon/.test(p)), []);
      act(host, { do: 'leave', player: 'Steve' });
      await waitFor(async () => (await evaluate("document.getElementById('online').textContent")) === '1');
      await stopGroup(browser.child);
    });
  });

  describe('GET /metrics', { concurrency: 1 }, () => {
    const { host, d } = group();
    const scrape = async () => {
      const res = await d.get('/metrics', { afterChange: true });
      assert.equal(res.status, 200);
      assertCommonHeaders(res.headers, 'text/plain; version=0.0.4; charset=utf-8');
      return { text: res.text, ...parseExposition(res.text) };
    };

    test('GET /metrics gives every family HELP and TYPE, and leaves out what cannot be known while the game is stopped', async () => {
      await d.get('/api');   // a request counted before the scrape: a counter with labels has no line before its first
      const { samples, help, types, text } = await scrape();
      const families = new Set([...samples.keys()].map((key) => key.split('{')[0]));
      for (const family of families) {
        const base = family;
        assert.ok(help.has(base) && types.has(base), `${family} has HELP and TYPE`);
      }
      assert.equal(samples.get('minecraft_up'), 0);
      assert.equal(samples.get('minecraft_players_online'), 0);
      assert.equal(samples.get('minecraft_players_max'), 20);
      assert.equal(samples.get('minecraft_whitelist_players'), 2);
      assert.equal(samples.get('minecraft_banned_players'), 2);
      assert.equal(samples.get('minecraft_operators'), 0);   // no ops.json: nobody is an operator
      assert.equal(samples.get('minecraft_backups'), 4);
      assert.equal(samples.get('minecraft_backup_last_timestamp_seconds'), Date.parse('2026-11-20T03:00:04Z') / 1000);
      assert.equal(samples.get(`gameserver_api_build_info{version="${PKG.version}"}`), 1);
      assert.equal(samples.get('gameserver_api_event_streams'), 0);
      for (const name of ['minecraft_process_start_time_seconds', 'minecraft_process_resident_memory_bytes', 'minecraft_process_cpu_seconds_total']) {
        assert.ok(!text.includes(name), `${name} is left out while the game is stopped`);
      }
      for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'process_start_time_seconds', 'process_open_fds', 'process_max_fds']) {
        assert.ok((samples.get(name) ?? -1) > 0, name);
      }
      assert.equal(types.get('gameserver_api_http_requests_total'), 'counter');
      assert.equal(types.get('minecraft_up'), 'gauge');
    });

    test('GET /metrics shows the running game, its players one sample each, and a version with quotes escaped', async () => {
      const pid = await host.startGame();
      fs.writeFileSync(serverFile(host, 'version_history.json'), '{"currentVersion":"git-Foldenor-\\"b5dc1ae\\" (MC: 1.20.4)"}');
      fs.appendFileSync(serverFile(host, 'logs/latest.log'), `${P}Alex joined the game\n${P}.Bramble_Crest joined the game\n`);
      const first = await scrape();
      assert.equal(first.samples.get('minecraft_up'), 1);
      assert.equal(first.samples.get('minecraft_players_online'), 2);
      assert.equal(first.samples.get('minecraft_player_online{player="Alex"}'), 1);
      assert.equal(first.samples.get('minecraft_player_online{player=".Bramble_Crest"}'), 1);
      assert.equal(first.samples.get('minecraft_version_info{version="git-Foldenor-\\"b5dc1ae\\" (MC: 1.20.4)"}'), 1);
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1]);
      assert.equal(first.samples.get('minecraft_process_start_time_seconds'), btime + Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / 100);
      assert.ok((first.samples.get('minecraft_process_resident_memory_bytes') ?? 0) > 0);
      const second = await scrape();   // the start time does not move between scrapes: alerts count its changes
      assert.equal(second.samples.get('minecraft_process_start_time_seconds'), first.samples.get('minecraft_process_start_time_seconds'));
      await host.stopGame();
    });

    test('GET /metrics counts responses by route, method and status, unknown paths as route "other"', async () => {
      await d.get('/api/players/whitelist');
      await d.get('/no/such/path');
      await d.post('/api/command', { command: 'say x' }, { key: 'wrong' });
      const { samples } = await scrape();
      assert.ok((samples.get('gameserver_api_http_requests_total{route="/api/players/whitelist",method="GET",code="200"}') ?? 0) >= 1);
      assert.ok((samples.get('gameserver_api_http_requests_total{route="other",method="GET",code="404"}') ?? 0) >= 1);
      assert.ok((samples.get('gameserver_api_http_requests_total{route="/api/command",method="POST",code="401"}') ?? 0) >= 1);
    });

    test('GET /metrics counts each response exactly once, and lists the request counters sorted by route, method and status', async () => {
      const counted = (text: string, labels: string) =>
        Number(new RegExp(`^gameserver_api_http_requests_total\\{${labels.replace(/[/.]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      const ok = 'route="/api/properties",method="GET",code="200"';
      const head = 'route="/api/properties",method="HEAD",code="200"';
      const before = (await scrape()).text;
      for (let i = 0; i < 5; i++) await d.get('/api/properties');
      await d.request('HEAD', '/api/properties');
      await d.request('DELETE', '/api/properties');
      const { text } = await scrape();
      assert.deepEqual([counted(text, ok) - counted(before, ok), counted(text, head) - counted(before, head)], [5, 1]);
      assert.ok(counted(text, 'route="/api/properties",method="DELETE",code="405"') >= 1);
      const keys = [...text.matchAll(/^gameserver_api_http_requests_total\{route="([^"]*)",method="([^"]*)",code="(\d+)"\} \d+$/gm)]
        .map(([, route, method, code]) => `${route} ${method} ${code}`);
      assert.ok(keys.length >= 4, keys.join('; '));
      assert.deepEqual(keys, [...keys].sort());
    });

    test('GET /metrics leaves out minecraft_backup_last_* with no archive, and says minecraft_backups 0', async () => {
      const saved = fs.readdirSync(host.backupDir).map((name) => [name, fs.readFileSync(path.join(host.backupDir, name))] as const);
      for (const [name] of saved) fs.rmSync(path.join(host.backupDir, name));
      try {
        const { samples, text } = await scrape();
        assert.equal(samples.get('minecraft_backups'), 0);
        assert.ok(!text.includes('minecraft_backup_last_'));
      } finally {
        for (const [name, bytes] of saved) fs.writeFileSync(path.join(host.backupDir, name), bytes);
      }
    });

    test('GET /metrics passes promtool check metrics', async (t) => {
      if ((await runTool('promtool', ['--version'])).error) return t.skip('promtool is not installed (.ci/run installs Debian\'s prometheus package)');
      const { text } = await scrape();
      const check = await runTool('promtool', ['check', 'metrics'], { input: text });
      assert.equal(check.status, 0, check.stdout + check.stderr);
      assert.equal(check.stdout + check.stderr, '');
    });
  });

  // docs/grafana: every panel's query against a real Prometheus that scrapes a daemon each second
  describe('docs/grafana', { concurrency: 1 }, () => {
    const { defer, host } = group({ game: true, daemon: false });
    const dashboard = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'docs', 'grafana', 'gameserver-api.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>; __inputs: unknown[];
    };

    test('docs/grafana/gameserver-api.json is importable: a data source input, and every panel has a query on it', () => {
      assert.equal(dashboard.__inputs.length, 1);
      for (const panel of dashboard.panels) assert.ok(panel.targets.length > 0 && panel.targets.every((t) => t.expr.length > 0), panel.title);
    });

    test('every panel query of docs/grafana returns data from a real Prometheus scraping a daemon', async (t) => {
      if ((await runTool('prometheus', ['--version'])).error) return t.skip('prometheus is not installed (.ci/run installs Debian\'s prometheus package)');
      // a webhook that takes every delivery, so that the deliveries' counter exists
      const sink = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
      await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
      defer(() => new Promise((resolve) => { sink.closeAllConnections(); sink.close(resolve); }));
      const d = await startDaemon(host, defer, { EVENT_WEBHOOK_URL: `http://127.0.0.1:${(sink.address() as net.AddressInfo).port}/hook` });
      act(host, { do: 'join', player: 'Alex' });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-prometheus-'));
      defer(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
      fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'scrape_configs:',
        `  - job_name: gameserver\n    static_configs: [{ targets: ['127.0.0.1:${d.port}'] }]`, '',
      ].join('\n'));
      const port = await freePort();
      const prometheus = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`, '--log.level=error'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let log = '';
      prometheus.stderr!.setEncoding('utf8').on('data', (s: string) => (log += s));
      defer(() => new Promise<void>((resolve) => {
        if (prometheus.exitCode !== null) return resolve();
        prometheus.once('exit', () => resolve());
        prometheus.kill('SIGTERM');
      }));
      const query = async (expr: string) => {
        const res = await request(port, 'GET', `/api/v1/query?query=${encodeURIComponent(expr)}`).catch(() => undefined);
        return res?.status === 200 ? res.json.data.result as unknown[] : undefined;
      };
      for (const panel of dashboard.panels) {
        for (const { expr } of panel.targets) {
          // Grafana's variables as it fills them: every host, and a range that holds a few scrapes
          const filled = expr.replaceAll('$instance', '.+').replaceAll('$__rate_interval', '10s');
          await waitFor(async () => ((await query(filled))?.length ?? 0) > 0, { timeoutMs: 30_000, intervalMs: 250 })
            .catch((err: Error) => { throw new Error(`${panel.title}: ${filled} returned no data (${err.message}) ${log.slice(-500)}`); });
        }
      }
    });
  });

  describe('docs/prometheus', { concurrency: 1 }, () => {
    const dir = path.join(__dirname, '..', 'docs', 'prometheus');
    const promtool = async (t: { skip: (why: string) => void }, ...args: string[]) => {
      const check = await runTool('promtool', args, { cwd: dir });
      if (check.error) t.skip('promtool is not installed (.ci/run installs Debian\'s prometheus package)');
      return check.error ? undefined : check;
    };
    test('docs/prometheus alert rules pass promtool check rules', async (t) => {
      const rules = fs.readdirSync(dir).filter((name) => /\.rules\.ya?ml$|alerts\.ya?ml$/.test(name) && !name.includes('test'));
      assert.ok(rules.length > 0);
      const check = await promtool(t, 'check', 'rules', ...rules);
      if (check !== undefined) assert.equal(check.status, 0, check.stdout + check.stderr);
    });
    test('docs/prometheus alert rules pass their promtool test rules cases', async (t) => {
      const cases = fs.readdirSync(dir).filter((name) => name.includes('test') && /\.ya?ml$/.test(name));
      assert.ok(cases.length > 0);
      const check = await promtool(t, 'test', 'rules', ...cases);
      if (check !== undefined) assert.equal(check.status, 0, check.stdout + check.stderr);
    });
    test('docs/prometheus scrape configuration passes promtool check config', async (t) => {
      const check = await promtool(t, 'check', 'config', 'prometheus.yml');
      if (check !== undefined) assert.equal(check.status, 0, check.stdout + check.stderr);
    });
  });

  // ---- The OpenAPI document (docs/api.md#get-apiopenapijson) ----

  describe('GET /api/openapi.json', { concurrency: 1 }, () => {
    const { d } = group();

    test('GET /api/openapi.json is the OpenAPI 3.1 document of every route of GET /api, and the one the tests hold responses against', async () => {
      const res = await d.get('/api/openapi.json');
      assert.equal(res.status, 200);
      assert.equal(res.json.openapi, '3.1.0');
      assert.deepEqual(res.json, JSON.parse(JSON.stringify(API_DOCUMENT)));
      // client generators and Swagger UI need one: relative, so it is right on any address, port and scheme
      assert.deepEqual(res.json.servers.map((server: { url: string }) => server.url), ['/']);
      const index = (await d.get('/api')).json.endpoints as Array<{ method: string; route: string; auth_required: boolean }>;
      const described = Object.entries(res.json.paths as Record<string, Record<string, unknown>>).flatMap(([route, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${route}`));
      assert.deepEqual(described.sort(), index.map((e) => `${e.method} ${e.route}`).sort());
      for (const { method, route, auth_required } of index) {
        const operation = res.json.paths[route][method.toLowerCase()];
        assert.ok(operation.summary && operation.description, `${method} ${route} has a summary and a description`);
        assert.deepEqual(operation.security, auth_required ? [{ apiKey: [] }] : undefined, `${method} ${route} security`);
        const statuses = Object.keys(operation.responses);
        assert.ok(statuses.length > 0 && statuses.every((s) => /^[1-5]\d\d$/.test(s)), `${method} ${route} lists exact codes: ${statuses}`);
        if (auth_required) assert.ok(statuses.includes('500') && statuses.includes('401'), `${method} ${route} lists 401 and 500`);
      }
      assert.deepEqual(res.json.components.securitySchemes, { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } });
    });

    test('GET /api/openapi.json gives lines as an integer of at least 1 whose description says values above 2000 are clamped', async () => {
      const res = await d.get('/api/openapi.json');
      for (const route of ['/api/logs/latest', '/api/logs/snapshot']) {
        const [lines] = res.json.paths[route].get.parameters;
        assert.deepEqual([lines.name, lines.in, lines.schema], ['lines', 'query', { type: 'integer', minimum: 1 }]);
        assert.match(lines.description, /above 2000 are clamped/);
      }
    });

    test('GET /api/openapi.json: every example of every status matches its own schema', () => {
      const problems: string[] = [];
      for (const [route, operations] of Object.entries(API_DOCUMENT.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const [status, answer] of Object.entries(operation.responses as Record<string, any>)) {
            for (const [type, media] of Object.entries(answer.content as Record<string, any>)) {
              if (type !== 'application/json') continue;
              problems.push(...schemaErrors(media.example, media.schema).map((e) => `${method.toUpperCase()} ${route} ${status}: ${e}`));
            }
          }
        }
      }
      assert.deepEqual(problems, []);
    });
  });

  // ---- Hostile input (every route; seeded, replayable from the seed in the test name) ----

  const HOSTILE_SEED = 0x6a3e5eed;
  const DOCUMENTED_STATUSES = [200, 204, 400, 401, 404, 405, 408, 409, 413, 431, 500, 502, 503];
  // every route but those whose answer never ends (the event stream) or is large and costly (metrics, the document)
  const ROUTES = DESCRIBED_ROUTES.map((r) => r.route).filter((route) => !['/api/events', '/metrics', '/api/openapi.json'].includes(route));

  interface Hostile { data: Buffer; halfClose: boolean; mayDrop: boolean; method: string }

  /** One raw HTTP request built from random parts; a quarter of them break HTTP in one way. Only bodies the contract
   * refuses (400, 413) ever carry the valid key, so nothing may reach the console. */
  function hostileRequest(random: () => number): Hostile {
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const int = (max: number) => Math.floor(random() * (max + 1));
    const chance = (p: number) => random() < p;
    const text = (length: number, alphabet: string) => {
      let out = '';
      for (let i = 0; i < length; i++) out += alphabet[int(alphabet.length - 1)];
      return out;
    };
    const broken = chance(0.25) ? pick(['method', 'target', 'version', 'host', 'key', 'framing']) : '';
    const validKey = chance(0.35);
    const field = pick(['command', 'player']);
    const base = validKey ? (field === 'command' ? '/api/command' : pick(['/api/whitelist/add', '/api/whitelist/remove'])) : chance(0.5) ? pick(WRITE_ROUTES) : pick([...ROUTES, '/nope', '/api/']);

    const method = broken === 'method' ? pick(['CONNECT', 'get', 'post', 'Post', 'FOO', '', 'GET GET', 'POST\t'])
      : validKey || chance(0.7) ? (validKey ? 'POST' : pick(['GET', 'POST'])) : pick(['HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'M-SEARCH', 'PROPFIND']);
    const query = () => pick([
      () => `lines=${pick(['0', '-1', '1.5', '2001', '99999999999999999999999', 'abc', '', '%31%30', '1e3', '0x10', '../../etc/passwd'])}`,
      () => Array.from({ length: 1 + int(500) }, (_, i) => `lines=${i}`).join('&'),
      () => `x=${text(int(20_000), 'aZ9%')}`,
      () => pick(['%zz', '%00', '%ff%fe', 'a=%E0%A4%A', 'file=/etc/passwd', '=', '&&&', '%C3%A9=%C3%BC']),
    ])();
    let target = broken === 'target' ? pick(['', ' ', '/\u00e9', '/api/status\u00ff', '/api/\u0000', 'api/status', `/api/status?${'\u00fc'}`])
      : chance(0.7) ? base : pick([
        () => `/${base}`, () => `${base}/`, () => base.toUpperCase(), () => `${base}#frag`, () => `${base};x=1`, () => `/api/..${base}`,
        () => { const i = 1 + int(base.length - 2); return `${base.slice(0, i)}%${base.charCodeAt(i).toString(16)}${base.slice(i + 1)}`; },
        () => pick(['/%00', '/%2e%2e/%2e%2e/etc/passwd', '*', '/api/%2e%2e/api/status']),
        () => `${base}/${'a'.repeat(int(20_000))}`,
        () => `${pick(['http://x', 'HTTP://evil.example:80', 'http://[::1]'])}${base}`,
      ])();
    if (broken !== 'target' && chance(0.3)) target += `?${query()}`;

    const jsonString = (s: string) => JSON.stringify(s);   // escapes controls; lone surrogates stay \ud800 escapes
    const withForbidden = () => {
      const chars = ['say ', 'é', '✓', '\ud800', '\udfff', '"', '\u2028', 'x', ' ', ...FORBIDDEN, ...CONTROL];
      const s = Array.from({ length: 1 + int(40) }, () => pick(chars)).join('');
      const i = int(s.length);
      return s.slice(0, i) + pick([...FORBIDDEN, ...CONTROL, '\u0001', '\u001f']) + s.slice(i);
    };
    const nested = (depth: number) => (chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    // refused whoever sends them: not an object, field missing or not a string, forbidden or control characters,
    // too long, empty, invalid UTF-8, over 16 KiB, not complete JSON
    const refused = (): Buffer => pick([
      () => Buffer.from(pick(['null', 'true', '0', '-1.5e308', '"say hi"', '[]', '["say hi"]', '""', ' ', ''])),
      () => Buffer.from(nested(1 + int(10_000))),
      () => Buffer.from(`{"${field}":${pick(['null', '42', '["say hi"]', '{"text":"say hi"}', 'true', '-0', '1e999'])}}`),
      () => Buffer.from(pick(['{}', `{"${field.toUpperCase()}":"say hi"}`, `{"${field} ":"say hi"}`])),
      () => Buffer.from(`{"${field}":${jsonString(withForbidden())}}`),
      () => Buffer.from(`{"${field}":"say ok","${field}":${jsonString(withForbidden())}}`),   // the last duplicate wins
      () => Buffer.from(`{"${field}":${jsonString(`say ${'x'.repeat(1001 + int(3000))}`)}}`),
      () => Buffer.from(`{"${field}":${jsonString(pick(['', '   ', '\t']))}}`),
      () => Buffer.concat([Buffer.from(`{"${field}":"say `), Buffer.from(pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80]])), Buffer.from('"}')]),
      () => Buffer.from(`{"${field}":"say padded","pad":"${'p'.repeat(16_385 + int(chance(0.1) ? 1_000_000 : 20_000))}"}`),
      () => Buffer.from(`{"${field}":"say cut short"`),
    ])();
    const anything = (): Buffer => (chance(0.5) ? refused() : pick([
      () => Buffer.from(`{"${field}":"say ${pick(['hello', 'pwned', 'Steve'])}"}`),
      () => Buffer.from('{"player":"Steve"}'),
      () => Buffer.from(Array.from({ length: int(2000) }, () => int(255))),
    ])());
    const body = method === 'GET' || method === 'HEAD' ? (chance(0.1) ? anything() : Buffer.alloc(0)) : validKey ? refused() : anything();

    const headers: Buffer[] = [];
    const header = (name: string, value: string | Buffer) => headers.push(Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value), Buffer.from('\r\n')]));
    if (broken !== 'host') header('Host', 'localhost');
    else if (chance(0.7)) header('Host', pick(['', 'a b', 'x\u0000']));
    header('Connection', 'close');   // every answer ends its connection, so the reply is read to its end
    if (validKey) header(pick(['X-API-Key', 'x-api-key', 'X-API-KEY']), broken === 'key' ? `${KEY}\u0000` : KEY);
    else if (broken === 'key') header('X-API-Key', pick([`${KEY}\u0000`, `wrong\r`, '\u0001']));
    else {
      const length = int(300);
      pick([
        () => undefined,
        () => header('X-API-Key', text(length, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')),
        () => header('X-API-Key', Buffer.from(Array.from({ length }, () => 0x80 + int(0x7f)))),
        () => header('X-API-Key', pick([KEY.slice(0, -1), `${KEY}x`, `x${KEY}`, KEY.toUpperCase(), `${KEY.slice(0, 20)}${KEY.slice(21)}`])),
        () => { header('X-API-Key', 'wrong'); header('X-API-Key', KEY); },   // two values: the joined header is not the key
      ])();
    }
    if (chance(0.5)) header('Content-Type', pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '*/*']));
    if (chance(0.03)) header('X-Big', 'b'.repeat(17_000 + int(10_000)));
    if (chance(0.03)) for (let i = 0; i < 300; i++) header(`X-Many-${i}`, 'v'.repeat(60));
    if (chance(0.02)) header('Upgrade', 'websocket');
    let halfClose = false;
    let payload = body;
    if (broken === 'framing') {
      pick([
        () => { header('Content-Length', String(body.length + 1 + int(100))); halfClose = true; },   // announces more than it sends, then ends
        () => header('Content-Length', pick(['-1', 'abc', '1e3', '99999999999999999999', `${body.length}, ${body.length + 1}`])),
        () => { header('Content-Length', String(body.length)); header('Transfer-Encoding', 'chunked'); },
        () => { header('Transfer-Encoding', 'chunked'); payload = Buffer.concat([Buffer.from(`${(body.length + 5).toString(16)}\r\n`), body, Buffer.from('\r\nzz\r\n')]); },
      ])();
    } else if (chance(0.15)) {
      header('Transfer-Encoding', 'chunked');
      const chunks: Buffer[] = [];
      for (let at = 0; at < body.length;) {
        const part = body.subarray(at, at + 1 + int(4000));
        at += part.length;
        chunks.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
      }
      payload = Buffer.concat([...chunks, Buffer.from('0\r\n\r\n')]);
    } else if (body.length > 0 || chance(0.5)) header('Content-Length', String(body.length));
    const version = broken === 'version' ? pick(['HTTP/2.0', 'HTTP/9.9', 'http/1.1', 'HTTP/1', 'HTTP/1.1 x']) : chance(0.9) ? 'HTTP/1.1' : 'HTTP/1.0';
    const data = Buffer.concat([Buffer.from(`${method} ${target} ${version}\r\n`, 'latin1'), ...headers, Buffer.from('\r\n'), payload]);
    // Node closes a CONNECT without an answer (no 'connect' listener); a reply can be lost to a reset when the daemon
    // closes with much of the request unread, or when the request was cut short
    return { data, halfClose, mayDrop: method === 'CONNECT' || halfClose || payload.length > 16_384 || data.length > 16_384, method };
  }

  describe('hostile input', { concurrency: 1 }, () => {
    const { host, d } = group({ game: true });

    test(`every route answers 2 rounds of the same 1500 random hostile requests (seed ${HOSTILE_SEED}) with documented statuses, sends nothing, changes no file and keeps its memory level`, async (t) => {
      const random = seededRandom(HOSTILE_SEED);
      const requests = Array.from({ length: 1500 }, () => hostileRequest(random));
      const files = hashFiles(host.serverDir, host.backupDir);
      const mark = consoleBytes(host).length;
      const calls = servCalls(host).length;
      const seen = new Map<string, number>();   // status (or "no reply") → count, over both rounds
      const round = async () => {
        const problems: string[] = [];
        let next = 0;
        const worker = async () => {
          while (next < requests.length) {
            const i = next++;
            const { data, halfClose, mayDrop, method } = requests[i];
            const what = `#${i} ${JSON.stringify(data.subarray(0, 120).toString('latin1'))}`;
            const reply = await rawRequest(d.port, data, { halfClose }).catch((err: Error) => (err.message === 'raw request: no reply' ? null : err));
            if (reply instanceof Error) { problems.push(`${what}: ${reply.message}`); continue; }
            const label = reply === null ? 'no reply' : String(reply.status);
            seen.set(label, (seen.get(label) ?? 0) + 1);
            if (reply === null) { if (!mayDrop) problems.push(`${what}: no reply`); continue; }
            if (!DOCUMENTED_STATUSES.includes(reply.status)) problems.push(`${what}: status ${reply.status}`);
            const common = [reply.headers['access-control-allow-origin'], reply.headers['cache-control'], reply.headers['x-content-type-options']];
            if (common.join(' ') !== '* no-store nosniff') problems.push(`${what}: common headers ${JSON.stringify(common)}`);
            if (reply.status < 400 || method === 'HEAD') continue;
            let error: unknown;
            try { error = JSON.parse(reply.body.toString('utf8')); } catch { error = reply.body.toString('latin1'); }
            const keys = typeof error === 'object' && error !== null ? Object.keys(error) : [];
            const { ok, error: message } = error as { ok?: unknown; error?: unknown };
            if (keys.join() !== 'ok,error' || ok !== false || typeof message !== 'string' || message === 'Internal server error') {
              problems.push(`${what}: ${reply.status} body ${JSON.stringify(error)}`);
            }
          }
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        return problems;
      };
      const first = await round();
      const rssFirst = vmRssBytes(d.child.pid!);
      const second = await round();
      const rssSecond = vmRssBytes(d.child.pid!);
      t.diagnostic(`answers: ${[...seen].sort().map(([status, n]) => `${status} ×${n}`).join(', ')}`);
      t.diagnostic(`VmRSS after round 1: ${(rssFirst / 2 ** 20).toFixed(1)} MiB, after round 2: ${(rssSecond / 2 ** 20).toFixed(1)} MiB`);
      assert.deepEqual(first, []);
      assert.deepEqual(second, []);
      assert.deepEqual(hashFiles(host.serverDir, host.backupDir), files);
      assert.equal(servCalls(host).length, calls);
      await assertNothingSentSince(d, host, mark);
      const res = await d.get('/api/status');
      assert.deepEqual([res.status, res.json.online], [200, true]);
      // V8 collects lazily and grows its heap in steps, so RSS after a round moves by a few MiB either way; 1500 leaked
      // sockets or request bodies (tens of KiB each with their buffers) would add well over 30 MiB in the second round
      assert.ok(rssSecond - rssFirst <= 30 * 2 ** 20, `VmRSS grew by ${((rssSecond - rssFirst) / 2 ** 20).toFixed(1)} MiB in the second round`);
    });
  });

  // ---- The systemd unit and the demo (README: Running as a service, npm run demo) ----

  describe('the repository', { concurrency: 1 }, () => {
    const root = path.join(__dirname, '..');
    const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (['node_modules', 'dist', '.git'].includes(entry.name)) return [];
      const file = path.join(dir, entry.name);
      return entry.isDirectory() ? files(file) : [file];
    });
    const texts = () => files(root).filter((file) => /\.(md|ts|yml|service|json|sh)$|\/(run|serv)$/.test(file)).map((file) => [path.relative(root, file), fs.readFileSync(file, 'utf8')] as const);
    /** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens. */
    const anchorsOf = (file: string) => new Set(fs.readFileSync(file, 'utf8').split('\n').filter((line) => /^#{1,6} /.test(line))
      .map((line) => line.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')));

    test('the repository stands alone: no file refers to a path outside it', () => {
      // the pattern is built from pieces, so that this file does not match itself
      const outsidePattern = new RegExp(['\\.\\./shared', 'shared/(spec|guides)', 'decisions' + '\\.md', 'gameserver-api' + '-spec'].join('|'));
      const outside = texts().filter(([, text]) => outsidePattern.test(text)).map(([name]) => name);
      assert.deepEqual(outside, []);
    });

    test('every docs/….md#anchor cited in the repository names a file and a heading that exist', () => {
      const broken: string[] = [];
      for (const [name, text] of texts()) {
        for (const match of text.matchAll(/(?:\]\(|\b)((?:\.\.\/)*(?:docs\/)?[A-Za-z./-]*\.md)#([a-z0-9_-]+)/g)) {
          const target = match[1].startsWith('docs/') ? path.join(root, match[1]) : path.join(root, path.dirname(name), match[1]);
          if (!fs.existsSync(target) || !anchorsOf(target).has(match[2])) broken.push(`${name}: ${match[1]}#${match[2]}`);
        }
      }
      assert.deepEqual(broken, []);
    });

    test('docs/README.md lists every page and folder of docs/, and each of its links names a file or folder that exists', () => {
      const docs = path.join(root, 'docs');
      const index = fs.readFileSync(path.join(docs, 'README.md'), 'utf8');
      const links = [...index.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]).filter((link) => !/^[a-z]+:/.test(link));
      const listed = new Set(links.map((link) => link.replace(/\/$/, '')));
      const entries = fs.readdirSync(docs).filter((name) => name !== 'README.md');
      assert.deepEqual(entries.filter((name) => !listed.has(name)), [], 'not listed in docs/README.md');
      assert.deepEqual(links.filter((link) => !fs.existsSync(path.join(docs, link))), [], 'links to nothing');
    });
  });

  describe('gameserver-api.service', { concurrency: 1 }, () => {
    test('gameserver-api.service passes systemd-analyze verify and rates an exposure of 2.0 or less', async (t) => {
      if ((await runTool('systemd-analyze', ['--version'])).error) return t.skip('systemd-analyze is not installed');
      let unit = path.join(__dirname, '..', 'gameserver-api.service');
      if (!fs.existsSync('/usr/bin/node')) {   // verify checks that ExecStart's binary exists on this machine
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-unit-'));
        t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
        const text = fs.readFileSync(unit, 'utf8').replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `);
        unit = path.join(dir, 'gameserver-api.service');
        fs.writeFileSync(unit, text);
      }
      const verify = await runTool('systemd-analyze', ['verify', unit]);
      assert.equal(verify.stdout + verify.stderr, '');   // verify exits 0 for lines it ignores, with a message
      assert.equal(verify.status, 0);
      const security = await runTool('systemd-analyze', ['security', '--offline=true', '--threshold=20', unit]);
      assert.equal(security.status, 0, security.stdout);   // --threshold is on the 0-100 scale: 20 = 2.0
      const score = Number(/Overall exposure level for gameserver-api\.service: (\d+\.\d)/.exec(security.stdout)?.[1]);
      t.diagnostic(`exposure level ${score}`);
      assert.ok(score <= 2.0, `exposure ${score}`);
    });
  });

  // README, Installing on a game host: the blocks marked `<!-- recipe: install -->` and `<!-- recipe: webhook -->`
  // run as written, with bash, except that /etc/… and /opt/… become folders of a scratch root. systemd is not here:
  // what it would do with the files (EnvironmentFile=, LoadCredential=, Environment= with %d) is done by hand.
  describe('README: the install recipe', { concurrency: 1 }, () => {
    const { defer, host } = group({ daemon: false });
    const repo = path.join(__dirname, '..');
    const WEBHOOK_PLACEHOLDER = 'https://discord.com/api/webhooks/…/…';
    const webhookUrl = 'http://127.0.0.1:9/api/webhooks/1/t0k3n';
    let root = '';
    before(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-recipe-'));
      defer(() => fs.rmSync(root, { recursive: true, force: true }));
      fs.mkdirSync(path.join(root, 'etc', 'systemd', 'system'), { recursive: true });   // a host with systemd has it
    });

    /** The sh blocks of README.md marked `<!-- recipe: NAME … -->`, in order, as one script. */
    const recipe = (name: string) => {
      const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
      const blocks = [...readme.matchAll(/^<!-- recipe: ([a-z]+)\b[^\n]*-->\n```sh\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === name).map((m) => m[2]);
      assert.ok(blocks.length > 0, `README.md has a block marked recipe: ${name}`);
      return blocks.join('');
    };
    /** Runs a recipe under the scratch root; refuses one that names any other absolute path but /dev/null. */
    const runRecipe = async (name: string, replace: Record<string, string> = {}) => {
      let script = recipe(name).replace(/(?<![\w.:/-])\/(etc|opt)\//g, `${root}/$1/`);
      for (const [from, to] of Object.entries(replace)) script = script.replaceAll(from, to);
      const outside = [...script.matchAll(/(?<![\w.:/%-])\/[\w.-]+(?:\/[\w.-]*)*/g)].map((m) => m[0]).filter((p) => !p.startsWith(`${root}/`) && p !== '/dev/null');
      assert.deepEqual(outside, [], 'the recipe writes nothing outside the scratch root');
      const run = await runTool('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', script], { cwd: repo, env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` } });
      assert.deepEqual({ status: run.status, stderr: run.stderr }, { status: 0, stderr: '' });
      return run.stdout;
    };
    const onHost = (file: string) => (file.startsWith(`${root}/`) ? file : path.join(root, file));
    const unit = () => onHost('/etc/systemd/system/gameserver-api.service');
    const assertRootOnly = (file: string) => {
      const stat = fs.statSync(onHost(file));
      assert.deepEqual({ file, uid: stat.uid, gid: stat.gid, mode: (stat.mode & 0o777).toString(8) }, { file, uid: 0, gid: 0, mode: '600' });
    };
    /** What systemd gives the daemon: the EnvironmentFile's lines, Environment= with %d, each credential's copy. */
    const serviceEnv = () => {
      const dropIns = fs.existsSync(`${unit()}.d`) ? fs.readdirSync(`${unit()}.d`).filter((f) => f.endsWith('.conf')).sort().map((f) => path.join(`${unit()}.d`, f)) : [];
      const credentials = fs.mkdtempSync(path.join(root, 'credentials-'));
      const env: Record<string, string> = {};
      for (const file of [unit(), ...dropIns]) {
        for (const [, name, value] of fs.readFileSync(file, 'utf8').matchAll(/^(EnvironmentFile|Environment|LoadCredential)=(.*)$/gm)) {
          if (name === 'EnvironmentFile') {
            for (const [, key, v] of fs.readFileSync(onHost(value), 'utf8').matchAll(/^([A-Z_]+)=(.*)$/gm)) env[key] = v;
          } else if (name === 'Environment') {
            const [key, ...rest] = value.split('=');
            env[key] = rest.join('=').replace('%d', credentials);
          } else {
            const [id, source] = value.split(/:(.*)/s);
            fs.copyFileSync(onHost(source), path.join(credentials, id));
          }
        }
      }
      return env;
    };
    const verify = async (t: { diagnostic(message: string): void }) => {
      if ((await runTool('systemd-analyze', ['--version'])).error) return t.diagnostic('systemd-analyze is not installed: the unit is not verified');
      // verify checks that ExecStart's binary exists on this machine
      if (!fs.existsSync('/usr/bin/node')) fs.writeFileSync(unit(), fs.readFileSync(unit(), 'utf8').replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `));
      const run = await runTool('systemd-analyze', ['verify', unit()]);
      assert.deepEqual({ status: run.status, output: run.stdout + run.stderr }, { status: 0, output: '' });
    };

    test('README: the install recipe installs the daemon and the unit, and makes a root-only key that the daemon accepts from its credential', async (t) => {
      const printed = await runRecipe('install');
      assert.deepEqual(fs.readFileSync(onHost('/opt/gameserver-api/dist/server.js')), fs.readFileSync(DAEMON));
      assert.equal(fs.readFileSync(unit(), 'utf8'), fs.readFileSync(path.join(repo, 'gameserver-api.service'), 'utf8'));
      assertRootOnly('/etc/gameserver-api/env');
      assertRootOnly('/etc/gameserver-api/api-key');
      const key = fs.readFileSync(onHost('/etc/gameserver-api/api-key'), 'utf8');
      assert.match(key, /^[A-Za-z0-9_-]{43}\n$/);
      assert.equal(printed, key);
      assert.equal(fs.readFileSync(onHost('/etc/gameserver-api/env'), 'utf8'), '');
      await verify(t);
      const d = await startDaemon(host, defer, { API_KEY: null, ...serviceEnv() });
      assert.match(d.stdout(), /EVENT_WEBHOOK_URL=\(none\), .*writes enabled\)/);
      assertReply(await d.post('/api/command', '[not json', { key: key.trim() }), 400, { ok: false, error: MSG.notObject });   // past the key check
      assertReply(await d.post('/api/command', '[not json', { key: KEY }), 401, { ok: false, error: MSG.unauthorized });
    });

    test('README: the webhook recipe keeps the URL in a root-only file, and the daemon posts to it in the discord format', async (t) => {
      if (!fs.existsSync(unit())) await runRecipe('install');   // when this test runs alone
      await runRecipe('webhook', { [WEBHOOK_PLACEHOLDER]: webhookUrl });
      assertRootOnly('/etc/gameserver-api/webhook-url');
      assert.equal(fs.readFileSync(onHost('/etc/gameserver-api/webhook-url'), 'utf8'), `${webhookUrl}\n`);
      await verify(t);
      const d = await startDaemon(host, defer, { API_KEY: null, ...serviceEnv() });
      assert.match(d.stdout(), /EVENT_WEBHOOK_URL=http:\/\/127\.0\.0\.1:9\/…, EVENT_WEBHOOK_FORMAT=discord, .*writes enabled\)/);
      assert.ok(!d.stdout().includes('t0k3n'));
    });
  });

  describe('npm run demo', { concurrency: 1 }, () => {
    const defer = cleanupStack();

    test('node dist/demo/main.js prints the key and one curl line per route, serves them, and on SIGINT exits 0 leaving no folder and no process', async () => {
      const port = await freePort();
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-demo-home-'));
      defer(() => fs.rmSync(home, { recursive: true, force: true }));
      let root = '';
      const demo = spawn(process.execPath, [path.join(__dirname, 'demo', 'main.js')],
        { env: { PATH: process.env.PATH ?? '', HOME: home, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      demo.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
      demo.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
      const exit = new Promise<Exit>((resolve) => demo.once('exit', (code, signal) => resolve({ code, signal })));
      defer(async () => {   // only when the test failed half-way: the demo, its daemon, tmux and fakes, its folder
        if (demo.exitCode === null && demo.signalCode === null) demo.kill('SIGKILL');
        if (root === '') return;
        for (const pid of processesOf(root)) process.kill(pid, 'SIGKILL');
        fs.rmSync(root, { recursive: true, force: true });
      });
      await waitFor(() => {
        if (demo.exitCode !== null) throw new Error(`the demo exited early: ${demo.exitCode} ${err}`);
        return out.includes('Press Ctrl-C');
      }, { timeoutMs: 30_000 });
      root = path.dirname(/ listening on 127\.0\.0\.1:\d+ \(SERVER_DIR=([^,]+),/.exec(out)?.[1] ?? '');
      assert.ok(root.includes('gameserver-host-'), out);
      const key = /^KEY='([A-Za-z0-9_-]{43})'$/m.exec(out)?.[1] ?? '';
      const index = await request(port, 'GET', '/api');
      const routes = index.json.endpoints.map((e: { method: string; route: string }) => `${e.method} ${e.route}`);
      const curls = out.split('\n').filter((line) => line.startsWith('curl '))
        .map((line) => `${/ -X (\S+)/.exec(line)?.[1] ?? 'GET'} ${new URL(/http:\/\/[^\s']+/.exec(line)?.[0] ?? 'http://x/').pathname}`);
      assert.equal(routes.length, 31);
      assert.deepEqual(curls, routes);
      const status = await request(port, 'GET', '/api/status');
      assert.deepEqual([status.status, status.json.ok], [200, true]);
      const write = await request(port, 'POST', '/api/whitelist/add', { key, body: { player: 'Alex' } });
      assertReply(write, 200, { ok: true, message: 'Alex is already on the whitelist.' });
      demo.kill('SIGINT');
      assert.deepEqual(await exit, { code: 0, signal: null });
      assert.equal(fs.existsSync(root), false);
      assert.deepEqual(processesOf(root), []);
    });
  });
  describe('npm run demo | tee', { concurrency: 1 }, () => {
    const defer = cleanupStack();

    test('node dist/demo/main.js | tee, then Ctrl-C to the whole process group (tee ends first), leaves no process and no folder', async () => {
      const port = await freePort();
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-demo-home-'));
      defer(() => fs.rmSync(home, { recursive: true, force: true }));
      const log = path.join(home, 'demo.log');
      // the terminal's group: the shell, the demo, tee and the daemon, as `npm run demo | tee demo.log` makes them
      const group = spawn('sh', ['-c', `"$NODE" "$DEMO" | tee "$LOG" > /dev/null`], {
        detached: true, stdio: 'ignore',
        env: { PATH: process.env.PATH ?? '', HOME: home, PORT: String(port), NODE: process.execPath, DEMO: path.join(__dirname, 'demo', 'main.js'), LOG: log },
      });
      let root = '';
      defer(() => {   // only when the test failed half-way
        try { process.kill(-group.pid!, 'SIGKILL'); } catch { /* gone */ }
        if (root === '') return;
        for (const pid of processesOf(root)) process.kill(pid, 'SIGKILL');
        fs.rmSync(root, { recursive: true, force: true });
      });
      await waitFor(() => readOr(log).toString().includes('Press Ctrl-C'), { timeoutMs: 30_000 });
      root = path.dirname(/ listening on 127\.0\.0\.1:\d+ \(SERVER_DIR=([^,]+),/.exec(readOr(log).toString())?.[1] ?? '');
      assert.ok(root.includes('gameserver-host-'), readOr(log).toString());
      process.kill(-group.pid!, 'SIGINT');
      await waitFor(() => !fs.existsSync(root) && processesOf(root).length === 0, { timeoutMs: 20_000 });
    });
  });

  describe('npm run demo ends whole: on SIGINT, SIGTERM and SIGHUP and when what started it goes, whatever state the game is in', { concurrency: 2 }, () => {
    const defer = cleanupStack();
    const DEMO = path.join(__dirname, 'demo', 'main.js');
    // `npm run demo` is npm, then `sh -c` with npm_lifecycle_script set, then node; `kill $!` names npm
    const SCRIPT = '"$NODE" "$DEMO"; exit $?';   // a command after node: sh waits for it rather than exec it

    interface Demo { launcher: ChildProcess; exit: Promise<Exit>; root: string; key: string; port: number; out(): string }

    const groupMembers = (pgid: number) => fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
      try {
        const { state, pgrp } = procStat(pid);
        return state !== 'Z' && pgrp === pgid;
      } catch {
        return false;   // exited meanwhile
      }
    });
    const killQuietly = (pid: number) => {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    };

    /** Runs `file args` as a terminal's job (a process group of its own) that runs the demo; resolves once it serves. */
    async function startDemo(file: string, args: string[], env: Record<string, string> = {}): Promise<Demo> {
      const port = await freePort();
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gameserver-demo-home-'));
      defer(() => fs.rmSync(home, { recursive: true, force: true }));
      const launcher = spawn(file, args, {
        detached: true, stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HOME: home, PORT: String(port), NODE: process.execPath, DEMO, SCRIPT, ...env },
      });
      yieldToTests(launcher);
      let out = '';
      let err = '';
      launcher.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
      launcher.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
      const exit = new Promise<Exit>((resolve) => launcher.once('exit', (code, signal) => resolve({ code, signal })));
      const demo: Demo = { launcher, exit, root: '', key: '', port, out: () => out + err };
      defer(() => {   // only when the test failed half-way: the demo, its daemon, tmux and fakes, its folder
        groupMembers(launcher.pid!).forEach(killQuietly);
        if (demo.root === '') return;
        processesOf(demo.root).forEach(killQuietly);
        fs.rmSync(demo.root, { recursive: true, force: true });
      });
      // a look at the group reads every process of the machine: a few a second, not one each 20 ms, and none while
      // the launcher, the group's leader, is alive
      await waitFor(() => {
        if (out.includes('Press Ctrl-C')) return true;
        if (launcher.exitCode === null && launcher.signalCode === null) return false;
        if (groupMembers(launcher.pid!).length === 0) throw new Error(`the demo exited early: ${out}${err}`);
        return false;
      }, { timeoutMs: 30_000, intervalMs: 100 });
      demo.root = path.dirname(/ listening on \S+ \(SERVER_DIR=([^,]+),/.exec(out)?.[1] ?? '');
      assert.ok(demo.root.includes('gameserver-host-'), out + err);
      demo.key = /^KEY='([A-Za-z0-9_-]{43})'$/m.exec(out)?.[1] ?? '';
      return demo;
    }

    const status = async (demo: Demo) => (await request(demo.port, 'GET', '/api/status')).json as { online: boolean; pid?: number };

    async function restartGame(demo: Demo): Promise<void> {
      const before = await waitFor(async () => (await status(demo)).pid);
      assert.equal((await request(demo.port, 'POST', '/api/server/restart', { key: demo.key })).status, 200);
      await waitFor(async () => {
        const now = await status(demo);
        return now.online && now.pid !== before;
      }, { timeoutMs: 30_000 });
    }

    async function stopGame(demo: Demo): Promise<void> {
      await waitFor(async () => (await status(demo)).online);
      assert.equal((await request(demo.port, 'POST', '/api/server/stop', { key: demo.key })).status, 200);
      await waitFor(async () => !(await status(demo)).online, { timeoutMs: 30_000 });
    }

    /** Nothing of the demo is left: no process of its group or naming its folder, no tmux server, no folder. */
    async function assertEndedWhole(demo: Demo): Promise<void> {
      // a look for the folder is cheap, and it goes late in the demo's end: the machine's processes are read once it has gone
      await waitFor(() => !fs.existsSync(demo.root) && groupMembers(demo.launcher.pid!).length === 0 && processesOf(demo.root).length === 0,
        { timeoutMs: 30_000, intervalMs: 100 });
      assert.notEqual((await runTool('tmux', ['-S', path.join(demo.root, 'tmux.sock'), 'list-sessions'])).status, 0);
    }

    const states = {
      'its game runs': async () => undefined,
      'its game was restarted through POST /api/server/restart': restartGame,
      'its game was stopped through POST /api/server/stop': stopGame,
    } as const;
    const cases: Array<[NodeJS.Signals, keyof typeof states]> = [
      ['SIGINT', 'its game was restarted through POST /api/server/restart'],
      ['SIGTERM', 'its game was restarted through POST /api/server/restart'],
      ['SIGHUP', 'its game was restarted through POST /api/server/restart'],
      ['SIGTERM', 'its game runs'],
      ['SIGHUP', 'its game runs'],
      ['SIGTERM', 'its game was stopped through POST /api/server/stop'],
    ];
    for (const [signal, state] of cases) {
      test(`node dist/demo/main.js on ${signal} when ${state}: exits 0 leaving no process, no tmux server and no folder`, async () => {
        const demo = await startDemo(process.execPath, [DEMO]);
        await states[state](demo);
        demo.launcher.kill(signal);
        assert.deepEqual(await demo.exit, { code: 0, signal: null });
        await assertEndedWhole(demo);
      });
    }

    test('node dist/demo/main.js ends whole when its parent goes without a signal to it (sh killed)', async () => {
      const demo = await startDemo('sh', ['-c', SCRIPT]);
      demo.launcher.kill('SIGKILL');
      await assertEndedWhole(demo);
      assert.match(demo.out(), /^demo: the process that started the demo has gone$/m);
    });

    test('node dist/demo/main.js under npm\'s script shell ends whole when npm goes (killed outright, so its shell lives on) after a restart of its game', async () => {
      // the outer sh stands for npm: the script's shell and node carry npm_lifecycle_script, npm does not
      const demo = await startDemo('sh', ['-c', 'npm_lifecycle_script=demo sh -c "$SCRIPT"; exit $?']);
      await restartGame(demo);
      demo.launcher.kill('SIGKILL');
      await assertEndedWhole(demo);
      assert.match(demo.out(), /^demo: the process that started the demo has gone$/m);
    });

    test('node dist/demo/main.js listens on HOST and PORT, prints curl lines for them, and says what it does while it builds', async () => {
      const demo = await startDemo(process.execPath, [DEMO], { HOST: '127.0.0.2' });
      const out = demo.out();
      assert.match(out, new RegExp(` listening on 127\\.0\\.0\\.2:${demo.port} \\(`));
      assert.ok(out.includes(`curl -s http://127.0.0.2:${demo.port}/api/status\n`), out);
      const refused = await new Promise<string>((resolve) => net.connect(demo.port, '127.0.0.1').once('connect', () => resolve('connected')).once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')));
      assert.equal(refused, 'ECONNREFUSED');
      const progress = out.split('\n').filter((line) => line.startsWith('demo: '));
      assert.deepEqual(progress, ['demo: building a simulated host under /tmp', 'demo: starting the simulated game (serv start)',
        `demo: starting gameserver-api on 127.0.0.2 port ${demo.port}`]);
      const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      assert.match(packageJson.scripts.demo, /^echo 'demo: compiling [^']*' >&2 && npm run -s build && node dist\/demo\/main\.js$/);
      demo.launcher.kill('SIGTERM');
      assert.deepEqual(await demo.exit, { code: 0, signal: null });
      await assertEndedWhole(demo);
    });
  });
});
