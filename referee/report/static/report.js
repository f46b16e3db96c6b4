// The league report's pages: sortable tables, the game list's filters, the rating chart.
// Bot names are bot-supplied: they only ever reach the page as textContent or attributes.
"use strict";

const COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                 "#e377c2", "#17becf"];

function cell(row, text, value, cls) {
  const td = document.createElement("td");
  if (text !== null && text !== undefined) td.textContent = String(text);
  if (value !== undefined) td.dataset.value = String(value);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function link(parent, text, href) {
  const a = document.createElement("a");
  a.textContent = String(text);
  a.href = href;
  parent.appendChild(a);
  return a;
}

const fixed = (v, digits) => (v === null || v === undefined ? "-" : Number(v).toFixed(digits));
const dollars = (v) => (v === null || v === undefined ? "-" : "$" + Number(v).toLocaleString("en-US"));

// The game list and a bot's games are drawn from JSON data in the page.
function gameRows() {
  const source = document.getElementById("game-data");
  const table = document.getElementById("game-list");
  if (!source || !table) return;
  const data = JSON.parse(source.textContent);
  const body = table.tBodies[0];
  for (const g of data.games) {
    const row = document.createElement("tr");
    row.className = "game-row";
    row.dataset.bots = JSON.stringify(g.bots);
    row.dataset.places = JSON.stringify(g.places);
    row.dataset.size = String(g.bots.length);
    row.dataset.strikes = String(g.strikes);
    link(cell(row, null, g.index), g.index, "games/" + g.index + ".html");
    link(cell(row, null, g.game_id), g.game_id, "games/" + g.index + ".html");
    cell(row, g.bots.length, g.bots.length);
    const winners = g.bots.filter((_, s) => g.places[s] === 1).join(", ");
    cell(row, winners, winners);
    const seats = cell(row, null, undefined, "seat-list");
    g.bots.forEach((bot, s) => {
      const chip = document.createElement("span");
      chip.className = "seat-chip";
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = COLOURS[s % 8];
      const place = document.createElement("b");
      place.textContent = String(g.places[s]);
      chip.append(swatch, document.createTextNode(bot + " "), place,
                  document.createTextNode(" " + dollars(g.money[s])));
      seats.appendChild(chip);
    });
    cell(row, g.strikes, g.strikes, g.strikes ? "struck" : "");
    cell(row, fixed(g.seconds, 2), g.seconds);
    if (data.workers) cell(row, g.worker || "", g.worker || "", "mono");
    body.appendChild(row);
  }
}

function botGameRows() {
  const source = document.getElementById("bot-game-data");
  const table = document.getElementById("bot-games");
  if (!source || !table) return;
  const data = JSON.parse(source.textContent);
  const body = table.tBodies[0];
  for (const g of data.games) {
    const row = document.createElement("tr");
    row.dataset.place = String(g.place);
    row.dataset.strikes = String(g.strikes);
    link(cell(row, null, g.game), g.game, "../games/" + g.game + ".html");
    link(cell(row, null, g.game_id), g.game_id, "../games/" + g.game + ".html");
    cell(row, g.players, g.players);
    cell(row, g.seat, g.seat);
    cell(row, g.place, g.place);
    cell(row, dollars(g.money), g.money || 0);
    cell(row, g.strikes, g.strikes, g.strikes ? "struck" : "");
    cell(row, fixed(g.p50, 1), g.p50 || 0);
    cell(row, fixed(g.p95, 1), g.p95 || 0);
    cell(row, fixed(g.max, 1), g.max || 0);
    const opponents = cell(row, null);
    g.opponents.forEach((name, n) => {
      if (n) opponents.appendChild(document.createTextNode(", "));
      if (Object.prototype.hasOwnProperty.call(data.files, name)) link(opponents, name, data.files[name]);
      else opponents.appendChild(document.createTextNode(name));
    });
    body.appendChild(row);
  }
}

function sortableTables() {
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.from(heads).forEach((th, column) => {
      const kind = th.dataset.sort;
      if (!kind) return;
      th.classList.add("sort-head");
      th.tabIndex = 0;
      // The first click sorts the useful way: numbers highest first, unless the column says
      // lower is better (data-first="asc": rank, place, think time); a second click turns it.
      const sort = () => {
        const first = th.dataset.first || (kind === "num" ? "desc" : "asc");
        const dir = th.dataset.dir ? (th.dataset.dir === "asc" ? "desc" : "asc") : first;
        const down = dir === "asc";
        for (const other of heads) delete other.dataset.dir;
        th.dataset.dir = dir;
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (row) => {
          const cell = row.cells[column];
          const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
          return kind === "num" ? parseFloat(raw) : raw.toLowerCase();
        };
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return down ? order : -order;
        });
        body.append(...rows);
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
    });
  }
}

// A bot's games: only its losses (any place but first) and only games with its strikes.
function botGameFilters() {
  const table = document.getElementById("bot-games");
  const losses = document.getElementById("filter-losses");
  const strikes = document.getElementById("filter-bot-strikes");
  const count = document.getElementById("bot-game-count");
  if (!table || !losses || !strikes) return;
  const apply = () => {
    let shown = 0;
    for (const row of table.tBodies[0].rows) {
      const ok = (!losses.checked || Number(row.dataset.place) !== 1) &&
        (!strikes.checked || Number(row.dataset.strikes) > 0);
      row.hidden = !ok;
      if (ok) shown += 1;
    }
    count.textContent = shown + " of " + table.tBodies[0].rows.length + " games";
  };
  for (const input of [losses, strikes]) input.addEventListener("change", apply);
  apply();
}

function gameFilters() {
  const list = document.getElementById("game-list");
  if (!list) return;
  const bot = document.getElementById("filter-bot");
  const place = document.getElementById("filter-place");
  const size = document.getElementById("filter-size");
  const strikes = document.getElementById("filter-strikes");
  const count = document.getElementById("game-count");
  const apply = () => {
    let shown = 0;
    for (const row of list.tBodies[0].rows) {
      const bots = JSON.parse(row.dataset.bots);
      const places = JSON.parse(row.dataset.places);
      let ok = true;
      if (bot.value) {
        const seat = bots.indexOf(bot.value);
        ok = seat >= 0 && (!place.value || places[seat] === Number(place.value));
      } else if (place.value) {
        ok = places.includes(Number(place.value));
      }
      if (size.value && row.dataset.size !== size.value) ok = false;
      if (strikes.checked && Number(row.dataset.strikes) === 0) ok = false;
      row.hidden = !ok;
      if (ok) shown += 1;
    }
    count.textContent = shown + " of " + list.tBodies[0].rows.length + " games";
  };
  for (const input of [bot, place, size, strikes]) input.addEventListener("change", apply);
  apply();
}

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attrs, parent) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function ratingChart() {
  const holder = document.getElementById("rating-chart");
  const source = document.getElementById("rating-data");
  if (!holder || !source) return;
  const data = JSON.parse(source.textContent);
  // Drawn at the width it is shown at (a phone's 360 px, a desktop's 1000), so that its
  // labels keep their size.
  const W = Math.round(Math.min(1000, Math.max(320, holder.clientWidth || 1000)));
  const H = holder.classList.contains("small") ? 220 : 300, L = 40, R = 10, T = 10, B = 30;
  const prior = [Number(data.prior.mu || 25), Number(data.prior.sigma || 25 / 3)];
  // Each line starts from the prior just before its bot's first game (a bot added later
  // starts where it joined), not at the league's first game.
  const series = data.series.map((points) => (points.length
    ? [[points[0][0] - 1, prior[0], prior[1]], ...points] : []));
  let low = Infinity, high = -Infinity;
  for (const points of series) for (const [, mu, sigma] of points) {
    low = Math.min(low, mu - sigma); high = Math.max(high, mu + sigma);
  }
  if (!isFinite(low)) { low = 0; high = 50; }
  const games = Math.max(1, data.games);
  const x = (i) => L + (W - L - R) * (i + 1) / games;
  const y = (v) => T + (H - T - B) * (high - v) / (high - low || 1);
  const chart = svg("svg", {viewBox: `0 0 ${W} ${H}`, class: "rating-svg", role: "img",
                            "aria-label": "rating of each bot over the league"}, holder);
  const step = Math.max(1, Math.round((high - low) / 6));
  for (let v = Math.ceil(low / step) * step; v <= high; v += step) {
    svg("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid"}, chart);
    svg("text", {x: L - 6, y: y(v) + 4, class: "tick-label", "text-anchor": "end"}, chart)
      .textContent = String(v);
  }
  svg("text", {x: (L + W) / 2, y: H - 6, class: "tick-label", "text-anchor": "middle"}, chart)
    .textContent = "games, in schedule order (" + data.games + ")";
  const legend = document.createElement("div");
  legend.className = "legend";
  series.forEach((points, n) => {
    const colour = data.colours[n % data.colours.length];
    const upper = points.map(([i, mu, s]) => `${x(i).toFixed(1)},${y(mu + s).toFixed(1)}`);
    const lower = points.map(([i, mu, s]) => `${x(i).toFixed(1)},${y(mu - s).toFixed(1)}`);
    svg("polygon", {points: upper.concat(lower.reverse()).join(" "), fill: colour,
                    class: "band"}, chart);
    svg("polyline", {points: points.map(([i, mu]) => `${x(i).toFixed(1)},${y(mu).toFixed(1)}`)
                       .join(" "), stroke: colour, class: "line"}, chart);
    const item = document.createElement("span");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colour;
    item.append(swatch, document.createTextNode(data.bots[n]));
    legend.appendChild(item);
  });
  holder.appendChild(legend);
}

// The filter forms only filter the rows on the page: Enter in one of their fields sends
// nothing (a listener, not an onsubmit attribute: a Content-Security-Policy runs no inline
// handler).
for (const form of document.querySelectorAll("form.filters")) {
  form.addEventListener("submit", (event) => event.preventDefault());
}
gameRows();
botGameRows();
sortableTables();
gameFilters();
botGameFilters();
ratingChart();
