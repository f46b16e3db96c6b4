#!/usr/bin/env node
// greedy-js: a sample Las Vegas bot in JavaScript (Node, @grpc/grpc-js, @grpc/proto-loader).
//
// The bot is the gRPC server of proto/lasvegas/v1/bot.proto, loaded at run time (no generated
// code). It listens on `--address ADDR` or $REFEREE_BOT_ADDRESS (docs/protocol.md, "Address
// contract"), answers Hello, and serves one Play stream per game.
//
// Strategy: greedy. For each legal action, what this seat would win on the target casino if the
// round ended now (R20 counts, R21 tie cancellation with the neutral player as a participant,
// R22 payout, R32 slot tie-break), after the move minus before it. The largest gain wins; ties
// go to fewer dice placed, then the lowest value, then the casino before the slot.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_NAME = 'greedy-js';
const BOT_VERSION = '1.0.0';
const PROTOCOL_VERSION = 1;
const MAX_CONCURRENT_GAMES = 16;
const SLOT_TARGET = 7;

function log(...args) {
  process.stderr.write(`[${BOT_NAME}] ${args.join(' ')}\n`);
}

// ------------------------------------------------------------------------------ address, proto

function listenAddress(argv, env) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--address' && i + 1 < argv.length) return argv[i + 1];
    if (argv[i].startsWith('--address=')) return argv[i].slice('--address='.length);
  }
  return env.REFEREE_BOT_ADDRESS || '';
}

function protoPath() {
  return process.env.LASVEGAS_PROTO ||
    path.resolve(__dirname, '..', '..', 'proto', 'lasvegas', 'v1', 'bot.proto');
}

function loadService() {
  const definition = protoLoader.loadSync(protoPath(), {
    keepCase: true,   // field names exactly as in the .proto (request_id, not requestId)
    longs: String,    // uint64 request_id arrives as a decimal string; we echo it back unchanged
    enums: String,
    defaults: true,   // proto3 omits zero values on the wire: fill them in (0, false, [])
    oneofs: true,     // msg.kind names the oneof case that is set ('start', 'decision', 'end')
  });
  return grpc.loadPackageDefinition(definition).lasvegas.v1.Bot.service;
}

// ------------------------------------------------------------------------------ strategy

function countValue(faces, value) {
  let n = 0;
  for (const f of faces || []) if (f === value) n++;
  return n;
}

// What `me` wins on one casino (R20-R22; R32 when `slotKeys` is given).
// counts[p]: participant p's count (seats 0..n-1, then the neutral player at index n).
// slotKeys[p]: [face sum, physical dice] of participant p on the slot.
function winnings(counts, notes, me, slotKeys) {
  if (!notes.length || !counts[me]) return 0;
  const freq = new Map();
  for (const c of counts) if (c) freq.set(c, (freq.get(c) || 0) + 1);
  let ranked;
  if (!slotKeys) {
    // R21: every participant whose count equals another's is cancelled, at every rank.
    ranked = [];
    for (let p = 0; p < counts.length; p++) if (counts[p] && freq.get(counts[p]) === 1) ranked.push(p);
    ranked.sort((a, b) => counts[b] - counts[a]);
  } else {
    // R32: the leaders are ordered by face sum, then physical dice; leaders equal on all three
    // cancel; below the leaders R21 applies unchanged.
    const top = Math.max(...counts);
    const leaders = [];
    const below = [];
    for (let p = 0; p < counts.length; p++) {
      if (!counts[p]) continue;
      if (counts[p] === top) leaders.push(p);
      else if (freq.get(counts[p]) === 1) below.push(p);
    }
    const key = (p) => `${slotKeys[p][0]}/${slotKeys[p][1]}`;
    const keyFreq = new Map();
    for (const p of leaders) keyFreq.set(key(p), (keyFreq.get(key(p)) || 0) + 1);
    const kept = leaders.filter((p) => keyFreq.get(key(p)) === 1);
    kept.sort((a, b) => (slotKeys[b][0] - slotKeys[a][0]) || (slotKeys[b][1] - slotKeys[a][1]));
    below.sort((a, b) => counts[b] - counts[a]);
    ranked = kept.concat(below);
  }
  const rank = ranked.indexOf(me);
  if (rank < 0 || rank >= notes.length) return 0;
  const sorted = notes.slice().sort((a, b) => b - a); // R22: highest note first
  return sorted[rank];
}

// The gain of one action for seat `me`: winnings on the target after the move minus before.
function actionGain(state, roll, me, action) {
  const value = action.value;
  const toSlot = !!action.slot;
  const target = toSlot ? SLOT_TARGET : value;
  const casino = (state.casinos || []).find((c) => c.target === target);
  const own = countValue(roll.ordinary, value);
  const big = countValue(roll.big, value);
  const neu = countValue(roll.neutral, value);
  const placed = own + big + neu;
  if (!casino) return { gain: 0, placed };
  const players = Math.max((state.seats || []).length, ...(casino.dice || []).map((d) => d.seat + 1), me + 1);
  const neutral = players; // index of the neutral participant
  const counts = new Array(players + 1).fill(0);
  const physical = new Array(players + 1).fill(0);
  for (const d of casino.dice || []) {
    counts[d.seat] = (d.ordinary || 0) + 2 * (d.big || 0); // R20
    physical[d.seat] = (d.ordinary || 0) + (d.big || 0);
  }
  counts[neutral] = casino.neutral_dice || 0;
  physical[neutral] = casino.neutral_dice || 0;
  let sums = null;
  if (toSlot) {
    sums = new Array(players + 1).fill(0);
    for (const s of state.slot_dice || []) {
      sums[s.seat] += s.value * ((s.ordinary || 0) + (s.big || 0));
      sums[neutral] += s.value * (s.neutral || 0);
    }
  }
  const notes = casino.notes || [];
  const keys = (ss, ph) => (ss ? ss.map((s, p) => [s, ph[p]]) : null);
  const before = winnings(counts, notes, me, keys(sums, physical));
  counts[me] += own + 2 * big;
  counts[neutral] += neu;
  physical[me] += own + big;
  physical[neutral] += neu;
  if (sums) {
    sums[me] += value * (own + big);
    sums[neutral] += value * neu;
  }
  const after = winnings(counts, notes, me, keys(sums, physical));
  return { gain: after - before, placed };
}

function chooseAction(request, mySeat) {
  const legal = request.legal || [];
  const state = request.state || {};
  const roll = request.roll || {};
  // In a DecisionRequest current_seat is always our seat; GameStart.your_seat is the fallback.
  const me = Number.isInteger(state.current_seat) ? state.current_seat : mySeat;
  let best = null;
  let bestScore = null;
  for (const action of legal) {
    const { gain, placed } = actionGain(state, roll, me, action);
    // Larger gain, then fewer dice placed, then lower value, then the casino before the slot.
    const score = [gain, -placed, -action.value, action.slot ? 0 : 1];
    if (bestScore === null || compare(score, bestScore) > 0) {
      best = action;
      bestScore = score;
    }
  }
  return best;
}

function compare(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

// ------------------------------------------------------------------------------ service

function hello(call, callback) {
  callback(null, {
    bot_name: BOT_NAME,
    bot_version: BOT_VERSION,
    protocol_version: PROTOCOL_VERSION,
    max_concurrent_games: MAX_CONCURRENT_GAMES,
  });
}

function play(call) {
  // Per-game state lives here, one closure per stream.
  let mySeat = 0;
  let gameId = '';
  let ended = false;
  const finish = () => {
    if (!ended) {
      ended = true;
      call.end();
    }
  };
  call.on('data', (msg) => {
    if (ended) return;
    switch (msg.kind) {
      case 'start':
        mySeat = msg.start.your_seat || 0;
        gameId = msg.start.game_id || '';
        break;
      case 'decision': {
        const request = msg.decision;
        let action;
        try {
          action = chooseAction(request, mySeat);
        } catch (err) {
          log(`game ${gameId}: strategy failed (${err && err.stack}), playing the first legal action`);
        }
        if (!action) action = (request.legal || [])[0];
        if (!action) {
          // Never happens with a correct referee (legal is never empty); answer something legal-looking.
          const roll = request.roll || {};
          const faces = [].concat(roll.ordinary || [], roll.big || [], roll.neutral || []);
          action = { value: faces.length ? Math.min(...faces) : 1, slot: false };
        }
        call.write({
          decision: {
            request_id: request.request_id, // a decimal string (longs: String), sent back as is
            action: { value: action.value, slot: !!action.slot },
          },
        });
        break;
      }
      case 'end':
        finish();
        break;
      default:
        break; // a future message kind that needs no answer
    }
  });
  call.on('end', finish); // the referee half-closed its side
  call.on('cancelled', () => {
    ended = true; // the referee gave up on the stream: nothing more to write
  });
  call.on('error', (err) => {
    if (err && err.code !== grpc.status.CANCELLED) log(`game ${gameId}: stream error: ${err.message}`);
  });
}

// ------------------------------------------------------------------------------ main

function main() {
  const address = listenAddress(process.argv.slice(2), process.env);
  if (!address) {
    log('no address: pass --address ADDR or set REFEREE_BOT_ADDRESS (unix:/path or 127.0.0.1:PORT)');
    process.exit(2);
  }
  if (address.startsWith('unix:')) {
    // The socket file must not exist yet: remove a stale socket (never anything else).
    const file = address.slice('unix:'.length).replace(/^\/\/(?=\/)/, '');
    try {
      if (fs.lstatSync(file).isSocket()) fs.unlinkSync(file);
    } catch (_) {
      // does not exist: fine
    }
  }
  let service;
  try {
    service = loadService();
  } catch (err) {
    log(`cannot load the protocol from ${protoPath()} (set LASVEGAS_PROTO to bot.proto): ${err.message}`);
    process.exit(1);
  }
  const server = new grpc.Server();
  server.addService(service, { Hello: hello, Play: play });
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      log(`cannot listen on ${address}: ${err.message}`);
      process.exit(1);
    }
    log(`listening on ${address}`);
  });

  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down`);
    setTimeout(() => process.exit(0), 1000); // forced exit if streams stay open
    server.tryShutdown(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main();
}

module.exports = { chooseAction, actionGain, winnings, listenAddress };
