// The live viewer: follows a game in play with server-sent events (views/live.py) and hands
// each step to the replay viewer (viewer.js, data-live), which draws it as in a replay.
// At the end the viewer holds the whole game; the link leads to its stored replay.
"use strict";

(function () {
  const state = document.getElementById("live-state");
  const status = document.getElementById("live-status");
  const replay = document.getElementById("live-replay");
  const viewer = document.getElementById("viewer");
  let moves = 0;
  const source = new EventSource(state.dataset.stream);
  source.addEventListener("step", (ev) => {
    const step = JSON.parse(ev.data);
    viewer.dataset.started = "1";
    moves += step.events.filter((e) => e.type === "place").length;
    status.textContent = "live: " + moves + (moves === 1 ? " move" : " moves") + " so far";
    viewer.dispatchEvent(new CustomEvent("live-step", {detail: step}));
  });
  source.addEventListener("end", (ev) => {
    source.close();   // else EventSource would connect again
    const end = JSON.parse(ev.data);
    // Tell a page that frames this one (the big screen rotates to the next game).
    if (window.parent !== window) {
      window.parent.postMessage({liveEnded: state.dataset.page}, window.location.origin);
    }
    if (!viewer.dataset.started && end.finished) {
      // Over before this page saw a move: its stored replay, in place.
      window.location.replace(end.url + "viewer");
      return;
    }
    status.textContent = end.finished ? "the game is over" : "the game was stopped";
    status.classList.add("ended");
    replay.hidden = false;
    document.body.dataset.ended = "1";
  });
})();
