// The organiser's big screen: the leaderboard (live.js) beside one or two games in play, each
// in the live viewer; when a game ends its slot shows the next game in play.
"use strict";

(function () {
  const box = document.getElementById("screen-games");
  const slots = [document.getElementById("screen-slot-0"), document.getElementById("screen-slot-1")];
  const shown = [null, null];     // the game page URL each slot shows
  const ended = new Set();        // games whose stream said "end"
  const HOLD_MS = 8000;           // a finished game stays this long before the next one

  function show(i, game) {
    const slot = slots[i];
    shown[i] = game ? game.url : null;
    slot.replaceChildren();
    slot.hidden = i > 0 && !game;
    const title = document.createElement("h2");
    if (!game) {
      title.textContent = i === 0 ? "Waiting for a game to start" : "";
      slot.appendChild(title);
      return;
    }
    title.textContent = "Game " + game.index + ": " + game.bots.join(" vs ");
    slot.appendChild(title);
    const frame = document.createElement("iframe");
    frame.src = game.watch;
    frame.title = "game " + game.index + " as it is played";
    frame.className = "screen-viewer";
    slot.appendChild(frame);
  }

  function fill(games) {
    const playing = new Set(games.map((g) => g.url));
    for (let i = 0; i < slots.length; i++) {
      const current = shown[i];
      if (current && (playing.has(current) || !ended.has(current))) continue;
      const next = games.find((g) => !ended.has(g.url) && !shown.includes(g.url));
      if (next || current) show(i, next || null);
    }
    box.classList.toggle("one", !shown[1]);
  }

  function poll() {
    fetch(box.dataset.url, {credentials: "same-origin"})
      .then((r) => (r.ok ? r.json() : null))
      .then((data) => { if (data) fill(data.games); })
      .catch(() => {})
      .finally(() => setTimeout(poll, 2000));
  }

  window.addEventListener("message", (ev) => {
    if (ev.origin !== window.location.origin || !ev.data || !ev.data.liveEnded) return;
    const url = String(ev.data.liveEnded);
    // The final board stays in view a while, then the slot takes the next game.
    setTimeout(() => ended.add(url), HOLD_MS);
  });
  poll();
})();
