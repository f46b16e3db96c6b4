// The live viewer: follows a game in play with server-sent events (views/live.py) and hands
// each step to the replay viewer (viewer.js, data-live), which draws it as in a replay.
// At the end the viewer holds the whole game; the link leads to its stored replay.
// With data-follow (the season's stream, /games/live) one page shows game after game: each
// "start" begins a new viewer, and a finished game's board stays a while before the next.
// While no game is in play (data-newest) it replays the newest finished game at a pace people
// can follow, one move every REPLAY_MS, again and again, until a game starts.
"use strict";

(function () {
  const state = document.getElementById("live-state");
  const status = document.getElementById("live-status");
  const replay = document.getElementById("live-replay");
  const title = document.getElementById("live-title");
  const follow = Boolean(state.dataset.follow);
  const HOLD_MS = 5000;   // following the season: a finished board stays this long
  const REPLAY_MS = 2500;   // idle: one move of the newest finished game this often
  const QUIET_MS = 2000;    // idle this long (no game's start) before a replay begins
  const NONE_MS = 15000;    // no finished game yet: look again this often
  let viewer = document.getElementById("viewer");
  let moves = 0;
  let controller = null;
  const source = new EventSource(state.dataset.stream);
  // While a finished board is held, the stream's events wait here: only the newest game's
  // (a "start" drops the games before it), so the page never falls behind the season.
  let holding = false;
  let waiting = [];
  let idle = false;         // replaying the newest finished game (no game in play)
  let replayTimer = null;   // the idle replay's next move (or next look for a game)

  function stopReplay() {
    idle = false;
    clearTimeout(replayTimer);
    replayTimer = null;
  }

  // No game in play: the newest finished one, its moves at REPLAY_MS each, then again.
  function replayNewest() {
    stopReplay();
    idle = true;   // a game's start meanwhile ends it
    fetch(state.dataset.newest, {credentials: "same-origin"})
      .then((r) => (r.ok ? r.json() : null))
      .then((data) => {
        if (!idle) return;   // a game started meanwhile
        const game = data && data.game;
        if (!game) {
          replayTimer = setTimeout(replayNewest, NONE_MS);
          return;
        }
        begin(game);
        title.textContent = "Replay of game " + game.index + ": " + game.bots.join(" vs ");
        status.textContent = "no game in play: the newest finished game, replayed";
        replay.href = game.url;
        replay.hidden = false;
        document.body.dataset.replaying = "1";
        let next = 0;
        const places = game.steps.filter((s) => s.events.some((e) => e.type === "place")).length;
        const advance = () => {
          if (next >= game.steps.length) {
            status.textContent = "replay over: the next game in play appears here";
            replayTimer = setTimeout(replayNewest, HOLD_MS);
            return;
          }
          step(game.steps[next]);
          next += 1;
          status.textContent = "replay: move " + moves + " of " + places +
            " (no game in play now)";
          replayTimer = setTimeout(advance, REPLAY_MS);
        };
        replayTimer = setTimeout(advance, REPLAY_MS);
      })
      .catch(() => {
        if (idle) replayTimer = setTimeout(replayNewest, NONE_MS);
      });
  }

  function begin(start) {
    if (controller) controller.abort();   // the last game's viewer lets go of the page
    controller = new AbortController();
    const fresh = viewer.cloneNode(false);
    fresh.hidden = false;
    fresh.dataset.hand = start.hand.join(",");
    delete fresh.dataset.started;
    viewer.replaceWith(fresh);
    viewer = fresh;
    const record = {players: start.players, rules: start.rules, events: [], decisions: [],
                    bots: start.bots.map((name, seat) => ({seat, name: String(name)}))};
    window.startViewer(viewer, JSON.stringify(record), controller.signal);
    moves = 0;
    title.textContent = "Game " + start.index + ": " + start.bots.join(" vs ");
    status.textContent = "live: waiting for the next move";
    status.classList.remove("ended");
    replay.hidden = true;
    replay.href = "/games/" + start.index + "/";
    delete document.body.dataset.ended;
    delete document.body.dataset.replaying;
  }

  function startLive(start) {
    stopReplay();
    begin(start);
  }

  function step(data) {
    viewer.dataset.started = "1";
    moves += data.events.filter((e) => e.type === "place").length;
    status.textContent = "live: " + moves + (moves === 1 ? " move" : " moves") + " so far";
    viewer.dispatchEvent(new CustomEvent("live-step", {detail: data}));
  }

  function end(data) {
    status.textContent = data.finished ? "the game is over" : "the game was stopped";
    status.classList.add("ended");
    replay.hidden = false;
    document.body.dataset.ended = "1";
    if (follow) {
      replay.href = data.url;
      holding = true;
      setTimeout(release, HOLD_MS);
      return;
    }
    source.close();   // else EventSource would connect again
    // Tell a page that frames this one.
    if (window.parent !== window) {
      window.parent.postMessage({liveEnded: state.dataset.page}, window.location.origin);
    }
    if (!viewer.dataset.started && data.finished) {
      // Over before this page saw a move: its stored replay, in place.
      window.location.replace(data.url + "viewer");
    }
  }

  // A game's steps and end without its start (a stream that resumed) are not the replay's.
  const handlers = {start: startLive, step: (d) => idle || step(d), end: (d) => idle || end(d)};

  function release() {
    holding = false;
    const pending = waiting;
    waiting = [];
    for (const [name, data] of pending) handlers[name](data);
    if (!pending.length && state.dataset.newest) replayNewest();   // no game in play now
  }

  if (follow && state.dataset.newest) {
    replayTimer = setTimeout(replayNewest, QUIET_MS);   // stopped by a game's start
  }

  for (const name of follow ? ["start", "step", "end"] : ["step", "end"]) {
    source.addEventListener(name, (ev) => {
      const data = JSON.parse(ev.data);
      if (!holding) {
        handlers[name](data);
        return;
      }
      if (name === "start") waiting = [];
      waiting.push([name, data]);
    });
  }
})();
