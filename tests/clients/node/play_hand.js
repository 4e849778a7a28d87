#!/usr/bin/env node
// A Node.js client of the Shanghai Mahjong gateway (cross-language check of the protos).
//
// It loads the same .proto files as the Python services (protos/), creates a table with one
// open seat and three built-in bots (CreateTable), takes the open seat (JoinSeat, which signs
// the seat token and starts the table once no seat is open), follows the seat's event stream
// (Subscribe), answers every prompt through Act (request id + last sequence number), and stops
// after the first hand's result. A call refused with RetryInfo (flood control) is sent again
// after the wait asked for. It prints one JSON line with what it saw, and checks on the
// way that sequence numbers only grow and that no event shows another seat's concealed tiles.
//
// With --drop-after N it cuts its event stream after N events and resumes it with
// after_sequence = the last number seen; at the end a fresh subscription from 0 must hold exactly
// the events it received (resume_exact).
//
// A paused gateway replica (issue 32; README "Client API", "A paused replica"): the stream asks
// for heartbeats (the first names the lease); a stream silent for the lease and a second (or two
// heartbeats and a second, if sooner) is cancelled and resumed on the next gateway address from
// the last number seen; each gateway call's try lasts at most the lease and a second and is
// hedged, the same request (the same request id), on the next address after half the lease.
// --fallbacks names the other replicas (comma-separated); --lease-ms the lease until a
// heartbeat names it (default the gateway's, 30000).
//
// The gateway's public port serves TLS: the client trusts the CA file given by --ca, else
// MAHJONG_TLS_CA, else the development CA (.data/tls/ca.crt of this repository, which `make
// run` and the tests' stacks make), and presents no certificate (a player has none).
// Plaintext only with MAHJONG_INSECURE=1 (a gateway run with --insecure).
//
// usage: node play_hand.js --gateway 127.0.0.1:PORT [--protos ../../../protos] [--timeout 120]
//                          [--seat 0] [--drop-after N] [--ca CA_FILE]
//                          [--fallbacks HOST:PORT,...] [--lease-ms 30000]
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

function parseArgs(argv) {
  const args = {
    gateway: '', protos: path.join(__dirname, '..', '..', '..', 'protos'), timeout: 120, seat: 0, drop_after: 0,
    // The CA that signed the gateway's certificate: MAHJONG_TLS_CA, else the development CA.
    ca: process.env.MAHJONG_TLS_CA || path.join(__dirname, '..', '..', '..', '.data', 'tls', 'ca.crt'),
    // Signing in: matchmaking's public port, and the issuer's ID token (given, or fetched from
    // the development issuer's /token for --name).
    matchmaking: '', issuer: '', id_token: '', name: 'Node.js',
    fallbacks: '', lease_ms: 30000,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-/g, '_');
    if (!(key in args)) throw new Error(`unknown flag --${key}`);
    args[key] = typeof args[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.gateway) throw new Error('--gateway HOST:PORT is required');
  return args;
}

function loadGateway(protosDir, file = 'mahjong/gateway/v1/gateway.proto') {
  const def = protoLoader.loadSync(file, {
    includeDirs: [protosDir],
    keepCase: true,
    longs: Number,
    enums: Number,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(def).mahjong;
}

// Sign in with an ID token (SignIn: a session for the token's identity), open a private room
// (one 房卡), set 底分 1, invite three bots and press Start; the room's assignment is the seat.
async function seatBySignIn(args, mmPkg, credentials) {
  let idToken = args.id_token;
  if (!idToken) {
    const url = `${args.issuer.replace(/\/$/, '')}/token?name=${encodeURIComponent(args.name)}`;
    const got = await fetch(url);
    if (!got.ok) throw new Error(`the issuer answered ${got.status} for ${url}`);
    idToken = (await got.json()).id_token;
  }
  const mm = new mmPkg.matchmaking.v1.MatchmakingService(args.matchmaking, credentials);
  const call = (method, request) => unary(mm, method, { request_id: crypto.randomUUID(), ...request });
  const signed = await call('SignIn', { id_token: idToken, display_name: args.name });
  const session = signed.session.session_token;
  const room = (await call('OpenRoom', { session_token: session, max_hands: 1 })).room;
  await call('SetRoomStake', { session_token: session, code: room.code, stake: 1 });
  for (let i = 0; i < 3; i += 1) await call('InviteBot', { session_token: session, code: room.code });
  await call('PressStart', { session_token: session, code: room.code });
  for (let tries = 0; tries < 300; tries += 1) {
    const got = (await unary(mm, 'GetRoom', { session_token: session, code: room.code })).room;
    if (got.assignment && got.assignment.table_id) {
      mm.close();
      return { player: signed.player, session, assignment: got.assignment };
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`room ${room.code} got no table`);
}

// google.rpc.Status and RetryInfo, as they come in an error's grpc-status-details-bin trailer.
const rpcTypes = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            RetryInfo: { fields: { retry_delay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
      },
    },
  },
});
const Status = rpcTypes.lookupType('google.rpc.Status');
const RetryInfo = rpcTypes.lookupType('google.rpc.RetryInfo');

// The wait an error asks for (RetryInfo: the gateway's flood control), in ms; null for none.
function retryDelayMs(err) {
  const raw = err.metadata && err.metadata.get('grpc-status-details-bin')[0];
  if (!raw) return null;
  for (const d of Status.decode(raw).details) {
    if (d.type_url.endsWith('/google.rpc.RetryInfo')) {
      const delay = RetryInfo.decode(d.value).retry_delay || {};
      return Number(delay.seconds || 0) * 1000 + (delay.nanos || 0) / 1e6;
    }
  }
  return null;
}

const flood = { waits: 0 }; // calls sent again after flood control's wait

// A unary call; refused with RetryInfo, it is sent again (the same request, so the same
// request id) after the wait the server asked for.
async function unary(client, method, request, deadlineSeconds = 10) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + deadlineSeconds * 1000);
        client[method](request, { deadline }, (err, resp) => (err ? reject(err) : resolve(resp)));
      });
    } catch (err) {
      const wait = retryDelayMs(err);
      if (wait === null || attempt >= 50) throw err;
      flood.waits += 1;
      await new Promise((ok) => setTimeout(ok, wait));
    }
  }
}

// The gateway replicas this client may call (--gateway first, then --fallbacks), one current,
// and the lease as it knows it (--lease-ms, then each heartbeat's lease_ms).
const gateways = { clients: [], current: 0, leaseMs: 30000, intervalMs: 10000, onAnswered: null, hedges: 0 };

function rotate(from = gateways.current) {
  gateways.current = (from + 1) % gateways.clients.length;
  return gateways.current;
}

// How long a stream may stay silent: the lease and a second, or two heartbeats and a second.
function silenceMs() {
  return Math.min(gateways.leaseMs, 2 * gateways.intervalMs) + 1000;
}

// A gateway call: each try within the lease and a second (and deadlineSeconds); hedged, the
// same request, on the next replica after half the lease; sent again on the next replica at
// once after UNAVAILABLE / DEADLINE_EXCEEDED, after flood control's wait when refused with
// RetryInfo; the first answer wins; all within deadlineSeconds + 15 s.
function gatewayCall(method, request, deadlineSeconds = 10) {
  const end = Date.now() + (deadlineSeconds + 15) * 1000;
  return new Promise((resolve, reject) => {
    let pending = 0;
    let settled = false;
    let timer = null;
    let k = gateways.current;
    let lastErr = null;
    const finish = (fn, value) => { settled = true; clearTimeout(timer); fn(value); };
    const schedule = (ms) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (settled) return;
        if (Date.now() < end) { k = rotate(k); launch(); return; }
        // out of time: refused with the last error once no try is under way (a promise left
        // pending with no timer would let the process end as if it had succeeded)
        if (pending === 0) finish(reject, lastErr || new Error(`${method}: no answer in time`));
      }, ms);
    };
    function launch() {
      const idx = k;
      const trySeconds = Math.max(0.05, Math.min(deadlineSeconds, gateways.leaseMs / 1000 + 1, (end - Date.now()) / 1000));
      pending += 1;
      const deadline = new Date(Date.now() + trySeconds * 1000);
      gateways.clients[idx][method](request, { deadline }, (err, resp) => {
        pending -= 1;
        if (settled) return;
        if (!err) {
          gateways.current = idx;
          finish(resolve, resp);
          if (gateways.onAnswered) gateways.onAnswered(idx);
          return;
        }
        lastErr = err;
        const wait = retryDelayMs(err);
        // a certificate the client's CA did not sign stays so: refused at once, not retried
        const untrusted = err.code === grpc.status.UNAVAILABLE && /certificate/i.test(err.details || '');
        const transient = !untrusted && (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED);
        if (wait === null && !transient) return finish(reject, err);
        if (Date.now() >= end) { if (pending === 0) finish(reject, err); return; }
        if (wait !== null) flood.waits += 1;
        schedule(wait !== null ? wait : 50);
      });
      if (pending > 1) gateways.hedges += 1;
      schedule(gateways.leaseMs / 2); // unanswered by then: the same request elsewhere too
    }
    launch();
  });
}

// The decision of a simple but legal player: win when offered, declare ready (敲) as soon as
// it may, otherwise discard the drawn tile (or the last offered discard); pass every claim.
function decide(prompt) {
  const o = prompt.options;
  if (o.win) return { win: {} };
  if (prompt.kind === 1) { // PROMPT_KIND_OWN_TURN
    if (o.ready_discards.length > 0) return { declare_ready: { discard: o.ready_discards[0] } };
    const tile = o.discards.includes(prompt.tile) ? prompt.tile : o.discards[o.discards.length - 1];
    return { discard: { tile } };
  }
  if (prompt.kind === 4) { // PROMPT_KIND_TILE_SWAP: bury the first tiles of the hand
    return null;
  }
  return { pass: {} };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const gw = loadGateway(args.protos).gateway.v1;
  // The gateway's public port serves TLS; plaintext only for tests of that path.
  const insecure = ['1', 'true', 'yes', 'on'].includes((process.env.MAHJONG_INSECURE || '').toLowerCase());
  const credentials = insecure
    ? grpc.credentials.createInsecure()
    : grpc.credentials.createSsl(fs.readFileSync(args.ca));
  const client = new gw.GatewayService(args.gateway, credentials);
  gateways.clients = [client, ...args.fallbacks.split(',').filter(Boolean).map((a) => new gw.GatewayService(a, credentials))];
  gateways.leaseMs = Number(args.lease_ms);
  gateways.intervalMs = gateways.leaseMs / 3;
  let tableId;
  let joined;
  let signedIn = null;
  if (args.matchmaking) {
    const mmPkg = loadGateway(args.protos, 'mahjong/matchmaking/v1/matchmaking.proto');
    signedIn = await seatBySignIn(args, mmPkg, credentials);
    const a = signedIn.assignment;
    tableId = a.table_id;
    // The seat is the signed-in player's: JoinSeat with the session proves it (no seat token).
    joined = await gatewayCall('JoinSeat', {
      request_id: crypto.randomUUID(),
      table_id: tableId,
      session_token: signedIn.session,
      spectator: false,
    });
    if (joined.seat !== a.seat) throw new Error(`joined seat ${joined.seat}, not ${a.seat}`);
  } else {
    ({ tableId, joined } = await createAndJoin(client, args));
  }
  const token = joined.seat_token;
  const report = {
    table_id: tableId, seat: joined.seat - 1, joined_at: joined.last_sequence, events: 0, actions: 0, refused: [], prompts: 0,
    kinds: {}, outcome: 0, payments: [], house: 0, winners: [], hand_id: '', commitment: '',
    seed: '', own_tiles_dealt: 0, leaks: [], sequence_ok: true, finished: false, subscribes_retried: 0, messages: 0,
    heartbeats: 0, lease_ms: 0, silent_resumes: 0,
    player_id: signedIn ? signedIn.player.player_id : '', silver: signedIn ? signedIn.player.silver : 0,
  };
  args.seat = joined.seat - 1;
  const lastSequence = 0;
  return playSeat(args, gw, client, tableId, token, report, lastSequence);
}

// No sign-in: a table of one open seat and three bots (CreateTable), the seat taken by JoinSeat.
async function createAndJoin(client, args) {
  const seats = [0, 1, 2, 3].map((i) => (i === args.seat
    ? { player_id: '', display_name: '', bot: false } // open: the first JoinSeat takes it
    : { player_id: '', display_name: `bot ${i}`, bot: true }));
  const created = await gatewayCall('CreateTable', {
    request_id: crypto.randomUUID(),
    ruleset: { name: 'shanghai-qiaoma', options: {} },
    stake: 1,
    seats,
    max_hands: 1,
    tag: 'node-client',
    first_dealer: args.seat + 1,
  });
  const tableId = created.table_id;
  const joined = await gatewayCall('JoinSeat', {
    request_id: crypto.randomUUID(),
    table_id: tableId,
    player_id: 'node-player',
    display_name: 'Node.js',
    seat: args.seat + 1,
    spectator: false,
  });
  if (joined.seat !== args.seat + 1) throw new Error(`joined seat ${joined.seat - 1}, not ${args.seat}`);
  return { tableId, joined };
}

async function playSeat(args, gw, client, tableId, token, report, lastSequence) {

  const sequences = []; // every event number received, in order
  const subscribes = []; // after_sequence of each Subscribe
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no hand result after ${args.timeout}s`)), args.timeout * 1000);
    let call = null;
    let queue = Promise.resolve();
    let dropped = false;
    let silence = null; // the silence timer of the open stream
    const fail = (err) => { clearTimeout(timer); clearTimeout(silence); if (call) call.cancel(); reject(err); };

    // Subscribe from the last number seen: at the start 0, after a dropped stream the resume
    // (a Subscribe sent again after flood control's wait is counted apart).
    function subscribe(again = false) {
      if (again) report.subscribes_retried += 1;
      else subscribes.push(lastSequence);
      // Batched: the events of one step of the table come in one message (resp.events).
      const streamOn = gateways.current;
      // A call answered by another replica than the stream's (its own left it unanswered for
      // half the lease): the stream follows it there at once.
      gateways.onAnswered = (idx) => {
        if (c !== call || idx === streamOn || report.finished) return;
        report.silent_resumes += 1;
        call = null;
        c.cancel();
        subscribe();
      };
      const c = gateways.clients[streamOn].Subscribe({
        table_id: tableId, seat_token: token, after_sequence: lastSequence, batched: true, heartbeats: true,
      });
      call = c;
      // Silent too long (its replica paused or cut off): cancelled, resumed on the next replica
      // from the last number seen.
      const listen = () => {
        clearTimeout(silence);
        silence = setTimeout(() => {
          if (c !== call || report.finished) return;
          report.silent_resumes += 1;
          call = null;
          c.cancel();
          rotate();
          subscribe();
        }, silenceMs());
      };
      listen();
      c.on('data', (resp) => {
        if (c === call) listen();
        if (resp.heartbeat) { // no events: the lease, for the timers above
          report.heartbeats += 1;
          report.lease_ms = Number(resp.heartbeat.lease_ms);
          gateways.leaseMs = report.lease_ms;
          gateways.intervalMs = Number(resp.heartbeat.interval_ms) || report.lease_ms / 3;
          return;
        }
        // (one event per message, in event, from a gateway that does not batch)
        const events = resp.events && resp.events.length ? resp.events : resp.event ? [resp.event] : [];
        if (events.length === 0) return fail(new Error('a stream message without events'));
        report.messages += 1;
        // Events of a stream already dropped are skipped: the resumed stream sends them again.
        for (const ev of events) {
          queue = queue.then(() => (c === call ? onEvent(ev) : null)).catch(fail);
        }
      });
      c.on('error', (err) => {
        if (c !== call || report.finished) return; // our own cancel
        const wait = retryDelayMs(err);
        if (wait === null) return fail(err);
        call = null; // flood control: subscribe again from the last number after the wait
        setTimeout(() => subscribe(true), wait);
      });
      c.on('end', () => {
        if (c === call && !report.finished) fail(new Error('stream ended before the table finished'));
      });
    }
    subscribe();

    async function onEvent(ev) {
      if (ev.sequence <= lastSequence) report.sequence_ok = false;
      lastSequence = ev.sequence;
      sequences.push(ev.sequence);
      report.events += 1;
      report.kinds[ev.kind] = (report.kinds[ev.kind] || 0) + 1;
      checkHiding(ev);
      if (ev.kind === 'hand_started') { report.hand_id = ev.hand_id; report.commitment = ev.hand_started.commitment; }
      if (ev.kind === 'seed_revealed') report.seed = ev.seed_revealed.seed;
      if (ev.kind === 'prompt' && ev.prompt.seat === args.seat + 1) {
        report.prompts += 1;
        await act(ev.prompt);
      }
      if (ev.kind === 'hand_result') {
        const r = ev.hand_result;
        report.outcome = r.outcome;
        report.payments = r.payments;
        report.house = r.house;
        report.winners = r.winners.map((w) => ({ seat: w.seat - 1, hand_type: w.hand_type, value: w.value }));
      }
      if (ev.kind === 'table_finished') {
        report.finished = true;
        clearTimeout(timer);
        clearTimeout(silence);
        call.cancel();
        resolve();
        return;
      }
      if (args.drop_after > 0 && !dropped && sequences.length === args.drop_after) {
        dropped = true; // cut the stream as a network failure would, then resume
        const old = call;
        call = null;
        old.cancel();
        subscribe();
      }
    }
  });

  // After the table: a fresh subscription from the start, one event per message (not batched),
  // must hold exactly the same events (after the wait flood control may ask for: the token just
  // played a whole hand).
  function replayOnce() {
    return new Promise((resolve, reject) => {
      const seen = [];
      const c = gateways.clients[gateways.current].Subscribe({ table_id: tableId, seat_token: token, after_sequence: 0 });
      c.on('data', (resp) => {
        seen.push(resp.event.sequence);
        if (resp.event.kind === 'table_finished') { c.cancel(); resolve(seen); }
      });
      c.on('error', (err) => (err.code === grpc.status.CANCELLED ? resolve(seen) : reject(err)));
      c.on('end', () => resolve(seen));
    });
  }
  async function replayAll() {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await replayOnce();
      } catch (err) {
        const wait = retryDelayMs(err);
        if (wait === null || attempt >= 50) throw err;
        await new Promise((ok) => setTimeout(ok, wait));
      }
    }
  }

  function checkHiding(ev) {
    // Another seat's concealed tiles may appear only when every hand is shown at the end.
    if (ev.kind === 'tiles_dealt') {
      for (const h of ev.tiles_dealt.hands) {
        if (h.seat !== args.seat + 1 && h.tiles.length > 0) report.leaks.push(`deal of seat ${h.seat - 1}`);
        if (h.seat === args.seat + 1) report.own_tiles_dealt = h.tiles.length;
      }
    }
    if (ev.kind === 'tile_drawn' && ev.tile_drawn.seat !== args.seat + 1 && ev.tile_drawn.tile !== 0) {
      report.leaks.push(`draw of seat ${ev.tile_drawn.seat - 1}`);
    }
    if (ev.kind === 'flowers_exposed' && ev.flowers_exposed.seat !== args.seat + 1
        && ev.flowers_exposed.replacements.length > 0) {
      report.leaks.push(`replacements of seat ${ev.flowers_exposed.seat - 1}`);
    }
    if (ev.kind === 'prompt' && ev.prompt.seat !== args.seat + 1) report.leaks.push('another seat\'s prompt');
  }

  async function act(prompt) {
    const state = await gatewayCall('GetTableState', { table_id: tableId, seat_token: token });
    const view = state.table;
    const own = view.seats[args.seat];
    for (const s of view.seats) {
      if (s.seat !== args.seat + 1 && s.concealed.length > 0) report.leaks.push(`state shows seat ${s.seat - 1}`);
    }
    let action = decide(prompt);
    if (action === null) action = { tile_swap: { tiles: own.concealed.slice(0, prompt.options.swap_count) } };
    try {
      await gatewayCall('Act', {
        table_id: tableId, seat_token: token, request_id: crypto.randomUUID(),
        last_sequence: lastSequence, action,
      });
      report.actions += 1;
    } catch (err) {
      // A prompt that expired or was overtaken is refused without changing anything.
      report.refused.push(`${grpc.status[err.code]}: ${err.details}`);
    }
  }

  await done;
  const replayed = await replayAll();
  report.subscribes = subscribes;
  report.resume_exact = JSON.stringify(replayed) === JSON.stringify(sequences);
  report.flood_waits = flood.waits;
  report.hedges = gateways.hedges;
  for (const c of gateways.clients) c.close();
  // exit at once: a connection to a frozen replica (its TLS handshake never answered) would
  // keep the process alive
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0));
}

main().catch((err) => {
  process.stderr.write(`node client failed: ${err.stack || err}\n`);
  process.exit(1);
});
