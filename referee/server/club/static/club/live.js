// Live parts of the club's pages: the leaderboard, the games in play, a check's lines and a
// test game's page update without a reload.
// Every bot-supplied text goes in with textContent, never as HTML.
"use strict";

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text === undefined || text === null ? "" : String(text);
  row.appendChild(td);
  return td;
}

function signed(value) {
  if (typeof value !== "number") return "-";
  const whole = Math.round(value);
  return whole > 0 ? "+" + whole : String(whole);
}

function fixed(value, digits) {
  return typeof value === "number" ? value.toFixed(digits) : "";
}

// The tables' rule for a rank range: 3, 2\u20135, or - before a bot has a rank.
function ranks(t) {
  if (t.rank_low == null || t.rank_high == null) return "-";
  return t.rank_low === t.rank_high ? String(t.rank_low) : t.rank_low + "\u2013" + t.rank_high;
}

function strikes(t) {
  return Object.values(t.strikes || {}).reduce((sum, n) => sum + n, 0);
}

// A leaderboard row (board.py's BoardRow, its table row under `table`) as board.py writes it.
function boardRow(r) {
  const t = r.table;
  const tr = document.createElement("tr");
  tr.className = "state-" + (r.state || "");
  cell(tr, t.rank === null || t.rank === undefined ? "\u2013" : t.rank);
  const name = cell(tr, "");
  if (r.url) {
    const a = document.createElement("a");
    a.href = r.url;
    a.textContent = r.bot;
    name.appendChild(a);
  } else {
    name.textContent = r.bot;
  }
  const owner = cell(tr, r.house ? "" : r.owner);
  if (r.house) {
    const mark = document.createElement("span");
    mark.className = "house";
    mark.textContent = "house";
    owner.appendChild(mark);
  }
  cell(tr, r.version);
  // The tables' rule: ~ when this row's interval overlaps the NEXT row's (never the last).
  cell(tr, signed(t.strength) + " [" + signed(t.strength_low) + ", " +
    signed(t.strength_high) + "]" + (t.separated_from_next === false ? " ~" : ""));
  cell(tr, ranks(t));
  cell(tr, fixed(t.mu, 1) + " \u00b1 " + fixed(t.sigma, 1));
  cell(tr, t.games);
  cell(tr, t.wins);
  cell(tr, strikes(t));
  cell(tr, r.state);
  return tr;
}

function drawBoard(table, data) {
  table.tBodies[0].replaceChildren(...data.rows.map(boardRow));
  const retired = document.getElementById("retired");
  if (retired) {
    retired.tBodies[0].replaceChildren(...(data.retired || []).map(boardRow));
    document.getElementById("retired-count").textContent = String((data.retired || []).length);
    document.getElementById("retired-versions").hidden = !(data.retired || []).length;
  }
  const facts = document.getElementById("board-facts");
  if (facts) {   // the fit's moment in the reader's zone, as club/times.js shows the others
    const fitted = document.createElement("time");
    fitted.className = "local";
    fitted.setAttribute("datetime", new Date(data.fitted_at * 1000).toISOString()
      .replace(/\.\d+Z$/, "Z"));
    fitted.textContent = data.fitted;
    facts.replaceChildren("After " + data.games + " games (fit of ", fitted, ").");
    if (typeof showLocalTimes === "function") showLocalTimes(facts);
  }
  table.dataset.standing = String(data.standing);
}

function pollBoard(table) {
  fetch(table.dataset.url, {credentials: "same-origin"})
    .then((r) => (r.ok ? r.json() : null))
    .then((data) => {
      if (data && data.standing !== null && String(data.standing) !== table.dataset.standing) {
        drawBoard(table, data);
      }
    })
    .catch(() => {})
    .finally(() => setTimeout(() => pollBoard(table), 3000));
}

function pollCheck(box) {
  const url = box.dataset.url + "?after=" + encodeURIComponent(box.dataset.after || "0");
  fetch(url, {credentials: "same-origin"})
    .then((r) => (r.ok ? r.json() : null))
    .then((data) => {
      if (!data) return;
      const pre = document.getElementById("check-lines");
      data.lines.forEach((line) => {
        pre.appendChild(document.createTextNode(line.text + "\n"));
        box.dataset.after = String(line.seq);
      });
      const state = document.getElementById("check-state");
      state.textContent = data.check_state;
      state.className = "state-" + data.check_state;
      document.getElementById("check-summary").textContent = data.summary;
      const season = document.getElementById("season-state-of-version");
      season.textContent = data.check_state === "failed"
        ? "never: a version that fails its check does not play"
        : data.check_state === "replaced"
          ? "never: a newer upload replaced it before its check ran" : data.season_state;
      season.className = "state-" + data.season_state;
      document.getElementById("version-error").textContent =
        data.error === data.summary ? "" : data.error;
      box.dataset.done = data.check_state === "failed" || data.check_state === "replaced" ||
        (data.check_state === "passed" && data.season_state !== "waiting") ? "1" : "";
      // Once the check is over only the season's state can change: ask less often.
      box.dataset.every = data.check_state === "passed" ? "5000" : "1000";
    })
    .catch(() => {})
    .finally(() => {
      if (!box.dataset.done) setTimeout(() => pollCheck(box), Number(box.dataset.every || 1000));
    });
}

// The season's games in play (games/live.json): the list is drawn again whenever the set of
// games changes, and hidden while none is in play.
const IN_PLAY_MS = 3000;

function inPlayItem(game) {
  const li = document.createElement("li");
  li.dataset.index = String(game.index);
  const a = document.createElement("a");
  a.href = game.url;
  a.textContent = "Game " + game.index;
  li.appendChild(a);
  li.appendChild(document.createTextNode(": " + game.bots.join(", ")));
  return li;
}

function pollInPlay(section) {
  fetch(section.dataset.url, {credentials: "same-origin"})
    .then((r) => (r.ok ? r.json() : null))
    .then((data) => {
      if (!data || !Array.isArray(data.games)) return;
      const list = document.getElementById("in-play-list");
      const shown = Array.from(list.children, (li) => li.dataset.index).join(",");
      if (shown !== data.games.map((g) => String(g.index)).join(",")) {
        list.replaceChildren(...data.games.map(inPlayItem));
      }
      section.hidden = data.games.length === 0;
    })
    .catch(() => {})
    .finally(() => setTimeout(() => pollInPlay(section), IN_PLAY_MS));
}

// A test game's page: its part (state, live viewer, replay) is asked for again until the game
// is over, and swapped in when its phase changes (queued, running, live, over). The live
// viewer tells the page when the game ends, so its replay follows at once.
const PART_MS = 2000;

function pollPart(part) {
  let timer = null;
  let busy = false;   // one question at a time: the viewer's message may come during one
  let current = part;
  function ask() {
    clearTimeout(timer);
    if (busy) return;
    busy = true;
    fetch(current.dataset.url, {credentials: "same-origin"})
      .then((r) => (r.ok ? r.text() : null))
      .then((text) => {
        if (text === null) return;
        const fresh = new DOMParser().parseFromString(text, "text/html")
          .getElementById("game-part");
        if (fresh && fresh.dataset.phase !== current.dataset.phase) {
          const adopted = document.adoptNode(fresh);
          current.replaceWith(adopted);
          current = adopted;
        }
      })
      .catch(() => {})
      .finally(() => {
        busy = false;
        if (current.dataset.phase !== "over") timer = setTimeout(ask, PART_MS);
      });
  }
  window.addEventListener("message", (ev) => {
    if (ev.origin === window.location.origin && ev.data && ev.data.liveEnded) ask();
  });
  timer = setTimeout(ask, PART_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  const board = document.getElementById("leaderboard");
  if (board) setTimeout(() => pollBoard(board), 1000);
  const inPlay = document.getElementById("in-play");
  if (inPlay && inPlay.dataset.url) setTimeout(() => pollInPlay(inPlay), IN_PLAY_MS);
  const part = document.getElementById("game-part");
  if (part && part.dataset.url && part.dataset.phase !== "over") pollPart(part);
  const check = document.getElementById("check");
  if (check) pollCheck(check);
});
